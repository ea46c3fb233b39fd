// What a person reads from `warden sandbox attest`: one line per promise and a plain last line.
import { describe, expect, it } from 'vitest';
import { formatAttestation } from './attestation-format.js';

const base = { sandboxId: 'x', name: 'box', runtime: 'runc', deep: false, time: '', durationMs: 42, actor: 'user' };

describe('formatAttestation', () => {
  it('marks held ✓, failed ✗ and skipped – with the evidence, and says whether all hold', () => {
    const text = formatAttestation({
      ...base,
      ok: false,
      checks: [
        { id: 'a', promise: 'no capabilities', ok: true, evidence: 'CapEff=0' },
        { id: 'b', promise: 'memory limited to 256 MiB', ok: false, evidence: 'sandbox sees 512 MiB' },
        { id: 'c', promise: 'read-only root', ok: true, skipped: true, evidence: 'not asked for' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'box (runc), attested in 42 ms',
      '✓ no capabilities            CapEff=0',
      '✗ memory limited to 256 MiB  sandbox sees 512 MiB',
      '– read-only root             not asked for',
      '✗ 1 of 3 promises do NOT hold',
      '',
    ]);
    expect(formatAttestation({ ...base, ok: true, checks: [{ id: 'a', promise: 'p', ok: true, evidence: 'e' }] })).toContain(
      '✓ every promise holds (0 not applicable)',
    );
  });
});
