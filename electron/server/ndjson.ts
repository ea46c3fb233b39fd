// NDJSON answers that stream (exec output, run events), bounded per response. Output is batched for
// a few ms (or 64 KiB) before it is written, and each batch is sent as UTF-8 text when its bytes are
// valid UTF-8, else as base64 with "encoding":"base64". A multi-byte character split across chunks is
// carried to the next batch. A client that stops reading pauses the command (backpressure down to
// Podman, as the web terminal does); one that hangs up ends it.
import type { ServerResponse } from 'node:http';
import type { ExecStreamEvent } from '../../shared/types/api.js';
import { goneReason } from './revoked-connections.js';
import { STREAM_HIGH_WATER, STREAM_MAX_QUEUED, type StreamMeter } from './stream-meter.js';

const BATCH_MS = 5;
const BATCH_BYTES = 64 * 1024;
const strict = new TextDecoder('utf-8', { fatal: true });

/** Bytes at the end of buf that start a UTF-8 sequence not yet complete. */
function incompleteTail(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * One streaming response's queue, bounded in bytes as they go to the socket (after JSON escaping,
 * so a NUL's six bytes count as six). `gone` is aborted with "clientGone" when the client hangs up
 * before the end ("tokenRevoked" when the server closed it for a revoked token); `drained()` resolves when the queue is below the high-water mark again.
 */
export class BoundedResponse {
  private readonly abort = new AbortController();
  closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly meter?: StreamMeter,
  ) {
    const socket = res.socket;
    res.on('close', () => {
      this.closed = true;
      // Finished: the answer went out whole (a stream's end, or a plain error before it began).
      if (!res.writableFinished) {
        this.meter?.count('clientGone');
        this.abort.abort(goneReason(socket));
      }
    });
  }

  get gone(): AbortSignal {
    return this.abort.signal;
  }

  get congested(): boolean {
    return this.res.writableLength > STREAM_HIGH_WATER;
  }

  /** Queues one line (or one binary frame); false when the queue is over its high-water mark (or the answer is over). */
  writeLine(line: string | Buffer): boolean {
    if (this.closed || this.res.destroyed) return false;
    if (this.res.writableLength + Buffer.byteLength(line) > STREAM_MAX_QUEUED) {
      // A producer that cannot pause has outrun its client: cut it off rather than hold it all.
      this.meter?.count('cutOff');
      this.res.destroy();
      return false;
    }
    this.res.write(line);
    this.meter?.queued(this.res.writableLength);
    return !this.congested;
  }

  drained(): Promise<void> {
    if (!this.congested || this.closed) return Promise.resolve();
    this.meter?.count('paused');
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  end(): void {
    if (!this.closed) this.res.end();
  }
}

class StreamBatch {
  private parts: Buffer[] = [];
  private size = 0;
  private carry: Buffer = Buffer.alloc(0);

  constructor(
    private readonly type: 'stdout' | 'stderr',
    private readonly emit: (e: ExecStreamEvent) => void,
  ) {}

  push(chunk: Buffer): boolean {
    this.parts.push(chunk);
    this.size += chunk.length;
    return this.size >= BATCH_BYTES;
  }

  flush(final: boolean): void {
    if (this.size === 0 && (!final || this.carry.length === 0)) return;
    let buf = Buffer.concat([this.carry, ...this.parts]);
    this.parts = [];
    this.size = 0;
    const tail = final ? 0 : incompleteTail(buf);
    this.carry = tail ? Buffer.from(buf.subarray(buf.length - tail)) : Buffer.alloc(0);
    buf = tail ? buf.subarray(0, buf.length - tail) : buf;
    if (buf.length === 0) return;
    try {
      this.emit({ type: this.type, data: strict.decode(buf) });
    } catch {
      this.emit({ type: this.type, data: buf.toString('base64'), encoding: 'base64' });
    }
  }
}

export class NdjsonWriter {
  private readonly out: StreamBatch;
  private readonly err: StreamBatch;
  private readonly queue: BoundedResponse;
  private timer: NodeJS.Timeout | null = null;
  private started = false;

  constructor(
    private readonly res: ServerResponse,
    meter?: StreamMeter,
  ) {
    this.queue = new BoundedResponse(res, meter);
    this.out = new StreamBatch('stdout', (e) => this.write(e));
    this.err = new StreamBatch('stderr', (e) => this.write(e));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
  }

  get isStarted(): boolean {
    return this.started;
  }

  get closed(): boolean {
    return this.queue.closed;
  }

  /** Aborted ("clientGone") when the client hangs up before the last event. */
  get gone(): AbortSignal {
    return this.queue.gone;
  }

  write(event: ExecStreamEvent): boolean {
    this.start();
    return this.queue.writeLine(`${JSON.stringify(event)}\n`);
  }

  /** Exec handlers: false asks the engine to pause the command's output until drain() resolves. */
  stdout = (c: Buffer): boolean => this.chunk(this.out, c);
  stderr = (c: Buffer): boolean => this.chunk(this.err, c);
  drain = (): Promise<void> => this.queue.drained();

  private chunk(batch: StreamBatch, c: Buffer): boolean {
    if (this.queue.closed) return true; // nobody to wait for: the exec is being ended
    if (batch.push(c)) this.flush(false);
    else this.timer ??= setTimeout(() => this.flush(false), BATCH_MS);
    return !this.queue.congested;
  }

  flush(final: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.out.flush(final);
    this.err.flush(final);
  }

  end(last: ExecStreamEvent): void {
    this.flush(true);
    this.write(last);
    this.queue.end();
  }
}
