// The host end of one `egress` sandbox's forwarder (`warden-runner egress-forward PORT`, started by
// an engine exec of its own, so bulk transfers never queue behind tool calls on the runner's call
// channel). Its frames are read as hostile input, exactly as the call channel's are: anything out of
// place ends the session, every connection on it with it, and the registry starts another.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { EGRESS_PROXY_PORT, HostFrame, RUNNER_MOUNT_PATH, RUNNER_PROTOCOL_VERSION, RunnerFrame } from '../../../shared/contracts/runner.js';
import type { PodmanConnection } from '../podman/connection.js';
import { FrameDemuxer } from '../podman/frame-demuxer.js';
import { encodeFrame, FrameDecoder, parseReady, RunnerProtocolError, type Frame } from '../runner/frame-codec.js';
import { EgressStream } from './egress-stream.js';

const READY_TIMEOUT_MS = 10_000;
const SHUTDOWN_WAIT_MS = 2000;
/** Connections one sandbox may hold open through the proxy at once (the runner's own bound is higher). */
const MAX_OPEN_STREAMS = 256;

export interface ForwardEvents {
  /** A program in the sandbox connected to the proxy's port. */
  onStream(stream: EgressStream): void;
  /** The forwarder ended without being asked to (exited, killed, a bad frame). */
  onLost(reason: string): void;
}

export class ForwardSession {
  private readonly streams = new Map<number, EgressStream>();
  private endedReason: string | null = null;
  /** READY seen: an end before it is a failed start (open() rejects), not a loss. */
  private up = false;
  private execEnded: () => Promise<void> = () => Promise.resolve();

  private constructor(
    readonly containerId: string,
    private readonly channel: Duplex,
    private readonly events: ForwardEvents,
  ) {}

