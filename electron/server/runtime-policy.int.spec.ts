// A policy that requires a tier for agents, through the real HTTP API and Podman: an agent's create
// for another runtime is refused before anything is made; one without a runtime gets the required
// tier (gVisor here, read back from inspect); the user is not bound by it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WardenError } from '../../shared/errors.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';
import { runscInstalled } from '../engine/podman/oci-runtime.js';

if (!runscInstalled()) console.warn('runtime-policy.int.spec: the gVisor create is SKIPPED, runsc is not installed (run `npm run setup`)');

let ts: TestServer;
beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.create.requireRuntime = 'runsc';
    }),
  );
});
afterAll(async () => {
  await ts?.close();
});

describe('policy create.requireRuntime', () => {
  it('refuses an agent’s runc create with E_POLICY_DENIED, a clear message and hint, and creates nothing', async () => {
    const name = `t-${ts.t.runId}-runc`;
    const err = await ts
      .agent('alice')
      .request('sandbox.create', { body: { name, runtime: 'runc', labels: ts.labels } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(WardenError);
    expect(err).toMatchObject({
      code: 'E_POLICY_DENIED',
      message: expect.stringMatching(/runtime runc is refused: policy requires every agent sandbox to run in gVisor \(runsc\)/),
    });
    expect((err as WardenError).hint).toMatch(/leave runtime out/);
    expect((await ts.t.engine.sandboxes.list()).some((s) => s.name === name)).toBe(false);
    // The refusal is in the ledger like every other policy decision.
    expect(ts.audit.entries.some((e) => JSON.stringify(e.payload).includes('runtime runc is refused'))).toBe(true);
  });

  it.skipIf(!runscInstalled())('gives an agent that names no runtime the required one, as inspect reports it', async () => {
    const info = await ts.agent('alice').request('sandbox.create', { body: { name: `t-${ts.t.runId}-auto`, labels: ts.labels } });
    expect(info.runtime).toBe('runsc');
    expect((await ts.t.engine.sandboxes.inspect(info.id)).runtime).toBe('runsc');
    // The agent's tools work the same in gVisor: exec, and the file helper (exec + openat inside).
    const alice = ts.agent('alice');
    const ran = await alice.exec(info.id, { cmd: 'dmesg | head -n 1; exit 4' });
    expect(ran.code).toBe(4);
    expect(ran.stdout.toString('utf8')).toMatch(/Starting gVisor/);
    expect(
      (await alice.request('files.write', { params: { id: info.id }, query: { path: 'notes/a.txt' }, body: Buffer.from('from the agent') }))
        .bytes,
    ).toBe(14);
    expect((await alice.request('files.read', { params: { id: info.id }, query: { path: 'notes/a.txt' } })).toString('utf8')).toBe(
      'from the agent',
    );
    expect((await alice.request('files.list', { params: { id: info.id }, query: { path: 'notes' } })).entries.map((e) => e.name)).toEqual([
      'a.txt',
    ]);
  });

  it('leaves the user free to pick runc', async () => {
    const info = await ts.user().request('sandbox.create', { body: { name: `t-${ts.t.runId}-user`, runtime: 'runc', labels: ts.labels } });
    expect(info.runtime).toBe('runc');
  });
});
