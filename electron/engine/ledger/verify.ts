// Full verification of a ledger database: every entry hash, the chain, seq continuity, and the Merkle
// root at every signed checkpoint (the file outside the database and the history inside it).
//
// Memory stays flat: rows are read a page at a time and the tree is folded into O(log n) subtrees.
// One algorithm (verifySteps), two drivers: verifyLedger blocks until the verdict (CLI, tests);
// verifyLedgerAsync keeps the event loop free for a process that serves others meanwhile.
import { hash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Database } from 'better-sqlite3';
import type { CheckpointInfo, VerifyResult } from '../../../shared/types/ledger.js';
import { readCheckpointFile } from './checkpoint-file.js';
import { checkpointInfo, readSignedCheckpoint } from './checkpoint.js';
import type { Finding } from './diagnose.js';
import { parseCheckpoint, type VerifierKey } from './note.js';
import { runInWorkers, runInWorkersAsync } from './verify-pool.js';
import { verifyRange, type RangeResult, type RangeTask } from './verify-range.js';
import { conclude, type GoodCheckpoint } from './verify-verdict.js';

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
/** Rows per statement: at 1024 the row arrays die young (less GC) and verification runs ~4% faster than at 4096. */
const PAGE = 1024;

function sizeOfUnverified(note: string): number {
  try {
    return parseCheckpoint(note.slice(0, note.lastIndexOf('\n\n') + 1)).size;
  } catch {
    return 1;
  }
}

/** Rows counted per step: COUNT(*) over a million entries holds a thread for ~150 ms. */
const COUNT_SLICE = 65536;

/** seq is the table's rowid (as Warden creates it): unique integers, each row found by its seq. */
function seqIsRowid(db: Database): boolean {
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'entries'").pluck().get();
  const body = typeof sql === 'string' ? sql.slice(sql.indexOf('(') + 1) : '';
  return /^\s*seq\s+INTEGER\s+PRIMARY\s+KEY\s*,/i.test(body) && !/WITHOUT\s+ROWID/i.test(body);
}

/**
 * Rows up to maxSeq (rows past it were appended after it was read), which differs from maxSeq when
 * rows were added or removed. When seq is the rowid and every range came back whole, the ranges have
 * already seen each seq of 1..maxSeq exactly once: only rows below 1 are left to count (one index
 * seek, where a full count holds the thread for ~120 ms before the verdict). Otherwise counted in
 * slices of seq when seq is the rowid (the slices count every row); with any other schema (an
 * attacker rebuilt the table) all rows, in one statement.
 */
function* countEntries(db: Database, maxSeq: number, rangesWhole: boolean): Generator<VerifyStep, number, unknown> {
  if (!seqIsRowid(db)) return db.prepare('SELECT COUNT(*) FROM entries').pluck().get() as number;
  if (rangesWhole && maxSeq >= 1) return maxSeq + (db.prepare('SELECT COUNT(*) FROM entries WHERE seq < 1').pluck().get() as number);
  const first = db.prepare('SELECT seq FROM entries ORDER BY seq LIMIT 1').pluck().get() as number | undefined;
  if (first === undefined) return 0;
  const slice = db.prepare('SELECT COUNT(*) FROM entries WHERE seq >= ? AND seq <= ?').pluck();
  let count = 0;
  for (let from = first; from <= maxSeq; from += COUNT_SLICE) {
    if (from > first) yield { kind: 'pause' };
    count += slice.get(from, Math.min(maxSeq, from + COUNT_SLICE - 1)) as number;
  }
  return count;
}

/** Checkpoint signatures checked per step (Ed25519, ~0.1 ms each). */
const NOTES_SLICE = 64;