  static async open(conn: PodmanConnection, containerId: string, events: ForwardEvents): Promise<ForwardSession> {
    const exec = await conn.call('egress', (docker) =>
      docker.getContainer(containerId).exec({
        Cmd: [RUNNER_MOUNT_PATH, 'egress-forward', String(EGRESS_PROXY_PORT)],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      }),
    );
    const channel = (await conn.call('egress', () => exec.start({ hijack: true, stdin: true }))) as Duplex;
    const session = new ForwardSession(containerId, channel, events);
    session.execEnded = async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const info = (await exec.inspect().catch(() => ({ Running: false }))) as { Running: boolean };
        if (!info.Running) return;
        await new Promise((r) => setTimeout(r, attempt < 10 ? 5 : 20));
      }
    };
    await session.handshake();
    return session;
  }

  get ended(): boolean {
    return this.endedReason !== null;
  }

  private handshake(): Promise<void> {
    const decoder = new FrameDecoder();
    let ready: ((error: string | null) => void) | null = null;
    const settled = new Promise<string | null>((resolve) => (ready = resolve));
    const timer = setTimeout(() => this.end('it did not say READY in time'), READY_TIMEOUT_MS);
    timer.unref();
    const demuxer = new FrameDemuxer(
      (chunk) => {
        if (this.endedReason) return;
        try {
          decoder.push(chunk, (frame) => {
            if (!ready) return this.route(frame);
            if (frame.type === RunnerFrame.fatal) throw new RunnerProtocolError(frame.payload.subarray(4, 300).toString('utf8'));
            if (frame.type !== RunnerFrame.ready || frame.id !== 0) throw new RunnerProtocolError('its first frame was not READY');
            if (parseReady(frame.payload).version !== RUNNER_PROTOCOL_VERSION) throw new RunnerProtocolError('another protocol version');
            clearTimeout(timer);
            this.up = true;
            // Up, it must not keep a one-shot process (the CLI) alive; while starting, someone waits for it.
            (this.channel as Partial<Socket>).unref?.();
            const done = ready;
            ready = null;
            done(null);
          });
        } catch (err) {
          this.end(`the egress forwarder sent a bad frame: ${(err as Error).message}`);
        }
      },
      () => this.end('the egress forwarder wrote to stderr'),
    );
    this.channel.on('data', (chunk: Buffer) => {
      try {
        demuxer.push(chunk);
      } catch (err) {
        this.end(`its stream broke: ${(err as Error).message}`);
      }
    });
    const closed = () => this.end('its channel closed (the forwarder exited or was killed)');
    this.channel.once('end', closed);
    this.channel.once('close', closed);
    this.channel.on('error', (err: Error) => this.end(`its channel failed: ${err.message}`));
    this.failStart = (reason) => {
      clearTimeout(timer);
      ready?.(reason);
      ready = null;
    };
    return settled.then((error) => {
      if (error !== null) throw new Error(`the egress forwarder did not start: ${error}`);
    });
  }

  private failStart: (reason: string) => void = () => undefined;

  private route(frame: Frame): void {
    if (frame.type === RunnerFrame.pong) return;
    if (frame.type === RunnerFrame.fatal) throw new RunnerProtocolError(`it gave up: ${frame.payload.subarray(4, 300).toString('utf8')}`);
    if (frame.type === RunnerFrame.open) {
      if (frame.id === 0 || frame.payload.length || this.streams.has(frame.id)) throw new RunnerProtocolError('a malformed OPEN');
      const stream = new EgressStream(frame.id, (bytes, payload) => this.send(bytes, payload));
      if (this.streams.size >= MAX_OPEN_STREAMS) {
        stream.destroy();
        return;
      }
      this.streams.set(frame.id, stream);
      stream.once('close', () => this.streams.delete(frame.id));
      this.events.onStream(stream);
      return;
    }
    const stream = this.streams.get(frame.id);
    // A stream this side already closed: the runner may not have seen the KILL yet.
    if (!stream) {
      if (frame.id === 0) throw new RunnerProtocolError(`an unexpected frame 0x${frame.type.toString(16)}`);
      return;
    }
    if (frame.type === RunnerFrame.stdout) stream.onData(frame.payload);
    else if (frame.type === RunnerFrame.netCredit) {
      if (frame.payload.length !== 4) throw new RunnerProtocolError('a malformed NET_CREDIT');
      stream.onCredit(frame.payload.readUInt32BE(0));
    } else if (frame.type === RunnerFrame.done) {
      if (frame.payload.length) throw new RunnerProtocolError('a malformed DONE');
      this.streams.delete(frame.id);
      stream.onDone();
    } else throw new RunnerProtocolError(`frame 0x${frame.type.toString(16)} on an egress stream`);
  }

  /** Header and payload go out corked: one write to the engine, without copying the payload into a frame first. */
  private send(frame: Buffer, payload?: Buffer): void {
    if (this.endedReason || this.channel.destroyed) return;
    if (!payload) return void this.channel.write(frame);
    this.channel.cork();
    this.channel.write(frame);
    this.channel.write(payload);
    this.channel.uncork();
  }

  /** Ends the session (once): every connection on it is cut. */
  private end(reason: string, onPurpose = false): void {
    if (this.endedReason) return;
    this.endedReason = reason;
    this.failStart(reason);
    for (const stream of this.streams.values()) stream.destroy();
    this.streams.clear();
    this.channel.destroy();
    if (!onPurpose && this.up) this.events.onLost(reason);
  }

  /** Lets the forwarder go and waits (briefly) for its exec to end, so a stop or removal right after leaves nothing behind. */
  async shutdown(): Promise<void> {
    if (this.endedReason) return;
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      timer.unref();
      this.channel.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.channel.write(encodeFrame(HostFrame.kill, 0));
    this.endedReason = 'closed by Warden';
    for (const stream of this.streams.values()) stream.destroy();
    this.streams.clear();
    await closed;
    this.channel.destroy();
    await this.execEnded();
  }

  /** The engine is closing: cut at once. */
  close(): void {
    if (this.endedReason) return;
    this.channel.write(encodeFrame(HostFrame.kill, 0));
    this.end('closed by Warden', true);
  }
}
