// Group commit: appends requested in the same turn of the event loop share one transaction and one
// fsync, and each caller's promise resolves only after that commit is durable.
//
// setImmediate (not a timer) collects the batch: callers pay no added latency when idle, and under
// load every request that arrived while the previous commit was being written goes into the next.

interface Waiter<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

export class GroupCommitter<I, O> {
  private queue: Array<Waiter<I, O>> = [];
  private scheduled = false;

  constructor(
    private readonly commit: (items: I[]) => O[],
    private readonly maxBatch = 10_000,
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  enqueue(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now; also called on close so no acknowledged-to-be request is lost. */
  flush(): void {
    this.scheduled = false;
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      let results: O[];
      try {
        results = this.commit(batch.map((w) => w.item));
      } catch (err) {
        for (const w of batch) w.reject(err);
        continue;
      }
      batch.forEach((w, i) => w.resolve(results[i]!));
    }
  }
}
