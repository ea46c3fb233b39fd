// Output is batched before it crosses a boundary (VS Code's TerminalDataBufferer, 5 ms; Hyper's
// DataBatcher, 16 ms or 200 KB): thousands of tiny chunks per second become a few messages.
// OutputBatcher decodes them as UTF-8, a character split across chunks held back until it is whole
// (a running exec's output on the event bus, terminals over Electron's IPC); ByteBatcher passes the
// bytes through untouched for a door that sends binary frames (the web shell's terminals: the page
// decodes them, so the server does no per-byte work at all).
import { StringDecoder } from 'node:string_decoder';

export interface BatchOptions {
  /** Longest a chunk waits before it is sent. */
  flushMs?: number;
  /** Sent at once when this many characters (bytes, for ByteBatcher) are waiting. */
  flushChars?: number;
  /**
   * Send a chunk that arrives after a quiet spell at once, batching only what follows it: a
   * keystroke's echo then costs no timer, while a burst is still joined (terminals use this).
   */
  leading?: boolean;
}

const FLUSH_MS = 5;
const FLUSH_CHARS = 256 * 1024;

/** The timing both batchers share: parts joined until the timer, the size or a flush sends them. */
class Batch<T extends { length: number }> {
  private readonly flushMs: number;
  private readonly flushChars: number;
  private readonly leading: boolean;
  private lastFlushAt = -Infinity;
  private parts: T[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly join: (parts: T[], size: number) => T,
    private readonly flushTo: (data: T) => void,
    options: BatchOptions,
  ) {
    this.flushMs = options.flushMs ?? FLUSH_MS;
    this.flushChars = options.flushChars ?? FLUSH_CHARS;
    this.leading = options.leading ?? false;
  }

  add(part: T): void {
    if (part.length === 0) return;
    this.parts.push(part);
    this.size += part.length;
    const quiet = this.timer === null && Date.now() - this.lastFlushAt >= this.flushMs;
    if (this.size >= this.flushChars || (this.leading && quiet)) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  }

  get pending(): boolean {
    return this.size > 0;
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.size === 0) return;
    const data = this.parts.length === 1 ? this.parts[0]! : this.join(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.lastFlushAt = Date.now();
    this.flushTo(data);
  }
}

export class OutputBatcher {
  private readonly decoder = new StringDecoder('utf8');
  private readonly batch: Batch<string>;

  constructor(flushTo: (data: string) => void, options: BatchOptions = {}) {
    this.batch = new Batch<string>((parts) => parts.join(''), flushTo, options);
  }

  push(chunk: Buffer): void {
    // The decoder holds back a multi-byte character split across chunks.
    this.batch.add(this.decoder.write(chunk));
  }

  /** Whether text is waiting to be sent. */
  get pending(): boolean {
    return this.batch.pending;
  }

  flush(): void {
    this.batch.flush();
  }

  /** Flushes what is left, including a dangling partial character. */
  end(): void {
    this.batch.add(this.decoder.end());
    this.batch.flush();
  }
}

/** The same batching for raw bytes: no decoding, a character split across batches stays split. */
export class ByteBatcher {
  private readonly batch: Batch<Buffer>;

  constructor(flushTo: (data: Buffer) => void, options: BatchOptions = {}) {
    this.batch = new Batch<Buffer>((parts, size) => Buffer.concat(parts, size), flushTo, options);
  }

  push(chunk: Buffer): void {
    this.batch.add(chunk);
  }

  get pending(): boolean {
    return this.batch.pending;
  }

  flush(): void {
    this.batch.flush();
  }

  end(): void {
    this.batch.flush();
  }
}
