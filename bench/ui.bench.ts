// The control panel's speed in the real web shell (`warden serve` in Debian's Chromium), issue 5:
// terminal throughput and keystroke echo, and 50 live sandboxes with stats at 1 Hz.
//   npm run bench ui        (BENCH_UI_MB, BENCH_UI_KEYS, BENCH_UI_FLEET, BENCH_UI_SECONDS, BENCH_UI_SKIP_BUILD=1)
//   BENCH_UI_ONLY=terminal  the terminal figures alone, printed and not written to RESULTS.md (for short iterations)
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { machineLine, summarize, writeResultsSection } from './results-file.js';
import { buildApp, podman, startStack, sweepRun, type Stack } from './ui/stack.js';
import {
  EngineShell,
  base64Bytes,
  openDetail,
  pageKeystrokes,
  pageThroughput,
  podmanExecMs,
  podmanExecTtyMs,
  producer,
  wsRoundTrips,
  type PageThroughput,
} from './ui/terminal.js';
import { FRAME_MS, measureFleet, openList, type FleetFigures } from './ui/fleet.js';
import { probeOf } from './ui/page-probe.js';
import { CHROMIUM_PATH } from '../e2e/fixtures/chromium.js';
import { cpuMeter, type CpuShares } from './ui/proc.js';

const MIB = Number(process.env.BENCH_UI_MB ?? 100);
const RUNS = Number(process.env.BENCH_UI_RUNS ?? 3);
const KEYS = Number(process.env.BENCH_UI_KEYS ?? 150);
const FLEET = Number(process.env.BENCH_UI_FLEET ?? 50);
const SECONDS = Number(process.env.BENCH_UI_SECONDS ?? 20);
const ONLY = process.env.BENCH_UI_ONLY ?? '';
if (ONLY !== '' && ONLY !== 'terminal') throw new Error(`BENCH_UI_ONLY: only "terminal" is known, not "${ONLY}"`);
/** A page run that has not shown its end marker by then has lost the output (or the socket). */
const PAGE_TIMEOUT_MS = 300_000;

const MB = base64Bytes(MIB) / (1024 * 1024);
const mbps = (ms: number) => MB / (ms / 1000);
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');
const median = (xs: number[]) => summarize(xs).p50;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

interface TerminalFigures {
  page: Array<PageThroughput | null>;
  pageCpu: CpuShares[];
  engineMs: number[];
  podmanMs: number[];
  podmanTtyMs: number[];
  keys: { total: number[]; toSend: number[]; serverTrip: number[]; render: number[] };
  engineEcho: number[];
  ws: number[];
  closes: number[];
}

