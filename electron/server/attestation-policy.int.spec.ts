// Policy create.requireAttestation end to end: an agent's calls into a sandbox whose latest
// attestation failed are refused (E_POLICY_DENIED, naming the failed promise, recorded), while
// destroying it stays allowed; the same sandbox is usable when the policy does not ask.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WardenError } from '../../shared/errors.js';
import { createTampered } from '../test-support/tampered-sandbox.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';

const MiB = 1024 * 1024;
let ts: TestServer;
beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.create.requireAttestation = true;
      p.access = 'all';
    }),
  );
});
afterAll(async () => {
  await ts?.server.engine.attestations.idle();
  await ts?.close();
});

describe('policy: require a passing attestation', () => {
  it('refuses agent calls into a sandbox whose attestation failed, and only those', async () => {
    const name = `t-${ts.t.runId}-liar`;
    await createTampered(ts.t, name, 256 * MiB, 512 * MiB);
    const agent = ts.agent('mallory');
    // Not attested yet: let through (its attestation is on its way).
    expect((await agent.exec(name, { cmd: 'true' })).code).toBe(0);

    const verdict = await ts.server.engine['sandbox.attest']({ ref: name });
    expect(verdict.ok).toBe(false);
    const refused = await agent.exec(name, { cmd: 'true' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(WardenError);
    expect(refused).toMatchObject({ code: 'E_POLICY_DENIED', message: expect.stringContaining('failed its attestation (memory-limit:') });
    await expect(agent.request('files.read', { params: { id: name }, query: { path: '/workspace/x' } })).rejects.toMatchObject({
      code: 'E_POLICY_DENIED',
    });
    const denied = ts.audit.entries.filter((e) => e.kind === 'policy.denied' && e.actor === 'mallory');
    expect(denied.length).toBeGreaterThanOrEqual(2);

    // The same sandbox under a policy that does not ask for attestation.
    ts.server.gateway.policy = policyWith((p) => {
      p.access = 'all';
    });
    expect((await agent.exec(name, { cmd: 'true' })).code).toBe(0);
    ts.server.gateway.policy = policyWith((p) => {
      p.create.requireAttestation = true;
      p.access = 'all';
    });
    // Destroying a sandbox that failed stays allowed.
    expect((await agent.request('sandbox.destroy', { params: { id: name } })).name).toBe(name);
  });
});
