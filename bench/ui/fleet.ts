// Many sandboxes live: the list open with every row's sparklines fed by stats at 1 Hz. Measured:
// the page's frame cadence (rAF deltas), the renderer main thread's work per 16.7 ms frame
// interval (Chromium trace), long animation frames, and the CPU of serve, Podman and Chromium.
import type { Browser, Page } from '@playwright/test';
import { probeOf } from './page-probe.js';
import { commandLine, cpuSeconds, descendants, machineTicks } from './proc.js';
import { summarize } from '../results-file.js';

export const FRAME_MS = 1000 / 60;

const stats = (xs: number[]) => ({ ...summarize(xs), max: Math.max(0, ...xs) });

export interface FleetFigures {
  seconds: number;
  statsPerSecond: number;
  raf: ReturnType<typeof stats> & { over25: number };
  work: ReturnType<typeof stats> & { busyShare: number; over16: number };
  loaf: { count: number; maxMs: number };
  cpu: { serve: number; podman: number; chromium: number; machine: number };
}

/** Waits until `count` rows of this prefix are running and their stats are arriving. */
export async function openList(page: Page, prefix: string, count: number): Promise<void> {
  await page.getByTestId('nav-sandboxes').click();
  const running = page.locator(`[data-testid="sandbox-row"][data-state="running"][data-name^="${prefix}"]`);
  const deadline = Date.now() + 120_000;
  while ((await running.count()) < count) {
    if (Date.now() > deadline) throw new Error(`only ${await running.count()} of ${count} rows running in the list`);
    await new Promise((r) => setTimeout(r, 250));
  }
  // Every sparkline has drawn its label once: stats flow for every row.
  const labelled = page.locator(`[data-testid="sandbox-row"][data-name^="${prefix}"] [data-testid="cpu-spark"]`);
  const deadline2 = Date.now() + 60_000;
  for (;;) {
    const texts = await labelled.allInnerTexts();
    if (texts.length >= count && texts.every((t) => /\d/.test(t))) return;
    if (Date.now() > deadline2) throw new Error(`stats reached ${texts.filter((t) => /\d/.test(t)).length} of ${count} rows`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string };
}

/** Renderer main-thread task time per frame interval, from top-level RunTask events. */
export function workPerFrame(trace: Buffer): { perFrame: number[]; busyShare: number } {
  const events = (JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  const mains = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map<string, TraceEvent[]>();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && mains.has(key) && e.dur) byThread.set(key, [...(byThread.get(key) ?? []), e]);
  }
  // The page's renderer is the busy one (an idle spare renderer may exist too).
  const tasks = [...byThread.values()].sort((a, b) => b.reduce((s, e) => s + e.dur!, 0) - a.reduce((s, e) => s + e.dur!, 0))[0] ?? [];
  if (tasks.length === 0) return { perFrame: [], busyShare: NaN };
  const start = Math.min(...tasks.map((e) => e.ts));
  const end = Math.max(...tasks.map((e) => e.ts + e.dur!));
  const bin = FRAME_MS * 1000;
  const bins = new Array<number>(Math.ceil((end - start) / bin)).fill(0);
  for (const e of tasks) {
    // Top-level tasks do not nest; a task over a boundary is split between its intervals.
    for (let t = e.ts; t < e.ts + e.dur!; ) {
      const i = Math.floor((t - start) / bin);
      const next = Math.min(e.ts + e.dur!, start + (i + 1) * bin);
      bins[i]! += next - t;
      t = next;
    }
  }
  const total = bins.reduce((s, x) => s + x, 0);
  return { perFrame: bins.map((us) => us / 1000), busyShare: total / (end - start) };
}

function processGroups(servePid: number, podmanSocket: string): { serve: number[]; podman: number[]; chromium: number[] } {
  const mine = descendants(process.pid);
  const serve = [servePid, ...descendants(servePid)];
  const svc = mine.filter((p) => commandLine(p).includes(podmanSocket));
  const podman = [...svc, ...svc.flatMap((p) => descendants(p))];
  const chromium = mine.filter((p) => !serve.includes(p) && !podman.includes(p) && /chrom/i.test(commandLine(p)));
  return { serve, podman, chromium };
}

export async function measureFleet(browser: Browser, page: Page, servePid: number, podmanSocket: string, seconds: number): Promise<FleetFigures> {
  const groups = processGroups(servePid, podmanSocket);
  const cpu0 = { serve: cpuSeconds(groups.serve), podman: cpuSeconds(groups.podman), chromium: cpuSeconds(groups.chromium), machine: machineTicks() };
  const started = performance.now();
  await browser.startTracing(page, { categories: ['toplevel'] });
  const frames = await probeOf(page).frames(seconds * 1000);
  const trace = await browser.stopTracing();
  const wall = (performance.now() - started) / 1000;
  const m1 = machineTicks();
  const share = (s: number) => (100 * s) / wall;
  const { perFrame, busyShare } = workPerFrame(trace);
  return {
    seconds,
    statsPerSecond: frames.statsSamples / seconds,
    raf: { ...stats(frames.deltas), over25: frames.deltas.filter((d) => d > 25).length / Math.max(1, frames.deltas.length) },
    work: { ...stats(perFrame), busyShare, over16: perFrame.filter((w) => w > 16).length / Math.max(1, perFrame.length) },
    loaf: { count: frames.loaf.length, maxMs: Math.max(0, ...frames.loaf.map((l) => l.duration)) },
    cpu: {
      serve: share(cpuSeconds(groups.serve) - cpu0.serve),
      podman: share(cpuSeconds(groups.podman) - cpu0.podman),
      chromium: share(cpuSeconds(groups.chromium) - cpu0.chromium),
      machine: (100 * (m1.busy - cpu0.machine.busy)) / (m1.total - cpu0.machine.total),
    },
  };
}