async function terminalFigures(stack: Stack): Promise<TerminalFigures> {
  const { page } = stack;
  const sb = await stack.createSandbox(`${stack.runId}-term`, ['--memory', '1g', '--cpus', '2']);
  await openDetail(page, sb.name);
  const engine = await EngineShell.open(stack.service.socketPath, sb.id);
  try {
    // Warm every path once (page cache, the shells, xterm's first big write).
    await pageThroughput(page, 4, 0, 60_000);
    await engine.throughputMs(4, 0);
    await podmanExecMs(sb.name, 4);
    await podmanExecTtyMs(sb.name, 4);

    const figures: TerminalFigures = {
      page: [],
      pageCpu: [],
      engineMs: [],
      podmanMs: [],
      podmanTtyMs: [],
      keys: { total: [], toSend: [], serverTrip: [], render: [] },
      engineEcho: [],
      ws: [],
      closes: [],
    };
    for (let run = 1; run <= RUNS; run++) {
      const cpu = cpuMeter(stack.servePid, stack.service.socketPath);
      const p = await pageThroughput(page, MIB, run, PAGE_TIMEOUT_MS);
      figures.page.push(p);
      figures.pageCpu.push(cpu());
      if (!p || p.closedCode !== undefined) {
        console.log(
          `throughput run ${run}: page LOST (${p ? `socket closed ${p.closedCode} after ${fmt(p.ms / 1000)} s, ${fmt(p.wsChars / 1048576)} MiB received` : 'no end marker'})`,
        );
        // The control panel reconnects by itself; the terminal is a new shell.
        await openDetail(page, sb.name);
      } else console.log(`throughput run ${run}: page ${fmt(mbps(p.ms))} MB/s (render tail ${fmt(p.renderTailMs, 0)} ms)`);
      figures.engineMs.push(await engine.throughputMs(MIB, run));
      figures.podmanMs.push(await podmanExecMs(sb.name, MIB));
      figures.podmanTtyMs.push(await podmanExecTtyMs(sb.name, MIB));
      const last = (xs: number[]) => fmt(mbps(xs.at(-1)!));
      console.log(
        `  engine TTY ${last(figures.engineMs)}, podman exec ${last(figures.podmanMs)}, podman exec -t ${last(figures.podmanTtyMs)} MB/s`,
      );
    }

    for (const k of await pageKeystrokes(page, KEYS)) {
      figures.keys.total.push(k.seenAt - k.keyAt);
      figures.keys.toSend.push(k.sentAt - k.keyAt);
      figures.keys.serverTrip.push(k.dataAt - k.sentAt);
      figures.keys.render.push(k.seenAt - k.dataAt);
    }
    console.log(`keystrokes: p50 ${fmt(summarize(figures.keys.total).p50)} ms`);
    figures.ws = await wsRoundTrips(page, 100);
    figures.engineEcho = await engine.echoMs(KEYS);
    figures.closes = await probeOf(page).closes();
    return figures;
  } finally {
    engine.close();
    // The fleet measures its own 50 rows: this one goes before it.
    await stack.warden(['sandbox', 'rm', sb.name]).catch(() => undefined);
  }
}

async function fleetFigures(stack: Stack): Promise<FleetFigures & { createSeconds: number; retries: number }> {
  const prefix = `${stack.runId}-f`;
  const started = performance.now();
  const names = Array.from({ length: FLEET }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
  // Three CLI processes at a time: each opens its own engine, like a person's shell scripts would.
  // A CLI that finds the busy Podman service "unreachable" (one 1.5 s ping) is run again, and counted.
  const queue = [...names];
  let retries = 0;
  const create = async (name: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await stack.createSandbox(name, ['--memory', '32m', '--cpus', '0.25']);
        return;
      } catch (err) {
        if (attempt === 3 || !String((err as { stdout?: string }).stdout).includes('E_ENGINE_UNREACHABLE')) throw err;
        retries += 1;
      }
    }
  };
  // Settled, not all: a failed worker must not leave the others creating after the sweep.
  const workers = await Promise.allSettled(
    [0, 1, 2].map(async () => {
      for (let name = queue.shift(); name; name = queue.shift()) await create(name);
    }),
  );
  const failed = workers.find((w): w is PromiseRejectedResult => w.status === 'rejected');
  if (failed) throw failed.reason;
  const createSeconds = (performance.now() - started) / 1000;
  console.log(`fleet: ${FLEET} sandboxes created in ${fmt(createSeconds)} s (${retries} CLI runs retried)`);
  await openList(stack.page, prefix, FLEET);
  await new Promise((r) => setTimeout(r, 5_000));
  const figures = await measureFleet(stack.page, stack.servePid, stack.service.socketPath, SECONDS);
  console.log(
    `fleet: rAF p95 ${fmt(figures.raf.p95)} ms, work/frame p95 ${fmt(figures.work.p95)} ms, serve CPU ${fmt(figures.cpu.serve)} %`,
  );
  return { ...figures, createSeconds, retries };
}

function verdict(ok: boolean): string {
  return ok ? 'met' : '**missed**';
}

