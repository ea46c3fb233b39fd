// One run in memory: an agent's calls in one sandbox, with what it has spent (calls, output, egress
// bytes), its breaker, what a person approved for the rest of it, and the snapshot it started from.
// The RunStore (runs.ts) opens, files, ends and archives them.
import type { Budgets } from '../../../shared/types/policy.js';
import type { CallSnapshot, RunInfo, ToolCallInfo } from '../../../shared/types/run.js';
import { Breaker } from './breaker.js';

export class Run {
  readonly calls: ToolCallInfo[] = [];
  breaker: Breaker;
  /** Calls reserved (counted against maxCalls) including those still in flight. */
  reserved = 0;
  outputBytes = 0;
  /** Bytes its connections carried through the egress proxy (budgets.egressBytes). */
  egressBytes = 0;
  failures = 0;
  /** Things a person approved for the rest of this run ("approve-run"). */
  readonly approvedForRun = new Set<string>();
  status: RunInfo['status'] = 'active';
  endedAt: string | null = null;
  /** Why it ended, for the refusal of a later call in it. */
  endReason: string | null = null;
  readonly startedMs: number;
  /** When a call last started or ended in it (idle runs end). */
  lastActiveMs: number;
  /** Calls started and not yet ended: a run with one in flight is not idle. */
  inFlight = 0;
  /**
   * The snapshot before its first changing call (auto-snapshots.ts); null: none will be (policy was
   * off then, or the run created its sandbox); undefined: it has changed nothing yet.
   */
  startSnapshot: CallSnapshot | null | undefined = undefined;

  constructor(
    readonly id: string,
    readonly agent: string,
    readonly key: string | null,
    public sandboxId: string | null,
    public sandboxName: string | null,
    public budgets: Budgets,
    now = Date.now(),
  ) {
    this.breaker = new Breaker(budgets.breaker.failures, budgets.breaker.cooldownMs);
    this.startedMs = this.lastActiveMs = now;
  }

  /** Output the run may still receive. */
  outputLeft(): number {
    return Math.max(0, this.budgets.outputBytes - this.outputBytes);
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
      ...(this.startSnapshot ? { startSnapshot: this.startSnapshot } : {}),
    };
  }
}
