// The commands the E2B door runs, by pid, and who follows each: the client that started it and any
// that attached since (commands.connect). A pid is Warden's number for a command this server runs,
// not a process id in the sandbox. Output goes to every follower: the starter's stream holds the
// command back while it is slow (Warden's exec rule); an attached one never does: its queue is
// bounded (the stream is cut off past it), so it can stall neither the command nor the others. A
// command lives while someone follows it: when the last follower is gone, it is ended.
import type { z } from 'zod';
import type { ProcessConfig, ProcessInfo, ProcessSelectorSchema } from '../../../shared/types/e2b.js';
import { WardenError } from '../../../shared/errors.js';
import type { ByteBatcher } from '../../engine/output-batcher.js';
import type { CommandInput } from '../../engine/podman/exec-handlers.js';
import type { ConnectStream } from './connect-protocol.js';

/** Which field of a data event a command's output goes in. */
export type OutputField = 'stdout' | 'stderr' | 'pty';

/** How a command takes input: none (its stdin is empty), a pipe the client writes (`stdin: true`), or a PTY. */
export type InputKind = 'none' | 'stdin' | 'pty';

/** One client's stream of a command's events (its start, output, keepalives while quiet, end). */
export class Follower {
  private readonly batches = new Map<OutputField, ByteBatcher>();
  private readonly alive: NodeJS.Timeout;

  constructor(
    readonly stream: ConnectStream,
    keepaliveMs: number,
  ) {
    this.alive = setInterval(() => stream.send({ event: { keepalive: {} } }), keepaliveMs);
    stream.gone.addEventListener('abort', () => clearInterval(this.alive), { once: true });
  }

  output(field: OutputField, chunk: Buffer): void {
    let batch = this.batches.get(field);
    if (!batch) {
      batch = this.stream.batcher((data) => ({ event: { data: { [field]: data.toString('base64') } } }));
      this.batches.set(field, batch);
    }
    batch.push(chunk);
  }

  /** The command's end (or why following it failed), after all its output. */
  end(event: unknown, err?: unknown): void {
    clearInterval(this.alive);
    for (const batch of this.batches.values()) batch.end();
    if (event !== undefined) this.stream.send(event);
    this.stream.end(err);
  }
}

/** A command's input, to come: SendInput waits for it (its start and its EXEC are moments apart). */
export class Feed {
  readonly ready: Promise<CommandInput>;
  resolve!: (input: CommandInput) => void;
  reject!: (err: Error) => void;

  constructor() {
    this.ready = new Promise<CommandInput>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.ready.catch(() => undefined);
  }
}

export interface LiveProcess extends ProcessInfo {
  agent: string;
  sandboxId: string;
  input: InputKind;
  /** Aborted to end the command: SendSignal, or no follower left. */
  kill: AbortController;
  /** The command's input: given once it runs (never for `input: 'none'`), refused once it ended. */
  feed: Feed;
  /** Its start was sent: followers may attach. */
  running: boolean;
  /** Clients attached after the start (the starter's stream is not among them). */
  followers: Set<Follower>;
  /** Followers of any kind still there, the starter included. */
  following: number;
  /** SendInput calls waiting for the command to take their bytes (each holds its body in memory). */
  waitingWrites: number;
}

const FIRST_PID = 1000;
/** Clients attached to one command at once, beside its starter. */
export const MAX_FOLLOWERS = 16;
/** SendInput calls that may wait on one command at once: more are refused, so waiting bodies cannot pile up. */
export const MAX_WAITING_WRITES = 4;

export class ProcessTable {
  private next = FIRST_PID;
  private readonly live = new Map<number, LiveProcess>();

  /** A new command, followed by its starter until `gone` aborts. */
  add(p: { agent: string; sandboxId: string; config: ProcessConfig; tag?: string; input: InputKind }, gone: AbortSignal): LiveProcess {
    const entry: LiveProcess = {
      ...p,
      pid: this.next++,
      kill: new AbortController(),
      feed: new Feed(),
      running: false,
      followers: new Set(),
      following: 0,
      waitingWrites: 0,
    };
    this.live.set(entry.pid, entry);
    this.follow(entry, gone);
    return entry;
  }

  remove(pid: number): void {
    this.live.delete(pid);
  }

  /** The caller's commands in one sandbox (another agent's are not there for it). */
  list(agent: string, sandboxId: string): LiveProcess[] {
    return [...this.live.values()].filter((p) => p.agent === agent && p.sandboxId === sandboxId);
  }

  find(agent: string, sandboxId: string, sel: z.output<typeof ProcessSelectorSchema>): LiveProcess {
    const found = this.list(agent, sandboxId).find((p) => (sel.pid !== undefined ? p.pid === sel.pid : p.tag === sel.tag));
    if (!found) throw new WardenError('E_NOT_FOUND', `no running command ${sel.pid ?? sel.tag ?? ''} in this sandbox`);
    return found;
  }

  /** Attaches a client to a running command: it gets output from now on, and the end. */
  attach(entry: LiveProcess, follower: Follower): void {
    if (entry.followers.size >= MAX_FOLLOWERS)
      throw new WardenError('E_TOO_LARGE', `at most ${MAX_FOLLOWERS} clients follow one command`, 'disconnect another client first');
    entry.followers.add(follower);
    this.follow(entry, follower.stream.gone, () => entry.followers.delete(follower));
  }

  /** Counts a follower until `gone`; the last one leaving ends the command (with its reason). */
  private follow(entry: LiveProcess, gone: AbortSignal, left?: () => void): void {
    entry.following++;
    const leave = () => {
      left?.();
      if (--entry.following === 0) entry.kill.abort(gone.reason);
    };
    if (gone.aborted) leave();
    else gone.addEventListener('abort', leave, { once: true });
  }
}
