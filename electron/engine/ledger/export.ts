// Evidence bundles: the selected entries, proofs that they are in the log a freshly signed checkpoint
// vouches for, the public key, and the ledger's own verification at export time. Everything an
// auditor needs to check it without Warden (see verify_bundle.py and the README).
import { WardenError } from '../../../shared/errors.js';
import { BUNDLE_FORMAT, type ConsistencyProof, type InclusionProof, type ReportBundle } from '../../../shared/types/ledger.js';
import type { Ledger } from './ledger.js';
import { parseCheckpoint } from './note.js';
import { resolveSandboxRef } from './sandbox-ref.js';

export const HASH_SPEC =
  'entry.hash = SHA-256(0x00 || UTF-8(RFC 8785 JCS of {actor, kind, payload, prev_hash, sandbox_id, seq, time})), ' +
  'with prev_hash and sandbox_id taken from prevHash and sandboxId; entry 1 has prev_hash = 64 zeros. ' +
  'The Merkle tree is RFC 6962 with entry.hash as the leaf hash of leaf seq-1 (node = SHA-256(0x01 || left || right)). ' +
  'The checkpoint is a C2SP signed note (tlog-checkpoint: origin, size, base64 root) with an Ed25519 signature. ' +
  "proofs[] hold one inclusion proof per run of consecutive entries, for the run's last entry; the prev_hash chain covers the rest of the run.";

export interface ExportOptions {
  sandboxId?: string;
  fromSeq?: number;
  toSeq?: number;
  /** Refuse selections larger than this (the bundle is built in memory); default 50,000. */
  maxEntries?: number;
}

/** Earlier export checkpoints this bundle proves it extends (most recent first, at most this many). */
const CONSISTENCY_FROM_EXPORTS = 16;

export function exportBundle(ledger: Ledger, opts: ExportOptions = {}): ReportBundle {
  return { ...assemble(ledger, opts), verification: ledger.verify() };
}

/** exportBundle() for a live process: the full verification it carries runs without blocking the loop. */
export async function exportBundleAsync(ledger: Ledger, opts: ExportOptions = {}): Promise<ReportBundle> {
  const bundle = assemble(ledger, opts);
  return { ...bundle, verification: await ledger.verifyAsync() };
}

/** A selection that holds no entry is refused before anything is signed: an empty report reads as a clean record. */
function refuseEmpty(ledger: Ledger, sandboxId: string | undefined, opts: ExportOptions): void {
  const from = opts.fromSeq ?? 1;
  const found = ledger.entries({
    fromSeq: from,
    ...(opts.toSeq !== undefined ? { toSeq: opts.toSeq } : {}),
    ...(sandboxId !== undefined ? { sandboxId } : {}),
    limit: 1,
  });
  if (found.length > 0) return;
  const what = [
    sandboxId !== undefined ? `sandbox ${opts.sandboxId}${sandboxId !== opts.sandboxId ? ` (${sandboxId.slice(0, 12)})` : ''}` : null,
    opts.fromSeq !== undefined || opts.toSeq !== undefined ? `entries ${from}–${opts.toSeq ?? 'end'}` : null,
  ].filter(Boolean);
  throw new WardenError(
    'E_NOT_FOUND',
    what.length
      ? `the selection (${what.join(', ')}) holds no ledger entries: nothing to export`
      : 'the ledger has no entries yet: nothing to export',
    sandboxId !== undefined ? 'widen --from/--to, or see the sandbox’s entries with `warden audit log --sandbox …`' : undefined,
  );
}

function assemble(ledger: Ledger, opts: ExportOptions): Omit<ReportBundle, 'verification'> {
  const fromSeq = opts.fromSeq ?? 1;
  if (!Number.isSafeInteger(fromSeq) || fromSeq < 1) throw new WardenError('E_BAD_INPUT', '--from must be a seq of 1 or more');
  if (opts.toSeq !== undefined && (!Number.isSafeInteger(opts.toSeq) || opts.toSeq < fromSeq))
    throw new WardenError('E_BAD_INPUT', '--to must be a seq at or after --from');
  // A name (or an id prefix) becomes the id its entries are filed under; one that names nothing is an error.
  const sandboxId = opts.sandboxId !== undefined ? resolveSandboxRef(ledger, opts.sandboxId) : undefined;
  if (sandboxId !== undefined || opts.fromSeq !== undefined || opts.toSeq !== undefined) refuseEmpty(ledger, sandboxId, opts);
  // "At every export": the bundle carries a checkpoint signed now, over the whole ledger.
  const cp = ledger.checkpoint('export');
  const size = cp.size;
  const toSeq = Math.min(opts.toSeq ?? size, size);
  if (fromSeq > Math.max(size, 1))
    throw new WardenError('E_BAD_INPUT', `--from ${fromSeq} is past the end of the ledger (${size} entries)`);
  const max = Math.min(opts.maxEntries ?? 50_000, 99_999);
  const entries =
    toSeq >= fromSeq ? ledger.entries({ fromSeq, toSeq, ...(sandboxId !== undefined ? { sandboxId } : {}), limit: max + 1 }) : [];
  if (entries.length > max)
    throw new WardenError('E_TOO_LARGE', `the selection holds more than ${max} entries`, 'export a narrower range with --from and --to');

  const proofs: InclusionProof[] = [];
  for (let i = 0; i < entries.length; i++) {
    const next = entries[i + 1];
    const seq = entries[i]!.seq;
    if (next && next.seq === seq + 1) continue; // not the end of a run
    proofs.push({ seq, treeSize: size, path: ledger.inclusionProof(seq, size).path });
  }

  const consistency: ConsistencyProof[] = [];
  const earlier = ledger
    .checkpoints()
    .filter((c) => c.reason === 'export' && c.size > 0 && c.size < size)
    .map((c) => c.size);
  for (const from of [...new Set(earlier)].reverse().slice(0, CONSISTENCY_FROM_EXPORTS)) {
    const p = ledger.consistencyProof(from, size);
    consistency.push({ fromSize: from, fromRoot: p.fromRoot, toSize: size, path: p.path });
  }

  return {
    format: BUNDLE_FORMAT,
    createdAt: new Date().toISOString(),
    origin: ledger.origin,
    selection: { sandboxId: sandboxId ?? null, fromSeq, toSeq },
    hashSpec: HASH_SPEC,
    checkpoint: { note: cp.note, size, root: parseCheckpoint(cp.note.slice(0, cp.note.lastIndexOf('\n\n') + 1)).root.toString('hex') },
    publicKey: ledger.publicKey,
    entries,
    proofs,
    consistency,
  };
}
