// Names what went wrong at the first anomaly the fast pass found. Only runs on failure, so it may
// scan the table: it looks for where a misplaced entry really belongs (its own hash commits to its
// original seq, its prev_hash to its original predecessor).
import type { Database } from 'better-sqlite3';
import type { VerifyReason } from '../../../shared/types/ledger.js';
import { entryCanonical, entryHash } from './canonical.js';
import type { RangeAnomaly } from './verify-range.js';

export interface Finding {
  seq: number;
  reason: VerifyReason;
}

type Row = [number, unknown, unknown, unknown, unknown, unknown, unknown, unknown];

// How far from its original seq a moved entry is still recognised; beyond that it is a "hash mismatch".
const MAX_SHIFT = 1024;

function rowAt(db: Database, seq: number): Row | undefined {
  return db
    .prepare('SELECT seq, time, actor, sandbox_id, kind, payload, prev_hash, hash FROM entries WHERE seq = ? LIMIT 1')
    .raw(true)
    .get(seq) as Row | undefined;
}

function seqOfHash(db: Database, hash: Buffer, except: number): number | null {
  const seq = db.prepare('SELECT seq FROM entries WHERE hash = ? AND seq != ? ORDER BY seq LIMIT 1').pluck().get(hash, except) as
    number | undefined;
  return seq ?? null;
}

/** The hash this row would have if it had been written as entry `seq`; null if its fields are not even well typed. */
function hashAs(row: Row, seq: number): string | null {
  const [, time, actor, sandboxId, kind, payload, prev] = row;
  if (typeof time !== 'string' || typeof actor !== 'string' || typeof kind !== 'string' || typeof payload !== 'string') return null;
  if (sandboxId !== null && typeof sandboxId !== 'string') return null;
  if (!Buffer.isBuffer(prev)) return null;
  return entryHash(entryCanonical({ seq, time, actor, sandboxId, kind, payloadJson: payload, prevHash: prev.toString('hex') }));
}

const hex = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : '');

export function diagnose(db: Database, anomaly: RangeAnomaly): Finding {
  const e = anomaly.seq;
  if (anomaly.kind === 'seq') {
    const got = anomaly.got;
    if (got === null || got === undefined || got > e) return { seq: e, reason: 'gap' };
    return got === e - 1 ? { seq: got, reason: 'duplicate' } : { seq: e, reason: 'reordered' };
  }
  const row = rowAt(db, e);
  if (!row) return { seq: e, reason: 'gap' };
  const stored = hex(row[7]);
  const prev = Buffer.isBuffer(row[6]) ? row[6] : null;

  if (anomaly.kind === 'hash') {
    // The very same entry (same hash) elsewhere: this one is a copy.
    if (Buffer.isBuffer(row[7]) && seqOfHash(db, row[7], e) !== null) return { seq: e, reason: 'duplicate' };
    // A genuine entry moved to another seq still hashes correctly under its original seq: find it.
    const original = originalSeq(db, row, e, stored, prev);
    if (original !== null) {
      // Spliced-in entries pushed this one down: the first of them sits at its original seq.
      if (original < e) return { seq: original, reason: 'inserted' };
      // Moved up from later. If its predecessor still exists somewhere the log was reordered;
      // if not, entries were deleted and the rest renumbered to close the hole.
      return prev && seqOfHash(db, prev, -1) !== null ? { seq: e, reason: 'reordered' } : { seq: e, reason: 'gap' };
    }
    return { seq: e, reason: 'hash mismatch' };
  }

  // kind 'link': the entry is intact (its hash holds for this seq) but does not follow the entry
  // before it. Nothing was moved, so the entry before it was replaced by one with a valid hash of
  // its own (or this entry's link was rewritten together with its hash): the chain breaks there.
  return { seq: Math.max(1, e - 1), reason: 'broken link' };
}

function originalSeq(db: Database, row: Row, e: number, stored: string, prev: Buffer | null): number | null {
  // Its prev_hash names its original predecessor; that one may have moved too, so this is a hint.
  const p = prev ? seqOfHash(db, prev, e) : null;
  if (p !== null && p + 1 !== e && hashAs(row, p + 1) === stored) return p + 1;
  for (let d = 1; d <= MAX_SHIFT; d++) {
    if (hashAs(row, e + d) === stored) return e + d;
    if (e - d >= 1 && hashAs(row, e - d) === stored) return e - d;
  }
  return null;
}
