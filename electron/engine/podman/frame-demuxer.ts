// Splits the engine's multiplexed exec stream (no TTY) into stdout and stderr.
// Each frame is an 8-byte header — stream type (1 stdout, 2 stderr), 3 zero bytes, big-endian
// payload length — then the payload. Headers and payloads may be split anywhere across chunks;
// payloads are handed on as views of the incoming chunks, without copying.
import { WardenError } from '../../../shared/errors.js';

const HEADER_BYTES = 8;

export type FrameSink = (chunk: Buffer) => void;

export class FrameDemuxer {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private remaining = 0;
  private target: FrameSink | null = null;

  constructor(
    private readonly stdout: FrameSink,
    private readonly stderr: FrameSink,
  ) {}

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining === 0) {
        const take = Math.min(HEADER_BYTES - this.headerFill, chunk.length - offset);
        chunk.copy(this.header, this.headerFill, offset, offset + take);
        this.headerFill += take;
        offset += take;
        if (this.headerFill < HEADER_BYTES) return;
        this.startFrame();
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - offset);
      this.target!(chunk.subarray(offset, offset + take));
      this.remaining -= take;
      offset += take;
    }
  }

  /** True when the stream ended on a frame boundary (no half frame left over). */
  get complete(): boolean {
    return this.headerFill === 0 && this.remaining === 0;
  }

  private startFrame(): void {
    const type = this.header[0];
    const length = this.header.readUInt32BE(4);
    this.headerFill = 0;
    if ((type !== 0 && type !== 1 && type !== 2) || this.header[1] !== 0 || this.header[2] !== 0 || this.header[3] !== 0) {
      // Never guess: passing misaligned bytes on would corrupt output silently.
      throw new WardenError('E_ENGINE', `the engine's output stream is corrupt (frame header ${this.header.toString('hex')})`);
    }
    this.target = type === 2 ? this.stderr : this.stdout;
    this.remaining = length;
  }
}
