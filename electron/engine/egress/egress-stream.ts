// One connection a program in an `egress` sandbox opened to the forwarder, on the host side: a
// Duplex over the forwarder's frames (shared/contracts/runner.ts, egress-forward), so the proxy can
// treat it as a socket. Both directions are credit-bound: it sends the runner only what the runner
// has room for, and grants the runner more only as its own reader takes the bytes, so a stalled
// destination or a stalled program holds at most one window here.
import { Duplex } from 'node:stream';
import { EGRESS_MAX_CHUNK, EGRESS_STREAM_WINDOW, HostFrame } from '../../../shared/contracts/runner.js';
import { encodeCredit, encodeFrame, encodeFrameHead, RunnerProtocolError } from '../runner/frame-codec.js';

interface PendingWrite {
  chunk: Buffer;
  offset: number;
  done: (err?: Error | null) => void;
}

export class EgressStream extends Duplex {
  /** Bytes the runner still has room for. */
  private sendCredit = EGRESS_STREAM_WINDOW;
  /** Bytes taken in while the reader was full, credited once it reads again. */
  private owed = 0;
  private pending: PendingWrite | null = null;
  /** The runner said DONE: the connection is gone in the sandbox, nothing more is sent for this id. */
  private gone = false;
  /** The runner said the sandbox side sent EOF: data after it is a protocol error. */
  private eof = false;
  /** Bytes from the sandbox's program, and to it. */
  bytesFromSandbox = 0;
  bytesToSandbox = 0;

  constructor(
    readonly streamId: number,
    /** A whole frame, or a header and the payload to follow it unchanged. */
    private readonly send: (frame: Buffer, payload?: Buffer) => void,
  ) {
    super({ allowHalfOpen: true });
  }

  // ---- frames from the runner ----

  // Frames for a stream this side already destroyed are dropped: the runner sent them before it saw the KILL.

  onData(chunk: Buffer): void {
    if (this.destroyed) return;
    if (this.eof || this.gone) throw new RunnerProtocolError(`data on egress stream ${this.streamId} after its end`);
    if (chunk.length === 0) {
      this.eof = true;
      this.push(null);
      return;
    }
    this.bytesFromSandbox += chunk.length;
    if (this.push(chunk)) this.send(encodeCredit(this.streamId, chunk.length));
    else this.owed += chunk.length;
  }

  onCredit(bytes: number): void {
    if (this.destroyed) return;
    this.sendCredit += bytes;
    if (this.sendCredit > EGRESS_STREAM_WINDOW) throw new RunnerProtocolError(`credit past the window on egress stream ${this.streamId}`);
    this.flush();
  }

  /** The sandbox side is gone: what it sent is still read to the end, then the stream closes. */
  onDone(): void {
    if (this.destroyed) return;
    this.gone = true;
    if (!this.eof) this.push(null);
    this.eof = true;
    if (this.readableEnded || this.readableLength === 0) this.destroy();
    else this.once('end', () => this.destroy());
  }

  // ---- the Duplex ----

  override _read(): void {
    if (this.owed === 0 || this.gone) return;
    const owed = this.owed;
    this.owed = 0;
    this.send(encodeCredit(this.streamId, owed));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.gone) return done(new Error('the connection was closed inside the sandbox'));
    this.pending = { chunk, offset: 0, done };
    this.flush();
  }

  override _final(done: (err?: Error | null) => void): void {
    if (!this.gone) this.send(encodeFrame(HostFrame.stdin, this.streamId));
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (!this.gone) this.send(encodeFrame(HostFrame.kill, this.streamId));
    this.gone = true;
    const pending = this.pending;
    this.pending = null;
    pending?.done(err ?? new Error('the egress stream was closed'));
    done(err);
  }

  private flush(): void {
    const p = this.pending;
    while (p && this.sendCredit > 0 && p.offset < p.chunk.length) {
      const n = Math.min(p.chunk.length - p.offset, this.sendCredit, EGRESS_MAX_CHUNK);
      this.send(encodeFrameHead(HostFrame.stdin, this.streamId, n), p.chunk.subarray(p.offset, p.offset + n));
      p.offset += n;
      this.sendCredit -= n;
      this.bytesToSandbox += n;
    }
    if (p && p.offset === p.chunk.length) {
      this.pending = null;
      p.done();
    }
  }
}
