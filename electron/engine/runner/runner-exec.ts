// An exec through the sandbox's runner, with the promises of the plain path (podman/exec-session.ts):
// separate byte-exact streams, exit code (128+signal when killed), the output cap and allowance,
// a timeout that kills the whole tree (exit 124), cancel when the caller is gone, OOM kills
// reported. Output is granted to the runner in credit, returned as the consumer takes it, so a
// slow consumer holds back its own command and nothing else. Stdin is given whole or streamed by
// the caller (runner-stdin.ts, within its own window), on a pipe or a pseudo-terminal. Returns null
// when the runner could not start the command at all (a user or cwd it cannot take): the plain path
// runs it then (a command whose stdin is streamed fails instead: its input is already the runner's).
import { WardenError } from '../../../shared/errors.js';
import { ExitHow, HostFrame, RUNNER_EXEC_WINDOW, RUNNER_MAX_PAYLOAD, RunnerFrame } from '../../../shared/contracts/runner.js';
import type { ExecRequest, ExecResult } from '../../../shared/types/exec.js';
import { execResultOf, type ExecHandlers } from '../podman/exec-handlers.js';
import { OutputSink } from '../podman/output-sink.js';
import { encodeCredit, encodeExec, encodeFrame, parseExit, RunnerProtocolError, type ExitFields, type Frame } from './frame-codec.js';
import type { RunnerChannel } from './runner-channel.js';
import { RunnerStdin } from './runner-stdin.js';

/** How long a killed command's runner may take to answer before it is declared lost. */
const KILL_ANSWER_MS = 10_000;
/** Credit is returned in steps of this, not per frame. */
const CREDIT_STEP = RUNNER_EXEC_WINDOW / 4;

export interface RunnerExecOptions {
  argv: string[];
  /** Tells whether a SIGKILL with this cgroup OOM count is a new OOM kill (the plain path's memory). */
  isNewOomKill: (count: number) => boolean;
}

