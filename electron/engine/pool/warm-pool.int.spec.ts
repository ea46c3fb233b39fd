// The warm pool on real Podman: a create claims a started, attested sandbox that takes the
// requested name, labels and TTL; parallel claims get distinct ones; claimed ones are refilled;
// specs a pool cannot serve go cold; pooled ones are no one's until claimed, so no door sees them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRequest } from '../../../shared/contracts/validate.js';
import { PoolConfigSchema } from '../../../shared/types/pool.js';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { closePool, openPool } from './open-pool.js';
import { listPoolContainers } from './pool-containers.js';
import { POOL_NAME_PREFIX, type WarmPool } from './warm-pool.js';

let w: TestWarden;
let pool: WarmPool;
const config = PoolConfigSchema.parse({ size: 2, shapes: [{}] });

beforeAll(async () => {
  w = await openTestWarden();
  pool = (await openPool(w.engine, w.warden, { config, labels: { [TEST_LABEL_KEY]: w.t.runId } }))!;
  await pool.settled();
});
afterAll(async () => {
  await closePool(w.engine, pool, { drain: true });
  await closeTestWarden(w);
});

const spec = (extra: Record<string, unknown> = {}) => parseRequest('sandbox.create', { labels: { [TEST_LABEL_KEY]: w.t.runId }, ...extra });
const waiting = async () =>
  (await listPoolContainers(w.engine.podman.connection, w.engine.podman.sandboxes.homeId))
    .filter((c) => !w.engine.podman.owners.get(c.info.id))
    .map((c) => c.info);
const createdEntry = (id: string) => w.ledger.entries({ sandboxId: id }).find((e) => e.kind === 'sandbox.created')!;

describe('warm pool', () => {
  it('fills to its size with started, attested sandboxes that no list or lookup shows', async () => {
    await expect(w.engine['pool.status']()).resolves.toMatchObject({ enabled: true, ready: 2 });
    const pooled = await waiting();
    expect(pooled).toHaveLength(2);
    for (const p of pooled) {
      expect(p.state).toBe('running');
      expect(p.name.startsWith(POOL_NAME_PREFIX)).toBe(true);
      expect(w.engine.attestations.latestFor(p.id)?.ok).toBe(true);
      await expect(w.engine['sandbox.inspect']({ ref: p.name })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      await expect(w.engine['sandbox.destroy']({ ref: p.id })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    }
    const listed = (await w.engine['sandbox.list']()).map((s) => s.id);
    for (const p of pooled) expect(listed).not.toContain(p.id);
  });

  it('gives a create a running pooled sandbox under the requested name, labels and TTL, and refills', async () => {
    const before = (await waiting()).map((s) => s.id);
    const name = `t-${w.t.runId}-claim`;
    const info = await w.engine['sandbox.create'](spec({ name, labels: { [TEST_LABEL_KEY]: w.t.runId, team: 'blue' }, ttlSeconds: 600 }));
    expect(before).toContain(info.id);
    expect(info).toMatchObject({ name, state: 'running', labels: { [TEST_LABEL_KEY]: w.t.runId, team: 'blue' } });
    expect(Date.parse(info.expiresAt!) - Date.now()).toBeGreaterThan(500_000);
    // Every way of looking at it sees the owner's values: lookup, list (TTL reaping reads it), ledger.
    expect((await w.engine['sandbox.inspect']({ ref: name })).labels).toEqual(info.labels);
    expect((await w.engine['sandbox.list']()).find((s) => s.id === info.id)).toMatchObject({ name, expiresAt: info.expiresAt });
    expect(createdEntry(info.id).payload).toMatchObject({ name, pooled: true, expiresAt: info.expiresAt, labels: info.labels });
    const r = await w.engine['exec.run'](parseRequest('exec.run', { ref: name, request: { cmd: ['true'] } }));
    expect(r.exitCode).toBe(0);
    await pool.settled();
    const after = (await waiting()).map((s) => s.id);
    expect(after).toHaveLength(2);
    expect(after).not.toContain(info.id);
    await w.engine['sandbox.destroy']({ ref: name });
    expect(w.engine.podman.owners.get(info.id)).toBeNull();
  });

  it('hands parallel creates distinct sandboxes, pooled while they last, cold after', async () => {
    const made = await Promise.all([0, 1, 2].map((i) => w.engine['sandbox.create'](spec({ name: `t-${w.t.runId}-par${i}` }))));
    expect(new Set(made.map((s) => s.id)).size).toBe(3);
    const pooledFlags = made.map((s) => (createdEntry(s.id).payload as { pooled?: boolean }).pooled === true);
    expect(pooledFlags.filter(Boolean).length).toBe(2);
    for (const s of made) expect(s.state).toBe('running');
    await pool.settled();
    expect((await w.engine['pool.status']()).ready).toBe(2);
    for (const s of made) await w.engine['sandbox.destroy']({ ref: s.id });
  });

  it('creates cold what a pool cannot serve: a host workspace, env at create, another shape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-pool-ws-'));
    try {
      const ready = (await waiting()).map((s) => s.id);
      const cold = [
        await w.engine['sandbox.create'](spec({ workspace: dir })),
        await w.engine['sandbox.create'](spec({ env: { A: '1' } })),
        await w.engine['sandbox.create'](spec({ memory: '128m' })),
      ];
      for (const s of cold) {
        expect(ready).not.toContain(s.id);
        expect((createdEntry(s.id).payload as { pooled?: boolean }).pooled).toBeUndefined();
        await w.engine['sandbox.destroy']({ ref: s.id });
      }
      expect((await waiting()).map((s) => s.id)).toEqual(ready);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a name in use before taking a pooled sandbox, on the pooled and the cold path, naming no other sandbox', async () => {
    const first = await w.engine['sandbox.create'](spec({ name: `t-${w.t.runId}-dup` }));
    await pool.settled();
    const ready = (await waiting()).map((s) => s.id).sort();
    const destroyedBefore = w.ledger.entries({ kind: 'sandbox.destroyed', limit: 1000 }).length;
    const attempts = [
      spec({ name: first.name }), // poolable: the pool's path
      spec({ name: first.name, env: { A: '1' } }), // not poolable: the cold path
    ];
    for (const attempt of attempts) {
      const err = await w.engine['sandbox.create'](attempt).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'E_CONFLICT', message: `the name ${first.name} is already in use` });
      expect(JSON.stringify(err) + String((err as Error).message)).not.toMatch(/[0-9a-f]{12}/);
    }
    // A waiting sandbox's name is the pool's: refused as such, not looked up.
    const [waitingOne] = await waiting();
    await expect(w.engine['sandbox.create'](spec({ name: waitingOne!.name }))).rejects.toMatchObject({ code: 'E_BAD_INPUT' });
    // Nothing of the pool was taken, destroyed or replaced.
    await pool.settled();
    expect((await waiting()).map((s) => s.id).sort()).toEqual(ready);
    expect(w.ledger.entries({ kind: 'sandbox.destroyed', limit: 1000 })).toHaveLength(destroyedBefore);
    await w.engine['sandbox.destroy']({ ref: first.id });
    await pool.settled();
  });
});