function terminalSection(t: TerminalFigures): string {
  const ended = (p: PageThroughput | null): boolean => p !== null && p.closedCode === undefined;
  const pageOk = t.page.filter((p): p is PageThroughput => ended(p));
  const pageMbps = median(pageOk.map((p) => mbps(p.ms)));
  const lost = t.page.length > pageOk.length;
  const runText = (p: PageThroughput | null) =>
    p && ended(p)
      ? fmt(mbps(p.ms))
      : p
        ? `**cut off**: socket closed ${p.closedCode} after ${fmt(p.ms / 1000)} s, ${fmt(p.wsChars / 1048576)} MiB received`
        : '**no end marker**';
  const keys = summarize(t.keys.total);
  const part = (xs: number[]) => `${fmt(summarize(xs).p50)} / ${fmt(summarize(xs).p95)}`;
  return `### Terminal

| measure | web shell in Chromium | baseline (same run) | target | |
|---|---|---|---|---|
| output throughput, \`${producer(MIB).replace('|', '\\|')}\` (${fmt(MB)} MiB of text), Enter to end marker rendered; median of ${pageOk.length} | ${fmt(pageMbps)} MB/s${lost ? `; **only ${pageOk.length} of ${t.page.length} runs ended**` : ''} (runs: ${t.page.map(runText).join('; ')}) | \`podman exec NAME sh -c '…' > /dev/null\`: ${fmt(median(t.podmanMs.map(mbps)))} MB/s; with a TTY, \`script -c "podman exec -t …"\`: ${fmt(median(t.podmanTtyMs.map(mbps)))} MB/s; Warden's engine TTY session in Node, no server or browser: ${fmt(median(t.engineMs.map(mbps)))} MB/s | ≥ 20 MB/s | ${lost ? '**missed**' : verdict(pageMbps >= 20)} |
| keystroke to echo, p50 / p95, n=${keys.n} | ${fmt(keys.p50)} / ${fmt(keys.p95)} ms | engine TTY echo in Node: ${part(t.engineEcho)} ms; WebSocket round trip alone: ${part(t.ws)} ms | p50 ≤ 30 ms | ${keys.n ? verdict(keys.p50 <= 30) : '–'} |

Keystroke time split, p50 / p95 ms: keydown → \`terminal.input\` sent ${part(t.keys.toSend)}; sent → echo's output frame received (server, Podman, shell) ${part(t.keys.serverTrip)}; received → character in xterm's rows ${part(t.keys.render)}.
CPU during the page runs, % of one core: ${t.pageCpu.map((c, i) => `run ${i + 1}: serve ${fmt(c.serve, 0)}, Podman ${fmt(c.podman, 0)}, Chromium ${fmt(c.chromium, 0)} (machine ${fmt(c.machine, 0)} % of both cores busy)`).join('; ')}.
Throughput: time from the last output frame to the marker on screen (xterm catching up) ${pageOk.map((p) => `${fmt(p.renderTailMs, 0)} ms`).join(', ')}; xterm reported discarded data: ${pageOk.some((p) => p.discarded) ? '**yes**' : 'no'}; WebSocket close codes seen: ${t.closes.length ? t.closes.join(', ') : 'none'}.`;
}

function fleetSection(f: FleetFigures & { createSeconds: number; retries: number }): string {
  return `### ${FLEET} sandboxes live, list view, stats at 1 Hz (${f.seconds} s window)

${FLEET} sandboxes (32 MiB, 0.25 CPU, idle) created with \`warden sandbox create\`, three at a time, in ${fmt(f.createSeconds)} s (${f.retries} CLI runs answered E_ENGINE_UNREACHABLE while the Podman service was busy and were run again). The list showed ${f.rows} rows (other Warden sandboxes on this host's Podman appear too) and the page received ${fmt(f.statsPerSecond)} stats samples/s.

| measure | figure | target | |
|---|---|---|---|
| renderer main-thread work per ${fmt(FRAME_MS)} ms frame interval, p50 / p95 / max (Chromium trace: top-level tasks, categories toplevel and devtools.timeline) | ${fmt(f.work.p50)} / ${fmt(f.work.p95)} / ${fmt(f.work.max)} ms; busy ${fmt(100 * f.work.busyShare)} % of the time; ${fmt(100 * f.work.over16)} % of intervals over 16 ms | p95 ≤ 16 ms | ${verdict(f.work.p95 <= 16)} |
| frame interval (rAF deltas), p50 / p95 / max, n=${f.raf.n} | ${fmt(f.raf.p50)} / ${fmt(f.raf.p95)} / ${fmt(f.raf.max)} ms; ${fmt(100 * f.raf.over25)} % over 25 ms (a dropped frame) | 60 Hz cadence: 16.7 | ${verdict(f.raf.p95 <= 17.5)} |
| where the main thread's time goes, ms per second | style ${fmt(f.breakdown.style)}, layout ${fmt(f.breakdown.layout)} (${fmt(f.breakdown.layouts, 0)} layouts/s), paint ${fmt(f.breakdown.paint)}, script and the rest ${fmt(f.breakdown.other)} | | |
| long animation frames (> 50 ms) | ${f.loaf.count}, longest ${fmt(f.loaf.maxMs, 0)} ms | 0 | ${verdict(f.loaf.count === 0)} |
| \`warden serve\` CPU (utime + stime from /proc, its Podman services not included) | ${fmt(f.cpu.serve)} % of one core | | |
| Podman API services (the bench's and serve's per-runtime one; conmon not counted) / Chromium (all its processes) | ${fmt(f.cpu.podman)} % / ${fmt(f.cpu.chromium)} % of one core | | |
| whole machine, every process | ${fmt(f.cpu.machine)} % of both cores | | |`;
}

