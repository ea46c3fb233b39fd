// Policy `create.requireAttestation`: an agent may not work in a sandbox whose latest attestation
// saw a promise fail (limits that do not hold, a reachable engine socket …). A sandbox not yet
// attested is let through: its automatic attestation is on its way, and refusing it would make
// every create race its own attestation. Inspecting, stopping or destroying it stay allowed.
import type { Attestation } from '../../../shared/types/attestation.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { GatewayDenial } from './denial.js';
import { INSIDE_TOOLS } from './inside-tools.js';

export function attestationDenial(policy: Policy, tool: ToolName, info: SandboxInfo, latest: Attestation | null): GatewayDenial | null {
  if (policy.create.requireAttestation !== true || !INSIDE_TOOLS.has(tool) || !latest || latest.ok) return null;
  const failed = latest.checks.filter((c) => !c.ok);
  return new GatewayDenial(
    'policy',
    `sandbox ${info.name} failed its attestation (${failed.map((c) => `${c.id}: ${c.evidence}`).join('; ')}), and policy refuses agent calls into it`,
    `a person can see the checklist with \`warden sandbox attest ${info.name}\`; destroy the sandbox and create a new one (policy create.requireAttestation)`,
  );
}
