// The commands running in each sandbox, so that pausing one can end them first: a frozen command's
// output stream could only hang its caller until a timeout (E2B's SDK: a minute), and killing its
// process tree needs the sandbox running. Ended commands answer as cancelled, with the reason, and
// none starts there until the pause is done (the gateway refuses calls into a paused sandbox after).
import { WardenError } from '../../shared/errors.js';

/** How long a pause waits for its commands to end (a kill is an exec; a loaded engine takes a while). */
const END_WAIT_MS = 15_000;

interface Running {
  stop: AbortController;
  done: Promise<unknown>;
}

export class RunningExecs {
  private readonly bySandbox = new Map<string, Set<Running>>();
  /** Sandboxes whose commands were ended for an action still under way, and why: no new one starts there meanwhile. */
  private readonly closed = new Map<string, string>();

  /** Runs `body` with a signal that also fires when the sandbox's commands are ended. */
  async run<T>(sandboxId: string, signal: AbortSignal | undefined, body: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const why = this.closed.get(sandboxId);
    if (why !== undefined) throw new WardenError('E_CONFLICT', `the command was not started: ${why}`);
    const stop = new AbortController();
    const promise = body(signal ? AbortSignal.any([signal, stop.signal]) : stop.signal);
    const entry: Running = { stop, done: promise.catch(() => undefined) };
    const set = this.bySandbox.get(sandboxId) ?? new Set<Running>();
    this.bySandbox.set(sandboxId, set.add(entry));
    try {
      return await promise;
    } finally {
      set.delete(entry);
      if (set.size === 0 && this.bySandbox.get(sandboxId) === set) this.bySandbox.delete(sandboxId);
    }
  }

  /** Ends the sandbox's commands, then runs `action` (a pause) with no new command let in until it is done. */
  async closedDuring<T>(sandboxId: string, reason: string, action: () => Promise<T>): Promise<T> {
    this.closed.set(sandboxId, reason);
    try {
      await this.end(sandboxId, reason);
      return await action();
    } finally {
      this.closed.delete(sandboxId);
    }
  }

  /** Ends every command running in the sandbox, `reason` their cancel reason, and waits (bounded) until they have. */
  async end(sandboxId: string, reason: string): Promise<void> {
    const running = [...(this.bySandbox.get(sandboxId) ?? [])];
    if (running.length === 0) return;
    for (const r of running) r.stop.abort(reason);
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, END_WAIT_MS)));
    await Promise.race([Promise.all(running.map((r) => r.done)), bound]);
    clearTimeout(timer);
  }
}
