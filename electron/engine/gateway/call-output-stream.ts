// A running exec call's output, pushed to the UIs as 'run.output' while it comes: batched (16 ms or
// 64 KiB, characters kept whole), stdout and stderr in the order they came, and bounded per call.
// After the first RUN_OUTPUT_STREAM_BYTES nothing more is pushed: a UI is a viewer, not the record;
// the call's byte counts, digests and the ledger's blobs hold the whole output.
import { RUN_OUTPUT_STREAM_BYTES } from '../../../shared/contracts/events.js';
import type { EventBus } from '../event-bus.js';
import { OutputBatcher } from '../output-batcher.js';

type Stream = 'stdout' | 'stderr';

const BATCH = { flushMs: 16, flushChars: 64 * 1024 };

/** The largest n' <= n that does not cut a UTF-8 character of buf in two. */
export function utf8Cut(buf: Buffer, n: number): number {
  let i = Math.min(n, buf.length);
  while (i > 0 && i < buf.length && (buf[i]! & 0xc0) === 0x80) i--;
  return i;
}

export class CallOutputStream {
  private readonly batchers: Record<Stream, OutputBatcher>;
  private streamed = 0;
  private ended = false;

  constructor(
    events: EventBus,
    runId: string,
    callId: string,
    private readonly limit = RUN_OUTPUT_STREAM_BYTES,
  ) {
    const to = (stream: Stream) => (data: string) => events.emit('run.output', { runId, callId, stream, data });
    this.batchers = { stdout: new OutputBatcher(to('stdout'), BATCH), stderr: new OutputBatcher(to('stderr'), BATCH) };
  }

  /** Bytes taken for streaming so far (at most the limit). */
  get bytes(): number {
    return this.streamed;
  }

  push(stream: Stream, chunk: Buffer): void {
    if (this.ended || this.streamed >= this.limit) return;
    const room = this.limit - this.streamed;
    const part = chunk.length > room ? chunk.subarray(0, utf8Cut(chunk, room)) : chunk;
    // Text of the other stream goes out first, so a UI sees stdout and stderr interleaved as they came.
    const other = this.batchers[stream === 'stdout' ? 'stderr' : 'stdout'];
    if (other.pending) other.flush();
    this.streamed += part.length;
    if (part.length) this.batchers[stream].push(part);
    if (part.length < chunk.length) {
      // The bound is reached: what is held goes out now, and nothing after it.
      this.streamed = this.limit;
      this.end();
    }
  }

  /** Sends what is held; later chunks are dropped. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.batchers.stdout.end();
    this.batchers.stderr.end();
  }
}
