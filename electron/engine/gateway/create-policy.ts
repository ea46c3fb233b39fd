// What an agent may ask for when it creates a sandbox: never host mounts, privileges, capabilities,
// devices or host namespaces; images, runtimes, network and sizes within the policy's create limits,
// and no more sandboxes than policy.create.maxSandboxes. Pure: the gateway counts the agent's
// sandboxes under the agent's create lock and passes the count in. The spec is parsed once, here,
// and what is created is the spec as checked.
import { AGENT_FORBIDDEN_CREATE_FIELDS, type Policy } from '../../../shared/types/policy.js';
import { RUNTIME_TITLES, SandboxSpecSchema, type SandboxSpec } from '../../../shared/types/sandbox.js';
import { WardenError } from '../../../shared/errors.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import type { AgentContext, PolicyVerdict } from './call-spec.js';
import { GatewayDenial } from './denial.js';
import { globToRegExp } from './glob.js';
import { AGENT_LABEL } from './sandbox-access.js';
import { isSnapshotImage } from '../snapshot/snapshot-names.js';

/** A create request's body, before any check: a JSON object or refused. */
export function createInput(raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new WardenError('E_BAD_INPUT', 'sandbox spec: expected a JSON object');
  return raw as Record<string, unknown>;
}

export function parseSandboxSpec(raw: Record<string, unknown>): SandboxSpec {
  return parseWith(SandboxSpecSchema, raw, 'sandbox spec');
}

/** The verdict on a create, and the spec as parsed for it (null for the user: not checked, parsed when created). */
export function createVerdict(
  policy: Policy,
  defaultImage: string,
  raw: Record<string, unknown>,
  ctx: AgentContext,
  owned: number,
): { verdict: PolicyVerdict; spec: SandboxSpec | null } {
  if (ctx.trusted)
    return {
      verdict: {
        action: 'allow',
        source: 'user',
        reason: 'the user is not bound by create limits',
        scope: 'sandbox.create',
        summary: 'create sandbox',
      },
      spec: null,
    };
  const refuse = (message: string, hint?: string): never => {
    throw new GatewayDenial('create-limits', message, hint);
  };
  const forbidden = Object.keys(raw).filter((k) => (AGENT_FORBIDDEN_CREATE_FIELDS as readonly string[]).includes(k));
  if (forbidden.length)
    refuse(
      `agents may not ask for ${forbidden.join(', ')}: no host mounts, privileges, capabilities, devices or host namespaces`,
      'leave these fields out; the sandbox gets a private /workspace',
    );
  const spec = parseSandboxSpec(raw);
  const lim = policy.create;
  const image = spec.image;
  // Whatever the image globs say: a snapshot's image is another sandbox's files (reset and fork check theirs apart).
  if (image && isSnapshotImage(image))
    refuse(`image ${image} is a snapshot's`, 'fork or reset from a snapshot of your own sandbox instead (POST /v1/sandboxes/{id}/fork)');
  if (image && image !== defaultImage && !lim.images.some((g) => globToRegExp(g, false).test(image)))
    refuse(`image ${image} is not one agents may use (${lim.images.join(', ')})`);
  const network = spec.network ?? policy.network.default;
  if (!policy.network.allowed.includes(network))
    refuse(`network ${network} is not allowed for agents (allowed: ${policy.network.allowed.join(', ')})`);
  if (lim.requireRuntime && spec.runtime && spec.runtime !== lim.requireRuntime) {
    refuse(
      `runtime ${spec.runtime} is refused: policy requires every agent sandbox to run in ${RUNTIME_TITLES[lim.requireRuntime]}`,
      `leave runtime out (you get ${lim.requireRuntime}) or ask for ${lim.requireRuntime}`,
    );
  }
  if (spec.runtime && !lim.runtimes.includes(spec.runtime))
    refuse(`runtime ${spec.runtime} is not allowed for agents (allowed: ${lim.runtimes.join(', ')})`);
  if (spec.memory !== undefined && spec.memory > lim.maxMemoryBytes)
    refuse(`memory ${spec.memory} is over the ${lim.maxMemoryBytes} bytes agents may ask for`);
  if (spec.cpus !== undefined && spec.cpus > lim.maxCpus) refuse(`cpus ${spec.cpus} is over the ${lim.maxCpus} agents may ask for`);
  if (spec.disk !== undefined && spec.disk > lim.maxDiskBytes)
    refuse(`disk ${spec.disk} is over the ${lim.maxDiskBytes} bytes agents may ask for`);
  if (spec.pids !== undefined && spec.pids > lim.maxPids) refuse(`pids ${spec.pids} is over the ${lim.maxPids} agents may ask for`);
  if (spec.ttlSeconds !== undefined && spec.ttlSeconds > lim.maxTtlSeconds)
    refuse(`ttlSeconds ${spec.ttlSeconds} is over the ${lim.maxTtlSeconds} agents may ask for`);
  if (owned >= lim.maxSandboxes) throw GatewayDenial.tooManySandboxes(ctx.agent, owned);
  const verdict: PolicyVerdict = {
    action: 'allow',
    source: 'create',
    reason: 'within the create limits',
    scope: 'sandbox.create',
    summary: `create sandbox ${spec.name ?? ''}`.trim(),
  };
  return { verdict, spec };
}

/** What the engine is asked to create: the policy's network default, the tier it requires of agents, and the creator's label. */
export function sandboxToCreate(policy: Policy, spec: SandboxSpec, ctx: AgentContext): SandboxSpec {
  return {
    ...spec,
    network: spec.network ?? policy.network.default,
    // A tier the policy requires applies to agents; the user picks freely.
    runtime: spec.runtime ?? (ctx.trusted ? undefined : policy.create.requireRuntime),
    labels: { ...spec.labels, [AGENT_LABEL]: ctx.agent },
  };
}
