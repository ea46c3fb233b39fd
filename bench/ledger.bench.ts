// `npm run bench ledger`: the audit ledger's costs, each beside a baseline measured in the same run.
//
//  1. durable appends, one entry per transaction    vs a bare better-sqlite3 INSERT of the same rows
//  2. group commit (many concurrent appends)         vs bare INSERTs of the same rows in the same batches
//  3. full verification of 1,000,000 entries         vs raw SHA-256 throughput of this CPU
//  4. an inclusion proof in a 1,000,000-entry tree
//  5. peak RSS of verification at two ledger sizes   (a fresh process each, so the peak is its own)
import { spawnSync } from 'node:child_process';
import { hash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { GroupCommitter } from '../electron/engine/ledger/group-commit.js';
import { Ledger, verifyLedgerFile, type AppendInput } from '../electron/engine/ledger/index.js';
import { BIG, ledgerReport, SMALL } from './ledger-report.js';
import { summarize, writeResultsSection } from './results-file.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const TMP = join(HERE, '.tmp', 'ledger');

function row(i: number): AppendInput {
  return {
    actor: `agent-${i % 5}`,
    sandboxId: `sb-${i % 17}`,
    kind: i % 2 ? 'exec.finished' : 'exec.started',
    payload: {
      argv: ['sh', '-c', `make test-${i % 100}`],
      exit: i % 3,
      durationMs: 1200 + (i % 977),
      stdout: { digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', size: i * 13, preview: `ok ${i}` },
    },
  };
}

/** The baseline: the same table, the same pragmas, the same rows; no canonical JSON, no hashing, no chain. */
function bareTable(file: string): { db: Database.Database; insert: Database.Statement } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE entries (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, actor TEXT NOT NULL, sandbox_id TEXT, kind TEXT NOT NULL,
    payload TEXT NOT NULL, prev_hash BLOB NOT NULL, hash BLOB NOT NULL);
    CREATE INDEX entries_by_sandbox ON entries(sandbox_id, seq) WHERE sandbox_id IS NOT NULL;`);
  return { db, insert: db.prepare('INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?)') };
}
const ZERO = Buffer.alloc(32);

function fresh(name: string): string {
  const dir = join(TMP, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}
const open = (dir: string) =>
  Ledger.open(join(dir, 'ledger.db'), { keyDir: join(TMP, 'keys'), checkpointEveryMs: 0, checkpointOnClose: false });

/**
 * Times the ledger and its baseline in alternating short segments, so that load from other processes
 * on this shared machine falls on both sides alike; the ratio is what to read.
 */
async function interleaved(
  segments: number,
  ledgerSegment: (segment: number) => Promise<number> | number,
  bareSegment: (segment: number) => Promise<number> | number,
): Promise<{ ledger: number; bare: number }> {
  let ledgerMs = 0;
  let bareMs = 0;
  let ledgerN = 0;
  let bareN = 0;
  for (let s = 0; s < segments; s++) {
    for (const side of s % 2 === 0 ? (['ledger', 'bare'] as const) : (['bare', 'ledger'] as const)) {
      const t = performance.now();
      const n = await (side === 'ledger' ? ledgerSegment(s) : bareSegment(s));
      if (side === 'ledger') {
        ledgerMs += performance.now() - t;
        ledgerN += n;
      } else {
        bareMs += performance.now() - t;
        bareN += n;
      }
    }
  }
  return { ledger: ledgerN / (ledgerMs / 1000), bare: bareN / (bareMs / 1000) };
}

interface Bare {
  db: Database.Database;
  insert: Database.Statement;
  seq: number;
}
function openBare(name: string): Bare {
  return { ...bareTable(join(fresh(name), 'bare.db')), seq: 0 };
}
const bareRow = (b: Bare, r: AppendInput, time: string) =>
  b.insert.run(++b.seq, time, r.actor, r.sandboxId, r.kind, JSON.stringify(r.payload), ZERO, ZERO);

/** One durable transaction per entry, alternating ledger and baseline op by op (fsync latency drifts). */
function singleAppends(n: number): { ledger: number; bare: number } {
  const l = open(fresh('single'));
  const b = openBare('bare-single');
  let ledgerMs = 0;
  let bareMs = 0;
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    l.append(row(i));
    ledgerMs += performance.now() - t;
    t = performance.now();
    bareRow(b, row(i), new Date().toISOString());
    bareMs += performance.now() - t;
  }
  l.close();
  b.db.close();
  return { ledger: n / (ledgerMs / 1000), bare: n / (bareMs / 1000) };
}

/** `producers` concurrent callers, each awaiting one append after another, through group commit. */
async function groupCommit(n: number, producers: number): Promise<{ ledger: number; bare: number; batch: number }> {
  const segments = 10;
  const drive = async (append: (i: number) => Promise<unknown>, base: number) => {
    const per = Math.ceil(n / segments / producers);
    await Promise.all(
      Array.from({ length: producers }, async (_, p) => {
        for (let k = 0; k < per; k++) await append(base + p * per + k);
      }),
    );
    return per * producers;
  };
  const l = open(fresh(`group-${producers}`));
  // The same producers and the same group-commit machinery over bare INSERTs.
  const b = openBare(`bare-group-${producers}`);
  const tx = b.db.transaction((items: AppendInput[]) => {
    const time = new Date().toISOString();
    for (const r of items) bareRow(b, r, time);
    return items;
  });
  const committer = new GroupCommitter<AppendInput, AppendInput>((items) => tx.immediate(items));
  const r = await interleaved(
    segments,
    (s) => drive((i) => l.enqueue(row(i)), s * n),
    (s) => drive((i) => committer.enqueue(row(i)), s * n),
  );
  const batch = l.stats.entries / l.stats.commits;
  l.close();
  b.db.close();
  return { ...r, batch };
}

/** appendBatch against a bare transaction of the same rows: the cost of hashing and chaining alone. */
async function batches(n: number, size: number): Promise<{ ledger: number; bare: number }> {
  const l = open(fresh('batch'));
  const b = openBare('bare-batch');
  const tx = b.db.transaction((rows: AppendInput[]) => {
    const time = new Date().toISOString();
    for (const r of rows) bareRow(b, r, time);
  });
  const r = await interleaved(
    n / size,
    (s) => (l.appendBatch(Array.from({ length: size }, (_, k) => row(s * size + k))), size),
    (s) => (tx.immediate(Array.from({ length: size }, (_, k) => row(s * size + k))), size),
  );
  l.close();
  b.db.close();
  return r;
}

function build(dir: string, n: number): { file: string; seconds: number } {
  const l = open(dir);
  const t = performance.now();
  for (let i = 0; i < n; i += 10_000) l.appendBatch(Array.from({ length: Math.min(10_000, n - i) }, (_, k) => row(i + k)));
  l.checkpoint();
  const seconds = (performance.now() - t) / 1000;
  l.close();
  return { file: join(dir, 'ledger.db'), seconds };
}

function sha256Rate(): { mbPerS: number; smallPerS: number } {
  const big = Buffer.alloc(256 << 20, 7);
  let t = performance.now();
  hash('sha256', big);
  const mbPerS = 256 / ((performance.now() - t) / 1000);
  // One call per canonical entry-sized message: what verification cannot avoid.
  const msg = `\u0000${'x'.repeat(330)}`;
  t = performance.now();
  for (let i = 0; i < 1_000_000; i++) hash('sha256', msg);
  return { mbPerS, smallPerS: 1_000_000 / ((performance.now() - t) / 1000) };
}

/** Runs in a child: verify one file and report the peak RSS of that process. */
function verifyChild(file: string, workers: string): void {
  const t = performance.now();
  const v = verifyLedgerFile(file, { keyDir: join(TMP, 'keys'), workers: Number(workers) });
  const seconds = (performance.now() - t) / 1000;
  process.stdout.write(JSON.stringify({ ok: v.ok, entries: v.entries, seconds, maxRssKb: process.resourceUsage().maxRSS }));
}

function verifyInChild(file: string, workers: number): { ok: boolean; entries: number; seconds: number; maxRssKb: number } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--verify-child', file, String(workers)], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`verify child failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { ok: boolean; entries: number; seconds: number; maxRssKb: number };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--verify-child') return verifyChild(process.argv[3]!, process.argv[4]!);
  mkdirSync(TMP, { recursive: true });
  const loadStart = loadavg();

  const single = singleAppends(3000);
  const many = await groupCommit(200_000, 1000);
  const few = await groupCommit(100_000, 32);
  const batched = await batches(200_000, 1000);
  if (process.argv.includes('--appends-only')) {
    console.log({ single, many, few, batched });
    return;
  }
  const sha = sha256Rate();

  const big = build(fresh('big'), BIG);
  const small = build(fresh('small'), SMALL);

  // Verification: in this process for timing (median of 3), then RSS in fresh processes.
  const timings: number[] = [];
  let result = verifyLedgerFile(big.file, { keyDir: join(TMP, 'keys') });
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    result = verifyLedgerFile(big.file, { keyDir: join(TMP, 'keys') });
    timings.push((performance.now() - t) / 1000);
  }
  const verifySeconds = summarize(timings).p50;
  const t1 = performance.now();
  verifyLedgerFile(big.file, { keyDir: join(TMP, 'keys'), workers: 1 });
  const oneThread = (performance.now() - t1) / 1000;
  const db = new Database(big.file, { readonly: true });
  const avgCanonical = (db.prepare('SELECT AVG(length(payload)) FROM entries').pluck().get() as number) + 220; // + fixed fields
  db.close();

  // Inclusion proofs in the 1M tree (the tree cache was filled by the checkpoint in build()).
  const l = open(join(TMP, 'big'));
  const proofTimes: number[] = [];
  for (let i = 0; i < 500; i++) {
    const seq = 1 + Math.floor(Math.random() * BIG);
    const t = performance.now();
    l.inclusionProof(seq, BIG);
    proofTimes.push(performance.now() - t);
  }
  l.close();
  const proof = summarize(proofTimes);

  const rssSmall = verifyInChild(small.file, 0);
  const rssBig = verifyInChild(big.file, 0);
  const workers = Math.min(availableParallelism(), 4);

  const rate = BIG / verifySeconds;
  const hashedMb = (rate * (avgCanonical + 65)) / 1e6; // entry text plus one 65-byte internal node per entry
  const lines = ledgerReport({
    loadStart,
    single,
    many,
    few,
    batched,
    sha,
    big,
    verifySeconds,
    verified: result.ok,
    oneThread,
    avgCanonical,
    proof,
    rssSmall,
    rssBig,
    workers,
    rate,
    hashedMb,
  });
  for (const line of lines) console.log(line);
  writeResultsSection('ledger', lines.join('\n'));
  rmSync(TMP, { recursive: true, force: true });
}

await main();
