// One sandbox's runner, reached over the stdin/stdout of a single attached exec that carries
// every call as frames (shared/contracts/runner.ts). Calls register a handler under an id; frames
// for them are routed by id. Whatever the runner says that does not fit (a bad frame, an id no
// call holds, a frame past its credit) or its channel closing loses the runner: every call in
// flight fails with a clear WardenError and the registry is told, so it records it and moves on.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WardenError } from '../../../shared/errors.js';
import { HostFrame, RUNNER_MOUNT_PATH, RUNNER_PROTOCOL_VERSION, RunnerFrame } from '../../../shared/contracts/runner.js';
import type { PodmanConnection } from '../podman/connection.js';
import { FrameDemuxer } from '../podman/frame-demuxer.js';
import { encodeFrame, FrameDecoder, RunnerProtocolError, parseReady, type Frame } from './frame-codec.js';

/** How long a new runner may take to say READY before it is given up on. */
const READY_TIMEOUT_MS = 10_000;
/** Stderr the runner may write (it sends its own to /dev/null): past this it is misbehaving. */
const MAX_STRAY_STDERR = 64 * 1024;
/** While calls are in flight the runner is pinged this often, and lost when a ping goes unanswered this long. */
const PING_EVERY_MS = 5_000;
const PING_ANSWER_MS = 10_000;
/** How long a shutdown waits for the runner to exit before cutting the channel. */
const SHUTDOWN_WAIT_MS = 2000;

export interface CallHandler {
  /** May throw RunnerProtocolError: the frame does not fit the call, and the runner is lost. */
  onFrame(frame: Frame): void;
  onLost(error: WardenError): void;
}

export class RunnerChannel {
  private readonly calls = new Map<number, CallHandler>();
  private nextId = 1;
  private lostReason: string | null = null;
  private strayStderr = 0;
  /** The runner's pid as the sandbox sees it (from READY). */
  pid = 0;

  private constructor(
    readonly containerId: string,
    private readonly stream: Duplex,
    private readonly onLost: (reason: string, inFlight: number, engineGone: boolean) => void,
  ) {}

