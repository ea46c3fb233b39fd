// Many sandboxes live: the list open with every row's sparklines fed by stats at 1 Hz. Measured:
// the page's frame cadence (rAF deltas), the renderer main thread's work per 16.7 ms frame
// interval (Chromium trace), long animation frames, and the CPU of serve, Podman and Chromium.
import type { BrowserPage, TraceEvent } from './cdp.js';
import { probeOf } from './page-probe.js';
import { cpuMeter, type CpuShares } from './proc.js';
import { summarize } from '../results-file.js';

export const FRAME_MS = 1000 / 60;

const stats = (xs: number[]) => ({ ...summarize(xs), max: xs.reduce((m, x) => Math.max(m, x), 0) });

export interface FleetFigures {
  seconds: number;
  /** rows in the list: other Warden sandboxes on this host's Podman show up too */
  rows: number;
  statsPerSecond: number;
  raf: ReturnType<typeof stats> & { over25: number };
  work: ReturnType<typeof stats> & { busyShare: number; over16: number };
  breakdown: Breakdown;
  loaf: { count: number; maxMs: number };
  cpu: CpuShares;
}

/** Waits until `count` rows of this prefix are running and every one shows stats. */
export async function openList(page: BrowserPage, prefix: string, count: number): Promise<void> {
  await page.click('[data-testid="nav-sandboxes"]');
  const rows = `[data-testid="sandbox-row"][data-state="running"][data-name^="${prefix}"]`;
  await page.waitFor(`${count} running rows`, async () => (await page.texts(rows)).length >= count, 120_000);
  // Every sparkline has drawn its label once: stats flow for every row.
  await page.waitFor(
    `stats in all ${count} rows`,
    async () => (await page.texts(`${rows} [data-testid="cpu-spark"]`)).filter((t) => /\d/.test(t)).length >= count,
    60_000,
  );
}

/** Main-thread ms per second spent in style, layout (and layouts per second), paint, and everything else. */
export interface Breakdown {
  style: number;
  layout: number;
  layouts: number;
  paint: number;
  other: number;
}

/** Renderer main-thread task time per frame interval, from top-level RunTask events. */
export function workPerFrame(events: TraceEvent[]): { perFrame: number[]; busyShare: number; breakdown: Breakdown } {
  const mains = new Set(
    events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`),
  );
  const byThread = new Map<string, { tasks: TraceEvent[]; busy: number }>();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph !== 'X' || e.name !== 'ThreadControllerImpl::RunTask' || !e.dur || !mains.has(key)) continue;
    const thread = byThread.get(key) ?? { tasks: [], busy: 0 };
    thread.tasks.push(e);
    thread.busy += e.dur;
    byThread.set(key, thread);
  }
  // The page's renderer is the busy one (an idle spare renderer may exist too).
  const tasks = [...byThread.values()].sort((a, b) => b.busy - a.busy)[0]?.tasks ?? [];
  if (tasks.length === 0) return { perFrame: [], busyShare: NaN, breakdown: { style: 0, layout: 0, layouts: 0, paint: 0, other: 0 } };
  let start = Infinity;
  let end = -Infinity;
  for (const e of tasks) {
    start = Math.min(start, e.ts);
    end = Math.max(end, e.ts + e.dur!);
  }
  const bin = FRAME_MS * 1000;
  const bins = new Array<number>(Math.ceil((end - start) / bin) + 1).fill(0);
  for (const e of tasks) {
    // Top-level tasks do not nest; a task over a boundary is split between its intervals.
    const stop = e.ts + e.dur!;
    for (let i = Math.floor((e.ts - start) / bin); i <= Math.floor((stop - start) / bin); i++) {
      const from = Math.max(e.ts, start + i * bin);
      const to = Math.min(stop, start + (i + 1) * bin);
      if (to > from) bins[i]! += to - from;
    }
  }
  const total = bins.reduce((s, x) => s + x, 0);
  const seconds = (end - start) / 1e6;
  // Style, layout and paint events never nest in each other: what is left of the tasks is script and the rest.
  const thread = `${tasks[0]!.pid}:${tasks[0]!.tid}`;
  const sum = (names: string[]) => {
    const picked = events.filter(
      (e) => e.ph === 'X' && e.dur && names.includes(e.name) && `${e.pid}:${e.tid}` === thread && e.ts >= start && e.ts <= end,
    );
    return { ms: picked.reduce((t, e) => t + e.dur!, 0) / 1000 / seconds, n: picked.length / seconds };
  };
  const style = sum(['UpdateLayoutTree']).ms;
  const layout = sum(['Layout']);
  const paint = sum(['PrePaint', 'Paint', 'Layerize', 'UpdateLayer']).ms;
  const breakdown = { style, layout: layout.ms, layouts: layout.n, paint, other: total / 1000 / seconds - style - layout.ms - paint };
  return { perFrame: bins.map((us) => us / 1000), busyShare: total / (end - start), breakdown };
}

export async function measureFleet(page: BrowserPage, servePid: number, podmanSocket: string, seconds: number): Promise<FleetFigures> {
  const rows = (await page.texts('[data-testid="sandbox-row"]')).length;
  const cpu = cpuMeter(servePid, podmanSocket);
  const stopTrace = await page.trace(['toplevel', 'devtools.timeline']);
  const frames = await probeOf(page).frames(seconds * 1000);
  const trace = await stopTrace();
  const used = cpu();
  const { perFrame, busyShare, breakdown } = workPerFrame(trace);
  return {
    seconds,
    rows,
    statsPerSecond: frames.statsSamples / seconds,
    raf: { ...stats(frames.deltas), over25: frames.deltas.filter((d) => d > 25).length / Math.max(1, frames.deltas.length) },
    work: { ...stats(perFrame), busyShare, over16: perFrame.filter((w) => w > 16).length / Math.max(1, perFrame.length) },
    breakdown,
    loaf: { count: frames.loaf.length, maxMs: Math.max(0, ...frames.loaf.map((l) => l.duration)) },
    cpu: used,
  };
}
