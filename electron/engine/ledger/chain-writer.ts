// The ledger's write path. Every append is one BEGIN IMMEDIATE transaction that reads the head inside
// the write lock, so the chain cannot fork when several processes append to the same file; each entry
// is hashed onto the chain as it is inserted. Appends of one turn of the event loop share a
// transaction (group commit), and a live process never holds its event loop long on another
// process's lock: one commit attempt waits a moment, the group committer tries again later.
import type Database from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import type { LedgerEntry } from '../../../shared/types/ledger.js';
import { entryCanonical, entryHash, GENESIS_HASH } from './canonical.js';
import { GroupCommitter } from './group-commit.js';
import { prepareAppend, type AppendInput, type PreparedAppend } from './input.js';

/** How long a sync append waits for another process's write lock (and async ones in all). */
export const DEFAULT_BUSY_TIMEOUT_MS = 15_000;
/** The busy wait of one async commit attempt: short, since it holds the event loop. */
export const ASYNC_BUSY_MS = 20;

export function isBusy(err: unknown): boolean {
  return typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');
}

export class ChainWriter {
  /** Transactions and entries this instance committed (for diagnostics and the bench). */
  readonly stats = { commits: 0, entries: 0 };
  private readonly listeners = new Set<(e: LedgerEntry) => void>();
  private readonly insertMany: (items: PreparedAppend[]) => LedgerEntry[];
  private readonly committer: GroupCommitter<PreparedAppend, LedgerEntry>;
  private closing = false;

  /** `live` throws once the ledger is closed. */
  constructor(
    private readonly db: Database.Database,
    file: string,
    private readonly busyTimeoutMs: number,
    private readonly live: () => void,
  ) {
    const head = db.prepare('SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1').raw(true);
    const insert = db.prepare(
      'INSERT INTO entries (seq, time, actor, sandbox_id, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
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
        const hash = entryHash(
          entryCanonical({ seq, time, actor: it.actor, sandboxId: it.sandboxId, kind: it.kind, payloadJson: it.payloadJson, prevHash }),
        );
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
      waitMs: busyTimeoutMs,
      expired: (err) =>
        new WardenError(
          'E_LEDGER',
          `the ledger is locked by another process and stayed locked for ${busyTimeoutMs / 1000} s (${(err as Error).message})`,
          `see which process holds ${file} (lsof ${file}); nothing was done meanwhile`,
        ),
    });
  }

  /**
   * One commit attempt that does not hold the event loop while another process has the lock (a
   * short busy wait; the group committer tries again later). On close it waits as long as sync appends do.
   */
  private commitWithoutWaiting(items: PreparedAppend[]): LedgerEntry[] {
    if (this.closing) return this.commit(items);
    return this.withBusyTimeout(ASYNC_BUSY_MS, () => this.commit(items));
  }

  withBusyTimeout<T>(ms: number, body: () => T): T {
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

  append(e: AppendInput): LedgerEntry {
    return this.commit([prepareAppend(e)])[0]!;
  }

  appendBatch(es: AppendInput[]): LedgerEntry[] {
    if (es.length === 0) return [];
    return this.commit(es.map(prepareAppend));
  }

  appendBatchAsync(es: AppendInput[]): Promise<LedgerEntry[]> {
    try {
      this.live();
      if (es.length === 0) return Promise.resolve([]);
      return this.committer.enqueueAll(es.map(prepareAppend));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  enqueue(e: AppendInput): Promise<LedgerEntry> {
    try {
      this.live();
      // Checked now, so one bad request is rejected alone instead of failing its whole batch.
      return this.committer.enqueue(prepareAppend(e));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  subscribe(fn: (e: LedgerEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** On close: what is queued is committed now, waiting for the lock as long as a sync append would. */
  flush(): void {
    this.closing = true;
    this.committer.flush(true);
  }

  close(): void {
    this.listeners.clear();
  }
}
