// Output is batched before it crosses a boundary (VS Code's TerminalDataBufferer, 5 ms; Hyper's
// DataBatcher, 16 ms or 200 KB): thousands of tiny chunks per second become a few messages, decoded
// as UTF-8 with a character split across chunks held back until it is whole. Terminals (web shell,
// IPC) and a running exec's output on the event bus (gateway) both go through here.
import { StringDecoder } from 'node:string_decoder';

export interface BatchOptions {
  /** Longest a chunk waits before it is sent. */
  flushMs?: number;
  /** Sent at once when this many characters are waiting. */
  flushChars?: number;
  /**
   * Send a chunk that arrives after a quiet spell at once, batching only what follows it: a
   * keystroke's echo then costs no timer, while a burst is still joined (terminals use this).
   */
  leading?: boolean;
}

const FLUSH_MS = 5;
const FLUSH_CHARS = 256 * 1024;

export class OutputBatcher {
  private readonly decoder = new StringDecoder('utf8');
  private readonly flushMs: number;
  private readonly flushChars: number;
  private readonly leading: boolean;
  private lastFlushAt = -Infinity;
  private parts: string[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly flushTo: (data: string) => void,
    options: BatchOptions = {},
  ) {
    this.flushMs = options.flushMs ?? FLUSH_MS;
    this.flushChars = options.flushChars ?? FLUSH_CHARS;
    this.leading = options.leading ?? false;
  }

  push(chunk: Buffer): void {
    // The decoder holds back a multi-byte character split across chunks.
    const text = this.decoder.write(chunk);
    if (!text) return;
    this.parts.push(text);
    this.size += text.length;
    const quiet = this.timer === null && Date.now() - this.lastFlushAt >= this.flushMs;
    if (this.size >= this.flushChars || (this.leading && quiet)) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  }

  /** Whether text is waiting to be sent. */
  get pending(): boolean {
    return this.size > 0;
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.size === 0) return;
    const data = this.parts.join('');
    this.parts = [];
    this.size = 0;
    this.lastFlushAt = Date.now();
    this.flushTo(data);
  }

  /** Flushes what is left, including a dangling partial character. */
  end(): void {
    const rest = this.decoder.end();
    if (rest) {
      this.parts.push(rest);
      this.size += rest.length;
    }
    this.flush();
  }
}
