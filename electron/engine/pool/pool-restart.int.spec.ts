// The pool across restarts: a clean reopen adopts the ready sandboxes it left; after a kill -9 of
// `warden serve` the next open adopts what fits its size and sweeps the rest, so Podman never holds
// more than the configured pool; a pool of size 0 makes nothing and sweeps what is left.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRequest } from '../../../shared/contracts/validate.js';
import { PoolConfigSchema, type PoolConfigInput } from '../../../shared/types/pool.js';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { LABEL } from '../podman/labels.js';
import type { LibpodEvent } from '../podman/events.js';
import { closePool, openPool } from './open-pool.js';
import type { WarmPool } from './warm-pool.js';

let w: TestWarden;
beforeAll(async () => {
  w = await openTestWarden();
});
afterAll(async () => {
  await closePool(w.engine, w.engine.pool as WarmPool | null);
  await closeTestWarden(w);
});

const labels = () => ({ [TEST_LABEL_KEY]: w.t.runId });
const open = (config: PoolConfigInput) => openPool(w.engine, w.warden, { config: PoolConfigSchema.parse(config), labels: labels() });
/** Every container of this home, whatever its state, as the podman CLI sees them. */
const inPodman = () =>
  spawnSync(
    'podman',
    ['ps', '-a', '--no-trunc', '--filter', `label=${LABEL.home}=${w.engine.podman.sandboxes.homeId}`, '--format', '{{.ID}}'],
    {
      encoding: 'utf8',
    },
  )
    .stdout.split('\n')
    .filter(Boolean)
    .sort();
const pooledEntries = () => w.ledger.entries({ kind: 'sandbox.pooled', limit: 1000 }).length;

describe('warm pool across restarts', () => {
  it('adopts the ready sandboxes a clean close kept, without making new ones', async () => {
    const first = (await open({ size: 2 }))!;
    await first.settled();
    const ids = inPodman();
    expect(ids).toHaveLength(2);
    const made = pooledEntries();
    await closePool(w.engine, first, { drain: false });
    const again = (await open({ size: 2 }))!;
    await again.settled();
    expect(inPodman()).toEqual(ids);
    expect(pooledEntries()).toBe(made);
    expect(again.status().ready).toBe(2);
    // Size 0: nothing kept, nothing made, creates are cold.
    await closePool(w.engine, again, { drain: false });
    expect(await open({ size: 0 })).toBeNull();
    expect(w.engine.pool).toBeNull();
    expect(inPodman()).toEqual([]);
    const cold = await w.engine['sandbox.create'](parseRequest('sandbox.create', { labels: labels() }));
    expect(w.ledger.entries({ sandboxId: cold.id }).find((e) => e.kind === 'sandbox.created')!.payload).not.toHaveProperty('pooled');
    expect(inPodman()).toEqual([cold.id]);
    await w.engine['sandbox.destroy']({ ref: cold.id });
    expect(await w.engine['pool.status']()).toMatchObject({ enabled: false, ready: 0 });
  });

  it('after kill -9 of warden serve, adopts what fits its size and sweeps the rest', async () => {
    writeFileSync(join(w.t.home, 'pool.yaml'), `size: 2\nlabels:\n  ${TEST_LABEL_KEY}: "${w.t.runId}"\n`);
    // The serve's pool is full once both its sandboxes have started (the pool makes one at a time).
    // Started and still there: on a loaded host the pool may replace one (an attestation that failed),
    // and what it removed is not what kill -9 leaves behind.
    const started = new Set<string>();
    let bothStarted!: () => void;
    const full = new Promise<void>((resolve) => (bothStarted = resolve));
    const filters = encodeURIComponent(
      JSON.stringify({ type: ['container'], event: ['start', 'remove'], label: [`${LABEL.home}=${w.engine.podman.sandboxes.homeId}`] }),
    );
    const events = await w.engine.podman.connection.libpodJsonStream(`/events?stream=true&filters=${filters}`, 'events', (value) => {
      const e = value as LibpodEvent;
      if (e.Actor.Attributes[LABEL.pool] === undefined) return;
      if (e.Action === 'start') started.add(e.Actor.ID);
      if (e.Action === 'remove') started.delete(e.Actor.ID);
      if (started.size >= 2) bothStarted();
    });
    const serve = spawn(process.execPath, ['--import', 'tsx', 'electron/cli/index.ts', 'serve', '--port', '0'], {
      env: { ...process.env, WARDEN_HOME: w.t.home },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => serve.once('exit', resolve));
    try {
      await Promise.race([full, exited.then(() => Promise.reject(new Error('warden serve exited before its pool filled')))]);
    } finally {
      serve.kill('SIGKILL');
      await exited;
      (events as unknown as { destroy(): void }).destroy();
    }
    expect(inPodman()).toEqual([...started].sort());
    const pool = (await open({ size: 1 }))!;
    await pool.settled();
    const left = inPodman();
    expect(left).toHaveLength(1);
    expect([...started]).toContain(left[0]);
    expect(pool.status().ready).toBe(1);
    // The adopted one serves a create like any pooled one.
    const claimed = await w.engine['sandbox.create'](parseRequest('sandbox.create', { labels: labels() }));
    expect(claimed.id).toBe(left[0]);
    await w.engine['sandbox.destroy']({ ref: claimed.id });
    await pool.settled();
    await closePool(w.engine, pool);
    expect(inPodman()).toEqual([]);
  });
});
