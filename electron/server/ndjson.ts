// Exec output as NDJSON events. Output is batched for a few ms (or 64 KiB) before it is written, and
// each batch is sent as UTF-8 text when its bytes are valid UTF-8, else as base64 with
// "encoding":"base64". A multi-byte character split across chunks is carried to the next batch.
import type { ServerResponse } from 'node:http';
import type { ExecStreamEvent } from '../../shared/types/api.js';

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
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  closed = false;

  constructor(private readonly res: ServerResponse) {
    this.out = new StreamBatch('stdout', (e) => this.write(e));
    this.err = new StreamBatch('stderr', (e) => this.write(e));
    res.on('close', () => (this.closed = true));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  }

  get isStarted(): boolean {
    return this.started;
  }

  write(event: ExecStreamEvent): void {
    this.start();
    if (!this.closed) this.res.write(`${JSON.stringify(event)}\n`);
  }

  stdout = (c: Buffer) => this.chunk(this.out, c);
  stderr = (c: Buffer) => this.chunk(this.err, c);

  private chunk(batch: StreamBatch, c: Buffer): void {
    if (batch.push(c)) this.flush(false);
    else this.timer ??= setTimeout(() => this.flush(false), BATCH_MS);
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
    this.res.end();
  }
}
