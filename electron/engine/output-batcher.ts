// Terminal output is batched before it crosses a boundary (VS Code's TerminalDataBufferer, 5 ms;
// Hyper's DataBatcher, 200 KB): thousands of tiny chunks per second become a few messages.
import { StringDecoder } from 'node:string_decoder';

const FLUSH_MS = 5;
const FLUSH_BYTES = 256 * 1024;

export class OutputBatcher {
  private readonly decoder = new StringDecoder('utf8');
  private parts: string[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly flushTo: (data: string) => void) {}

  push(chunk: Buffer): void {
    // The decoder holds back a multi-byte character split across chunks.
    const text = this.decoder.write(chunk);
    if (!text) return;
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= FLUSH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.size === 0) return;
    const data = this.parts.join('');
    this.parts = [];
    this.size = 0;
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
