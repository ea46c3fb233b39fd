// A terminal through the sandbox's runner: the runner opens a pseudo-terminal inside the sandbox
// and its bytes travel over the runner's channel, instead of through Podman's TTY relay (which
// carries ~10 MB/s here). Same TerminalSession as podman/terminal-session.ts: early output held
// for the first listener, pause() holds back the credit so the shell blocks instead of memory
// growing, resize, and the exit code (null when the runner was lost).
import { HostFrame, RUNNER_EXEC_WINDOW, RUNNER_MAX_PAYLOAD, RunnerFrame } from '../../../shared/contracts/runner.js';
import { TerminalOutput, type TerminalSession } from '../podman/terminal-types.js';
import { encodeCredit, encodeExec, encodeFrame, encodeResize, parseExit, RunnerProtocolError, type Frame } from './frame-codec.js';
import type { RunnerChannel } from './runner-channel.js';

const CREDIT_STEP = RUNNER_EXEC_WINDOW / 4;

export function terminalThroughRunner(
  channel: RunnerChannel,
  opts: { cmd: string[]; env: Record<string, string>; cwd?: string; size?: { cols: number; rows: number } },
): TerminalSession {
  const output = new TerminalOutput();
  let granted = RUNNER_EXEC_WINDOW;
  let received = 0;
  let owed = 0;
  let paused = false;
  let done = false;
  let settle: (code: number | null) => void = () => undefined;
  const exited = new Promise<number | null>((resolve) => (settle = resolve));
  const giveCredit = () => {
    if (paused || done || owed === 0 || (owed < CREDIT_STEP && received < granted)) return;
    channel.send(encodeCredit(id, owed));
    granted += owed;
    owed = 0;
  };
  const finish = (code: number | null) => {
    if (done) return;
    done = true;
    channel.end(id);
    settle(code);
  };
  const id = channel.begin({
    onFrame: (frame: Frame) => {
      if (frame.type === RunnerFrame.stdout) {
        received += frame.payload.length;
        if (received > granted) throw new RunnerProtocolError('terminal output beyond the credit granted');
        owed += frame.payload.length;
        output.push(frame.payload);
        giveCredit();
      } else if (frame.type === RunnerFrame.exit) {
        const exit = parseExit(frame.payload);
        finish(exit.how === 1 ? 128 + exit.value : exit.value);
      } else if (frame.type !== RunnerFrame.stdinCredit)
        throw new RunnerProtocolError(`frame type 0x${frame.type.toString(16)} in a terminal`);
    },
    onLost: () => finish(null),
  });
  const env = Object.entries(opts.env).map(([k, v]) => `${k}=${v}`);
  channel.send(
    encodeExec(id, { window: RUNNER_EXEC_WINDOW, hasStdin: true, pty: true, argv: opts.cmd, env, cwd: opts.cwd ?? '', user: '' }),
  );
  if (opts.size) channel.send(encodeResize(id, opts.size.cols, opts.size.rows));
  return {
    execId: `runner:${channel.pid}:${id}`,
    write: (data) => {
      if (done) return;
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < bytes.length; off += RUNNER_MAX_PAYLOAD) {
        channel.send(encodeFrame(HostFrame.stdin, id, bytes.subarray(off, off + RUNNER_MAX_PAYLOAD)));
      }
    },
    resize: (size) => {
      if (!done) channel.send(encodeResize(id, size.cols, size.rows));
      return Promise.resolve();
    },
    onData: (fn) => output.listen(fn),
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      giveCredit();
    },
    exited,
    close: () => {
      if (!done) channel.send(encodeFrame(HostFrame.kill, id));
    },
  };
}
