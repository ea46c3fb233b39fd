// The verdict of a ledger verification (verify.ts), once its ranges are in: the ranges joined (links
// across their borders, the Merkle tree from their subtrees), the row count checked against the seqs,
// and the tree compared with every signed checkpoint it can be compared with. Kept apart from the
// driving steps so each reads on its own.
import { hash } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { CheckpointInfo, VerifyResult } from '../../../shared/types/ledger.js';
import { GENESIS_HASH } from './canonical.js';
import { diagnose, type Finding } from './diagnose.js';
import { EMPTY_ROOT } from './merkle.js';
import type { RangeResult } from './verify-range.js';

export interface GoodCheckpoint {
  size: number;
  root: string;
  info: CheckpointInfo;
}

function foldRoot(nodes: Buffer[]): string {
  if (nodes.length === 0) return EMPTY_ROOT.toString('hex');
  // Nodes are complete subtrees, largest first; folding right to left is RFC 6962's MTH.
  let r = nodes[nodes.length - 1]!;
  for (let i = nodes.length - 2; i >= 0; i--) r = nodeHashOf(nodes[i]!, r);
  return r.toString('hex');
}

const nodeBuf = Buffer.alloc(65);
function nodeHashOf(l: Buffer, r: Buffer): Buffer {
  nodeBuf[0] = 1;
  l.copy(nodeBuf, 1);
  r.copy(nodeBuf, 33);
  return hash('sha256', nodeBuf, 'buffer');
}

export interface Plan {
  count: number;
  maxSeq: number;
  problems: Finding[];
  checkpoints: GoodCheckpoint[];
}

export function conclude(db: Database, plan: Plan, results: RangeResult[]): VerifyResult {
  const { count, maxSeq, problems, checkpoints } = plan;
  // Join the ranges: links across their borders, and the tree from their subtrees.
  const frontier: Buffer[] = [];
  const levels: number[] = [];
  const roots = new Map<number, string>();
  roots.set(0, EMPTY_ROOT.toString('hex'));
  let prev = GENESIS_HASH;
  let anomaly: RangeResult['anomaly'] = null;
  for (const r of results) {
    if (r.firstPrev !== null && r.firstPrev !== prev) {
      anomaly = { seq: r.from, kind: 'link' };
      break;
    }
    for (const cp of r.at) roots.set(cp.size, foldRoot([...frontier, ...cp.nodes.map(([, h]) => Buffer.from(h, 'hex'))]));
    if (r.anomaly) {
      anomaly = r.anomaly;
      break;
    }
    for (const [level, h] of r.nodes) {
      // Ranges are aligned powers of two, so only equal levels ever merge.
      let cur: Buffer = Buffer.from(h, 'hex');
      let lvl = level;
      while (levels.length && levels[levels.length - 1] === lvl) {
        cur = nodeHashOf(frontier.pop()!, cur);
        levels.pop();
        lvl += 1;
      }
      frontier.push(cur);
      levels.push(lvl);
    }
    prev = r.lastHash ?? prev;
  }
  if (anomaly) problems.push(diagnose(db, anomaly));
  else if (count !== maxSeq) problems.push(strayRow(db, maxSeq));

  // Compare the tree with every signed checkpoint it can be compared with.
  const verifiedThrough = anomaly ? anomaly.seq - 1 : maxSeq;
  let lastMatching = 0;
  for (const cp of checkpoints) {
    if (cp.size > maxSeq) {
      // The checkpoint vouched for entries that are no longer here: a cut tail or an older copy.
      problems.push({ seq: maxSeq + 1, reason: 'checkpoint mismatch' });
      break;
    }
    if (cp.size > verifiedThrough) break;
    if (roots.get(cp.size) === cp.root) {
      lastMatching = cp.size;
      continue;
    }
    // Rewritten with recomputed hashes: only the signed roots can tell, and only to within the
    // entries between the last checkpoint that still matches and this one.
    problems.push({ seq: lastMatching + 1, reason: 'checkpoint mismatch' });
    break;
  }

  const firstBad = problems.reduce<Finding | null>((a, b) => (a === null || b.seq < a.seq ? b : a), null);
  const latest = checkpoints[checkpoints.length - 1];
  return { ok: firstBad === null, entries: count, firstBad, checkpoint: latest ? latest.info : null };
}

/** More rows than seqs 1..max: a duplicated seq (the primary key was dropped) or a row outside 1..max. */
function strayRow(db: Database, maxSeq: number): Finding {
  const dup = db.prepare('SELECT seq FROM entries GROUP BY seq HAVING COUNT(*) > 1 ORDER BY seq LIMIT 1').pluck().get() as
    number | undefined;
  if (dup !== undefined) return { seq: dup, reason: 'duplicate' };
  const odd = db
    .prepare("SELECT seq FROM entries WHERE typeof(seq) != 'integer' OR seq < 1 OR seq > ? ORDER BY seq LIMIT 1")
    .pluck()
    .get(maxSeq);
  return { seq: typeof odd === 'number' && Number.isInteger(odd) ? odd : 0, reason: 'inserted' };
}
