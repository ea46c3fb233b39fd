// The fast path of issue 13, each figure against its baseline measured in the same run, interleaved:
//  1. a tool call through the HTTP API (token, policy, run record, durable ledger entries, NDJSON):
//     exec `true` vs the `podman exec NAME true` CLI; file write then read of 1 KiB;
//     and where an exec's milliseconds go (the engine alone with its ledger entries, without them);
//  2. sandbox ready (an agent's create until its first `true` has exited) from the warm pool and cold,
//     vs `podman run --rm IMAGE true` with the same runtime and ulimits.
// The load figure (20 agents × 200 mixed calls) is the gateway bench's.
//   npm run bench fastpath
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { openAuditLedger } from '../electron/engine/open-warden.js';
import { runExec } from '../electron/engine/podman/exec-session.js';
import { startServer } from '../electron/server/index.js';
import { AgentClient } from '../electron/server/client.js';
import { parsePolicy, defaultPolicyPath } from '../electron/engine/gateway/policy-load.js';
import { hostLimits } from '../electron/engine/podman/host-limits.js';
import { sandboxRlimits } from '../electron/engine/podman/container-spec.js';
import type { WarmPool } from '../electron/engine/pool/warm-pool.js';
import { PoolConfigSchema } from '../shared/types/pool.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';
import { timeCli } from './podman-cli.js';
import { timeReady } from './sandbox-ready.js';

const CALL_RUNS = Number(process.env.BENCH_FAST_RUNS ?? 200);
const CLI_EVERY = 4; // one `podman exec` CLI baseline per this many API calls (a whole process each)
const READY_RUNS = Number(process.env.BENCH_FAST_READY_RUNS ?? 15);

const home = mkdtempSync(join(tmpdir(), 'warden-bench-fast-'));
const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
policy.agents.callsPerMinute = 1_000_000; // the bench measures the path, not the rate limit
policy.budgets.maxCalls = 1_000_000;
const podman = await PodmanEngine.open({ home });
const ledger = openAuditLedger(home);
const server = await startServer({
  home,
  policy,
  podman,
  ledger,
  watch: false,
  announce: false,
  pool: PoolConfigSchema.parse({ size: 1 }),
});
const pool = server.engine.pool as WarmPool;
const fmt = (n: number) => n.toFixed(2);
type Summary = ReturnType<typeof summarize>;

async function timed<T>(samples: number[], work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const value = await work();
  samples.push(performance.now() - started);
  return value;
}

const row = (what: string, s: Summary, base?: Summary, target = '') =>
  `| ${what} | ${fmt(s.p50)} | ${fmt(s.p95)} | ${base ? (s.p50 / base.p50).toFixed(3) : ''} | ${target} |`;

