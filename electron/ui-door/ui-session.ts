// One UI connection (an Electron window or a browser socket) speaking the shared contract: every
// call validated against the shared zod schemas, answered as an envelope; engine events, stats and
// terminal output pushed back. The same class serves IPC and the web shell, so both doors agree.
import { randomBytes } from 'node:crypto';
import { WardenError, toErrorInfo, type Envelope } from '../../shared/errors.js';
import type { EventMap, EventMessage } from '../../shared/contracts/events.js';
import {
  UiMethods,
  type HandlersOf,
  type MethodTarget,
  type UiMethodName,
  type UiMethodParams,
  type UiMethodResponse,
} from '../../shared/contracts/methods.js';
import type { TerminalSession } from '../engine/podman/terminal-session.js';
import type { StatsSample } from '../../shared/types/stats.js';
import type { EngineSource } from './engine-source.js';
import type { StatsHub } from './stats-hub.js';
import { ByteBatcher, OutputBatcher } from '../engine/output-batcher.js';
import { parseWith } from '../../shared/contracts/parse.js';
import { UI_EVENTS } from './ui-events.js';
import { ReviewMethods } from '../engine/gateway/review-methods.js';

const MAX_TERMINALS = 16;
/** Terminal output: a keystroke's echo at once, a burst joined for 5 ms or up to 256 KiB. */
const TERMINAL_BATCH = { leading: true } as const;
/** Verify progress is sent at most this often. */
const PROGRESS_EVERY_MS = 100;

export type EventSender = (message: EventMessage) => void;
/**
 * Terminal output as raw bytes, for a door that frames it itself (the web shell's binary frames):
 * no UTF-8 decoding, no JSON. A door without one gets `terminal.data` events with text.
 */
export type TerminalOutputSender = (id: string, data: Buffer) => void;

/**
 * How far behind the other end of a connection is. When it is congested, terminal output is
 * paused at its source (the shell in the sandbox blocks) and resumed once it has drained; a door
 * without backpressure (Electron IPC) passes none.
 */
export interface FlowControl {
  congested(): boolean;
  /** Calls fn once, when the backlog has drained. */
  whenDrained(fn: () => void): void;
}

/** Calls this door completes itself: who decides an approval is the window's person; verify reports progress. */
type DoorMethod = 'approval.decide' | 'ledger.verify';
type Handler = (params: unknown) => Promise<unknown>;

interface OpenTerminal {
  session: TerminalSession;
  batcher: OutputBatcher | ByteBatcher;
}

/** Parses a request for any UI method; bad input names the field, like the API does. */
export function parseUiRequest(method: unknown, params: unknown): { method: UiMethodName; params: unknown } {
  if (typeof method !== 'string' || !Object.prototype.hasOwnProperty.call(UiMethods, method))
    throw new WardenError('E_BAD_INPUT', `unknown method ${String(method).slice(0, 64)}`);
  const name = method as UiMethodName;
  return { method: name, params: parseWith(UiMethods[name].params, params, name) };
}

export class UiSession {
  private readonly terminals = new Map<string, OpenTerminal>();
  private readonly watched = new Set<string>();
  private readonly offs: Array<() => void> = [];
  private readonly statsSink = (sample: StatsSample) => this.send({ event: 'stats.sample', payload: sample });
  private closed = false;
  private paused = false;

  /**
   * @param who the person behind this window, as approvals record it ("user (web shell)" …).
   * @param watchApprovals tells the gateway a person can answer `ask` (so it waits for one).
   */
  constructor(
    private readonly source: EngineSource,
    private readonly hub: StatsHub,
    private readonly sendEvent: EventSender,
    private readonly who = 'user',
    watchApprovals?: () => () => void,
    private readonly flow?: FlowControl,
    private readonly sendOutput?: TerminalOutputSender,
  ) {
    for (const event of UI_EVENTS) {
      this.offs.push(source.on(event, (payload: EventMap[typeof event]) => this.send({ event, payload } as EventMessage)));
    }
    if (watchApprovals) this.offs.push(watchApprovals());
  }

  private send(message: EventMessage): void {
    if (!this.closed) this.sendEvent(message);
  }

  /** Validates and runs one call; never throws: failures come back as the envelope's error. */
  async invoke(method: unknown, params: unknown): Promise<Envelope<unknown>> {
    try {
      const request = parseUiRequest(method, params);
      return { result: (await this.dispatch(request.method, request.params)) ?? null };
    } catch (err) {
      return { error: toErrorInfo(err) };
    }
  }

  /** The connection's own streams: terminals and stats. */
  private readonly sessionMethods: HandlersOf<'session'> = {
    'terminal.open': (p) => this.openTerminal(p),
    'terminal.input': async (p) => {
      this.terminal(p.id).session.write(p.data);
      return null;
    },
    'terminal.resize': async (p) => {
      await this.terminal(p.id).session.resize(p.size);
      return null;
    },
    'terminal.close': async (p) => {
      this.closeTerminal(p.id);
      return null;
    },
    'stats.watch': async (p) => this.watchStats(p.ids),
    'stats.history': async (p) => this.hub.history(p),
  };