function chromiumVersion(): string {
  try {
    return execFileSync(CHROMIUM_PATH, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).match(/[\d.]+/)?.[0] ?? '';
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  const loadBefore = load();
  if (process.env.BENCH_UI_SKIP_BUILD !== '1') buildApp();
  const runId = `bench-ui-${randomBytes(4).toString('hex')}`;
  const stack = await startStack(runId);
  const stop = (signal: string) => {
    console.error(`\n${signal}: removing this run's sandboxes`);
    void stack.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let terminal: TerminalFigures;
  let fleet: (FleetFigures & { createSeconds: number; retries: number }) | null;
  try {
    terminal = await terminalFigures(stack);
    fleet = ONLY === 'terminal' ? null : await fleetFigures(stack);
  } finally {
    await stack.close();
    const left = podman(['ps', '-aq', '--filter', `label=warden-test.run=${runId}`]).trim();
    if (left) {
      console.error(`sandboxes of ${runId} still there after the sweep: ${left.split('\n').length}; sweeping again`);
      sweepRun(runId);
    }
  }
  if (!fleet) {
    console.log(
      `\n${terminalSection(terminal)}\n\n(BENCH_UI_ONLY=terminal: RESULTS.md not written; load average ${loadBefore} → ${load()})`,
    );
    return;
  }
  const version = podman(['version', '--format', '{{.Client.Version}}']).trim();
  writeResultsSection(
    'ui',
    `## UI (issue 5): the control panel in the web shell

${machineLine()} Load average at the start: ${loadBefore}; at the end: ${load()} (2 cores, shared with other work). Podman ${version}; \`warden serve\` on a Podman service of its own; Debian Chromium ${chromiumVersion()} headless, 1280×800, xterm's DOM renderer.

Method: \`bench/ui.bench.ts\` starts everything the way the e2e suite does and signs in with the one-time link serve prints. Chromium is driven over the DevTools protocol directly (\`bench/ui/cdp.ts\`): Playwright enables the Network domain, which makes Chromium copy every WebSocket frame to the driver; with Playwright the terminal throughput was ~20 % lower in a side-by-side check, a cost of the instrument, not the product. Keys are real key events (\`Input.dispatchKeyEvent\`). Page times are the page's own \`performance.now()\`: a capture \`keydown\` listener, the app's WebSocket wrapped before the app loads (send and receive times), and a MutationObserver on xterm's rendered rows (the moment the text is in the DOM, before paint). MB = MiB of base64 text. Terminal output reaches the page as binary WebSocket frames (a small header with the terminal's id, then the shell's bytes; no JSON), and the page writes a stream into xterm at most every 33 ms, leaving out lines that would scroll through the 5000-line scrollback unseen (\`renderer/src/features/terminal/\`). The server pauses the shell while 4 MB wait unsent on the page's socket; a page run it cuts off anyway (WebSocket close 1013, past 64 MB) is reported as cut off, not as a speed.

${terminalSection(terminal)}

${fleetSection(fleet)}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
