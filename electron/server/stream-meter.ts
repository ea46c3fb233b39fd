// What serve holds for clients that read slowly or not at all, across every streaming answer (exec
// output, run events, /v1/live): the bounds that keep its memory flat, and counters that show them
// holding (the specs and the bench read them; nothing in serve depends on them).
import { EventEmitter } from 'node:events';

/** Above this many bytes queued on a response, its producer is paused (exec) until it drains. */
export const STREAM_HIGH_WATER = 256 * 1024;
/**
 * No response ever queues more than this: one that would is cut off (its exec is then ended as
 * "clientGone"). Backpressure keeps exec output far below it; it bounds producers that cannot pause.
 */
export const STREAM_MAX_QUEUED = 2 * 1024 * 1024;

export class StreamMeter extends EventEmitter {
  /** The most bytes any one response (or socket) had queued at once. */
  peakQueuedBytes = 0;
  /** Times a producer was paused for a slow client. */
  paused = 0;
  /** Answers cut off because their client could not keep up. */
  cutOff = 0;
  /** Streams whose client went away before the end. */
  clientGone = 0;

  queued(bytes: number): void {
    if (bytes > this.peakQueuedBytes) this.peakQueuedBytes = bytes;
  }

  count(what: 'paused' | 'cutOff' | 'clientGone'): void {
    this[what] += 1;
    this.emit(what);
  }
}
