// Signing checkpoints: a C2SP note over (origin, size, Merkle root), kept in the database's history
// and, newest, in a file outside it. A checkpoint never overwrites evidence: if the ledger no longer
// extends the checkpoint in the file (older copy restored, tail dropped, rewritten), signing refuses
// and the old note stays where it is for `warden audit verify` to point at.
import { hash } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import type { CheckpointInfo, SignedCheckpoint } from '../../../shared/types/ledger.js';
import { GENESIS_HASH } from './canonical.js';
import { readCheckpointFile, writeCheckpointFile } from './checkpoint-file.js';
import { formatCheckpoint, openNote, parseCheckpoint, signNote, type CheckpointBody, type SignerKey, type VerifierKey } from './note.js';
import type { TreeStore } from './tree-store.js';
import { verifyRange } from './verify-range.js';

export type CheckpointReason = 'schedule' | 'export' | 'manual' | 'close';

export interface CheckpointContext {
  db: Database;
  tree: TreeStore;
  signer: SignerKey;
  origin: string;
  file: string;
}

function maxSeq(db: Database): number {
  return (db.prepare('SELECT COALESCE(MAX(seq), 0) FROM entries').pluck().get() as number) ?? 0;
}

export function latestCheckpointSize(db: Database): number | null {
  const size = db.prepare('SELECT size FROM checkpoints ORDER BY id DESC LIMIT 1').pluck().get() as number | undefined;
  return size ?? null;
}

/** Opens a note with `key` and parses its checkpoint; null if it does not verify or parse. */
export function readSignedCheckpoint(note: string, key: VerifierKey | null): CheckpointBody | null {
  if (!key) return null;
  try {
    return parseCheckpoint(openNote(note, key).text);
  } catch {
    return null;
  }
}

export function checkpointInfo(body: CheckpointBody, note: string, key: VerifierKey, source: CheckpointInfo['source']): CheckpointInfo {
  return {
    origin: body.origin,
    size: body.size,
    root: body.root.toString('hex'),
    keyName: key.name,
    keyId: key.keyId.toString('hex'),
    source,
    note,
  };
}

export function signCheckpoint(ctx: CheckpointContext, reason: CheckpointReason): SignedCheckpoint {
  // The slow parts run before taking the write lock, so other writers are not kept waiting: catch
  // the tree up, and check the entries the last checkpoint does not cover yet (entries never change,
  // so what holds now still holds inside the lock; only the few appended meanwhile are left).
  const sizeNow = maxSeq(ctx.db);
  ctx.tree.extend(sizeNow);
  const outside = readCheckpointFile(ctx.file);
  const last = outside === null ? null : readSignedCheckpoint(outside, ctx.signer);
  const checkedFrom = last && last.origin === ctx.origin && last.size <= sizeNow ? last.size : 0;
  checkNewEntries(ctx.db, checkedFrom, sizeNow);
  return ctx.db
    .transaction((): SignedCheckpoint => {
      const size = maxSeq(ctx.db);
      const root = ctx.tree.root(size);
      const existing = readCheckpointFile(ctx.file);
      let vouchedFor = 0;
      if (existing !== null) {
        const previous = readSignedCheckpoint(existing, ctx.signer);
        const hint = 'run `warden audit verify`; the checkpoint file is kept as evidence';
        if (!previous) throw new WardenError('E_LEDGER', `${ctx.file} is not a checkpoint signed by this ledger's key`, hint);
        if (previous.origin !== ctx.origin)
          throw new WardenError('E_LEDGER', `${ctx.file} belongs to another ledger (${previous.origin})`, hint);
        if (previous.size > size) {
          throw new WardenError('E_LEDGER', `the ledger has ${size} entries but its last checkpoint vouched for ${previous.size}`, hint);
        }
        if (!ctx.tree.root(previous.size).equals(previous.root)) {
          throw new WardenError('E_LEDGER', `the first ${previous.size} entries no longer match the last checkpoint`, hint);
        }
        vouchedFor = previous.size;
      }
      // The older entries are held by the last checkpoint; check the newer ones before vouching for them.
      checkNewEntries(ctx.db, vouchedFor >= checkedFrom ? Math.max(vouchedFor, sizeNow) : vouchedFor, size);
      const time = new Date().toISOString();
      const note = signNote(formatCheckpoint({ origin: ctx.origin, size, root }), ctx.signer);
      ctx.db.prepare('INSERT INTO checkpoints (size, time, reason, note) VALUES (?, ?, ?, ?)').run(size, time, reason, note);
      // Written before COMMIT: if we die in between, the file names entries that are already durable.
      writeCheckpointFile(ctx.file, note);
      return {
        origin: ctx.origin,
        size,
        root: root.toString('hex'),
        keyName: ctx.signer.name,
        keyId: ctx.signer.keyId.toString('hex'),
        note,
        time,
      };
    })
    .immediate();
}

function checkNewEntries(db: Database, from: number, to: number): void {
  if (to <= from) return;
  const r = verifyRange(db, hash, { from: from + 1, to, checkpointSizes: [], pageSize: 4096 });
  const before =
    from === 0 ? GENESIS_HASH : (db.prepare('SELECT lower(hex(hash)) FROM entries WHERE seq = ?').pluck().get(from) as string | undefined);
  const bad = r.anomaly?.seq ?? (r.firstPrev !== before ? from + 1 : null);
  if (bad !== null) {
    throw new WardenError(
      'E_LEDGER',
      `entry ${bad} fails verification; refusing to sign a checkpoint over it`,
      'run `warden audit verify`',
    );
  }
}
