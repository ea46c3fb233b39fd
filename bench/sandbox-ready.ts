// "Ready" as the pool and fast-path benches both time it: an agent creates a sandbox through the API
// (from the warm pool, or cold with the pool switched off for this create) and runs `true` in it;
// then the sandbox goes. Written once so both benches measure the same thing.
import type { WarmPool } from '../electron/engine/pool/warm-pool.js';
import { AgentClient } from '../electron/server/client.js';
import type { RunningServer } from '../electron/server/index.js';

export interface ReadyRound {
  kind: 'pooled' | 'cold';
  /** The agent (a run ends with its sandbox: one agent name per create). */
  agent: string;
  sandbox: string;
  /** Looks at the sandbox before it goes (throws to stop the bench). */
  check?: (sandboxId: string) => void;
}

/** Milliseconds from the create call to its answer (`create`) and to the answer of the exec after it (`ready`). */
export async function timeReady(
  server: RunningServer,
  pool: WarmPool,
  token: string,
  round: ReadyRound,
): Promise<{ create: number; ready: number }> {
  await pool.settled();
  server.engine.pool = round.kind === 'pooled' ? pool : null;
  const agent = new AgentClient(server.url, token, round.agent);
  const t0 = performance.now();
  const sb = await agent.request('sandbox.create', { body: { name: round.sandbox } });
  const t1 = performance.now();
  const r = await agent.exec(sb.id, { cmd: ['true'] });
  const t2 = performance.now();
  server.engine.pool = pool;
  if (r.code !== 0) throw new Error('exec true failed');
  round.check?.(sb.id);
  await agent.request('sandbox.destroy', { params: { id: sb.id } });
  return { create: t1 - t0, ready: t2 - t0 };
}
