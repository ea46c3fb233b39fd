// Keeps every running sandbox's resource history while the door is up, whether or not a window is
// open: it watches each running sandbox through the StatsHub (one shared stream per sandbox, the
// same the windows use) and writes the samples, as rates for the network, to the history store in
// one transaction a second. Sandboxes are followed by engine events, and listed again after a
// reconnect or a resync.
import type { StatsSample } from '../../shared/types/stats.js';
import type { StatsHistory, StatsHistoryRequest } from '../../shared/types/timeline.js';
import type { HistorySample, StatsHistoryStore } from '../engine/stats-history/history-store.js';
import type { EngineSource } from './engine-source.js';

/** What the recorder needs of the StatsHub. */
export interface StatsTap {
  watch(id: string, sink: (sample: StatsSample) => void): void;
  unwatch(id: string, sink: (sample: StatsSample) => void): void;
}

const FLUSH_MS = 1000;
const STARTS = new Set(['start', 'restart', 'unpause']);
const ENDS = new Set(['die', 'stop', 'remove']);

export class StatsRecorder {
  private readonly watched = new Set<string>();
  private readonly previous = new Map<string, StatsSample>();
  private pending: HistorySample[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly offs: Array<() => void>;
  private closed = false;
  private readonly sink = (sample: StatsSample) => this.take(sample);

  constructor(
    private readonly source: EngineSource,
    private readonly tap: StatsTap,
    private readonly store: StatsHistoryStore,
  ) {
    this.offs = [
      source.on('engine.status', ({ status }) => {
        if (status === 'connected') void this.follow();
      }),
      source.on('sandbox.resync', () => void this.follow()),
      source.on('sandbox.event', (event) => {
        if (STARTS.has(event.kind)) this.watch(event.sandboxId);
        else if (ENDS.has(event.kind)) this.unwatch(event.sandboxId);
      }),
    ];
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
    void this.follow();
  }

  /** Watches exactly the running sandboxes the engine lists (none while it is away). */
  async follow(): Promise<void> {
    let list;
    try {
      list = await this.source.current()['sandbox.list']();
    } catch {
      return;
    }
    if (this.closed) return;
    const running = new Set(list.filter((s) => s.state === 'running').map((s) => s.id));
    for (const id of [...this.watched]) if (!running.has(id)) this.unwatch(id);
    for (const id of running) this.watch(id);
  }

  private fullId(id: string): string | undefined {
    return [...this.watched].find((k) => k === id || k.startsWith(id));
  }

  private watch(id: string): void {
    // Events may name a sandbox by a short id: the full one comes from the list.
    if (this.closed || this.fullId(id)) return;
    if (!/^[0-9a-f]{64}$/.test(id)) {
      void this.follow();
      return;
    }
    this.watched.add(id);
    this.tap.watch(id, this.sink);
  }

  private unwatch(id: string): void {
    const full = this.fullId(id);
    if (!full) return;
    this.watched.delete(full);
    this.previous.delete(full);
    this.tap.unwatch(full, this.sink);
  }

  private take(s: StatsSample): void {
    const prev = this.previous.get(s.sandboxId);
    this.previous.set(s.sandboxId, s);
    const dt = prev ? (s.time - prev.time) / 1000 : 0;
    // Counters start again from 0 after a restart: no negative rates.
    const rate = (now: number, before: number | undefined) => (dt > 0 && before !== undefined ? Math.max(0, (now - before) / dt) : 0);
    this.pending.push({
      sandboxId: s.sandboxId,
      time: s.time,
      cpu: s.cpuPercent,
      memory: s.memoryBytes,
      memoryLimit: s.memoryLimitBytes,
      rx: rate(s.netRxBytes, prev?.netRxBytes),
      tx: rate(s.netTxBytes, prev?.netTxBytes),
      pids: s.pids,
    });
  }

  /** Writes what came since the last flush (a busy store keeps it for the next one). */
  flush(): void {
    if (!this.pending.length && this.closed) return;
    const batch = this.pending;
    this.pending = [];
    try {
      this.store.write(batch);
    } catch (err) {
      if (batch.length < 10_000) this.pending = batch.concat(this.pending);
      if (!this.closed) process.stderr.write(`warden: resource history not written: ${(err as Error).message}\n`);
    }
  }

  history(req: StatsHistoryRequest): StatsHistory {
    this.flush();
    return this.store.history(req.sandboxId, req);
  }

  close(): void {
    if (this.closed) return;
    for (const off of this.offs) off();
    clearInterval(this.timer);
    for (const id of [...this.watched]) this.unwatch(id);
    this.flush();
    this.closed = true;
  }
}
