// A claim's hand-over, in an order the ledger can never miss: the claim is recorded first
// (sandbox.created, durable) while the sandbox is still the pool's, then the owner's record is
// made durable while Podman renames it. A process killed between two steps leaves a state the
// next open reads (warm-pool.ts adopt): ledger and owner record agree (an owned sandbox, kept), or
// they do not (the claim never finished: the sandbox is removed, and the ledger says why).
import type { SandboxInfo, SandboxSpec } from '../../../shared/types/sandbox.js';
import type { PodmanEngine } from '../podman/podman-engine.js';
import { isNameConflict, nameTaken } from '../podman/container-names.js';
import { withOwner, type OwnerRecord } from './owner-records.js';

/** Where a claim stands: its sandbox.created is durable; its owner record too; Podman renamed it. */
export type ClaimStep = 'recorded' | 'owned' | 'renamed';

export interface HandOverDeps {
  podman: PodmanEngine;
  now?: () => Date;
  /** Specs only: awaited after each step, so a spec can stop (kill) the process at a known point. */
  claimStep?: (step: ClaimStep, id: string) => Promise<void> | void;
  /** Removes a pooled sandbox and records sandbox.destroyed (pooled: true) with the reason. */
  discard(info: SandboxInfo, reason: string): Promise<void>;
}

/** Records the claim (the engine's sandbox.created); throwing stops the claim before anything changed. */
export type Announce = (claimed: SandboxInfo) => Promise<void>;

/**
 * Hands a taken pool sandbox to the spec's owner under `name`. Null when it cannot be handed over
 * for a reason the cold path may not share (the caller creates cold); a name in use is E_CONFLICT.
 */
export async function handOver(
  deps: HandOverDeps,
  taken: SandboxInfo,
  spec: SandboxSpec,
  name: string,
  announce: Announce,
): Promise<SandboxInfo | null> {
  const { podman } = deps;
  const now = deps.now?.() ?? new Date();
  const owner: OwnerRecord = {
    name,
    labels: { ...spec.labels },
    expiresAt: spec.ttlSeconds ? new Date(now.getTime() + spec.ttlSeconds * 1000).toISOString() : null,
    claimedAt: now.toISOString(),
  };
  const claimed = { ...withOwner(taken, owner), name };
  try {
    await announce(claimed);
  } catch (err) {
    // The ledger would not take it: the sandbox is no one's, and is not offered again either.
    await deps.discard(claimed, 'its claim could not be recorded');
    throw err;
  }
  await deps.claimStep?.('recorded', taken.id);
  const renamed = podman.connection.libpod(
    'POST',
    `/containers/${taken.id}/rename?name=${encodeURIComponent(name)}`,
    undefined,
    `sandbox ${name}`,
    [200, 204],
  );
  try {
    // Made durable while Podman renames.
    podman.owners.put(taken.id, owner);
    await deps.claimStep?.('owned', taken.id);
    await renamed;
  } catch (err) {
    await renamed.catch(() => undefined);
    podman.owners.remove(taken.id);
    const conflict = isNameConflict(err);
    await deps.discard(claimed, conflict ? 'its hand-over failed: the name was taken meanwhile' : 'its hand-over failed');
    // A name the caller chose was taken meanwhile; a generated one that collided: cold, under another.
    if (conflict && spec.name !== undefined) throw nameTaken(name);
    return null;
  }
  await deps.claimStep?.('renamed', taken.id);
  // As a cold create: a sandbox its caller never heard of does not stay behind.
  const info = await podman.sandboxes.resolve(taken.id).catch(async (err: unknown) => {
    await deps.discard(claimed, 'it could not be read after its hand-over');
    throw err;
  });
  if (info.state === 'running') return info;
  await deps.discard(claimed, 'it was not running after its hand-over');
  return null;
}
