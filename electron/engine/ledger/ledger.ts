// The audit ledger: one SQLite file, append-only, hash-chained, with a Merkle tree and signed
// checkpoints. Several processes (the app, the CLI, `warden serve`) may append to the same file:
// every append is one BEGIN IMMEDIATE transaction that reads the head inside the write lock, so the
// chain cannot fork, and the busy timeout makes the others wait their turn instead of failing.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import type { LedgerBrowse, LedgerEntry, LedgerQuery, SignedCheckpoint, VerifyResult } from '../../../shared/types/ledger.js';
import { BlobStore, type BlobRef } from './blobs.js';
import { entryCanonical, entryHash, GENESIS_HASH } from './canonical.js';
import { checkpointFileFor } from './checkpoint-file.js';
import { latestCheckpointSize, signCheckpoint, type CheckpointReason } from './checkpoint.js';
import { GroupCommitter } from './group-commit.js';
import { prepareAppend, type AppendInput, type PreparedAppend } from './input.js';
import { browseEntries, browseSteps, distinctValues, kindsAndActors, queryEntries } from './query.js';
import { defaultKeyDir } from './paths.js';
import { applySchema, LEDGER_FORMAT, readMeta } from './schema.js';
import type { SignerKey } from './note.js';
import { loadOrCreateSigner } from './signing.js';
import { TreeStore } from './tree-store.js';
import { verifyLedger, verifyLedgerAsync, type VerifyOptions, type VerifySource } from './verify.js';

/** How long a sync append waits for another process's write lock (and async ones in all). */
const DEFAULT_BUSY_TIMEOUT_MS = 15_000;
/** The busy wait of one async commit attempt: short, since it holds the event loop. */
const ASYNC_BUSY_MS = 20;

function isBusy(err: unknown): boolean {
  return typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');
}

/** Seqs scanned per step by browseAsync (~15 ms of a filtered scan). */
const BROWSE_WINDOW = 32768;

export interface LedgerOptions {
  /** Where the Ed25519 key lives; default WARDEN_HOME/keys. */
  keyDir?: string;
  /** Sign a checkpoint this often when entries were added (0: only on export, close or demand). Default 60 s. */
  checkpointEveryMs?: number;
  /** The newest checkpoint, outside the database; default `<file>.checkpoint`. */
  checkpointFile?: string;
  /** Content-addressed blobs; default `<dir of file>/blobs`. */
  blobDir?: string;
  /** How long an append waits for another process's write lock (sync: blocking; async: retried, the loop free); default 15 s. */
  busyTimeoutMs?: number;
  /** Sign a checkpoint on close() if entries were added since the last one; default true. */
  checkpointOnClose?: boolean;
  /** Called when a scheduled checkpoint fails (the ledger keeps working; verify will say why). */
  onCheckpointError?(err: unknown): void;
}

export type { AppendInput } from './input.js';

export interface InclusionProofResult {
  seq: number;
  treeSize: number;
  leafHash: string;
  root: string;
  path: string[];
}

export interface ConsistencyProofResult {
  fromSize: number;
  toSize: number;
  fromRoot: string;
  toRoot: string;
  path: string[];
}

export class Ledger {
  private readonly tree: TreeStore;
  private readonly blobs: BlobStore;
  private readonly committer: GroupCommitter<PreparedAppend, LedgerEntry>;
  private readonly listeners = new Set<(e: LedgerEntry) => void>();
  private readonly insertMany: (items: PreparedAppend[]) => LedgerEntry[];
  private readonly timer: NodeJS.Timeout | null = null;
  private closed = false;
  private closing = false;
  private reportedError = '';
  /** Transactions and entries this instance committed (for diagnostics and the bench). */
  readonly stats = { commits: 0, entries: 0 };

