// The gate of policy create.requireAttestation: which calls it refuses, on which verdicts.
import { describe, expect, it } from 'vitest';
import type { Attestation } from '../../../shared/types/attestation.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { policyWith } from '../../test-support/test-server.js';
import { attestationDenial } from './attestation-gate.js';

const info = { id: 'abc', name: 'box' } as SandboxInfo;
const verdict = (ok: boolean): Attestation => ({
  sandboxId: 'abc',
  name: 'box',
  runtime: 'runc',
  deep: false,
  ok,
  time: new Date(0).toISOString(),
  durationMs: 1,
  actor: 'system',
  checks: [
    { id: 'capabilities', promise: 'no capabilities', ok: true, evidence: 'CapEff=0' },
    { id: 'memory-limit', promise: 'memory limited to 256 MiB', ok, evidence: 'sandbox sees 512 MiB; promised 256 MiB' },
  ],
});

describe('attestation gate', () => {
  const strict = policyWith((p) => {
    p.create.requireAttestation = true;
  });

  it('refuses calls into the sandbox after a failed attestation, naming what failed', () => {
    const denial = attestationDenial(strict, 'exec', info, verdict(false));
    expect(denial).toMatchObject({ code: 'E_POLICY_DENIED', reason: 'policy', status: 403 });
    expect(denial!.message).toBe(
      'sandbox box failed its attestation (memory-limit: sandbox sees 512 MiB; promised 256 MiB), and policy refuses agent calls into it',
    );
    for (const tool of ['file.read', 'file.write', 'file.list'] as const)
      expect(attestationDenial(strict, tool, info, verdict(false))).not.toBeNull();
  });

  it('lets through inspect, stop and destroy, a passing or missing attestation, and a policy that does not ask', () => {
    for (const tool of ['sandbox.inspect', 'sandbox.stop', 'sandbox.destroy'] as const)
      expect(attestationDenial(strict, tool, info, verdict(false))).toBeNull();
    expect(attestationDenial(strict, 'exec', info, verdict(true))).toBeNull();
    expect(attestationDenial(strict, 'exec', info, null)).toBeNull();
    expect(
      attestationDenial(
        policyWith(() => undefined),
        'exec',
        info,
        verdict(false),
      ),
    ).toBeNull();
  });
});
