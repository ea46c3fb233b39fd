// The runner's frames on the host side (layouts in shared/contracts/runner.ts). Everything read
// here comes from inside a sandbox, where agent code may have replaced what speaks: sizes are
// checked before anything is buffered, and any type, length or field out of place throws
// RunnerProtocolError, after which the channel is dropped and the runner declared lost.
import {
  EXIT_FIXED_BYTES,
  HostFrame,
  LIST_ENTRY_FIXED_BYTES,
  LIST_ENTRY_TYPES,
  RUNNER_HEADER_BYTES,
  RUNNER_MAX_PAYLOAD,
  RunnerFailSchema,
  RunnerFrame,
  type RunnerFail,
} from '../../../shared/contracts/runner.js';

export class RunnerProtocolError extends Error {}

export interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

const RUNNER_TYPES = new Set<number>(Object.values(RunnerFrame));

/** Splits the runner's byte stream into frames, refusing oversized or unknown ones before buffering them. */
export class FrameDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= RUNNER_HEADER_BYTES) {
      const head = this.peek(RUNNER_HEADER_BYTES);
      const len = head.readUInt32BE(0);
      const type = head[4]!;
      if (len > RUNNER_MAX_PAYLOAD) throw new RunnerProtocolError(`a frame of ${len} bytes, over the ${RUNNER_MAX_PAYLOAD} allowed`);
      if (!RUNNER_TYPES.has(type)) throw new RunnerProtocolError(`unknown frame type 0x${type.toString(16)}`);
      if (this.pendingBytes < RUNNER_HEADER_BYTES + len) return;
      const whole = this.take(RUNNER_HEADER_BYTES + len);
      onFrame({ type, id: head.readUInt32BE(5), payload: whole.subarray(RUNNER_HEADER_BYTES) });
    }
  }

  private peek(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    const first = this.pending[0]!;
    const out = first.subarray(0, n);
    if (first.length === n) this.pending.shift();
    else this.pending[0] = first.subarray(n);
    this.pendingBytes -= n;
    return out;
  }
}

/** A frame's header alone, for a payload written after it as it is (no copy of bulk data into a new frame). */
export function encodeFrameHead(type: number, id: number, length: number): Buffer {
  if (length > RUNNER_MAX_PAYLOAD) throw new RangeError('frame payload over the protocol limit');
  const head = Buffer.alloc(RUNNER_HEADER_BYTES);
  head.writeUInt32BE(length, 0);
  head[4] = type;
  head.writeUInt32BE(id, 5);
  return head;
}

export function encodeFrame(type: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([encodeFrameHead(type, id, payload.length), payload]);
}

function str(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return Buffer.concat([len, bytes]);
}

export interface ExecFrameFields {
  window: number;
  hasStdin: boolean;
  /** On a pseudo-terminal the runner opens (a terminal). */
  pty?: boolean;
  argv: string[];
  env: string[];
  cwd: string;
  user: string;
}

export function encodeExec(id: number, f: ExecFrameFields): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32BE(f.window, 0);
  head[4] = (f.hasStdin ? 1 : 0) | (f.pty ? 2 : 0);
  head.writeUInt16BE(f.argv.length, 5);
  head.writeUInt16BE(f.env.length, 7);
  return encodeFrame(HostFrame.exec, id, Buffer.concat([head, str(f.cwd), str(f.user), ...f.argv.map(str), ...f.env.map(str)]));
}

/** READ, WRITE or LIST: a number (limit, or a WRITE's size) and the components below /workspace. */
export function encodeFileOp(type: number, id: number, limit: number, comps: string[]): Buffer {
  const head = Buffer.alloc(6);
  head.writeUInt32BE(limit, 0);
  head.writeUInt16BE(comps.length, 4);
  return encodeFrame(type, id, Buffer.concat([head, ...comps.map(str)]));
}

