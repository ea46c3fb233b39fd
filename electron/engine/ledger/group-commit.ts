// Group commit: appends requested in the same turn of the event loop share one transaction and one
// fsync, and each caller's promise resolves only after that commit is durable.
//
// setImmediate (not a timer) collects the batch: callers pay no added latency when idle, and under
// load every request that arrived while the previous commit was being written goes into the next.
//
// When another process holds the write lock, the commit is not waited for on the event loop (the
// connection's busy wait is kept short): the batch stays queued, in order, and is tried again after
// a growing pause, until each caller's deadline; then that caller is refused (fail closed).

interface Waiter<I, O> {
  /** Committed together, in one transaction, or not at all. */
  items: I[];
  deadline: number;
  resolve: (value: O[]) => void;
  reject: (err: unknown) => void;
}

export interface BusyRetry {
  /** Whether the commit failed only because another connection holds the lock. */
  isBusy(err: unknown): boolean;
  /** How long a caller may wait for the lock in all, ms. */
  waitMs: number;
  /** The error a caller gets when its deadline passes with the lock still held. */
  expired(err: unknown): unknown;
}

const FIRST_PAUSE_MS = 5;
const MAX_PAUSE_MS = 250;

export class GroupCommitter<I, O> {
  private queue: Array<Waiter<I, O>> = [];
  private scheduled = false;
  private pauseMs = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly commit: (items: I[]) => O[],
    private readonly maxBatch = 10_000,
    private readonly retry?: BusyRetry,
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  enqueue(item: I): Promise<O> {
    return this.enqueueAll([item]).then((out) => out[0]!);
  }

  /** All of items in one transaction (never split across batches), in order. */
  enqueueAll(items: I[]): Promise<O[]> {
    return new Promise<O[]>((resolve, reject) => {
      this.queue.push({ items, deadline: Date.now() + (this.retry?.waitMs ?? 0), resolve, reject });
      if (!this.scheduled && !this.timer) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now; also called on close so no acknowledged-to-be request is lost. */
  flush(final = false): void {
    this.scheduled = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.queue.length) {
      const batch: Array<Waiter<I, O>> = [];
      let size = 0;
      while (this.queue.length && (batch.length === 0 || size + this.queue[0]!.items.length <= this.maxBatch)) {
        const w = this.queue.shift()!;
        batch.push(w);
        size += w.items.length;
      }
      let results: O[];
      try {
        results = this.commit(batch.flatMap((w) => w.items));
      } catch (err) {
        if (!final && this.retry?.isBusy(err)) {
          this.waitForLock(batch, err);
          return;
        }
        for (const w of batch) w.reject(err);
        continue;
      }
      this.pauseMs = 0;
      let at = 0;
      for (const w of batch) {
        w.resolve(results.slice(at, at + w.items.length));
        at += w.items.length;
      }
    }
  }

  /** The lock is held elsewhere: refuse whoever is out of time, keep the rest first in line, try later. */
  private waitForLock(batch: Array<Waiter<I, O>>, err: unknown): void {
    const now = Date.now();
    const keep = batch.filter((w) => {
      if (w.deadline > now) return true;
      w.reject(this.retry!.expired(err));
      return false;
    });
    this.queue.unshift(...keep);
    if (this.queue.length === 0) return;
    this.pauseMs = Math.min(MAX_PAUSE_MS, this.pauseMs ? this.pauseMs * 2 : FIRST_PAUSE_MS);
    const soonest = Math.min(...this.queue.map((w) => w.deadline));
    this.timer = setTimeout(() => this.flush(), Math.max(0, Math.min(this.pauseMs, soonest - now)));
  }
}
