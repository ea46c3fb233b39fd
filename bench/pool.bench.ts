// Sandbox ready from the warm pool against cold, through the HTTP API.  npm run bench pool
// Ready = an agent's POST /v1/sandboxes until its first `true` (POST …/exec) has exited, the way
// issue 13 counts it. Pooled and cold runs are interleaved, so both see the same machine noise;
// before each pooled run the pool is refilled (not timed), as it is between creates in real use.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { openAuditLedger } from '../electron/engine/open-warden.js';
import { startServer } from '../electron/server/index.js';
import { parsePolicy, defaultPolicyPath } from '../electron/engine/gateway/policy-load.js';
import type { WarmPool } from '../electron/engine/pool/warm-pool.js';
import { PoolConfigSchema } from '../shared/types/pool.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';
import { timeReady } from './sandbox-ready.js';

const RUNS = Number(process.env.BENCH_POOL_RUNS ?? 15);

const home = mkdtempSync(join(tmpdir(), 'warden-bench-pool-'));
const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
policy.agents.callsPerMinute = 1_000_000;
const podman = await PodmanEngine.open({ home });
const ledger = openAuditLedger(home);
const server = await startServer({
  home,
  policy,
  podman,
  audit: ledger,
  watch: false,
  announce: false,
  pool: PoolConfigSchema.parse({ size: 1 }),
});
const pool = server.engine.pool as WarmPool;
const fmt = (n: number) => n.toFixed(1);
try {
  const token = server.tokens.create('bench').token;
  const timed = { pooled: { create: [] as number[], ready: [] as number[] }, cold: { create: [] as number[], ready: [] as number[] } };
  for (let i = -2; i < RUNS; i++) {
    for (const kind of ['pooled', 'cold'] as const) {
      const t = await timeReady(server, pool, token, {
        kind,
        agent: `pool-${kind}-${i + 2}`,
        sandbox: `bench-pool-${kind}-${i + 2}`,
        check: (sandboxId) => {
          const pooled = ledger
            .entries({ sandboxId })
            .some((e) => e.kind === 'sandbox.created' && (e.payload as { pooled?: boolean }).pooled);
          if (pooled !== (kind === 'pooled')) throw new Error(`a ${kind} run was ${pooled ? 'pooled' : 'cold'}`);
        },
      });
      if (i < 0) continue; // warm-up
      timed[kind].create.push(t.create);
      timed[kind].ready.push(t.ready);
    }
  }
  const s = {
    pooledCreate: summarize(timed.pooled.create),
    pooledReady: summarize(timed.pooled.ready),
    coldCreate: summarize(timed.cold.create),
    coldReady: summarize(timed.cold.ready),
  };
  console.log(
    `ready p50: pooled ${fmt(s.pooledReady.p50)} ms (create ${fmt(s.pooledCreate.p50)}), cold ${fmt(s.coldReady.p50)} ms (create ${fmt(s.coldCreate.p50)})`,
  );
  writeResultsSection(
    'pool',
    `## Warm pool: sandbox ready through the API

${machineLine()} n=${RUNS} each, interleaved; an agent's \`POST /v1/sandboxes\` then \`POST …/exec\` of \`true\` (policy, run record and ledger entries included).

| | create p50 / p95 (ms) | ready p50 / p95 (ms) |
|---|---|---|
| from the warm pool | ${fmt(s.pooledCreate.p50)} / ${fmt(s.pooledCreate.p95)} | ${fmt(s.pooledReady.p50)} / ${fmt(s.pooledReady.p95)} |
| cold | ${fmt(s.coldCreate.p50)} / ${fmt(s.coldCreate.p95)} | ${fmt(s.coldReady.p50)} / ${fmt(s.coldReady.p95)} |

Ready from the pool is its create (a rename, the owner's record and an inspect) plus one exec; the exec is a plain Podman exec until the in-sandbox runner serves it.`,
  );
} finally {
  await server.close();
  podman.close();
  rmSync(home, { recursive: true, force: true });
}
