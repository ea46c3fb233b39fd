// A claim cut short by kill -9: the ledger never misses a claim. The child process (pool-claim-child)
// stops at a named step of its hand-over and is killed there; the next open keeps a claim the
// ledger and the owner record both hold, and removes, with an entry saying why, one only either has.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolConfigSchema } from '../../../shared/types/pool.js';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import type { ClaimStep } from './hand-over.js';
import { closePool, openPool } from './open-pool.js';
import { listPoolContainers } from './pool-containers.js';

let w: TestWarden;
beforeAll(async () => {
  w = await openTestWarden();
});
afterAll(async () => {
  await closeTestWarden(w);
});

const labels = () => ({ [TEST_LABEL_KEY]: w.t.runId });
const open = () => openPool(w.engine, w.warden, { config: PoolConfigSchema.parse({ size: 1 }), labels: labels() });
const entriesOf = (id: string, kind: string) => w.ledger.entries({ sandboxId: id, kind });
const inPodman = async () => (await listPoolContainers(w.engine.podman.connection, w.engine.podman.sandboxes.homeId)).map((c) => c.info.id);

/** Runs a pooled create in a child process and kills it -9 once its claim has reached `step`; the claimed id. */
async function killedAt(step: ClaimStep, name: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'electron/test-support/pool-claim-child.ts'], {
    env: { ...process.env, WARDEN_HOME: w.t.home, WARDEN_TEST_CLAIM_STOP: step, WARDEN_TEST_RUN: w.t.runId, WARDEN_TEST_NAME: name },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const line = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve)),
      exited.then(() => Promise.reject(new Error(`the child ended before its claim reached ${step}`))),
    ]);
    return (JSON.parse(line) as { id: string }).id;
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

describe('a claim killed mid-way', () => {
  it('is in the ledger before anything is handed over; the next open removes the unfinished claim and says why', async () => {
    const name = `t-${w.t.runId}-recorded`;
    const id = await killedAt('recorded', name);
    expect(entriesOf(id, 'sandbox.created')[0]?.payload).toMatchObject({ name, pooled: true, labels: labels() });
    expect(w.engine.podman.owners.get(id)).toBeNull();
    const pool = (await open())!;
    expect(await inPodman()).not.toContain(id);
    expect(entriesOf(id, 'sandbox.destroyed')[0]?.payload).toMatchObject({ pooled: true, reason: expect.stringMatching(/did not finish/) });
    await closePool(w.engine, pool);
  });

  it('keeps a claim the ledger and its owner record both hold, under its owner name', async () => {
    const name = `t-${w.t.runId}-owned`;
    const id = await killedAt('owned', name);
    expect(entriesOf(id, 'sandbox.created')[0]?.payload).toMatchObject({ name, pooled: true });
    expect(w.engine.podman.owners.get(id)?.name).toBe(name);
    const pool = (await open())!;
    expect(await w.engine.resolveSandbox(name)).toMatchObject({ id, labels: labels() });
    expect(entriesOf(id, 'sandbox.destroyed')).toEqual([]);
    await w.engine['sandbox.destroy']({ ref: id });
    await closePool(w.engine, pool);
  });

  it('removes a claimed sandbox whose claim is not in the ledger (as an earlier Warden could leave one), saying why', async () => {
    const first = (await open())!;
    await first.settled();
    const [id] = await inPodman();
    await closePool(w.engine, first, { drain: false });
    const now = new Date().toISOString();
    w.engine.podman.owners.put(id!, { name: `t-${w.t.runId}-unrecorded`, labels: labels(), expiresAt: null, claimedAt: now });
    const pool = (await open())!;
    expect(await inPodman()).not.toContain(id);
    expect(entriesOf(id!, 'sandbox.created')).toEqual([]);
    expect(entriesOf(id!, 'sandbox.destroyed')[0]?.payload).toMatchObject({
      pooled: true,
      reason: expect.stringMatching(/not in the ledger/),
    });
    await closePool(w.engine, pool);
  });
});
