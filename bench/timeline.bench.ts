// The timeline's speed (issue 17) in the real web shell, in Debian's Chromium through Playwright: a
// run of 2,000 tool calls with an hour of 1 Hz samples (and its 4,000 exec entries and 100
// connections in the ledger) opens in ≤ 1 s and pans at ≥ 30 fps with frame work p95 ≤ 16 ms.
//   npm run bench timeline     (BENCH_TIMELINE_CALLS, BENCH_TIMELINE_SECONDS, BENCH_TIMELINE_OPENS, BENCH_UI_SKIP_BUILD=1,
//                               BENCH_TIMELINE_PROFILE=1, BENCH_TIMELINE_SHOT=DIR)
// Baselines measured in the same run: opening the same run's Calls tab (300 call rows), and the
// frame cadence and work of the same page standing still.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/fixtures/chromium.js';
import { PodmanService } from '../e2e/fixtures/podman.js';
import { startWardenServe } from '../e2e/fixtures/warden-serve.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';
import { buildApp } from './ui/stack.js';
import { seedTimelineHome } from './ui/timeline-seed.js';
import { workPerFrame } from './ui/fleet.js';
import type { TraceEvent } from './ui/cdp.js';

const CALLS = Number(process.env.BENCH_TIMELINE_CALLS ?? 2000);
const SECONDS = Number(process.env.BENCH_TIMELINE_SECONDS ?? 3600);
const OPENS = Number(process.env.BENCH_TIMELINE_OPENS ?? 7);
const PAN_MS = 5000;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');
const stats = (xs: number[]) => ({ ...summarize(xs), max: xs.reduce((m, x) => Math.max(m, x), 0) });

/** Clicks a tab in the page and resolves with the ms until `ready` holds and two frames are painted (run in the page). */
function timeInPage(page: Page, click: string, ready: string): Promise<number> {
  return page.evaluate(`(async () => {
    const t0 = performance.now();
    document.querySelector(${JSON.stringify(click)}).click();
    await new Promise((resolve) => {
      const check = () => (document.querySelector(${JSON.stringify(ready)}) ? resolve() : requestAnimationFrame(check));
      check();
    });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - t0;
  })()`) as Promise<number>;
}

/** rAF deltas for `ms` (run in the page). */
function rafDeltas(page: Page, ms: number): Promise<number[]> {
  return page.evaluate(`new Promise((resolve) => {
    const out = [];
    let last = 0;
    const end = performance.now() + ${ms};
    const tick = (t) => {
      if (last) out.push(t - last);
      last = t;
      if (t < end) requestAnimationFrame(tick);
      else resolve(out);
    };
    requestAnimationFrame(tick);
  })`) as Promise<number[]>;
}

async function frames(page: Page, ms: number, during: () => Promise<void>): Promise<{ deltas: number[]; work: number[]; where: string }> {
  const cdp = await page.context().newCDPSession(page);
  const events: TraceEvent[] = [];
  let complete: () => void = () => undefined;
  const done = new Promise<void>((r) => (complete = r));
  cdp.on('event', (m: { method: string; params?: object }) => {
    if (m.method === 'Tracing.dataCollected') events.push(...(m.params as { value: TraceEvent[] }).value);
    else if (m.method === 'Tracing.tracingComplete') complete();
  });
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: ['toplevel', 'devtools.timeline'] }, transferMode: 'ReportEvents' });
  const deltas = rafDeltas(page, ms);
  await during();
  const d = await deltas;
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  const { perFrame, breakdown: b } = workPerFrame(events);
  const where = `style ${fmt(b.style)}, layout ${fmt(b.layout)}, paint ${fmt(b.paint)}, script and the rest ${fmt(b.other)}`;
  return { deltas: d, work: perFrame, where };
}

type Box = { x: number; y: number; width: number; height: number };

async function drag(page: Page, body: Box, ms: number): Promise<void> {
  const y = body.y + body.height * 0.3;
  const x0 = body.x + body.width * 0.3;
  await page.mouse.move(x0, y);
  await page.mouse.down();
  const stop = Date.now() + ms;
  let x = x0;
  let dir = 8;
  while (Date.now() < stop) {
    x += dir;
    if (x > body.x + body.width * 0.8 || x < body.x + body.width * 0.2) dir = -dir;
    await page.mouse.move(x, y);
  }
  await page.mouse.up();
}