  private constructor(
    readonly file: string,
    private readonly db: Database.Database,
    readonly origin: string,
    private readonly signer: SignerKey,
    private readonly opts: LedgerOptions,
    readonly checkpointFile: string,
  ) {
    this.tree = new TreeStore(db);
    this.blobs = new BlobStore(opts.blobDir ?? join(dirname(file), 'blobs'));
    const head = db.prepare('SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1').raw(true);
    const insert = db.prepare('INSERT INTO entries (seq, time, actor, sandbox_id, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const tx = db.transaction((items: PreparedAppend[]): LedgerEntry[] => {
      // Read the head inside the write lock: another process may have appended since our last look.
      const last = head.get() as [number, Buffer] | undefined;
      let seq = last ? last[0] : 0;
      let prevHash = last ? last[1].toString('hex') : GENESIS_HASH;
      let prevBuf = last ? last[1] : Buffer.from(GENESIS_HASH, 'hex');
      const time = new Date().toISOString();
      const out: LedgerEntry[] = new Array<LedgerEntry>(items.length);
      for (let i = 0; i < items.length; i++) {
        const it = items[i]!;
        seq += 1;
        const hash = entryHash(entryCanonical({ seq, time, actor: it.actor, sandboxId: it.sandboxId, kind: it.kind, payloadJson: it.payloadJson, prevHash }));
        const hashBuf = Buffer.from(hash, 'hex');
        insert.run(seq, time, it.actor, it.sandboxId, it.kind, it.payloadJson, prevBuf, hashBuf);
        out[i] = { seq, time, actor: it.actor, sandboxId: it.sandboxId, kind: it.kind, payload: it.payload, prevHash, hash };
        prevHash = hash;
        prevBuf = hashBuf;
      }
      return out;
    });
    this.insertMany = (items) => tx.immediate(items);
    this.committer = new GroupCommitter((items) => this.commitWithoutWaiting(items), 10_000, {
      isBusy,
      waitMs: this.busyTimeoutMs,
      expired: (err) => new WardenError('E_LEDGER', `the ledger is locked by another process and stayed locked for ${this.busyTimeoutMs / 1000} s (${(err as Error).message})`, `see which process holds ${file} (lsof ${file}); nothing was done meanwhile`),
    });
    const every = opts.checkpointEveryMs ?? 60_000;
    if (every > 0) {
      this.timer = setInterval(() => this.scheduledCheckpoint(), every);
      this.timer.unref();
    }
  }

  /** Opens (creating on first run: file, schema, triggers, key) the ledger at `file`. */
  static open(file: string, opts: LedgerOptions = {}): Ledger {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const db = new Database(file, { timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    try {
      const origin = applySchema(db);
      const format = readMeta(db, 'format');
      if (format !== LEDGER_FORMAT) throw new WardenError('E_LEDGER', `${file} is a ${format ?? 'unknown'} ledger; this Warden reads ${LEDGER_FORMAT}`);
      const signer = loadOrCreateSigner(opts.keyDir ?? defaultKeyDir());
      return new Ledger(file, db, origin, signer, opts, opts.checkpointFile ?? checkpointFileFor(file));
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private live(): void {
    if (this.closed) throw new WardenError('E_LEDGER', 'the ledger is closed');
  }

  private get busyTimeoutMs(): number {
    return this.opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  }

  /**
   * One commit attempt that does not hold the event loop while another process has the lock (a
   * short busy wait; the group committer tries again later). On close it waits as long as sync appends do.
   */
  private commitWithoutWaiting(items: PreparedAppend[]): LedgerEntry[] {
    if (this.closing) return this.commit(items);
    return this.withBusyTimeout(ASYNC_BUSY_MS, () => this.commit(items));
  }

  private withBusyTimeout<T>(ms: number, body: () => T): T {
    this.db.pragma(`busy_timeout = ${ms}`);
    try {
      return body();
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  private commit(items: PreparedAppend[]): LedgerEntry[] {
    this.live();
    const entries = this.insertMany(items);
    this.stats.commits += 1;
    this.stats.entries += entries.length;
    for (const e of entries) {
      for (const fn of this.listeners) {
        try {
          fn(e);
        } catch {
          // A broken subscriber must not undo or delay an append that is already durable.
        }
      }
    }
    return entries;
  }

  /** Appends one entry; durable (fsynced) when it returns. */
  append(e: AppendInput): LedgerEntry {
    return this.commit([prepareAppend(e)])[0]!;
  }

  /** Appends all or none, in one transaction. */
  appendBatch(es: AppendInput[]): LedgerEntry[] {
    if (es.length === 0) return [];
    return this.commit(es.map(prepareAppend));
  }

  /**
   * appendBatch() for a live process: all or none, in one transaction (group-committed with other
   * appends of the same turn), without blocking the event loop while another process holds the
   * write lock. Rejects (E_LEDGER) if the lock is still held after the busy timeout: fail closed.
   */
  appendBatchAsync(es: AppendInput[]): Promise<LedgerEntry[]> {
    try {
      this.live();
      if (es.length === 0) return Promise.resolve([]);
      return this.committer.enqueueAll(es.map(prepareAppend));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Group commit: resolves once this entry and the others queued with it are durable. */
  enqueue(e: AppendInput): Promise<LedgerEntry> {
    try {
      this.live();
      // Checked now, so one bad request is rejected alone instead of failing its whole batch.
      return this.committer.enqueue(prepareAppend(e));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  storeBlob(bytes: Uint8Array): { digest: string; size: number } {
    return this.blobs.put(bytes);
  }

  readBlob(digest: string): Buffer | null {
    return this.blobs.get(digest);
  }

  /** Keeps `bytes` as a blob and returns what a payload should hold about them: digest, size, preview. */
  blobRef(bytes: Uint8Array, previewChars = 200): BlobRef {
    return this.blobs.ref(bytes, previewChars);
  }

  entries(q: LedgerQuery = {}): LedgerEntry[] {
    this.live();
    return queryEntries(this.db, q);
  }

  /** A page of the ledger view: newest first, filtered. */
  browse(q: LedgerBrowse = {}): { entries: LedgerEntry[]; nextBeforeSeq: number | null } {
    this.live();
    return browseEntries(this.db, q);
  }

  /**
   * browse() for a live process: a filter without an index is scanned in windows of seqs, with the
   * event loop let through between them (a rare kind in a million entries is a full-table scan).
   */
  async browseAsync(q: LedgerBrowse = {}, window = BROWSE_WINDOW): Promise<{ entries: LedgerEntry[]; nextBeforeSeq: number | null }> {
    this.live();
    const steps = browseSteps(this.db, q, window);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      await new Promise((r) => setImmediate(r));
      this.live();
    }
  }

  /** The kinds and actors present, for filter menus (a full-table scan: see kindsAndActors for slices). */
  distinct(column: 'kind' | 'actor'): string[] {
    this.live();
    return distinctValues(this.db, column);
  }

  /** The kinds and actors of entries fromSeq..toSeq, for filter menus kept up to date a slice at a time. */
  kindsAndActors(fromSeq: number, toSeq: number): { kinds: string[]; actors: string[] } {
    this.live();
    return kindsAndActors(this.db, fromSeq, toSeq);
  }

  head(): { size: number; hash: string } {
    this.live();
    const last = this.db.prepare('SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1').raw(true).get() as [number, Buffer] | undefined;
    return last ? { size: last[0], hash: last[1].toString('hex') } : { size: 0, hash: GENESIS_HASH };
  }

  /** RFC 6962 root of the first `size` entries (default: all). */
  root(size = this.head().size): string {
    this.live();
    this.checkSize(size);
    return this.tree.root(size).toString('hex');
  }

  inclusionProof(seq: number, treeSize = this.head().size): InclusionProofResult {
    this.live();
    this.checkSize(treeSize);
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > treeSize) throw new WardenError('E_NOT_FOUND', `no entry ${seq} in a tree of ${treeSize}`);
    const path = this.tree.inclusion(seq - 1, treeSize).map((h) => h.toString('hex'));
    const leaf = this.db.prepare('SELECT hash FROM entries WHERE seq = ?').pluck().get(seq) as Buffer;
    return { seq, treeSize, leafHash: leaf.toString('hex'), root: this.tree.root(treeSize).toString('hex'), path };
  }

  consistencyProof(fromSize: number, toSize = this.head().size): ConsistencyProofResult {
    this.live();
    this.checkSize(toSize);
    if (!Number.isSafeInteger(fromSize) || fromSize < 0 || fromSize > toSize) throw new WardenError('E_BAD_INPUT', `no consistency proof from ${fromSize} to ${toSize}`);
    const path = this.tree.consistency(fromSize, toSize).map((h) => h.toString('hex'));
    return { fromSize, toSize, fromRoot: this.tree.root(fromSize).toString('hex'), toRoot: this.tree.root(toSize).toString('hex'), path };
  }

  private checkSize(size: number): void {
    const max = this.head().size;
    if (!Number.isSafeInteger(size) || size < 0 || size > max) throw new WardenError('E_BAD_INPUT', `tree size ${size} is outside 0..${max}`);
  }

  /** Signs a checkpoint of the whole ledger now and writes it to the checkpoint file too. */
  checkpoint(reason: CheckpointReason = 'manual'): SignedCheckpoint {
    this.live();
    return signCheckpoint({ db: this.db, tree: this.tree, signer: this.signer, origin: this.origin, file: this.checkpointFile }, reason);
  }

  /** Past checkpoints, oldest first (the signed notes). */
  checkpoints(limit = 1000): Array<{ size: number; time: string; reason: string; note: string }> {
    this.live();
    return (this.db.prepare('SELECT size, time, reason, note FROM checkpoints ORDER BY id DESC LIMIT ?').all(limit) as Array<{ size: number; time: string; reason: string; note: string }>).reverse();
  }

  get publicKey(): { vkey: string; keyName: string; keyId: string; spkiPem: string } {
    return {
      vkey: this.signer.vkey,
      keyName: this.signer.name,
      keyId: this.signer.keyId.toString('hex'),
      spkiPem: this.signer.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    };
  }

  private scheduledCheckpoint(): void {
    if (this.closed) return;
    try {
      // Never a long busy wait on the event loop: with the lock held elsewhere, the next round signs.
      if (this.head().size !== (latestCheckpointSize(this.db) ?? -1)) this.withBusyTimeout(ASYNC_BUSY_MS, () => this.checkpoint('schedule'));
    } catch (err) {
      if (!isBusy(err)) this.reportCheckpointError(err);
    }
  }

  private reportCheckpointError(err: unknown): void {
    if (this.opts.onCheckpointError) return this.opts.onCheckpointError(err);
    const message = err instanceof Error ? err.message : String(err);
    if (message === this.reportedError) return;
    this.reportedError = message;
    process.stderr.write(`warden: ledger checkpoint failed: ${message}\n`);
  }

  private verifySource(): VerifySource {
    return { db: this.db, file: this.file, origin: this.origin, verifier: this.signer, checkpointFile: this.checkpointFile };
  }

  /** Full verification: every hash, the chain, seq continuity, the Merkle root against every signed checkpoint. */
  verify(opts: VerifyOptions = {}): VerifyResult {
    this.live();
    return verifyLedger(this.verifySource(), opts);
  }

  /**
   * verify() for a live process (the UI): the same verdict, progress as it goes, and the event loop
   * kept free (worker results come as messages; ranges done here are interleaved with other work).
   * Entries appended meanwhile are past the verified size and do not change the verdict.
   */
  async verifyAsync(opts: VerifyOptions = {}): Promise<VerifyResult> {
    this.live();
    return verifyLedgerAsync(this.verifySource(), opts);
  }

  /** Appends made by this process, as they commit (for the live UI). Returns the unsubscribe. */
  subscribe(fn: (e: LedgerEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close(): void {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.closing = true;
    this.committer.flush(true);
    if (this.opts.checkpointOnClose ?? true) {
      try {
        const size = this.head().size;
        if (size > 0 && size !== latestCheckpointSize(this.db)) this.checkpoint('close');
      } catch (err) {
        this.reportCheckpointError(err);
      }
    }
    this.closed = true;
    this.listeners.clear();
    this.db.close();
  }
}