try {
  const token = server.tokens.create('bench').token;
  const agent = new AgentClient(server.url, token, 'fastpath');
  const box = await agent.request('sandbox.create', { body: { name: `bench-fast-${process.pid}` } });
  const name = box.name;
  // The engine's own path, on the sandbox as the gateway hands it over (resolved once, as its cache does).
  const resolved = await server.engine.resolveSandbox(box.id);
  const payload = Buffer.alloc(1024, 'x');
  const runtime = podman.info().defaultRuntime!;
  const ulimits = sandboxRlimits(hostLimits()).flatMap((l) => ['--ulimit', `${l.type}=${l.soft}:${l.hard}`]);

  // --- 1. tool calls ---
  for (let i = 0; i < 10; i++) {
    await agent.exec(box.id, { cmd: ['true'] });
    await runExec(podman.connection, box.id, { cmd: ['true'] });
  }
  timeCli(['exec', name, 'true']);
  const api: number[] = [];
  const cli: number[] = [];
  const engineLedger: number[] = [];
  const engineBare: number[] = [];
  const write: number[] = [];
  const read: number[] = [];
  let commits = 0;
  for (let i = 0; i < CALL_RUNS; i++) {
    const c = ledger.stats.commits;
    const r = await timed(api, () => agent.exec(box.id, { cmd: ['true'] }));
    commits += ledger.stats.commits - c;
    if (r.code !== 0) throw new Error('exec true failed');
    await timed(engineLedger, () => server.engine.execIn(resolved, { cmd: ['true'] }));
    await timed(engineBare, () => runExec(podman.connection, box.id, { cmd: ['true'] }));
    await timed(write, () => agent.request('files.write', { params: { id: box.id }, query: { path: `f${i}.txt` }, body: payload }));
    const back = await timed(read, () => agent.request('files.read', { params: { id: box.id }, query: { path: `f${i}.txt` } }));
    if (!back.equals(payload)) throw new Error('file read back differs');
    if (i % CLI_EVERY === 0) cli.push(timeCli(['exec', name, 'true']));
    if (i % 20 === 0) process.stdout.write('.');
  }
  await agent.request('sandbox.destroy', { params: { id: box.id } });
  const f = {
    api: summarize(api),
    cli: summarize(cli),
    engineLedger: summarize(engineLedger),
    engineBare: summarize(engineBare),
    write: summarize(write),
    read: summarize(read),
  };

  // --- 2. ready ---
  const image = podman.sandboxes.defaultImage;
  const runArgs = ['run', '--rm', '--runtime', runtime, ...ulimits, '--network', 'none', image, 'true'];
  timeCli(runArgs);
  const ready = { pooled: [] as number[], cold: [] as number[], run: [] as number[] };
  const created = { pooled: [] as number[], cold: [] as number[] };
  for (let i = -2; i < READY_RUNS; i++) {
    for (const kind of ['pooled', 'cold'] as const) {
      const t = await timeReady(server, pool, token, { kind, agent: `ready-${kind}-${i + 2}`, sandbox: `bench-fast-${kind}-${i + 2}` });
      if (i < 0) continue; // warm-up
      created[kind].push(t.create);
      ready[kind].push(t.ready);
    }
    const ms = timeCli(runArgs);
    if (i >= 0) ready.run.push(ms);
    process.stdout.write('.');
  }
  const r = { pooled: summarize(ready.pooled), cold: summarize(ready.cold), run: summarize(ready.run) };
  const c = { pooled: summarize(created.pooled), cold: summarize(created.cold) };
  const verify = ledger.verify();

  const md = `## Fast path (issue 13)

${machineLine()} Load average at the end: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')}. Times in ms; ratio = Warden ÷ the baseline at p50, both measured in this run, interleaved.

### A tool call, ${CALL_RUNS} of each (the \`podman exec\` CLI: ${f.cli.n})

| measure | p50 | p95 | ratio | target |
|---|---|---|---|---|
${row('exec `true` through the HTTP API (token, policy, run, durable ledger entries, NDJSON)', f.api, f.cli, 'p50 ≤ 10, ≤ 0.1×; p95 ≤ 25')}
${row('baseline: `podman exec NAME true` (the CLI, a whole process)', f.cli)}
${row('file write of 1 KiB through the HTTP API', f.write, undefined, 'p50 ≤ 10')}
${row('file read of 1 KiB through the HTTP API', f.read, undefined, 'p50 ≤ 10')}

Where an API exec's ${fmt(f.api.p50)} ms go (p50s): the engine's exec itself (the sandbox's runner where it is up, else a Podman exec) ${fmt(f.engineBare.p50)}; its two ledger entries (\`exec.started\`, \`exec.finished\`, each durable) ${fmt(f.engineLedger.p50 - f.engineBare.p50)}; the gateway and the door (token, access, run, policy, the decision written with \`exec.started\`, HTTP and NDJSON) ${fmt(f.api.p50 - f.engineLedger.p50)}. Ledger commits (fsyncs) per API exec: ${fmt(commits / CALL_RUNS)}.

### Sandbox ready: an agent's create until its first \`true\` has exited, ${READY_RUNS} of each

| measure | p50 | p95 | ratio | target |
|---|---|---|---|---|
${row('from the warm pool', r.pooled, r.run, 'p50 ≤ 20')}
${row('cold', r.cold, r.run, '≤ 0.75×')}
${row(`baseline: \`podman run --rm IMAGE true\` (${runtime.split('/').pop()}, the same ulimits)`, r.run)}
${row('of which the create alone (HTTP, until the answer), from the pool', c.pooled)}
${row('of which the create alone, cold', c.cold)}

Ledger \`verify\` after the run: ${verify.ok ? 'ok' : `FAILED at ${verify.firstBad?.seq}`} over ${verify.entries} entries.
`;
  console.log(`\n${md}`);
  writeResultsSection('fastpath', md);
  if (!verify.ok) process.exitCode = 1;
} finally {
  await server.close();
  podman.close();
  rmSync(home, { recursive: true, force: true });
}