/** BENCH_TIMELINE_PROFILE=1: where the page's time goes while panning and zooming (self time by function), printed only. */
async function profile(page: Page, what: () => Promise<void>): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.start');
  await what();
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as {
    profile: {
      nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
      samples: number[];
      timeDeltas: number[];
    };
  };
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byName = new Map<string, number>();
  for (const n of profile.nodes) {
    const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
    byName.set(key, (byName.get(key) ?? 0) + (self.get(n.id) ?? 0));
  }
  const total = [...byName.values()].reduce((a, b) => a + b, 0);
  for (const [k, us] of [...byName.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20))
    console.log(`${fmt(us / 1000)} ms ${fmt((100 * us) / total)}% ${k}`);
  await cdp.detach();
}

async function main(): Promise<void> {
  if (process.env.BENCH_UI_SKIP_BUILD !== '1') buildApp();
  const loadStart = load();
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-timeline-'));
  const home = join(dir, 'home');
  const seeded = Date.now();
  const seed = seedTimelineHome(home, CALLS, SECONDS);
  const seedMs = Date.now() - seeded;
  const service = new PodmanService(join(dir, 'podman.sock'));
  await service.start();
  const serve = await startWardenServe(service.url, { home });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${serve.url}/#login=${serve.firstLoginCode}`);
    await page.waitForSelector('[data-testid="engine-status"][data-status="connected"]', { timeout: 60_000 });
    await page.getByTestId('nav-runs').click();
    await page.locator(`[data-testid="run-row"][data-agent="${seed.agent}"]`).click();
    await page.waitForSelector('[data-testid="call"]');

    const opens: number[] = [];
    const callsOpens: number[] = [];
    for (let i = 0; i <= OPENS; i++) {
      // Away and back: the run's detail is made again, on its Calls tab.
      await page.getByTestId('nav-ledger').click();
      await page.waitForSelector('[data-testid="ledger-view"], [data-testid="ledger-rows"], table', { timeout: 30_000 });
      const calls = await timeInPage(page, '[data-testid="nav-runs"]', '[data-testid="run-detail"] [data-testid="call"]');
      const open = await timeInPage(page, '[data-testid="run-tab-timeline"]', '[data-testid="tl-status"][data-loading="false"]');
      // The first of each is a warm-up (code, fonts, the server's first read of the files).
      if (i > 0) {
        callsOpens.push(calls);
        opens.push(open);
      }
      console.log(`open ${i}: timeline ${fmt(open)} ms, calls tab ${fmt(calls)} ms`);
    }
    const status = page.getByTestId('tl-status');
    const items = Number(await status.getAttribute('data-items'));
    const points = Number(await page.getByTestId('tl-points').getAttribute('data-points'));

    const body = (await page.getByTestId('tl-body').boundingBox())!;
    const still = await frames(page, 2000, async () => undefined);
    // Pan: the pointer drags the whole hour back and forth, 8 px a step, as fast as input is taken.
    const panned = await frames(page, PAN_MS, () => drag(page, body, PAN_MS - 300));
    // Zoom: the wheel in and out around the pointer.
    const wheel = async () => {
      await page.mouse.move(body.x + body.width * 0.5, body.y + body.height * 0.3);
      const stop = Date.now() + 2700;
      let sign = -1;
      for (let n = 0; Date.now() < stop; n++) {
        await page.mouse.wheel(0, sign * 120);
        if (n % 10 === 9) sign = -sign;
      }
    };
    if (process.env.BENCH_TIMELINE_PROFILE === '1') {
      console.log('pan profile:');
      await profile(page, () => drag(page, body, 3000));
      console.log('zoom profile:');
      await profile(page, wheel);
      await page.getByTestId('tl-fit').click();
    }
    const zoomed = await frames(page, 3000, wheel);

    // BENCH_TIMELINE_SHOT=DIR: the timeline after the zoom (settled), as a PNG, to look at.
    const shot = process.env.BENCH_TIMELINE_SHOT;
    if (shot) {
      await page.waitForTimeout(500);
      await page.getByTestId('run-timeline').screenshot({ path: join(shot, 'bench-timeline-zoomed.png') });
      await page.getByTestId('tl-fit').click();
      await page.waitForTimeout(500);
      await page.getByTestId('run-timeline').screenshot({ path: join(shot, 'bench-timeline-whole.png') });
    }
    const open = stats(opens);
    const calls = stats(callsOpens);
    const f = (x: { deltas: number[]; work: number[] }) => ({ raf: stats(x.deltas), work: stats(x.work) });
    const [s, p, z] = [f(still), f(panned), f(zoomed)];
    const fps = (d: ReturnType<typeof stats>) => 1000 / d.mean;
    const met = (ok: boolean) => (ok ? 'met' : '**not met**');
    const text = `## Timeline (issue 17): a run of ${CALLS.toLocaleString('en')} tool calls and ${SECONDS / 3600} h of 1 Hz samples

${machineLine()} Load average at the start: ${loadStart}; at the end: ${load()} (2 cores, shared with other work). \`warden serve\` on a Podman service of its own; Debian Chromium headless through Playwright, 1280×800.

Method: \`bench/timeline.bench.ts\` writes a WARDEN_HOME (${fmt(seedMs / 1000)} s) through the stores the server reads: a finished run of ${CALLS} exec calls evenly over the last ${SECONDS / 60} minutes (runs.db), their ${2 * CALLS} \`exec.*\` entries and ${Math.ceil(CALLS / 20)} \`net.connect\` entries in the ledger, and ${seed.samples} samples at 1 Hz for the run's sandbox (stats.db); then starts \`warden serve\` on it and signs in. *Open* is from the click on the run's Timeline tab to the timeline loaded (\`run.get\` is already in the page; \`stats.history\` and \`timeline.entries\` answered, items built) and two frames painted, measured in the page (\`performance.now()\`); the baseline is the same run's Calls tab made again (300 call rows) the same way. Pan and zoom are real input (Playwright's mouse: a drag back and forth across the whole hour; the wheel in and out), measured as rAF deltas and the renderer main thread's work per 16.7 ms interval (Chromium trace, as the 50-sandbox figures); the baseline is the same page standing still. The timeline showed ${items} items and ${points} resource points.

| measure | timeline | baseline | target | |
|---|---|---|---|---|
| open, p50 / p95, n=${open.n} | ${fmt(open.p50, 0)} / ${fmt(open.p95, 0)} ms | Calls tab ${fmt(calls.p50, 0)} / ${fmt(calls.p95, 0)} ms (ratio ${fmt(open.p50 / calls.p50, 2)} at p50) | ≤ 1000 ms | ${met(open.p95 <= 1000)} |
| pan: frames per second (mean rAF), rAF p95 | ${fmt(fps(p.raf))} fps, ${fmt(p.raf.p95)} ms | standing still ${fmt(fps(s.raf))} fps, ${fmt(s.raf.p95)} ms | ≥ 30 fps | ${met(fps(p.raf) >= 30)} |
| pan: main-thread work per frame interval, p50 / p95 / max | ${fmt(p.work.p50)} / ${fmt(p.work.p95)} / ${fmt(p.work.max)} ms | standing still ${fmt(s.work.p50)} / ${fmt(s.work.p95)} ms | p95 ≤ 16 ms | ${met(p.work.p95 <= 16)} |
| pan: where the main thread's time goes, ms per second | ${panned.where} | standing still ${still.where} | | |
| zoom (wheel): fps, work p95 | ${fmt(fps(z.raf))} fps, ${fmt(z.work.p95)} ms | | ≥ 30 fps, ≤ 16 ms | ${met(fps(z.raf) >= 30 && z.work.p95 <= 16)} |
| zoom: where the main thread's time goes, ms per second | ${zoomed.where} | | | |

The 50-sandbox list figures are in the UI section above (\`npm run bench ui\`), unchanged by this bench.`;
    console.log(text);
    writeResultsSection('timeline', text);
  } finally {
    await browser.close().catch(() => undefined);
    await serve.stop().catch(() => undefined);
    await service.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
