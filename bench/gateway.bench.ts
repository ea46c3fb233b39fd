// Gateway overhead and load.  npm run bench gateway
//  1. exec `true` through the HTTP API (token, Host check, policy, run record, ledger appends, NDJSON)
//     against the engine's own exec (with its ledger appends) in the same run: p50 overhead.
//  2. 20 agents × 200 tool calls over 20 sandboxes at once: calls/s, p95, and every call in the ledger.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { WardenEngine } from '../electron/engine/engine.js';
import { openAuditLedger } from '../electron/engine/open-warden.js';
import { startServer } from '../electron/server/index.js';
import { AgentClient } from '../electron/server/client.js';
import { parsePolicy, defaultPolicyPath } from '../electron/engine/gateway/policy-load.js';
import { readFileSync } from 'node:fs';
import { machineLine, summarize, writeResultsSection } from './results-file.js';

const EXEC_RUNS = Number(process.env.BENCH_GATEWAY_RUNS ?? 200);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 20);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);

const home = mkdtempSync(join(tmpdir(), 'warden-bench-gw-'));
const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
policy.budgets.maxCalls = Math.max(CALLS, EXEC_RUNS) + 100;
policy.create.maxSandboxes = 2;
policy.agents.callsPerMinute = 1_000_000; // the bench measures overhead, not the rate limit

const podman = await PodmanEngine.open({ home });
const ledger = openAuditLedger(home);
const server = await startServer({ home, policy, podman, ledger, watch: false, announce: false });
const fmt = (n: number) => n.toFixed(2);
try {
  // --- 1. overhead ---
  const alice = new AgentClient(server.url, server.tokens.create('bench').token, 'overhead');
  const box = await alice.request('sandbox.create', { body: { name: `bench-gw-${process.pid}` } });
  const direct = new WardenEngine(podman, ledger, { actor: 'user' });
  for (let i = 0; i < 10; i++) {
    await direct.execStream(box.id, { cmd: ['true'] });
    await alice.exec(box.id, { cmd: ['true'] });
  }
  const base: number[] = [];
  const http: number[] = [];
  // ledger transactions (each one fsync) per call, on each path
  const commits = { base: 0, http: 0 };
  for (let i = 0; i < EXEC_RUNS; i++) {
    // interleaved, so both see the same machine noise
    let c = ledger.stats.commits;
    let t = performance.now();
    await direct.execStream(box.id, { cmd: ['true'] });
    base.push(performance.now() - t);
    commits.base += ledger.stats.commits - c;
    c = ledger.stats.commits;
    t = performance.now();
    const r = await alice.exec(box.id, { cmd: ['true'] });
    http.push(performance.now() - t);
    commits.http += ledger.stats.commits - c;
    if (r.code !== 0) throw new Error('exec true failed');
  }
  const b = summarize(base);
  const h = summarize(http);
  await alice.request('sandbox.destroy', { params: { id: box.id } });

  // --- 2. load ---
  const seqBefore = ledger.head().size;
  const agents = await Promise.all(
    Array.from({ length: AGENTS }, async (_, i) => {
      const c = new AgentClient(server.url, server.tokens.create(`agent-${i}`).token, `load-${i}`);
      const sb = await c.request('sandbox.create', { body: { name: `bench-gw-${process.pid}-${i}` } });
      return { c, sb };
    }),
  );
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    agents.map(async ({ c, sb }, i) => {
      for (let k = 0; k < CALLS; k++) {
        const t = performance.now();
        try {
          const kind = k % 4;
          if (kind === 0)
            await c.request('files.write', {
              params: { id: sb.id },
              query: { path: `f${k}.txt` },
              body: Buffer.from(`agent ${i} call ${k}\n`),
            });
          else if (kind === 1) await c.request('files.read', { params: { id: sb.id }, query: { path: `f${k - 1}.txt` } });
          else await c.exec(sb.id, { cmd: ['echo', String(k)] });
        } catch {
          failed++;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const l = summarize(latencies);
  const total = AGENTS * CALLS;
  // every call's decision is in the ledger, under its agent, with its run and call ids
  const decided = ledger
    .entries({ fromSeq: seqBefore + 1, limit: 100_000 })
    .filter((e) => e.kind === 'policy.allowed' || e.kind === 'policy.denied');
  const runCalls = server.gateway.runs
    .list()
    .filter((r) => r.key?.startsWith('load-'))
    .reduce((n, r) => n + r.calls - 1, 0);
  const callSeqsMissing = server.gateway.runs
    .list()
    .filter((r) => r.key?.startsWith('load-'))
    .flatMap((r) => server.gateway.runs.detail(r.id).toolCalls)
    .filter((c) => c.ledgerSeqs.length === 0).length;
  await Promise.all(agents.map(({ c, sb }) => c.request('sandbox.destroy', { params: { id: sb.id } })));
  const verify = ledger.verify();

  const md = `## Gateway

${machineLine()}

### Overhead of the gateway: exec \`true\`, ${EXEC_RUNS} runs each, interleaved

| path | p50 ms | p95 ms | mean ms | ledger commits (fsyncs) per call |
|---|---|---|---|---|
| engine exec (baseline: resolve, exec, 2 ledger entries) | ${fmt(b.p50)} | ${fmt(b.p95)} | ${fmt(b.mean)} | ${fmt(commits.base / EXEC_RUNS)} |
| HTTP API (token, Host check, run, policy, 3 ledger entries, NDJSON) | ${fmt(h.p50)} | ${fmt(h.p95)} | ${fmt(h.mean)} | ${fmt(commits.http / EXEC_RUNS)} |
| **overhead** | **${fmt(h.p50 - b.p50)}** (target ≤ 5) | ${fmt(h.p95 - b.p95)} | ${fmt(h.mean - b.mean)} | |

On the API path the gateway resolves the sandbox (inspect, cached 2 s) to check access and hands it to the engine, which does not inspect it again; the decision (\`policy.allowed\`) is written in one transaction with \`exec.started\`, durable before the command starts and before the agent is told it runs.

### Load: ${AGENTS} agents × ${CALLS} tool calls over ${AGENTS} sandboxes, all at once

Mix per agent: ¼ file writes, ¼ file reads, ½ execs (\`echo\`); every call through HTTP and the gateway.

| calls | failed | seconds | calls/s | p50 ms | p95 ms |
|---|---|---|---|---|---|
| ${total} | ${failed} | ${fmt(seconds)} | ${fmt(total / seconds)} | ${fmt(l.p50)} | ${fmt(l.p95)} |

Ledger: ${decided.length} decision entries for ${total} calls and ${AGENTS} creates, ${runCalls} calls in the runs, ${callSeqsMissing} calls without a ledger seq; \`verify\`: ${verify.ok ? 'ok' : `FAILED at ${verify.firstBad?.seq}`} over ${verify.entries} entries.
`;
  console.log(md);
  writeResultsSection('gateway', md);
  if (decided.length !== total + AGENTS || !verify.ok || callSeqsMissing) process.exitCode = 1;
} finally {
  await server.close();
  podman.close();
  ledger.close();
  rmSync(home, { recursive: true, force: true });
}
