// Full verification of a ledger database: every entry hash, the chain, seq continuity, and the Merkle
// root at every signed checkpoint (the file outside the database and the history inside it).
//
// Memory stays flat: rows are read a page at a time and the tree is folded into O(log n) subtrees.
import { hash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Database } from 'better-sqlite3';
import type { CheckpointInfo, VerifyResult } from '../../../shared/types/ledger.js';
import { GENESIS_HASH } from './canonical.js';
import { readCheckpointFile } from './checkpoint-file.js';
import { checkpointInfo, readSignedCheckpoint } from './checkpoint.js';
import { diagnose, type Finding } from './diagnose.js';
import { EMPTY_ROOT } from './merkle.js';
import { parseCheckpoint, type VerifierKey } from './note.js';
import { runInWorkers } from './verify-pool.js';
import { verifyRange, type RangeResult, type RangeTask } from './verify-range.js';

export interface VerifyOptions {
  onProgress?(done: number, total: number): void;
  /** Worker threads for large ledgers; default: the CPU count (at most 4). 1 = this thread only. */
  workers?: number;
  /** Entries per range (a power of two); default 16384. */
  rangeSize?: number;
  /** Below this many entries, verify in this thread (workers take ~50 ms to start). */
  parallelThreshold?: number;
}

export interface VerifySource {
  db: Database;
  /** Path of the database, for worker threads to open read-only. */
  file: string;
  origin: string | null;
  verifier: VerifierKey | null;
  checkpointFile: string;
}

/** How many of the newest checkpoints in the database are checked besides the file's. */
const HISTORY_CHECKED = 1000;
const PAGE = 4096;

interface GoodCheckpoint {
  size: number;
  root: string;
  info: CheckpointInfo;
}

function sizeOfUnverified(note: string): number {
  try {
    return parseCheckpoint(note.slice(0, note.lastIndexOf('\n\n') + 1)).size;
  } catch {
    return 1;
  }
}

function collectCheckpoints(src: VerifySource, problems: Finding[]): GoodCheckpoint[] {
  const notes: Array<{ note: string; source: CheckpointInfo['source'] }> = [];
  const external = readCheckpointFile(src.checkpointFile);
  if (external !== null) notes.push({ note: external, source: 'file' });
  const history = src.db.prepare('SELECT note FROM checkpoints ORDER BY id DESC LIMIT ?').pluck().all(HISTORY_CHECKED) as unknown[];
  for (const note of history) notes.push({ note: typeof note === 'string' ? note : '', source: 'ledger' });
  const good: GoodCheckpoint[] = [];
  const seen = new Set<string>();
  for (const { note, source } of notes) {
    if (seen.has(note)) continue;
    seen.add(note);
    const body = readSignedCheckpoint(note, src.verifier);
    if (!body || !src.verifier) {
      problems.push({ seq: Math.max(1, sizeOfUnverified(note)), reason: 'bad signature' });
      continue;
    }
    if (src.origin !== null && body.origin !== src.origin) {
      problems.push({ seq: 1, reason: 'checkpoint mismatch' });
      continue;
    }
    good.push({ size: body.size, root: body.root.toString('hex'), info: checkpointInfo(body, note, src.verifier, source) });
  }
  return good.sort((a, b) => a.size - b.size || (a.info.source === 'file' ? 1 : -1));
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

export function verifyLedger(src: VerifySource, opts: VerifyOptions = {}): VerifyResult {
  const db = src.db;
  const [count, maxSeq] = db.prepare('SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM entries').raw(true).get() as [number, number];
  const problems: Finding[] = [];
  const checkpoints = collectCheckpoints(src, problems);

  const rangeSize = opts.rangeSize ?? 16384;
  const sizes = [...new Set(checkpoints.map((c) => c.size))].filter((s) => s >= 1 && s <= maxSeq);
  const tasks: RangeTask[] = [];
  for (let from = 1; from <= maxSeq; from += rangeSize) {
    const to = Math.min(maxSeq, from + rangeSize - 1);
    tasks.push({ from, to, checkpointSizes: sizes.filter((s) => s >= from && s <= to), pageSize: PAGE });
  }
  const total = maxSeq;
  const progress = (doneRanges: number) => opts.onProgress?.(Math.min(total, doneRanges * rangeSize), total);
  const inThread = (task: RangeTask) => verifyRange(db, hash, task);
  const workers = Math.max(1, Math.min(opts.workers ?? Math.min(availableParallelism(), 4), tasks.length));
  let results: RangeResult[];
  if (workers > 1 && maxSeq >= (opts.parallelThreshold ?? 200_000)) {
    results = runInWorkers(src.file, tasks, workers, progress, inThread);
  } else {
    results = [];
    for (const task of tasks) {
      const r = inThread(task);
      results.push(r);
      progress(results.length);
      if (r.anomaly) break; // nothing after the first anomaly changes the verdict
    }
  }

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
  const dup = db.prepare('SELECT seq FROM entries GROUP BY seq HAVING COUNT(*) > 1 ORDER BY seq LIMIT 1').pluck().get() as number | undefined;
  if (dup !== undefined) return { seq: dup, reason: 'duplicate' };
  const odd = db.prepare("SELECT seq FROM entries WHERE typeof(seq) != 'integer' OR seq < 1 OR seq > ? ORDER BY seq LIMIT 1").pluck().get(maxSeq);
  return { seq: typeof odd === 'number' && Number.isInteger(odd) ? odd : 0, reason: 'inserted' };
}