export function execThroughRunner(
  channel: RunnerChannel,
  req: ExecRequest,
  handlers: ExecHandlers,
  opts: RunnerExecOptions,
): Promise<ExecResult | null> {
  const started = performance.now();
  const limit = req.outputLimitBytes ?? Number.MAX_SAFE_INTEGER;
  const stdout = new OutputSink(limit, handlers.onStdout, handlers.allowance);
  const stderr = new OutputSink(limit, handlers.onStderr, handlers.allowance);
  let granted = RUNNER_EXEC_WINDOW;
  let received = 0;
  let owed = 0;
  let draining = false;
  let timedOut = false;
  let cancelled: string | undefined;
  let timer: NodeJS.Timeout | null = null;
  let killWatch: NodeJS.Timeout | null = null;

  return new Promise<ExecResult | null>((resolve, reject) => {
    let id = 0;
    let input: RunnerStdin | null = null;
    const finish = () => {
      input?.close('the command has ended');
      if (timer) clearTimeout(timer);
      if (killWatch) clearTimeout(killWatch);
      handlers.signal?.removeEventListener('abort', cancel);
      channel.end(id);
    };
    const giveCredit = () => {
      if (owed >= CREDIT_STEP || (owed > 0 && received === granted)) {
        channel.send(encodeCredit(id, owed));
        granted += owed;
        owed = 0;
      }
    };
    // A consumer whose handler threw: the call fails with that error at once (as on the plain path),
    // its command is killed, and its frames are taken (and checked) until its EXIT ends it quietly.
    let abandoned = false;
    // While the consumer drains, what the runner still sends within its credit is held here, not
    // handed on: a door's queue then stays at what it had when it asked to pause (the window bounds
    // this, RUNNER_EXEC_WINDOW), and the EXIT waits until everything held has been handed on.
    const held: Array<[OutputSink, Buffer]> = [];
    let exitHeld: ExitFields | null = null;
    const deliver = (sink: OutputSink, chunk: Buffer) => {
      owed += chunk.length;
      if (abandoned) return giveCredit();
      try {
        sink.accept(chunk);
      } catch (err) {
        abandoned = true;
        reject(err as Error);
        kill();
        return giveCredit();
      }
      if ((stdout.wantsPause || stderr.wantsPause) && handlers.drain) {
        stdout.wantsPause = stderr.wantsPause = false;
        draining = true;
        handlers.drain().then(resume, resume);
        return;
      }
      giveCredit();
    };
    const resume = () => {
      draining = false;
      while (held.length && !draining) {
        const [sink, chunk] = held.shift()!;
        deliver(sink, chunk);
      }
      if (draining) return;
      giveCredit();
      if (exitHeld) {
        const exit = exitHeld;
        exitHeld = null;
        settle(exit);
      }
    };
    const onOutput = (sink: OutputSink, chunk: Buffer) => {
      received += chunk.length;
      if (received > granted) throw new RunnerProtocolError('output beyond the credit granted');
      if (draining) held.push([sink, chunk]);
      else deliver(sink, chunk);
    };
    const onExit = (exit: ExitFields) => {
      const signaled = exit.how === ExitHow.signaled;
      if (signaled && (exit.value < 1 || exit.value > 64)) throw new RunnerProtocolError('an EXIT with no such signal');
      if (held.length) exitHeld = exit;
      else settle(exit);
    };
    const settle = (exit: ExitFields) => {
      const signaled = exit.how === ExitHow.signaled;
      finish();
      if (abandoned) return;
      if (exit.how === ExitHow.notStarted && input)
        return reject(new WardenError('E_BAD_INPUT', `the command could not start: ${exit.message || 'its user or cwd cannot be taken'}`));
      if (exit.how === ExitHow.notStarted) return resolve(null);
      const exitCode = signaled ? 128 + exit.value : exit.value;
      const oomKilled = signaled && exit.value === 9 && !timedOut && !exit.killed && opts.isNewOomKill(exit.oomKills);
      resolve(execResultOf({ started, exitCode, timedOut, stdout, stderr, oomKilled, cancelled }));
    };
    const kill = () => {
      channel.send(encodeFrame(HostFrame.kill, id));
      // A runner that does not answer a kill would hold the call for ever: it is lost instead.
      killWatch ??= setTimeout(() => channel.lose('it did not answer a kill'), KILL_ANSWER_MS);
    };
    const cancel = () => {
      if (timedOut || cancelled !== undefined) return;
      cancelled = String(handlers.signal?.reason ?? 'cancelled');
      if (timer) clearTimeout(timer);
      if (exitHeld) {
        // It has already ended: only what was held for the gone consumer is left, and it is dropped.
        const exit = exitHeld;
        exitHeld = null;
        held.length = 0;
        return settle(exit);
      }
      kill();
    };

    try {
      id = channel.begin({
        onFrame: (frame: Frame) => {
          if (frame.type === RunnerFrame.stdout) onOutput(stdout, frame.payload);
          else if (frame.type === RunnerFrame.stderr) onOutput(stderr, frame.payload);
          else if (frame.type === RunnerFrame.exit) onExit(parseExit(frame.payload));
          // Given whole, stdin needs no acknowledging: the credit is only read when it is streamed.
          else if (frame.type === RunnerFrame.stdinCredit) input?.onCredit(frame.payload);
          else throw new RunnerProtocolError(`frame type 0x${frame.type.toString(16)} in an exec`);
        },
        onLost: (error) => {
          finish();
          reject(error);
        },
      });
    } catch (err) {
      reject(err as Error);
      return;
    }
    const env = Object.entries(req.env ?? {}).map(([k, v]) => `${k}=${v}`);
    const streamed = handlers.openInput !== undefined;
    const hasStdin = req.stdin !== undefined || streamed;
    const strings = [...opts.argv, ...env, req.cwd ?? '', req.user ?? ''];
    if (strings.some((s) => s.includes('\0'))) {
      finish();
      reject(new WardenError('E_BAD_INPUT', 'a command, env value, cwd or user contains a NUL byte'));
      return;
    }
    let frame: Buffer;
    try {
      const pty = streamed && handlers.pty !== undefined;
      frame = encodeExec(id, { window: RUNNER_EXEC_WINDOW, hasStdin, pty, argv: opts.argv, env, cwd: req.cwd ?? '', user: req.user ?? '' });
    } catch {
      // Too big for one frame: the plain path takes it (its own limits answer).
      finish();
      resolve(null);
      return;
    }
    channel.send(frame);
    if (streamed) {
      input = new RunnerStdin(channel, id, handlers.pty !== undefined);
      if (handlers.pty) input.resize(handlers.pty);
      handlers.openInput!(input);
    } else if (hasStdin) {
      const data = Buffer.from(req.stdin!, 'utf8');
      for (let off = 0; off < data.length; off += RUNNER_MAX_PAYLOAD) {
        channel.send(encodeFrame(HostFrame.stdin, id, data.subarray(off, off + RUNNER_MAX_PAYLOAD)));
      }
      channel.send(encodeFrame(HostFrame.stdin, id));
    }
    if (req.timeoutMs) {
      timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, req.timeoutMs);
    }
    handlers.signal?.addEventListener('abort', cancel, { once: true });
    if (handlers.signal?.aborted) cancel();
  });
}