  /** Starts the runner in the sandbox and resolves once it has said READY. */
  static async open(
    conn: PodmanConnection,
    containerId: string,
    onLost: (reason: string, inFlight: number, engineGone: boolean) => void,
  ): Promise<RunnerChannel> {
    const exec = await conn.call('runner', (docker) =>
      docker.getContainer(containerId).exec({
        Cmd: [RUNNER_MOUNT_PATH],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      }),
    );
    const stream = (await conn.call('runner', () => exec.start({ hijack: true, stdin: true }))) as Duplex;
    const channel = await RunnerChannel.attach(stream, containerId, onLost);
    // Its engine exec is over only once the engine says so (under gVisor its conmon outlives the
    // stream a little): a shutdown waits for that, so a removal right after leaves nothing behind.
    channel.engineAnswers = () => conn.answers();
    channel.engineGone = () => conn.markUnreachable();
    channel.execEnded = async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const info = (await exec.inspect().catch(() => ({ Running: false }))) as { Running: boolean };
        if (!info.Running) return;
        await new Promise((r) => setTimeout(r, attempt < 10 ? 5 : 20));
      }
    };
    return channel;
  }

  private execEnded: () => Promise<void> = () => Promise.resolve();

  /** A channel over an engine exec's stream (stdout and stderr multiplexed as Podman sends them). */
  static attach(
    stream: Duplex,
    containerId: string,
    onLost: (reason: string, inFlight: number, engineGone: boolean) => void,
  ): Promise<RunnerChannel> {
    return new RunnerChannel(containerId, stream, onLost).handshake();
  }

  private handshake(): Promise<RunnerChannel> {
    const decoder = new FrameDecoder();
    let ready: ((ok: boolean) => void) | null = null;
    const readyOrNot = new Promise<boolean>((resolve) => (ready = resolve));
    const timer = setTimeout(() => this.lose('it did not say READY in time'), READY_TIMEOUT_MS);
    timer.unref();
    const demuxer = new FrameDemuxer(
      (chunk) => {
        if (this.lostReason) return;
        try {
          decoder.push(chunk, (frame) => {
            if (ready) {
              if (frame.type !== RunnerFrame.ready || frame.id !== 0) throw new RunnerProtocolError('its first frame was not READY');
              const hello = parseReady(frame.payload);
              if (hello.version !== RUNNER_PROTOCOL_VERSION) throw new RunnerProtocolError(`it speaks protocol ${hello.version}`);
              this.pid = hello.pid;
              clearTimeout(timer);
              const done = ready;
              ready = null;
              // Held while starting (someone may be waiting for it); idle from now on until a call.
              if (this.calls.size === 0) this.idle();
              done(true);
              return;
            }
            this.route(frame);
          });
        } catch (err) {
          this.lose(err instanceof RunnerProtocolError ? `it sent a bad frame: ${err.message}` : (err as Error).message, true);
        }
      },
      (chunk) => {
        this.strayStderr += chunk.length;
        if (this.strayStderr > MAX_STRAY_STDERR) this.lose('it wrote too much to stderr', true);
      },
    );
    this.stream.on('data', (chunk: Buffer) => {
      try {
        demuxer.push(chunk);
      } catch (err) {
        this.lose(`its stream broke: ${(err as Error).message}`);
      }
    });
    const closed = () => this.lose('its channel closed (the runner exited or was killed)');
    this.stream.once('end', closed);
    this.stream.once('close', closed);
    this.stream.on('error', (err: Error) => this.lose(`its channel failed: ${err.message}`));
    return new Promise((resolve, reject) => {
      void readyOrNot.then((ok) =>
        ok ? resolve(this) : reject(new WardenError('E_ENGINE', `the sandbox runner did not start: ${this.lostReason}`)),
      );
      this.readyFailed = () => {
        clearTimeout(timer);
        ready?.(false);
        ready = null;
      };
    });
  }

  private readyFailed: () => void = () => undefined;
  private pingSentAt: number | null = null;
  private pinger: NodeJS.Timeout | null = null;

  /**
   * A runner that stops answering (stopped, frozen with its sandbox paused behind Warden's back)
   * would hold a call without a timeout for ever: while calls are in flight it is pinged, and lost
   * when a ping goes unanswered, so no agent hangs on it.
   */
  private ping(): void {
    if (this.lostReason || this.calls.size === 0) return;
    if (this.pingSentAt === null) {
      this.pingSentAt = performance.now();
      this.send(encodeFrame(HostFrame.ping, 0));
    } else if (performance.now() - this.pingSentAt > PING_ANSWER_MS) {
      this.lose(`it stopped answering (no reply to a ping in ${PING_ANSWER_MS / 1000} s)`);
    }
  }

  private route(frame: Frame): void {
    if (frame.type === RunnerFrame.pong) {
      if (frame.id !== 0 || frame.payload.length) throw new RunnerProtocolError('a malformed PONG');
      this.pingSentAt = null;
      return;
    }
    if (frame.type === RunnerFrame.fatal) throw new RunnerProtocolError(`it gave up: ${frame.payload.subarray(4, 300).toString('utf8')}`);
    if (frame.type === RunnerFrame.ready) throw new RunnerProtocolError('a second READY');
    const call = this.calls.get(frame.id);
    if (!call) throw new RunnerProtocolError(`a frame for call ${frame.id}, which is not in flight`);
    call.onFrame(frame);
  }

  get lost(): boolean {
    return this.lostReason !== null;
  }

  get inFlight(): number {
    return this.calls.size;
  }

  /** Registers a call; its frames go to the handler until end(id). */
  begin(handler: CallHandler): number {
    if (this.lostReason) throw new WardenError('E_ENGINE', `the sandbox runner was lost: ${this.lostReason}`);
    let id = this.nextId;
    while (id === 0 || this.calls.has(id)) id = (id + 1) >>> 0;
    this.nextId = (id + 1) >>> 0;
    this.calls.set(id, handler);
    this.busy();
    return id;
  }

  end(id: number): void {
    this.calls.delete(id);
    if (this.calls.size === 0) this.idle();
  }

  send(frame: Buffer): void {
    if (!this.lostReason && !this.stream.destroyed) this.stream.write(frame);
  }

  /**
   * Declares the runner lost (once): fails every call in flight and tells the registry. A channel
   * that closed or broke may have been cut by the engine dying, not the runner: then the calls fail
   * as a broken engine connection does on the plain path, and the runner is not called lost.
   */
  lose(reason: string, badFrame = false): void {
    if (this.lostReason) return;
    this.lostReason = reason;
    const calls = [...this.calls.values()];
    this.calls.clear();
    this.idle();
    this.readyFailed();
    this.stream.destroy();
    void (badFrame ? Promise.resolve(true) : this.engineAnswers().catch(() => false)).then((engineUp) => {
      if (!engineUp) {
        this.engineGone();
        const error = new WardenError(
          'E_ENGINE_UNREACHABLE',
          `the engine connection broke while the command ran: ${reason}`,
          'check that Podman is running; Warden reconnects by itself',
        );
        for (const call of calls) call.onLost(error);
        this.onLost(reason, calls.length, true);
        return;
      }
      const error = new WardenError(
        'E_ENGINE',
        `the sandbox runner was lost while the call ran: ${reason}`,
        'the command may have run in part; Warden uses a new runner or a plain exec for the next call',
      );
      for (const call of calls) call.onLost(error);
      this.onLost(reason, calls.length, false);
    });
  }

  private engineAnswers: () => Promise<boolean> = () => Promise.resolve(true);
  private engineGone: () => void = () => undefined;

  /**
   * Ends the channel on purpose and waits (briefly) for the runner to exit on its end of input, so
   * its engine exec is over before the sandbox is stopped or removed and leaves nothing behind.
   */
  async shutdown(): Promise<void> {
    if (this.lostReason) return;
    const ended = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      timer.unref();
      this.stream.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.lostReason = 'closed by Warden';
    this.failAll(new WardenError('E_CONFLICT', 'the sandbox was stopped while the call ran'));
    // Told to exit, not cut off: Podman then sees the exec end while attached, and cleans it up.
    this.stream.write(encodeFrame(HostFrame.kill, 0));
    await ended;
    this.stream.destroy();
    await this.execEnded();
  }

  /** Ends the channel on purpose at once (engine closing): not a loss. */
  close(): void {
    if (this.lostReason) return;
    this.lostReason = 'closed by Warden';
    this.failAll(new WardenError('E_CONFLICT', 'the engine closed while the call ran'));
    this.stream.write(encodeFrame(HostFrame.kill, 0), () => this.stream.destroy());
  }

  private failAll(error: WardenError): void {
    const calls = [...this.calls.values()];
    this.calls.clear();
    this.idle();
    for (const call of calls) call.onLost(error);
    this.readyFailed();
  }

  // An idle runner's socket must not keep a one-shot process (the CLI) alive; a call in flight must.
  private idle(): void {
    (this.stream as Partial<Socket>).unref?.();
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
    this.pingSentAt = null;
  }

  private busy(): void {
    (this.stream as Partial<Socket>).ref?.();
    if (!this.pinger && !this.lostReason) {
      this.pinger = setInterval(() => this.ping(), PING_EVERY_MS);
      this.pinger.unref();
    }
  }
}
