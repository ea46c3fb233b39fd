// One stats stream per watched sandbox, shared by every UI connection of a door and counted, so
// ten windows on one sandbox cost one stream; samples go only to the connections that asked. With a
// history file, it also records every running sandbox's history there (stats-recorder.ts) and
// answers the timeline's range queries from it.
import { WardenError } from '../../shared/errors.js';
import type { StatsSample } from '../../shared/types/stats.js';
import type { StatsHistory, StatsHistoryRequest } from '../../shared/types/timeline.js';
import { StatsHistoryStore } from '../engine/stats-history/history-store.js';
import type { EngineSource } from './engine-source.js';
import { StatsRecorder } from './stats-recorder.js';

type Sink = (sample: StatsSample) => void;

interface Stream {
  sinks: Set<Sink>;
  stop: (() => void) | null;
  lastTime: number;
  retry: NodeJS.Timeout | null;
  retryMs: number;
}

const MAX_RETRY_MS = 5000;

export class StatsHub {
  private readonly streams = new Map<string, Stream>();
  private readonly offs: Array<() => void>;
  private readonly store: StatsHistoryStore | null;
  private readonly recorder: StatsRecorder | null;

  /** @param historyFile where to keep resource history (WARDEN_HOME/stats.db); none: live samples only. */
  constructor(
    private readonly source: EngineSource,
    historyFile?: string,
  ) {
    this.offs = [
      source.on('stats.sample', (sample) => this.deliver(sample)),
      // Streams die with the engine; when it is back, the watched ones are opened again.
      source.on('engine.status', ({ status }) => {
        if (status === 'connected') for (const id of this.streams.keys()) this.open(id);
      }),
      // A sandbox that starts again needs a new stream (podman ends it when the container stops).
      source.on('sandbox.event', (event) => {
        if (event.kind === 'start' || event.kind === 'restart' || event.kind === 'unpause') {
          const id = [...this.streams.keys()].find((k) => event.sandboxId.startsWith(k) || k.startsWith(event.sandboxId));
          if (id) this.open(id);
        }
      }),
    ];
    this.store = historyFile ? StatsHistoryStore.open(historyFile) : null;
    this.recorder = this.store ? new StatsRecorder(source, this, this.store) : null;
  }

  /** A sandbox's recorded history over a range (the timeline). */
  history(req: StatsHistoryRequest): StatsHistory {
    if (!this.recorder)
      throw new WardenError('E_NOT_FOUND', 'this window keeps no resource history', 'open the control panel of the app or `warden serve`');
    return this.recorder.history(req);
  }

  watch(id: string, sink: Sink): void {
    let stream = this.streams.get(id);
    if (!stream) {
      stream = { sinks: new Set(), stop: null, lastTime: 0, retry: null, retryMs: 500 };
      this.streams.set(id, stream);
    }
    stream.sinks.add(sink);
    if (!stream.stop) this.open(id);
  }

  unwatch(id: string, sink: Sink): void {
    const stream = this.streams.get(id);
    if (!stream) return;
    stream.sinks.delete(sink);
    if (stream.sinks.size === 0) {
      stream.stop?.();
      if (stream.retry) clearTimeout(stream.retry);
      this.streams.delete(id);
    }
  }

  private open(id: string): void {
    const stream = this.streams.get(id);
    if (!stream || stream.stop) return;
    let engine;
    try {
      engine = this.source.current();
    } catch {
      return;
    }
    // Mark it opening so a second watch does not open another.
    let stopped = false;
    stream.stop = () => {
      stopped = true;
    };
    engine.subscribeStats([id]).then(
      (sub) => {
        if (stopped || this.streams.get(id) !== stream) {
          sub.stop();
          return;
        }
        stream.stop = () => sub.stop();
        void sub.done.then(() => this.ended(id, stream));
      },
      () => this.ended(id, stream),
    );
  }

  /** A stream that ends while still wanted (a container just starting, a hiccup) is tried again. */
  private ended(id: string, stream: Stream): void {
    if (this.streams.get(id) !== stream) return;
    stream.stop = null;
    if (stream.retry) return;
    stream.retry = setTimeout(() => {
      stream.retry = null;
      this.open(id);
    }, stream.retryMs);
    stream.retry.unref();
    stream.retryMs = Math.min(MAX_RETRY_MS, stream.retryMs * 2);
  }

  private deliver(sample: StatsSample): void {
    const stream = this.streams.get(sample.sandboxId);
    // Another part of the process may stream the same sandbox: one sample per tick is enough.
    if (!stream || sample.time <= stream.lastTime) return;
    stream.lastTime = sample.time;
    stream.retryMs = 500;
    for (const sink of stream.sinks) sink(sample);
  }

  close(): void {
    this.recorder?.close();
    this.store?.close();
    for (const off of this.offs) off();
    for (const stream of this.streams.values()) {
      stream.stop?.();
      if (stream.retry) clearTimeout(stream.retry);
    }
    this.streams.clear();
  }
}
