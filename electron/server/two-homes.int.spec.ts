// Two Warden homes on one machine share a Podman but not their sandboxes: an agent `ci` of home B
// neither lists, counts, runs in nor deletes the sandboxes of agent `ci` of home A. A sandbox
// without a home label (made before homes were labelled) is shown to the user, never to agents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { WardenError } from '../../shared/errors.js';
import { DEFAULT_SANDBOX_IMAGE } from '../../shared/types/sandbox.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';

let a: TestServer;
let b: TestServer;

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof WardenError ? e.code : String(e)),
  );

beforeAll(async () => {
  const policy = policyWith((p) => {
    p.access = 'all';
    p.create.maxSandboxes = 1;
  });
  a = await openTestServer(policy);
  b = await openTestServer(policy);
});

afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('two homes, one Podman', () => {
  it("home B's agent ci does not see, count, run in or delete home A's ci sandboxes; A's ledger has nothing from B", async () => {
    const boxA = await a.agent('ci').request('sandbox.create', { body: { name: `t-${a.t.runId}-home-a`, labels: a.labels } });
    // The engine's own attestation of boxA lands in A's ledger in the background: not B's doing.
    const fromOthers = () => a.audit.entries.filter((e) => e.kind !== 'sandbox.attested').length;
    const entriesA = fromOthers();
    const ciB = b.agent('ci');
    expect((await ciB.request('sandbox.list')).map((s) => s.id)).not.toContain(boxA.id);
    expect((await b.user().request('sandbox.list')).map((s) => s.id)).not.toContain(boxA.id);
    for (const ref of [boxA.id, boxA.name]) {
      expect(await outcome(ciB.exec(ref, { cmd: ['true'] }))).toBe('E_NOT_FOUND');
      expect(await outcome(ciB.request('files.read', { params: { id: ref }, query: { path: 'x' } }))).toBe('E_NOT_FOUND');
      expect(await outcome(ciB.request('sandbox.destroy', { params: { id: ref } }))).toBe('E_NOT_FOUND');
      expect(await outcome(b.user().request('sandbox.destroy', { params: { id: ref } }))).toBe('E_NOT_FOUND');
    }
    // B's ci has its own quota (1): A's sandbox does not count against it
    const boxB = await ciB.request('sandbox.create', { body: { name: `t-${b.t.runId}-home-b`, labels: b.labels } });
    expect((await a.agent('ci').request('sandbox.list')).map((s) => s.id)).toEqual([boxA.id]);
    expect((await a.t.engine.sandboxes.inspect(boxA.id)).state).toBe('running');
    expect(fromOthers()).toBe(entriesA);
    await a.agent('ci').request('sandbox.destroy', { params: { id: boxA.id } });
    await ciB.request('sandbox.destroy', { params: { id: boxB.id } });
  });

  it('a sandbox without a home label is listed for the user as legacy, and no agent sees or touches it', async () => {
    const name = `t-${a.t.runId}-legacy`;
    const made = spawnSync(
      'podman',
      [
        'create',
        '--name',
        name,
        '--label',
        'warden.managed=true',
        '--label',
        `${TEST_LABEL_KEY}=${a.t.runId}`,
        '--label',
        'warden-gateway.agent=ci',
        DEFAULT_SANDBOX_IMAGE,
        'sleep',
        'infinity',
      ],
      { encoding: 'utf8' },
    );
    expect(made.status, made.stderr).toBe(0);
    const forUser = (await a.user().request('sandbox.list')).find((s) => s.name === name);
    expect(forUser).toMatchObject({ legacy: true });
    expect((await a.agent('ci').request('sandbox.list')).map((s) => s.name)).not.toContain(name);
    // Answered as a missing one, like any sandbox an agent may not touch (no name enumeration).
    expect(await outcome(a.agent('ci').request('sandbox.destroy', { params: { id: name } }))).toBe('E_NOT_FOUND');
    expect(await outcome(a.agent('ci').request('sandbox.create', { body: { name: `t-${a.t.runId}-not-counted`, labels: a.labels } }))).toBe(
      'ok',
    );
  });
});
