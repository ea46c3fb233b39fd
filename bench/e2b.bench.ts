// The E2B door's cost.  npm run bench e2b
// `sandbox.commands.run('true')` through the real e2b SDK against `warden serve`, interleaved with
// Warden's own HTTP API in the same run on the same sandbox: exec of `true`, and exec of the very argv
// the SDK sends (`/bin/bash -l -c true`, so the ratio is the protocol's, not bash's). Target: the SDK
// path within 1.5× of Warden's own API.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sandbox } from 'e2b';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { LABEL } from '../electron/engine/podman/labels.js';
import { openAuditLedger } from '../electron/engine/open-warden.js';
import { startServer } from '../electron/server/index.js';
import { AgentClient } from '../electron/server/client.js';
import { parsePolicy, defaultPolicyPath } from '../electron/engine/gateway/policy-load.js';
import { E2B_PREFIX } from '../shared/contracts/e2b-routes.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';

const RUNS = Number(process.env.BENCH_E2B_RUNS ?? 100);
const WARMUP = 10;

const home = mkdtempSync(join(tmpdir(), 'warden-bench-e2b-'));
const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
policy.budgets.maxCalls = 4 * (RUNS + WARMUP) + 100;
policy.agents.callsPerMinute = 1_000_000; // the bench measures overhead, not the rate limit

const podman = await PodmanEngine.open({ home });
const ledger = openAuditLedger(home);
const server = await startServer({ home, policy, podman, ledger, watch: false, announce: false });
const fmt = (n: number) => n.toFixed(2);
try {
  const token = server.tokens.create('bench').token;
  const opts = { apiKey: token, apiUrl: `${server.url}${E2B_PREFIX}`, sandboxUrl: `${server.url}${E2B_PREFIX}` };
  const sbx = await Sandbox.create(opts);
  const api = new AgentClient(server.url, token, 'e2b-bench');
  const paths = {
    sdk: () => sbx.commands.run('true'),
    apiTrue: () => api.exec(sbx.sandboxId, { cmd: ['true'] }),
    apiBash: () => api.exec(sbx.sandboxId, { cmd: ['/bin/bash', '-l', '-c', 'true'] }),
  };
  const times: Record<keyof typeof paths, number[]> = { sdk: [], apiTrue: [], apiBash: [] };
  for (let i = 0; i < WARMUP + RUNS; i++) {
    // interleaved, so every path sees the same machine noise
    for (const [name, run] of Object.entries(paths) as [keyof typeof paths, () => Promise<unknown>][]) {
      const t = performance.now();
      await run();
      if (i >= WARMUP) times[name].push(performance.now() - t);
    }
  }
  await sbx.kill();
  const s = summarize(times.sdk);
  const t = summarize(times.apiTrue);
  const b = summarize(times.apiBash);
  const md = `## E2B door (issue 15)

${machineLine()} The real \`e2b\` SDK (devDependency) against \`warden serve\` on loopback, ${RUNS} runs of each path, interleaved, after ${WARMUP} warm-up rounds. Times in ms.

| path | p50 | p95 | mean |
|---|---|---|---|
| SDK \`sandbox.commands.run('true')\` (Connect stream; runs \`/bin/bash -l -c true\`) | ${fmt(s.p50)} | ${fmt(s.p95)} | ${fmt(s.mean)} |
| Warden HTTP API exec of the same argv | ${fmt(b.p50)} | ${fmt(b.p95)} | ${fmt(b.mean)} |
| Warden HTTP API exec \`true\` | ${fmt(t.p50)} | ${fmt(t.p95)} | ${fmt(t.mean)} |

SDK ÷ Warden API, same argv: p50 ${fmt(s.p50 / b.p50)}×, p95 ${fmt(s.p95 / b.p95)}× (target ≤ 1.5). SDK ÷ Warden API \`true\`: p50 ${fmt(s.p50 / t.p50)}×, p95 ${fmt(s.p95 / t.p95)}× (the SDK always runs its command through \`bash -l -c\`, so this line includes bash's start-up).`;
  writeResultsSection('e2b', md);
  console.log(md);
} finally {
  await server.close();
  // A run that failed half-way leaves its sandbox: this home's only, and its disk unmounted before home goes.
  const mine = (await podman.sandboxes.list().catch(() => [])).filter((x) => x.labels[LABEL.home] === podman.sandboxes.homeId);
  await Promise.all(mine.map((x) => podman.sandboxes.destroy(x.id).catch(() => undefined)));
  await podman.disks.sweep(0);
  podman.close();
  ledger.close();
  rmSync(home, { recursive: true, force: true });
}
