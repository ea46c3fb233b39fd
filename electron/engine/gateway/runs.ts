// Runs and their tool calls in memory (what the gateway works with), pushed on the event bus and written through
// to the run archive (runs.db: what list and get answer from, across restarts). Memory is bounded: maxOpenRuns
// per agent, runIdleMs ends a run, ended runs past a cap are dropped (the archive and the ledger keep them).
import { randomBytes } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { Budgets } from '../../../shared/types/policy.js';
import { pendingCall, type RunDetail, type RunInfo, type RunQuery, type ToolCallInfo, type ToolName } from '../../../shared/types/run.js';
import type { EventBus } from '../event-bus.js';
import { Breaker } from './breaker.js';
import { GatewayDenial } from './denial.js';
import type { RunArchive } from './run-archive.js';
import { Run } from './run-state.js';

export { Run } from './run-state.js';

/** Ended runs (and their calls) kept in memory for list/get; older ones are dropped, oldest first. */
export const MAX_ENDED_RUNS = 1000;
export const MAX_ENDED_CALLS = 50_000;
/** Idle runs are looked for at most this often on open (and by the gateway's timer). */
const SWEEP_EVERY_MS = 1000;

/** What opening runs is held to (from the policy's agents section); null: unlimited (the user). */
export interface RunLimits {
  maxOpenRuns: number;
  runIdleMs: number;
}

export class RunStore {
  private readonly runs = new Map<string, Run>();
  /** agent + run key, or agent + sandbox id → run id. */
  private readonly byKey = new Map<string, string>();
  private readonly openByAgent = new Map<string, number>();
  private endedCalls = 0;
  private ended = 0;
  private lastSweep = 0;
  /** Set by the gateway from the policy; null: no limit on open runs, none end for idleness. */
  limits: () => RunLimits | null = () => null;

  constructor(
    private readonly events: EventBus,
    /** The clock of runs (wall time, idleness): a spec passes its own. */
    readonly now: () => number = Date.now,
    /** Where runs are kept across restarts; none: in memory only. */
    private readonly archive: RunArchive | null = null,
  ) {}

  /** Follows a run: its current calls, then every change, until stop() or the run ends. */
  follow(runId: string, onCall: (call: ToolCallInfo) => void, onRun: (run: RunInfo) => void): () => void {
    const stops = [
      this.events.on('run.call', (c) => c.runId === runId && onCall(c)),
      this.events.on('run.updated', (r) => r.id === runId && onRun(r)),
    ];
    return () => stops.forEach((s) => s());
  }

  /**
   * The run a call belongs to: the client's key if given, else the agent's open run on this sandbox,
   * else a new one. A key names one run of one sandbox: reusing it on another sandbox is a conflict.
   */
  open(
    agent: string,
    key: string | null,
    sandbox: { id: string; name: string } | null,
    budgets: () => Budgets,
    opts: { unlimited?: boolean } = {},
  ): Run {
    this.sweep();
    const lookup = key !== null ? `k\0${agent}\0${key}` : sandbox ? `s\0${agent}\0${sandbox.id}` : null;
    const existing = lookup ? this.runs.get(this.byKey.get(lookup) ?? '') : undefined;
    if (existing && (existing.status === 'active' || key !== null)) {
      if (sandbox && existing.sandboxId && existing.sandboxId !== sandbox.id) {
        throw new WardenError(
          'E_CONFLICT',
          `run ${key ?? existing.id} belongs to sandbox ${existing.sandboxName ?? existing.sandboxId}`,
          'a run is one agent in one sandbox: use another X-Warden-Run for this sandbox',
        );
      }
      if (sandbox && !existing.sandboxId) this.bind(existing, sandbox);
      return existing;
    }
    const max = opts.unlimited ? null : this.limits()?.maxOpenRuns;
    if (max !== undefined && max !== null && (this.openByAgent.get(agent) ?? 0) >= max) {
      this.sweep(true);
      if ((this.openByAgent.get(agent) ?? 0) >= max) {
        throw new GatewayDenial(
          'budget',
          `limit: agent ${agent} has ${max} runs open, the most policy allows`,
          'reuse a run key (X-Warden-Run) or let idle runs end; agents.maxOpenRuns in the policy',
        );
      }
    }
    const id = `run_${randomBytes(8).toString('hex')}`;
    const run = new Run(id, agent, key, sandbox?.id ?? null, sandbox?.name ?? null, budgets(), this.now());
    this.runs.set(run.id, run);
    this.openByAgent.set(agent, (this.openByAgent.get(agent) ?? 0) + 1);
    if (lookup) this.byKey.set(lookup, run.id);
    if (sandbox && key !== null) this.byKey.set(`s\0${agent}\0${sandbox.id}`, run.id);
    this.changed(run);
    return run;
  }

  /** Ends runs idle for longer than runIdleMs (no call started or ended, none in flight). */
  sweep(force = false): void {
    const idleMs = this.limits()?.runIdleMs;
    const t = this.now();
    if (!idleMs || (!force && t - this.lastSweep < SWEEP_EVERY_MS)) return;
    this.lastSweep = t;
    for (const run of [...this.runs.values()]) {
      if (run.status === 'active' && run.inFlight === 0 && t - run.lastActiveMs >= idleMs)
        this.end(run, 'expired', `it was idle for ${Math.round(idleMs / 60_000)} min`);
    }
  }