export function encodeResize(id: number, cols: number, rows: number): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt16BE(cols, 0);
  p.writeUInt16BE(rows, 2);
  return encodeFrame(HostFrame.resize, id, p);
}

export function encodeCredit(id: number, bytes: number): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(bytes);
  return encodeFrame(HostFrame.credit, id, p);
}

/** Reads payload fields in order; any read past the end, or bytes left over, is a protocol error. */
class Reader {
  private off = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}

  private need(n: number): void {
    if (this.off + n > this.buf.length) throw new RunnerProtocolError(`a short ${this.what} frame`);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.off++]!;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.off);
    this.off += 4;
    return v;
  }
  u64(): number {
    this.need(8);
    const v = this.buf.readBigUInt64BE(this.off);
    this.off += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RunnerProtocolError(`an out-of-range number in a ${this.what} frame`);
    return Number(v);
  }
  i64(): number {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.off);
    this.off += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
      throw new RunnerProtocolError(`an out-of-range number in a ${this.what} frame`);
    return Number(v);
  }
  str(max: number): string {
    const len = this.u32();
    if (len > max) throw new RunnerProtocolError(`a ${len}-byte string in a ${this.what} frame`);
    this.need(len);
    const s = this.buf.toString('utf8', this.off, this.off + len);
    this.off += len;
    return s;
  }
  get done(): boolean {
    return this.off === this.buf.length;
  }
  end(): void {
    if (!this.done) throw new RunnerProtocolError(`trailing bytes in a ${this.what} frame`);
  }
}

export function parseReady(p: Buffer): { version: number; pid: number } {
  const r = new Reader(p, 'READY');
  const out = { version: r.u32(), pid: r.u32() };
  r.end();
  return out;
}

export interface ExitFields {
  how: number;
  value: number;
  killed: boolean;
  oomKills: number;
  message: string;
}

export function parseExit(p: Buffer): ExitFields {
  if (p.length < EXIT_FIXED_BYTES) throw new RunnerProtocolError('a short EXIT frame');
  const r = new Reader(p, 'EXIT');
  const how = r.u8();
  const value = r.u8();
  const killed = r.u8();
  r.u8();
  const oomKills = r.u64();
  const message = r.str(4096);
  r.end();
  if (how > 2 || killed > 1) throw new RunnerProtocolError('an EXIT frame with unknown fields');
  return { how, value, killed: killed === 1, oomKills, message };
}

export function parseFail(p: Buffer): RunnerFail {
  const r = new Reader(p, 'FAIL');
  const raw = { code: r.str(64), message: r.str(8192) };
  r.end();
  const parsed = RunnerFailSchema.safeParse(raw);
  if (!parsed.success) throw new RunnerProtocolError('a FAIL frame with a code or message the file API never gives');
  return parsed.data;
}

export interface ListedEntry {
  name: string;
  type: (typeof LIST_ENTRY_TYPES)[number];
  size: number;
  mode: number;
  mtimeMs: number;
}

export function parseListEntries(p: Buffer, maxEntries: number): ListedEntry[] {
  const r = new Reader(p, 'LIST');
  const out: ListedEntry[] = [];
  while (!r.done) {
    if (out.length >= maxEntries) throw new RunnerProtocolError('more LIST entries than asked for');
    const type = LIST_ENTRY_TYPES[r.u8()];
    const mode = r.u32();
    const size = r.u64();
    const sec = r.i64();
    const nsec = r.u32();
    const name = r.str(255);
    if (!type || mode > 0o7777 || nsec >= 1e9 || !name || name.includes('/') || name.includes('\0') || name === '.' || name === '..')
      throw new RunnerProtocolError('a LIST entry out of range');
    out.push({ name, type, size, mode, mtimeMs: sec * 1000 + Math.floor(nsec / 1e6) });
  }
  return out;
}

export const LIST_ENTRY_MAX_BYTES = LIST_ENTRY_FIXED_BYTES + 255;
