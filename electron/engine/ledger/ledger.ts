// The audit ledger: one SQLite file, append-only, hash-chained, with a Merkle tree and signed
// checkpoints. Several processes (the app, the CLI, `warden serve`) may append to the same file:
// every append is one BEGIN IMMEDIATE transaction that reads the head inside the write lock, so the
// chain cannot fork, and the busy timeout makes the others wait their turn instead of failing.
import { mkdirSync } from 'node:fs';
import { keepPrivate } from './private-file.js';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import type { LedgerBrowse, LedgerEntry, LedgerQuery, SignedCheckpoint, VerifyResult } from '../../../shared/types/ledger.js';
import { BlobStore, type BlobRef } from './blobs.js';
import { GENESIS_HASH } from './canonical.js';
import { ASYNC_BUSY_MS, ChainWriter, DEFAULT_BUSY_TIMEOUT_MS, isBusy } from './chain-writer.js';
import { checkpointFileFor } from './checkpoint-file.js';
import { latestCheckpointSize, signCheckpoint, type CheckpointReason } from './checkpoint.js';
import type { AppendInput } from './input.js';
import { browseEntries, browseSteps, distinctValues, kindsAndActors, queryEntries } from './query.js';
import { defaultKeyDir } from './paths.js';
import { applySchema, LEDGER_FORMAT, readMeta } from './schema.js';
import type { SignerKey } from './note.js';
import { loadOrCreateSigner } from './signing.js';
import { checkTreeSize, consistencyProof, inclusionProof, type ConsistencyProofResult, type InclusionProofResult } from './proofs.js';
import { TreeStore } from './tree-store.js';
import { verifyLedger, verifyLedgerAsync, type VerifyOptions, type VerifySource } from './verify.js';

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

export type { ConsistencyProofResult, InclusionProofResult } from './proofs.js';

export class Ledger {
  private readonly tree: TreeStore;
  private readonly blobs: BlobStore;
  private readonly writer: ChainWriter;
  private readonly timer: NodeJS.Timeout | null = null;
  private closed = false;
  private reportedError = '';

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
    this.writer = new ChainWriter(db, file, this.busyTimeoutMs, () => this.live());
    const every = opts.checkpointEveryMs ?? 60_000;
    if (every > 0) {
      this.timer = setInterval(() => this.scheduledCheckpoint(), every);
      this.timer.unref();
    }
  }

  /** Opens (creating on first run: file, schema, triggers, key) the ledger at `file`. */
  static open(file: string, opts: LedgerOptions = {}): Ledger {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    keepPrivate(file);
    const db = new Database(file, { timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    try {
      const origin = applySchema(db);
      const format = readMeta(db, 'format');
      if (format !== LEDGER_FORMAT)
        throw new WardenError('E_LEDGER', `${file} is a ${format ?? 'unknown'} ledger; this Warden reads ${LEDGER_FORMAT}`);
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

  /** Transactions and entries this instance committed (for diagnostics and the bench). */
  get stats(): { commits: number; entries: number } {
    return this.writer.stats;
  }

  /** Appends one entry; durable (fsynced) when it returns. */
  append(e: AppendInput): LedgerEntry {
    return this.writer.append(e);
  }

  /** Appends all or none, in one transaction. */
  appendBatch(es: AppendInput[]): LedgerEntry[] {
    return this.writer.appendBatch(es);
  }

  /**
   * appendBatch() for a live process: all or none, in one transaction (group-committed with other
   * appends of the same turn), without blocking the event loop while another process holds the
   * write lock. Rejects (E_LEDGER) if the lock is still held after the busy timeout: fail closed.
   */
  appendBatchAsync(es: AppendInput[]): Promise<LedgerEntry[]> {
    return this.writer.appendBatchAsync(es);
  }

  /** Group commit: resolves once this entry and the others queued with it are durable. */
  enqueue(e: AppendInput): Promise<LedgerEntry> {
    return this.writer.enqueue(e);
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
    checkTreeSize(size, this.head().size);
    return this.tree.root(size).toString('hex');
  }

  inclusionProof(seq: number, treeSize = this.head().size): InclusionProofResult {
    this.live();
    checkTreeSize(treeSize, this.head().size);
    return inclusionProof(this.db, this.tree, seq, treeSize);
  }

  consistencyProof(fromSize: number, toSize = this.head().size): ConsistencyProofResult {
    this.live();
    checkTreeSize(toSize, this.head().size);
    return consistencyProof(this.tree, fromSize, toSize);
  }

  /** Signs a checkpoint of the whole ledger now and writes it to the checkpoint file too. */
  checkpoint(reason: CheckpointReason = 'manual'): SignedCheckpoint {
    this.live();
    return signCheckpoint({ db: this.db, tree: this.tree, signer: this.signer, origin: this.origin, file: this.checkpointFile }, reason);
  }

  /** Past checkpoints, oldest first (the signed notes). */
  checkpoints(limit = 1000): Array<{ size: number; time: string; reason: string; note: string }> {
    this.live();
    return (
      this.db.prepare('SELECT size, time, reason, note FROM checkpoints ORDER BY id DESC LIMIT ?').all(limit) as Array<{
        size: number;
        time: string;
        reason: string;
        note: string;
      }>
    ).reverse();
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
      if (this.head().size !== (latestCheckpointSize(this.db) ?? -1))
        this.writer.withBusyTimeout(ASYNC_BUSY_MS, () => this.checkpoint('schedule'));
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
    return this.writer.subscribe(fn);
  }

  close(): void {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.writer.flush();
    if (this.opts.checkpointOnClose ?? true) {
      try {
        const size = this.head().size;
        if (size > 0 && size !== latestCheckpointSize(this.db)) this.checkpoint('close');
      } catch (err) {
        this.reportCheckpointError(err);
      }
    }
    this.closed = true;
    this.writer.close();
    this.db.close();
  }
}
