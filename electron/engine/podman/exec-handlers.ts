// What a caller of an exec hands in (where the output goes, how a slow consumer holds the command
// back, a budget, a cancel) and the exit code a timeout reports: shared by the plain engine exec
// (exec-session.ts) and the runner's (runner/runner-exec.ts), which exec-session chooses between.
import type { Readable } from 'node:stream';
import type { ExecResult, TerminalSize } from '../../../shared/types/exec.js';
import type { ChunkHandler, OutputAllowance, OutputSink } from './output-sink.js';

/** A running command's input, streamed by its caller (instead of ExecRequest.stdin given whole). */
export interface CommandInput {
  /**
   * Queues bytes for the command's stdin (writes keep their order). Resolves once they are within
   * what the way to the command may hold (the runner's stdin window, the engine socket's buffer): a
   * command that does not read holds its writer back, nothing grows. Rejects once the command ended.
   */
  write(data: Buffer): Promise<void>;
  /** End of input (after what was written): the command reads EOF. */
  end(): void;
  /** A pseudo-terminal's new size (only for a command run with `pty`). */
  resize?(size: TerminalSize): void;
}

export const TIMEOUT_EXIT_CODE = 124;

export interface ExecHandlers {
  onStdout?: ChunkHandler;
  onStderr?: ChunkHandler;
  /**
   * Resolves when a consumer that returned false from onStdout/onStderr can take more. Until then
   * the engine's stream is paused, so a slow reader holds the command back instead of memory growing.
   */
  drain?: () => Promise<void>;
  /** Output both streams may forward between them (a run's budget), on top of outputLimitBytes. */
  allowance?: OutputAllowance;
  /**
   * Aborted when whoever waits for the output is gone (an HTTP client that hung up): the command's
   * process tree is killed as on a timeout, and the result says why in `cancelled` (the abort reason).
   */
  signal?: AbortSignal;
  /** Streamed stdin: called with the command's input once it has been sent to run (ExecRequest.stdin is then ignored). */
  openInput?: (input: CommandInput) => void;
  /** Run on a pseudo-terminal of this size (the runner's; its output comes as stdout). Needs `openInput`. */
  pty?: TerminalSize;
  /**
   * Bytes for the command's stdin, streamed with back-pressure (instead of `stdin`, which is text held
   * whole): a snapshot's archive going back in. Only the plain engine exec carries it (the runner
   * buffers stdin whole), so a call with it never goes through the runner.
   */
  stdinFrom?: Readable;
}

/** How a command ended, told the same way whichever path ran it. */
export function execResultOf(o: {
  started: number;
  exitCode: number;
  timedOut: boolean;
  stdout: OutputSink;
  stderr: OutputSink;
  oomKilled: boolean;
  cancelled: string | undefined;
}): ExecResult {
  return {
    exitCode: o.timedOut ? TIMEOUT_EXIT_CODE : o.exitCode,
    durationMs: Math.round((performance.now() - o.started) * 100) / 100,
    timedOut: o.timedOut,
    stdoutBytes: o.stdout.total,
    stderrBytes: o.stderr.total,
    truncated: o.stdout.truncated || o.stderr.truncated,
    oomKilled: o.oomKilled,
    ...(o.cancelled !== undefined ? { cancelled: o.cancelled } : {}),
  };
}