function* collectCheckpoints(src: VerifySource, problems: Finding[]): Generator<VerifyStep, GoodCheckpoint[], unknown> {
  const notes: Array<{ note: string; source: CheckpointInfo['source'] }> = [];
  const external = readCheckpointFile(src.checkpointFile);
  if (external !== null) notes.push({ note: external, source: 'file' });
  const history = src.db.prepare('SELECT note FROM checkpoints ORDER BY id DESC LIMIT ?').pluck().all(HISTORY_CHECKED) as unknown[];
  for (const note of history) notes.push({ note: typeof note === 'string' ? note : '', source: 'ledger' });
  const good: GoodCheckpoint[] = [];
  const seen = new Set<string>();
  for (const [i, { note, source }] of notes.entries()) {
    if (i > 0 && i % NOTES_SLICE === 0) yield { kind: 'pause' };
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

/**
 * What verification asks of whoever drives it: run these ranges on worker threads and send their
 * results back, or let the caller breathe between two ranges verified in this thread. The sync
 * driver blocks on both; the async one awaits the workers' messages and yields to the event loop.
 */
export type VerifyStep =
  | { kind: 'pause' }
  | {
      kind: 'workers';
      file: string;
      tasks: RangeTask[];
      workers: number;
      onResult(doneRanges: number): void;
      inThread(task: RangeTask): RangeResult;
    };

/**
 * The whole verification as steps: the plan, the ranges (in this thread, one step each, stopping at
 * the first anomaly; or one step for the workers), then the join and the checkpoint comparison.
 * `inThreadRangeSize` is the slice of work between two pauses when no workers are used.
 */
export function* verifySteps(
  src: VerifySource,
  opts: VerifyOptions = {},
  inThreadRangeSize = 16384,
): Generator<VerifyStep, VerifyResult, RangeResult[] | undefined> {
  const db = src.db;
  // Checkpoints first: one read after them cannot miss entries a checkpoint vouches for. Entries
  // appended meanwhile (this process between steps, or another one) lie past maxSeq and are left out.
  const problems: Finding[] = [];
  const checkpoints = yield* collectCheckpoints(src, problems);
  const maxSeq = (db.prepare('SELECT MAX(seq) FROM entries').pluck().get() as number | null) ?? 0;

  const wanted = opts.workers ?? Math.min(availableParallelism(), 4);
  const parallel = wanted > 1 && maxSeq >= (opts.parallelThreshold ?? 200_000);
  const rangeSize = opts.rangeSize ?? (parallel ? 16384 : inThreadRangeSize);
  const sizes = [...new Set(checkpoints.map((c) => c.size))].filter((s) => s >= 1 && s <= maxSeq);
  const tasks: RangeTask[] = [];
  for (let from = 1; from <= maxSeq; from += rangeSize) {
    const to = Math.min(maxSeq, from + rangeSize - 1);
    tasks.push({ from, to, checkpointSizes: sizes.filter((s) => s >= from && s <= to), pageSize: PAGE });
  }
  const total = maxSeq;
  const progress = (doneRanges: number) => opts.onProgress?.(Math.min(total, doneRanges * rangeSize), total);
  const inThread = (task: RangeTask) => verifyRange(db, hash, task);
  const workers = Math.max(1, Math.min(wanted, tasks.length));
  let results: RangeResult[];
  if (parallel && workers > 1) {
    results = (yield { kind: 'workers', file: src.file, tasks, workers, onResult: progress, inThread }) ?? [];
    if (results.length !== tasks.length) throw new Error('verifySteps: the driver returned no range results');
  } else {
    results = [];
    for (const task of tasks) {
      if (results.length > 0) yield { kind: 'pause' };
      const r = inThread(task);
      results.push(r);
      progress(results.length);
      if (r.anomaly) break; // nothing after the first anomaly changes the verdict
    }
  }
  // Counted after the ranges: when they all came back whole, they have done most of the counting.
  const whole = results.length === tasks.length && results.every((r) => r.anomaly === null);
  const count = yield* countEntries(db, maxSeq, whole);
  return conclude(db, { count, maxSeq, problems, checkpoints }, results);
}

/** Full verification in one call; blocks this thread (workers or not) until the verdict. */
export function verifyLedger(src: VerifySource, opts: VerifyOptions = {}): VerifyResult {
  const steps = verifySteps(src, opts);
  let step = steps.next();
  while (!step.done) {
    const s = step.value;
    step = steps.next(s.kind === 'workers' ? runInWorkers(s.file, s.tasks, s.workers, s.onResult, s.inThread) : undefined);
  }
  return step.value;
}

/** In-thread slices of the async path: ~15 ms of work each on this machine, so the loop stays lively. */
const ASYNC_RANGE = 4096;

/**
 * The same verification for a live process (the UI): worker results arrive as messages, and ranges
 * verified in this thread are interleaved with the event loop, so other requests keep being served.
 */
export async function verifyLedgerAsync(src: VerifySource, opts: VerifyOptions = {}): Promise<VerifyResult> {
  const steps = verifySteps(src, opts, ASYNC_RANGE);
  let step = steps.next();
  while (!step.done) {
    const s = step.value;
    step = steps.next(s.kind === 'workers' ? await runInWorkersAsync(s.file, s.tasks, s.workers, s.onResult, s.inThread) : await breathe());
  }
  return step.value;
}

const breathe = () => new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)));