  /** A run opened without a sandbox (create) is bound to the one it made. */
  bind(run: Run, sandbox: { id: string; name: string }, budgets?: Budgets): void {
    if (budgets) {
      // The sandbox's own overrides apply from now on (the create was counted under them too).
      run.budgets = budgets;
      run.breaker = new Breaker(budgets.breaker.failures, budgets.breaker.cooldownMs);
    }
    run.sandboxId = sandbox.id;
    run.sandboxName = sandbox.name;
    this.byKey.set(`s\0${run.agent}\0${sandbox.id}`, run.id);
    this.changed(run);
  }

  addCall(run: Run, tool: ToolName, args: Record<string, unknown>): ToolCallInfo {
    const call = pendingCall({
      id: `call_${randomBytes(8).toString('hex')}`,
      runId: run.id,
      index: run.calls.length + 1,
      tool,
      args,
      startedAt: new Date(this.now()).toISOString(),
    });
    run.lastActiveMs = this.now();
    run.calls.push(call);
    if (run.status !== 'active') this.endedCalls++;
    this.callChanged(call);
    this.changed(run);
    return call;
  }

  /** A call in the run ended: the run is not idle from now. */
  touch(run: Run): void {
    run.lastActiveMs = this.now();
  }

  callChanged(call: ToolCallInfo): void {
    this.archive?.saveCall(call);
    this.events.emit('run.call', call);
  }

  changed(run: Run): void {
    const info = run.info();
    this.archive?.saveRun(info);
    this.events.emit('run.updated', info);
  }

  end(run: Run, status: 'finished' | 'expired', reason?: string): void {
    if (run.status !== 'active') return;
    run.status = status;
    run.endedAt = new Date(this.now()).toISOString();
    run.endReason = reason ?? null;
    this.openByAgent.set(run.agent, (this.openByAgent.get(run.agent) ?? 1) - 1);
    if (this.openByAgent.get(run.agent)! <= 0) this.openByAgent.delete(run.agent);
    this.ended++;
    this.endedCalls += run.calls.length;
    this.changed(run);
    this.trim();
  }

  /** Runs (and run keys) held in memory: for the specs that check it stays bounded. */
  get size(): { runs: number; keys: number } {
    return { runs: this.runs.size, keys: this.byKey.size };
  }

  /** Ends every active run on a sandbox (it was destroyed). */
  endForSandbox(sandboxId: string): void {
    for (const run of this.runs.values()) if (run.sandboxId === sandboxId) this.end(run, 'finished');
  }

  /** The runs held in memory (this process's live ones and the most recent ended). */
  live(): IterableIterator<Run> {
    return this.runs.values();
  }

  get(id: string): Run {
    const run = this.runs.get(id);
    if (!run) throw new WardenError('E_NOT_FOUND', `no run ${id}`, 'list runs with `warden run ls`');
    return run;
  }

  /** A run of this process from memory, any other (an earlier process's, another door's) from the archive. */
  detail(id: string): RunDetail {
    const run = this.runs.get(id);
    if (run) return { ...run.info(), toolCalls: run.calls.map((c) => ({ ...c })) };
    const archived = this.archive?.detail(id);
    if (!archived) throw new WardenError('E_NOT_FOUND', `no run ${id}`, 'list runs with `warden run ls`');
    return archived;
  }

  /** Whether the run is this process's own, live in memory (only those can be followed). */
  has(id: string): boolean {
    return this.runs.has(id);
  }

  list(q: RunQuery = {}): RunInfo[] {
    // A live run of this process answers from memory: what its info derives from the clock (the
    // breaker's cool-down ending) is not a change, so the archive's copy may be behind.
    if (this.archive) return this.archive.list(q).map((r) => this.runs.get(r.id)?.info() ?? r);
    const out: RunInfo[] = [];
    const since = q.since ? Date.parse(q.since) : null;
    for (const run of this.runs.values()) {
      if (q.before === run.id) break;
      if (q.agent && run.agent !== q.agent) continue;
      if (q.sandbox && run.sandboxId !== q.sandbox && run.sandboxName !== q.sandbox && !run.sandboxId?.startsWith(q.sandbox)) continue;
      if (q.status && run.status !== q.status) continue;
      if (since !== null && run.startedMs < since) continue;
      out.push(run.info());
    }
    return q.limit ? out.slice(-q.limit) : out;
  }

  /** Closes the archive: this process's active runs are recorded as interrupted. */
  close(): void {
    this.archive?.close();
  }

  /** Drops the oldest ended runs beyond the caps, with their keys (a trimmed key starts a new run). */
  private trim(): void {
    if (this.ended <= MAX_ENDED_RUNS && this.endedCalls <= MAX_ENDED_CALLS) return;
    for (const [id, run] of this.runs) {
      if (run.status === 'active') continue;
      this.runs.delete(id);
      this.ended--;
      this.endedCalls -= run.calls.length;
      for (const k of [
        run.key !== null ? `k\0${run.agent}\0${run.key}` : null,
        run.sandboxId ? `s\0${run.agent}\0${run.sandboxId}` : null,
      ]) {
        if (k && this.byKey.get(k) === id) this.byKey.delete(k);
      }
      if (this.ended <= MAX_ENDED_RUNS && this.endedCalls <= MAX_ENDED_CALLS) break;
    }
  }
}
