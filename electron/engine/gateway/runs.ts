// Runs and their tool calls, in memory, pushed on the event bus on every change. The ledger is the
// durable record; this is the live, queryable view (list, get, follow).
import { randomBytes } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { Budgets } from '../../../shared/types/policy.js';
import { pendingCall, type RunDetail, type RunInfo, type RunQuery, type ToolCallInfo, type ToolName } from '../../../shared/types/run.js';
import type { EventBus } from '../event-bus.js';
import { Breaker } from './breaker.js';

const MAX_RUNS = 10_000;

export class Run {
  readonly calls: ToolCallInfo[] = [];
  breaker: Breaker;
  /** Calls reserved (counted against maxCalls) including those still in flight. */
  reserved = 0;
  outputBytes = 0;
  failures = 0;
  /** Things a person approved for the rest of this run ("approve-run"). */
  readonly approvedForRun = new Set<string>();
  status: RunInfo['status'] = 'active';
  endedAt: string | null = null;
  readonly startedMs = Date.now();

  constructor(
    readonly id: string,
    readonly agent: string,
    readonly key: string | null,
    public sandboxId: string | null,
    public sandboxName: string | null,
    public budgets: Budgets,
  ) {
    this.breaker = new Breaker(budgets.breaker.failures, budgets.breaker.cooldownMs);
  }

  info(): RunInfo {
    return {
      id: this.id,
      agent: this.agent,
      key: this.key,
      sandboxId: this.sandboxId,
      sandboxName: this.sandboxName,
      status: this.status,
      startedAt: new Date(this.startedMs).toISOString(),
      endedAt: this.endedAt,
      calls: this.calls.length,
      failures: this.failures,
      outputBytes: this.outputBytes,
      breaker: this.breaker.info(),
      budgets: this.budgets,
    };
  }
}

export class RunStore {
  private readonly runs = new Map<string, Run>();
  /** agent + run key, or agent + sandbox id → run id. */
  private readonly byKey = new Map<string, string>();

  constructor(private readonly events: EventBus) {}

  /**
   * The run a call belongs to: the client's key if given, else the agent's open run on this sandbox,
   * else a new one. A key names one run of one sandbox: reusing it on another sandbox is a conflict.
   */
  open(agent: string, key: string | null, sandbox: { id: string; name: string } | null, budgets: () => Budgets): Run {
    const lookup = key !== null ? `k\0${agent}\0${key}` : sandbox ? `s\0${agent}\0${sandbox.id}` : null;
    const existing = lookup ? this.runs.get(this.byKey.get(lookup) ?? '') : undefined;
    if (existing && (existing.status === 'active' || key !== null)) {
      if (sandbox && existing.sandboxId && existing.sandboxId !== sandbox.id) {
        throw new WardenError('E_CONFLICT', `run ${key ?? existing.id} belongs to sandbox ${existing.sandboxName ?? existing.sandboxId}`, 'a run is one agent in one sandbox: use another X-Warden-Run for this sandbox');
      }
      if (sandbox && !existing.sandboxId) this.bind(existing, sandbox);
      return existing;
    }
    const run = new Run(`run_${randomBytes(8).toString('hex')}`, agent, key, sandbox?.id ?? null, sandbox?.name ?? null, budgets());
    this.runs.set(run.id, run);
    if (lookup) this.byKey.set(lookup, run.id);
    if (sandbox && key !== null) this.byKey.set(`s\0${agent}\0${sandbox.id}`, run.id);
    this.trim();
    this.changed(run);
    return run;
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
      startedAt: new Date().toISOString(),
    });
    run.calls.push(call);
    this.callChanged(call);
    this.changed(run);
    return call;
  }

  callChanged(call: ToolCallInfo): void {
    this.events.emit('run.call', call);
  }

  changed(run: Run): void {
    this.events.emit('run.updated', run.info());
  }

  end(run: Run, status: 'finished' | 'expired'): void {
    if (run.status !== 'active') return;
    run.status = status;
    run.endedAt = new Date().toISOString();
    this.changed(run);
  }

  /** Ends every active run on a sandbox (it was destroyed). */
  endForSandbox(sandboxId: string): void {
    for (const run of this.runs.values()) if (run.sandboxId === sandboxId) this.end(run, 'finished');
  }

  get(id: string): Run {
    const run = this.runs.get(id);
    if (!run) throw new WardenError('E_NOT_FOUND', `no run ${id}`, 'list runs with `warden run ls`');
    return run;
  }

  detail(id: string): RunDetail {
    const run = this.get(id);
    return { ...run.info(), toolCalls: run.calls.map((c) => ({ ...c })) };
  }

  list(q: RunQuery = {}): RunInfo[] {
    const out: RunInfo[] = [];
    for (const run of this.runs.values()) {
      if (q.agent && run.agent !== q.agent) continue;
      if (q.sandbox && run.sandboxId !== q.sandbox && run.sandboxName !== q.sandbox && !run.sandboxId?.startsWith(q.sandbox)) continue;
      if (q.status && run.status !== q.status) continue;
      out.push(run.info());
    }
    return q.limit ? out.slice(-q.limit) : out;
  }

  private trim(): void {
    if (this.runs.size <= MAX_RUNS) return;
    for (const [id, run] of this.runs) {
      if (run.status === 'active') continue;
      this.runs.delete(id);
      if (this.runs.size <= MAX_RUNS) break;
    }
  }
}
