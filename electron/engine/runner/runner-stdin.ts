// A command's stdin streamed through the runner (E2B's sendStdin, a PTY's input): STDIN frames go
// out while the bytes the runner has not acknowledged (STDIN_CREDIT: written into the command's
// stdin, or dropped because it closed it) stay within RUNNER_STDIN_WINDOW. A command that never
// reads holds its writer back: neither the runner's buffer in the sandbox nor the host's grows.
// The queue of writes, end and close are queued-stdin.ts's.
import { HostFrame, RUNNER_MAX_PAYLOAD, RUNNER_STDIN_WINDOW } from '../../../shared/contracts/runner.js';
import type { TerminalSize } from '../../../shared/types/exec.js';
import { QueuedStdin } from '../podman/queued-stdin.js';
import { encodeFrame, encodeResize, RunnerProtocolError } from './frame-codec.js';
import type { RunnerChannel } from './runner-channel.js';

export class RunnerStdin extends QueuedStdin {
  private window = RUNNER_STDIN_WINDOW;
  private sent = 0;
  private acked = 0;
  private wake: (() => void) | null = null;

  constructor(
    private readonly channel: RunnerChannel,
    private readonly id: number,
    private readonly pty: boolean,
  ) {
    super();
  }

  /** A STDIN_CREDIT frame: acknowledging more than was sent is a lie, and loses the runner. */
  onCredit(payload: Buffer): void {
    if (payload.length !== 5 || payload[4]! > 1) throw new RunnerProtocolError('a malformed STDIN_CREDIT frame');
    const n = payload.readUInt32BE(0);
    if (this.acked + n > this.sent) throw new RunnerProtocolError('stdin acknowledged beyond what was sent');
    this.acked += n;
    this.window += n;
    // The command closed its stdin (or ended): what is queued or comes later would only be dropped.
    if (payload[4] === 1) this.close('the command closed its stdin');
    this.wake?.();
  }

  /** After what is still queued: the empty frame is EOF. */
  protected sendEof(): void {
    this.channel.send(encodeFrame(HostFrame.stdin, this.id));
  }

  resize(size: TerminalSize): void {
    if (this.pty && !this.over) this.channel.send(encodeResize(this.id, size.cols, size.rows));
  }

  override close(why: string): void {
    super.close(why);
    this.wake?.();
  }

  protected async send(data: Buffer): Promise<void> {
    let off = 0;
    while (off < data.length) {
      if (this.over) throw this.over;
      if (this.window === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      const n = Math.min(this.window, RUNNER_MAX_PAYLOAD, data.length - off);
      this.channel.send(encodeFrame(HostFrame.stdin, this.id, data.subarray(off, off + n)));
      this.window -= n;
      this.sent += n;
      off += n;
    }
  }
}
