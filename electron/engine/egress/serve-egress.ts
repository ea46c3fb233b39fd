// Puts an engine's egress proxy behind its connection's egress sockets: every connection from an
// `egress` sandbox is decided from the policy as it is at that moment and recorded in the ledger.
// The policy (and who answers an `ask`) comes from the gateway where there is one (open-warden.ts,
// so a reload applies at once); without one (the in-process CLI) the home's policy file is read per
// connection, and an `ask` is denied: there is nobody to ask.
import { EgressPolicySchema, type EgressPolicy } from '../../../shared/types/policy.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { NetThrottledPayload } from '../../../shared/types/ledger.js';
import { appendDurably, type AuditSink } from '../audit-sink.js';
import type { PodmanConnection } from '../podman/connection.js';
import { loadPolicy } from '../gateway/policy-load.js';
import { installRunner } from '../runner/runner-binary.js';
import { EgressProxy } from './egress-proxy.js';
import { egressOf } from './egress-registry.js';
import type { EgressAsker } from './egress-ask.js';
import { RATE } from './egress-intake.js';
import type { EgressMeter } from './connection-record.js';

export type { EgressPolicy };

/** Nothing allowed: what a policy file that cannot be read amounts to for egress. */
const DENY_ALL: EgressPolicy = EgressPolicySchema.parse({});

export function homeEgressPolicy(home: string): EgressPolicy {
  try {
    return loadPolicy(home).policy.egress;
  } catch {
    return DENY_ALL;
  }
}

export interface EgressService {
  /** The egress section as it is now; read for each connection. */
  policy: () => EgressPolicy;
  /** Puts an `ask` before a person; null: nobody to ask, so it is denied. */
  ask: EgressAsker | null;
  /** The run and call most likely behind a connection from this sandbox (the gateway's exec in flight) and its budget, or null. */
  meter: (sandboxId: string) => EgressMeter | null;
  close(): void;
}

export function serveEgress(conn: PodmanConnection, audit: AuditSink, home: string): EgressService {
  // A sandbox's socket is first served inside the call that made or woke it (an agent's create or exec),
  // and its connections' events run in that call's audit context: without leaving it, every later
  // connection's entries would carry that agent as actor and be added to that one call's ledger seqs.
  const detached = <T>(body: () => T): T => (audit.detached ? audit.detached(body) : body());
  const warn = (what: string) => (err: Error) => process.stderr.write(`warden: the ledger did not record ${what}: ${err.message}\n`);
  const service: EgressService = {
    policy: () => homeEgressPolicy(home),
    ask: null,
    meter: () => null,
    close: () => proxy.close(),
  };
  const runner = installRunner(home);
  const registry = egressOf(conn);
  registry.dialers.runner = runner;
  const proxy = new EgressProxy({
    policy: () => service.policy(),
    ask: (question) => {
      const ask = service.ask;
      return ask ? detached(() => ask(question)) : Promise.resolve({ approved: false, why: 'nobody to ask in this process' });
    },
    meter: (sandboxId) => service.meter(sandboxId),
    // The runner binary is a host program too: its egress-pump carries large transfers, and its
    // egress-dialer makes a sandbox's connections inside the sandbox's memory cgroup.
    pump: runner,
    dial: (sandboxId) => registry.dialers.dialFor(sandboxId),
    sandboxPid: (sandboxId) => registry.dialers.pidOf(sandboxId),
    record: (sandboxId, kind, payload) => {
      detached(() => appendDurably(audit, [{ actor: 'system', sandboxId, kind, payload }])).catch(warn(kind));
    },
  });
  registry.handler = (socket, sandboxId) => detached(() => proxy.handle(socket, sandboxId));
  registry.on('lost', ({ sandboxId, ...payload }) => {
    detached(() => appendDurably(audit, [{ actor: 'system', sandboxId, kind: 'egress.lost', payload }])).catch(warn('egress.lost'));
  });
  registry.on('throttled', ({ sandboxId, refused }) => {
    const payload: NetThrottledPayload = { refused, perSecond: RATE.perSecond, burst: RATE.burst };
    detached(() => appendDurably(audit, [{ actor: 'system', sandboxId, kind: 'net.throttled', payload }])).catch(warn('net.throttled'));
  });
  return service;
}

/** A long-lived door adopts the running `egress` sandboxes an earlier process started, so their programs keep a way out. */
export async function adoptEgress(conn: PodmanConnection, listed: Promise<SandboxInfo[]>): Promise<void> {
  const registry = egressOf(conn);
  const sandboxes = await listed.catch(() => []);
  await Promise.all(sandboxes.filter((s) => s.network === 'egress' && s.state === 'running').map((s) => registry.ensure(s.id)));
}
