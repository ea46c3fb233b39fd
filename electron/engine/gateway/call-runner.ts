// One tool call through the gateway, in a fixed order: run → budgets (wall time, steps) → breaker →
// policy (allow / deny / ask, waiting on a person for ask: approval-ask.ts) → ledger entry for the
// decision → the engine, under the agent's name → result into the run and the breaker. Every
// decision, allowed or denied, is a ledger entry; a denied call never reaches the engine. A snapshot
// policy asks for (auto-snapshots.ts) is taken once the call is allowed and before it runs; one
// that fails denies it.
import { WardenError, toErrorInfo } from '../../../shared/errors.js';
import type { CallDecision, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { AuditRecord } from '../audit-sink.js';
import type { AgentLimits } from './agent-limits.js';
import type { AutoSnapshots } from './auto-snapshots.js';
import { ApprovalAsk } from './approval-ask.js';
import { NO_BREAKER } from './breaker.js';
import type { Approvals } from './approvals.js';
import type { ContextAuditSink } from './audit-context.js';
import type { AgentContext, CallSpec, PolicyVerdict } from './call-spec.js';
import { DecisionLog } from './decision-log.js';
import { GatewayDenial } from './denial.js';
import type { RunStore } from './runs.js';

export class CallRunner {
  private readonly log: DecisionLog;
  private readonly asker: ApprovalAsk;

  constructor(
    private readonly runs: RunStore,
    approvals: Approvals,
    audit: ContextAuditSink,
    private readonly limits: AgentLimits | null = null,
    private readonly snapshots: AutoSnapshots | null = null,
  ) {
    this.log = new DecisionLog(runs, audit);
    this.asker = new ApprovalAsk(runs, approvals, this.log);
  }

  /** A call refused before any run could take it (the agent has its most runs open): recorded, then thrown. */
  refuseUnfiled(ctx: AgentContext, tool: ToolName, sandboxId: string | null, args: Record<string, unknown>, denial: GatewayDenial): never {
    return this.log.refuseUnfiled(ctx, tool, sandboxId, args, denial);
  }

  /** Records the denial (the run's own decision, or the denial's) and throws it. */
  private async deny<T>(spec: CallSpec<T>, call: ToolCallInfo, denial: GatewayDenial, decision = denial.decision()): Promise<never> {
    call.decision = decision;
    call.status = 'denied';
    call.error = { code: denial.code, message: denial.message };
    this.finish(call);
    let thrown = denial;
    try {
      await this.log.record(call, spec.ctx.agent, spec.sandboxId, 'policy.denied', decisionPayload(spec, call, decision));
    } catch (err) {
      thrown = denial.withMessage(
        `${denial.message} (and the ledger could not record this denial yet: ${(err as Error).message}; it will be written when the ledger takes it)`,
      );
      call.error = { code: denial.code, message: thrown.message };
    }
    this.runs.callChanged(call);
    this.runs.changed(spec.run);
    throw thrown;
  }

  async call<T>(spec: CallSpec<T>): Promise<T> {
    const { run } = spec;
    const call = this.runs.addCall(run, spec.tool, spec.args);
    run.inFlight++;
    let release: (() => void) | null = null;
    try {
      return await this.decideAndRun(spec, call, (r) => (release = r));
    } finally {
      run.inFlight--;
      this.runs.touch(run);
      (release as (() => void) | null)?.();
    }
  }

  /** The pipeline of the header, step by step; each step either passes or records its denial. */
  private async decideAndRun<T>(spec: CallSpec<T>, call: ToolCallInfo, held: (release: () => void) => void): Promise<T> {
    const { run, ctx } = spec;
    spec.hooks?.onStart?.(run, call);
    // Budgets first, synchronously, so parallel calls at the limit cannot all slip through.
    const overBudget = this.overBudget(spec);
    if (overBudget) return this.deny(spec, call, overBudget);
    run.reserved++;
    // Destroying a sandbox is cleanup, not a failure mode: the breaker neither stops it nor counts it.
    const breaker = spec.tool === 'sandbox.destroy' ? NO_BREAKER : run.breaker;
    const admitted = breaker.admit();
    if (!admitted.ok)
      return this.deny(
        spec,
        call,
        GatewayDenial.breakerOpen(run.budgets.breaker.failures, run.breaker.info().consecutiveFailures, admitted.retryAfterMs),
      );
    const failed = (denial: GatewayDenial, decision?: CallDecision): Promise<never> => {
      breaker.settle(false, admitted.probe);
      run.failures++;
      return this.deny(spec, call, denial, decision);
    };
    let verdict: PolicyVerdict;
    try {
      verdict = spec.verdict();
    } catch (err) {
      const denial = GatewayDenial.fromVerdict(err);
      return failed(denial, { action: 'deny', source: 'policy', reason: denial.message, denyReason: denial.reason });
    }
    const { decision, refused } = await this.asker.decide(spec, call, verdict);
    if (refused) return failed(refused, decision);
    if (decision.action === 'deny') return failed(GatewayDenial.byPolicy(verdict), decision);
    const { snapshots, sandboxId } = { snapshots: this.snapshots, sandboxId: spec.sandboxId };
    if (snapshots && sandboxId && !ctx.trusted) {
      try {
        const taken = await this.log.under(ctx.agent, call, () => snapshots.before(run, call, sandboxId, ctx.agent, verdict));
        if (taken) decision.snapshot = taken;
      } catch (err) {
        const denial = GatewayDenial.fromVerdict(err);
        return failed(denial, { ...denial.decision(), ...(decision.approval ? { approval: decision.approval } : {}) });
      }
    }
    if (spec.tool === 'exec' && !ctx.trusted && this.limits) {
      const slot = this.limits.admitExec(ctx.agent);
      if ('source' in slot) {
        breaker.release(admitted.probe);
        return this.deny(spec, call, GatewayDenial.agentLimit(slot));
      }
      held(slot.release);
    }
    call.decision = decision;
    const allowed = this.allowed(spec, call, decision);
    // Without writesDecision the decision is durable before the body starts; a ledger that refuses
    // it leaves the call failed as unrecorded (the log marks it) and nothing runs.
    if (!spec.writesDecision) {
      await this.log.write(call, allowed.record);
      allowed.running();
    }
    let ok = false;
    try {
      const value = await this.perform(spec, call, allowed);
      ok = spec.settle(call, value);
      call.status = ok ? 'ok' : 'failed';
      return value;
    } catch (err) {
      const info = toErrorInfo(err);
      call.status = 'failed';
      call.error = { code: info.code, message: info.message };
      throw err;
    } finally {
      this.finish(call);
      if (!ok) run.failures++;
      breaker.settle(ok, admitted.probe);
      this.runs.callChanged(call);
      this.runs.changed(run);
    }
  }

  /** The run's budgets and the agent's limits, in that order: the first one used up, or null. */
  private overBudget<T>({ run, ctx }: CallSpec<T>): GatewayDenial | null {
    const budgets = run.budgets;
    if (run.status !== 'active') return GatewayDenial.runEnded(run);
    const limited = ctx.trusted ? null : this.limits?.admitCall(ctx.agent);
    if (limited) return GatewayDenial.agentLimit(limited);
    if (this.runs.now() - run.startedMs > budgets.wallTimeMs) {
      this.runs.end(run, 'expired', `it used its wall time (${budgets.wallTimeMs} ms)`);
      return GatewayDenial.wallTime(budgets.wallTimeMs);
    }
    if (run.reserved >= budgets.maxCalls) return GatewayDenial.maxCalls(budgets.maxCalls);
    return null;
  }

  /** The allowed decision's entry; once it is durable, the call is "running" (said once). */
  private allowed<T>(spec: CallSpec<T>, call: ToolCallInfo, decision: CallDecision): Allowed {
    const record = this.log.entry(spec.ctx.agent, spec.sandboxId, 'policy.allowed', decisionPayload(spec, call, decision));
    const allowed: Allowed = {
      record,
      written: false,
      running: () => {
        if (allowed.written) return;
        allowed.written = true;
        call.status = 'running';
        this.runs.callChanged(call);
        spec.hooks?.onRunning?.(call);
      },
    };
    return allowed;
  }

  /** The body under the agent's name; with writesDecision it writes the decision with its own first entry. */
  private async perform<T>(spec: CallSpec<T>, call: ToolCallInfo, allowed: Allowed): Promise<T> {
    try {
      const value = await this.log.under(spec.ctx.agent, call, () =>
        spec.body(call, spec.writesDecision ? { record: allowed.record, written: allowed.running } : null),
      );
      // A body that should have written the decision and did not: it is still recorded (or the call fails).
      if (!allowed.written) {
        await this.log.write(call, allowed.record);
        allowed.written = true;
      }
      return value;
    } catch (caught) {
      // The body failed before its first entry: the decision still goes on the record, or the call
      // fails as unrecorded. When it was the ledger that refused (locked past its deadline), asking it
      // again would only hold the caller another deadline for the same answer.
      if (!allowed.written && !(caught instanceof WardenError && caught.code === 'E_LEDGER')) await this.log.write(call, allowed.record);
      throw caught;
    }
  }

  private finish(call: ToolCallInfo): void {
    call.endedAt = new Date().toISOString();
    call.durationMs = Date.parse(call.endedAt) - Date.parse(call.startedAt);
  }
}

interface Allowed {
  record: AuditRecord;
  written: boolean;
  running: () => void;
}

/** What a decision's entry (policy.allowed, policy.denied) says: which call, its arguments, the decision. */
function decisionPayload<T>(spec: CallSpec<T>, call: ToolCallInfo, decision: CallDecision): Record<string, unknown> {
  return { runId: spec.run.id, callId: call.id, index: call.index, tool: spec.tool, args: spec.args, decision };
}
