// The pool through `warden serve`'s agent API: an agent's create is served from the pool under the
// agent's name (so access checks and limits see an ordinary sandbox of its own); waiting pooled
// sandboxes are no one's, so no agent lists, counts or reaches them, even with access "all".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolConfigSchema } from '../../shared/types/pool.js';
import { openTestEngine, type TestEngine } from '../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { AGENT_LABEL } from '../engine/gateway/gateway.js';
import { startServer, type RunningServer } from './index.js';
import { AgentClient } from './client.js';
import { LedgerAudit, policyWith } from '../test-support/test-server.js';
import { openAuditLedger } from '../engine/open-warden.js';
import { listPoolContainers } from '../engine/pool/pool-containers.js';
import type { WarmPool } from '../engine/pool/warm-pool.js';

let t: TestEngine;
let server: RunningServer;
let audit: LedgerAudit;
const policy = policyWith((p) => {
  p.access = 'all';
  p.create.maxSandboxes = 1;
});

beforeAll(async () => {
  t = await openTestEngine();
  audit = new LedgerAudit(openAuditLedger(t.home));
  server = await startServer({
    home: t.home,
    policy,
    podman: t.engine,
    audit,
    watch: false,
    announce: false,
    pool: PoolConfigSchema.parse({ size: 2 }),
    poolLabels: { [TEST_LABEL_KEY]: t.runId },
  });
  await (server.engine.pool as WarmPool).settled();
});
afterAll(async () => {
  await server?.close();
  await t?.cleanup();
});

const agent = (name: string) => new AgentClient(server.url, server.tokens.create(name).token);
const waiting = async () =>
  (await listPoolContainers(t.engine.connection, t.engine.sandboxes.homeId))
    .filter((c) => !t.engine.owners.get(c.info.id))
    .map((c) => c.info);

describe('warm pool behind the agent API', () => {
  it("serves an agent's create from the pool, as the agent's own, and never shows the waiting ones", async () => {
    const alice = agent('alice');
    const bob = agent('bob');
    const pooled = (await waiting()).map((s) => s.id);
    expect(pooled).toHaveLength(2);
    const mine = await alice.request('sandbox.create', { body: { name: `t-${t.runId}-alice`, labels: { [TEST_LABEL_KEY]: t.runId } } });
    expect(pooled).toContain(mine.id);
    expect(mine.labels[AGENT_LABEL]).toBe('alice');
    const created = audit.entries.find((e) => e.kind === 'sandbox.created' && e.sandboxId === mine.id)!;
    expect(created).toMatchObject({ actor: 'alice', payload: { pooled: true } });
    // Its own sandbox counts against its limit; the waiting ones never do.
    await expect(alice.request('sandbox.create', { body: { labels: { [TEST_LABEL_KEY]: t.runId } } })).rejects.toMatchObject({
      code: 'E_POLICY_DENIED',
    });
    // With access "all" an agent sees every sandbox, but the pool's are no one's yet.
    const seen = (await bob.request('sandbox.list')).map((s) => s.id);
    expect(seen).toContain(mine.id);
    for (const p of await waiting()) {
      expect(seen).not.toContain(p.id);
      await expect(bob.request('sandbox.inspect', { params: { id: p.name } })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      await expect(bob.request('sandbox.destroy', { params: { id: p.id } })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    }
    expect((await alice.exec(mine.id, { cmd: ['true'] })).code).toBe(0);
    // Another agent asking for a name in use hears that it is taken, and nothing of whose it is;
    // no pooled sandbox is taken or burnt for it. The pool first refills what alice's claim took,
    // so the set compared below is the settled one, not one caught mid-refill.
    await (server.engine.pool as WarmPool).settled();
    const ready = (await waiting()).map((s) => s.id).sort();
    const taken = await bob.raw('POST', '/v1/sandboxes', { name: mine.name, labels: { [TEST_LABEL_KEY]: t.runId } });
    const text = JSON.stringify(await taken.json());
    expect(taken.status).toBe(409);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'E_CONFLICT', message: `the name ${mine.name} is already in use` } });
    expect(text).not.toMatch(/[0-9a-f]{12}/);
    await (server.engine.pool as WarmPool).settled();
    expect((await waiting()).map((s) => s.id).sort()).toEqual(ready);
    expect(audit.entries.filter((e) => e.kind === 'sandbox.destroyed')).toEqual([]);
    await alice.request('sandbox.destroy', { params: { id: mine.id } });
    await (server.engine.pool as WarmPool).settled();
  });
});
