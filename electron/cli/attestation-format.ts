// `warden sandbox attest` for a person: one line per promise, ✓ held, ✗ failed, – skipped, each
// with the evidence seen, and a last line that says plainly whether the sandbox keeps its word.
import type { Attestation } from '../../shared/types/attestation.js';

export function formatAttestation(a: Attestation): string {
  const width = Math.max(...a.checks.map((c) => c.promise.length));
  const lines = a.checks.map((c) => `${c.skipped ? '–' : c.ok ? '✓' : '✗'} ${c.promise.padEnd(width)}  ${c.evidence}`);
  const failed = a.checks.filter((c) => !c.ok).length;
  const head = `${a.name} (${a.runtime}${a.deep ? ', deep' : ''}), attested in ${a.durationMs} ms`;
  const tail = failed
    ? `✗ ${failed} of ${a.checks.length} promises do NOT hold`
    : `✓ every promise holds (${a.checks.filter((c) => c.skipped).length} not applicable)`;
  return `${head}\n${lines.join('\n')}\n${tail}\n`;
}
