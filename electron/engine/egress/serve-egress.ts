// Puts an engine's egress proxy behind its connection's forwarders: every connection from an
// `egress` sandbox is decided from the policy as it is at that moment and recorded in the ledger.
// The policy comes from the gateway where there is one (open-warden.ts, so a reload applies at
// once); without one (the in-process CLI) the home's policy file is read per connection.
import { EgressPolicySchema, type EgressPolicy } from '../../../shared/types/policy.js';
import { appendDurably, type AuditSink } from '../audit-sink.js';
import type { PodmanConnection } from '../podman/connection.js';
import { loadPolicy } from '../gateway/policy-load.js';
import { EgressProxy } from './egress-proxy.js';
import { egressOf } from './egress-registry.js';

export type { EgressPolicy, EgressProxy };

/** Nothing allowed: what a policy file that cannot be read amounts to for egress. */
const DENY_ALL: EgressPolicy = EgressPolicySchema.parse({});

export function homeEgressPolicy(home: string): EgressPolicy {
  try {
    return loadPolicy(home).policy.egress;
  } catch {
    return DENY_ALL;
  }
}

export function serveEgress(conn: PodmanConnection, audit: AuditSink, policy: () => EgressPolicy): EgressProxy {
  const warn = (what: string) => (err: Error) => process.stderr.write(`warden: the ledger did not record ${what}: ${err.message}\n`);
  const proxy = new EgressProxy({
    policy,
    record: (sandboxId, kind, payload) => {
      appendDurably(audit, [{ actor: 'system', sandboxId, kind, payload }]).catch(warn(kind));
    },
  });
  const registry = egressOf(conn);
  registry.handler = (stream, sandboxId) => proxy.handle(stream, sandboxId);
  registry.on('lost', ({ sandboxId, ...payload }) => {
    appendDurably(audit, [{ actor: 'system', sandboxId, kind: 'egress.lost', payload }]).catch(warn('egress.lost'));
  });
  return proxy;
}