  private readonly doorMethods: { [M in DoorMethod]: (p: UiMethodParams<M>) => Promise<UiMethodResponse<M>> } = {
    'approval.decide': (p) => this.source.gateway()['approval.decide']({ ...p, by: this.who }),
    'ledger.verify': (p) => this.verify(p),
  };

  /** Who answers each target's methods (looked up per call: the engine may be swapped). */
  private readonly targets: Record<MethodTarget, () => object> = {
    engine: () => this.source.current(),
    session: () => this.sessionMethods,
    gateway: () => this.source.gateway(),
    review: () => new ReviewMethods(this.source.gateway(), this.who),
    ledger: () => this.source.ledgerReader(),
  };

  private async dispatch(method: UiMethodName, params: unknown): Promise<unknown> {
    const target = Object.prototype.hasOwnProperty.call(this.doorMethods, method)
      ? this.doorMethods
      : this.targets[UiMethods[method].target]();
    const handler = (target as Record<UiMethodName, Handler>)[method];
    return handler.call(target, params);
  }

  private verify(p: UiMethodParams<'ledger.verify'>): Promise<UiMethodResponse<'ledger.verify'>> {
    let last = 0;
    return this.source.ledgerReader()['ledger.verify'](p, (done, total) => {
      const now = Date.now();
      if (now - last < PROGRESS_EVERY_MS && done < total) return;
      last = now;
      this.send({ event: 'ledger.verify.progress', payload: { jobId: p.jobId, done, total } });
    });
  }

  private terminal(id: string): OpenTerminal {
    const t = this.terminals.get(id);
    if (!t) throw new WardenError('E_NOT_FOUND', `no open terminal ${id}`, 'open a new terminal');
    return t;
  }

  private async openTerminal(p: UiMethodParams<'terminal.open'>): Promise<{ id: string; sandboxId: string }> {
    if (this.terminals.size >= MAX_TERMINALS)
      throw new WardenError('E_CONFLICT', `at most ${MAX_TERMINALS} terminals per window`, 'close a terminal first');
    const engine = this.source.current();
    const sandbox = await engine['sandbox.inspect']({ ref: p.ref });
    if (sandbox.state !== 'running')
      throw new WardenError('E_CONFLICT', `sandbox ${sandbox.name} is ${sandbox.state}`, 'start it to open a terminal');
    const session = await engine.openTerminal(sandbox.id, { size: p.size });
    const id = randomBytes(8).toString('hex');
    if (this.closed) {
      session.close();
      throw new WardenError('E_CONFLICT', 'the window closed');
    }
    const out = this.sendOutput;
    const batcher = out
      ? new ByteBatcher((data) => {
          if (!this.closed) out(id, data);
          this.throttle();
        }, TERMINAL_BATCH)
      : new OutputBatcher((data) => {
          this.send({ event: 'terminal.data', payload: { id, data } });
          this.throttle();
        }, TERMINAL_BATCH);
    session.onData((chunk) => batcher.push(chunk));
    if (this.paused) session.pause();
    this.terminals.set(id, { session, batcher });
    void session.exited.then((code) => {
      batcher.end();
      if (this.terminals.delete(id)) this.send({ event: 'terminal.exit', payload: { id, code } });
    });
    return { id, sandboxId: sandbox.id };
  }

  /** Pauses every terminal while the connection is congested; resumes them when it drains. */
  private throttle(): void {
    if (this.paused || this.closed || !this.flow?.congested()) return;
    this.paused = true;
    for (const t of this.terminals.values()) t.session.pause();
    this.flow.whenDrained(() => {
      this.paused = false;
      if (this.closed) return;
      for (const t of this.terminals.values()) t.session.resume();
    });
  }

  private closeTerminal(id: string): void {
    const t = this.terminals.get(id);
    if (!t) return;
    this.terminals.delete(id);
    t.batcher.flush();
    t.session.close();
  }

  private watchStats(ids: string[]): { watching: number } {
    const next = new Set(ids);
    for (const id of this.watched) if (!next.has(id)) this.hub.unwatch(id, this.statsSink);
    for (const id of next) if (!this.watched.has(id)) this.hub.watch(id, this.statsSink);
    this.watched.clear();
    for (const id of next) this.watched.add(id);
    return { watching: next.size };
  }

  /** Closes every stream this connection holds. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.offs) off();
    for (const id of [...this.terminals.keys()]) this.closeTerminal(id);
    for (const id of this.watched) this.hub.unwatch(id, this.statsSink);
    this.watched.clear();
  }
}
