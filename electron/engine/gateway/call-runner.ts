// One tool call through the gateway, in a fixed order: run → budgets (wall time, steps) → breaker →
// policy (allow / deny / ask, waiting on a person for ask) → ledger entry for the decision → the
// engine, under the agent's name → result into the run and the breaker. Every decision, allowed or
// denied, is a ledger entry; a denied call never reaches the engine.
import { WardenError, toErrorInfo } from '../../../shared/errors.js';
import { createHash } from 'node:crypto';
import type { PolicyAction } from '../../../shared/types/policy.js';
import type { CallDecision, DenyReason, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { AuditRecord } from '../audit-sink.js';
import type { AgentLimits } from './agent-limits.js';
import type { Breaker } from './breaker.js';
import type { Approvals } from './approvals.js';
import type { ContextAuditSink } from './audit-context.js';
import { GatewayDenial } from './denial.js';
import type { EffectivePolicy } from './policy-load.js';
import type { Run, RunStore } from './runs.js';
import { LateRecords } from './late-records.js';

export interface AgentContext {
  agent: string;
  /** The user (not an agent): policy, create limits and the own-sandbox rule do not apply; budgets and the record do. */
  trusted?: boolean;
  /** The client's run key (X-Warden-Run), if any. */
  runKey: string | null;
}

export interface PolicyVerdict {
  action: PolicyAction;
  source: string;
  reason: string;
  denyReason?: DenyReason;
  /** What "approve for this run" covers (e.g. "sandbox.create"); see scopes. */
  scope: string;
  /**
   * For an ask that covers several things (each program of a command that needs approval): all of
   * them. An approval for the run covers exactly these; a later call is let through unasked only
   * when every one of its own scopes was approved.
   */
  scopes?: string[];
  /** For the approval prompt: the whole command (or path), and each program that needs the approval. */
  summary: string;
  programs?: string[];
}

export interface CallHooks {
  onStart?: (run: Run, call: ToolCallInfo) => void;
  onApproval?: (approval: { id: string; deadline: string; reason: string }) => void;
  /** The call was allowed and is about to reach the engine. */
  onRunning?: (call: ToolCallInfo) => void;
}

/** The allowed decision, for a body that writes it with its own first entry. */
export interface PendingDecision {
  record: AuditRecord;
  /** Called by the body once the record is durable, before the call's effect. */
  written: () => void;
}

export interface CallSpec<T> {
  ctx: AgentContext;
  run: Run;
  sandboxId: string | null;
  tool: ToolName;
  args: Record<string, unknown>;
  policy: EffectivePolicy;
  verdict: () => PolicyVerdict;
  /**
   * With writesDecision, the body gets the allowed decision's entry and must write it in the same
   * transaction as its own first entry, before any effect, and then call written() (exec: with
   * exec.started, one fsync instead of two). Otherwise (null) the runner writes it before the body.
   */
  body: (call: ToolCallInfo, decision: PendingDecision | null) => Promise<T>;
  writesDecision?: boolean;
  /** Fills the call's result from the body's value; returns whether it counts as a success. */
  settle: (call: ToolCallInfo, value: T) => boolean;
  hooks?: CallHooks;
}

export class CallRunner {
  /** Denials the ledger could not take at once: written later, never dropped silently. */
  private readonly late: LateRecords;

  constructor(
    private readonly runs: RunStore,
    private readonly approvals: Approvals,
    private readonly audit: ContextAuditSink,
    private readonly limits: AgentLimits | null = null,
  ) {
    this.late = new LateRecords(audit);
  }

  private entry(actor: string, sandboxId: string | null, kind: string, payload: Record<string, unknown>): AuditRecord {
    return { actor, sandboxId, kind, payload: { ...payload, ...('args' in payload ? { args: boundArgs(payload.args as Record<string, unknown>) } : {}) } };
  }

  /** Writes a decision to the ledger; if the ledger refuses it, the call does not go ahead (fail closed). */
  private record(call: ToolCallInfo, actor: string, sandboxId: string | null, kind: string, payload: Record<string, unknown>): Promise<void> {
    return this.write(call, this.entry(actor, sandboxId, kind, payload));
  }

  /** Durable when it resolves; the event loop stays free while another process holds the ledger. */
  private async write(call: ToolCallInfo, record: AuditRecord): Promise<void> {
    try {
      await this.audit.run({ actor: record.actor, onSeq: (seq) => this.addSeq(call, seq) }, () => this.audit.appendBatchAsync([record]));
    } catch (err) {
      if (call.status === 'denied') {
        // Never silent: the caller is told (deny() amends its error), the process warns, and the
        // entry is written later, when the ledger takes it.
        this.late.hold(record, err);
        throw err;
      }
      call.status = 'failed';
      call.error = { code: 'E_LEDGER', message: `the ledger did not take the decision: ${(err as Error).message}` };
      call.endedAt = new Date().toISOString();
      this.runs.callChanged(call);
      throw new WardenError('E_LEDGER', `the call was not run because the ledger could not record it: ${(err as Error).message}`);
    }
  }

  private addSeq(call: ToolCallInfo, seq: number): void {
    call.ledgerSeqs.push(seq);
    call.ledgerSeqs.sort((a, b) => a - b);
    this.runs.callChanged(call);
  }

  /** A call refused before any run could take it (the agent has its most runs open): recorded, then thrown. */
  refuseUnfiled(ctx: AgentContext, tool: ToolName, sandboxId: string | null, args: Record<string, unknown>, denial: GatewayDenial): never {
    const decision: CallDecision = { action: 'deny', source: 'agents.maxOpenRuns', reason: denial.message, denyReason: denial.reason };
    const record = this.entry(ctx.agent, sandboxId, 'policy.denied', { runId: null, callId: null, tool, args, decision });
    try {
      this.audit.append(record);
    } catch (err) {
      // As for every denial: the refusal stands, and the entry is written when the ledger takes it.
      this.late.hold(record, err);
    }
    throw denial;
  }

  private async deny<T>(spec: CallSpec<T>, call: ToolCallInfo, decision: CallDecision, denial: GatewayDenial): Promise<never> {
    call.decision = decision;
    call.status = 'denied';
    call.error = { code: denial.code, message: denial.message };
    call.endedAt = new Date().toISOString();
    call.durationMs = Date.parse(call.endedAt) - Date.parse(call.startedAt);
    let thrown: GatewayDenial = denial;
    try {
      await this.record(call, spec.ctx.agent, spec.sandboxId, 'policy.denied', { runId: spec.run.id, callId: call.id, index: call.index, tool: spec.tool, args: spec.args, decision });
    } catch (err) {
      const message = `${denial.message} (and the ledger could not record this denial yet: ${(err as Error).message}; it will be written when the ledger takes it)`;
      thrown = new GatewayDenial(denial.reason, message, denial.hint, denial.retryAfterMs, denial.code);
      call.error = { code: denial.code, message };
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

  private async decideAndRun<T>(spec: CallSpec<T>, call: ToolCallInfo, held: (release: () => void) => void): Promise<T> {
    const { run, ctx } = spec;
    const budgets = run.budgets;
    spec.hooks?.onStart?.(run, call);

    // Budgets first, synchronously, so parallel calls at the limit cannot all slip through.
    if (run.status !== 'active') {
      return this.deny(spec, call, { action: 'deny', source: 'run', reason: `run ${run.id} has ${run.status}`, denyReason: 'budget' }, new GatewayDenial('budget', `run ${run.id} has ended${run.endReason ? `: ${run.endReason}` : ''}; no more calls in it`, 'start a new run (another X-Warden-Run)'));
    }
    const limited = ctx.trusted ? null : this.limits?.admitCall(ctx.agent);
    if (limited) return this.deny(spec, call, { action: 'deny', source: limited.source, reason: limited.reason, denyReason: 'budget' }, new GatewayDenial('budget', limited.message, limited.hint));
    if (this.runs.now() - run.startedMs > budgets.wallTimeMs) {
      this.runs.end(run, 'expired', `it used its wall time (${budgets.wallTimeMs} ms)`);
      return this.deny(spec, call, { action: 'deny', source: 'budgets.wallTimeMs', reason: `the run's wall time of ${budgets.wallTimeMs} ms is used`, denyReason: 'budget' }, new GatewayDenial('budget', `budget exceeded: the run's wall time (${budgets.wallTimeMs} ms) is used`, 'start a new run'));
    }
    if (run.reserved >= budgets.maxCalls) {
      return this.deny(spec, call, { action: 'deny', source: 'budgets.maxCalls', reason: `the run has made its ${budgets.maxCalls} calls`, denyReason: 'budget' }, new GatewayDenial('budget', `budget exceeded: the run may make ${budgets.maxCalls} tool calls and has made them`, 'start a new run, or raise budgets.maxCalls in the policy'));
    }
    run.reserved++;
    // Destroying a sandbox is cleanup, not a failure mode: the breaker neither stops it nor counts it.
    const breaker = spec.tool === 'sandbox.destroy' ? NO_BREAKER : run.breaker;
    const admitted = breaker.admit();
    if (!admitted.ok) {
      return this.deny(spec, call, { action: 'deny', source: 'breaker', reason: `the breaker is open after ${budgets.breaker.failures} failures in a row`, denyReason: 'breaker' }, new GatewayDenial('breaker', `the run's breaker is open after ${run.breaker.info().consecutiveFailures} failed calls in a row; retry in ${Math.ceil(admitted.retryAfterMs / 1000)} s`, 'look at why the calls fail; one probe call is let through after the cool-down', admitted.retryAfterMs, 'E_CONFLICT'));
    }
    const probe = admitted.probe;
    let verdict: PolicyVerdict;
    try {
      verdict = spec.verdict();
    } catch (err) {
      breaker.settle(false, probe);
      run.failures++;
      const info = toErrorInfo(err);
      const reason = (err as GatewayDenial).reason ?? 'policy';
      return this.deny(spec, call, { action: 'deny', source: 'policy', reason: info.message, denyReason: reason }, err instanceof GatewayDenial ? err : new GatewayDenial(reason, info.message, info.hint, undefined, info.code));
    }
    let decision: CallDecision = { action: verdict.action, source: verdict.source, reason: verdict.reason, ...(verdict.denyReason ? { denyReason: verdict.denyReason } : {}) };
    const scopes = verdict.scopes ?? [verdict.scope];
    if (verdict.action === 'ask' && scopes.every((s) => run.approvedForRun.has(s))) {
      decision = { action: 'allow', source: `approved for this run (${(verdict.programs ?? scopes).join('; ')})`, reason: verdict.reason };
    } else if (verdict.action === 'ask') {
      call.status = 'awaiting-approval';
      call.decision = decision;
      this.runs.callChanged(call);
      const approval = await this.approvals.request(
        { runId: run.id, callId: call.id, agent: ctx.agent, sandboxId: spec.sandboxId, tool: spec.tool, summary: verdict.summary, programs: verdict.programs ?? [], reason: verdict.reason },
        spec.policy.approvals.timeoutMs,
        (info) => spec.hooks?.onApproval?.({ id: info.id, deadline: info.deadline, reason: verdict.reason }),
      );
      const approved = approval.status === 'approved';
      decision = {
        action: approved ? 'allow' : 'deny',
        source: verdict.source,
        reason: verdict.reason,
        ...(approved ? {} : { denyReason: approval.status === 'timeout' ? ('approval-timeout' as const) : ('approval-denied' as const) }),
        approval: { id: approval.id, decision: approval.decision ?? 'timeout', by: approval.decidedBy, at: approval.decidedAt ?? new Date().toISOString() },
      };
      await this.record(call, approval.decidedBy ?? 'system', spec.sandboxId, 'approval.decided', { runId: run.id, callId: call.id, approvalId: approval.id, tool: spec.tool, summary: verdict.summary, programs: approval.programs, status: approval.status, decision: approval.decision, by: approval.decidedBy, requestedAt: approval.requestedAt, decidedAt: approval.decidedAt });
      if (approval.decision === 'approve-run') for (const s of scopes) run.approvedForRun.add(s);
      if (!approved) {
        breaker.settle(false, probe);
        run.failures++;
        const timeout = approval.status === 'timeout';
        return this.deny(
          spec,
          call,
          decision,
          new GatewayDenial(
            timeout ? 'approval-timeout' : 'approval-denied',
            timeout
              ? `${verdict.summary}: needs a person's approval and nobody approved within ${spec.policy.approvals.timeoutMs / 1000} s (${this.approvals.watching() ? 'nobody answered' : 'no one is watching: headless, so denied'})`
              : `${verdict.summary}: denied by ${approval.decidedBy}`,
            timeout ? 'approve it in the Warden app or with `warden run approve <id>`, or change the policy' : undefined,
          ),
        );
      }
    }
    if (decision.action === 'deny') {
      breaker.settle(false, probe);
      run.failures++;
      return this.deny(spec, call, decision, new GatewayDenial(verdict.denyReason ?? 'policy', `denied by policy: ${verdict.reason}`, verdict.source === 'dynamic' ? 'write the program name out literally so policy can check it' : 'the policy is in $WARDEN_HOME/policy.yaml'));
    }

    if (spec.tool === 'exec' && !ctx.trusted && this.limits) {
      const slot = this.limits.admitExec(ctx.agent);
      if ('source' in slot) {
        breaker.release(probe);
        return this.deny(spec, call, { action: 'deny', source: slot.source, reason: slot.reason, denyReason: 'budget' }, new GatewayDenial('budget', slot.message, slot.hint));
      }
      held(slot.release);
    }

    call.decision = decision;
    const allowed = this.entry(ctx.agent, spec.sandboxId, 'policy.allowed', { runId: run.id, callId: call.id, index: call.index, tool: spec.tool, args: spec.args, decision });
    let written = false;
    const running = () => {
      if (written) return;
      written = true;
      call.status = 'running';
      this.runs.callChanged(call);
      spec.hooks?.onRunning?.(call);
    };
    if (!spec.writesDecision) {
      await this.write(call, allowed);
      running();
    }
    let value: T;
    try {
      value = await this.audit.run({ actor: ctx.agent, onSeq: (seq) => this.addSeq(call, seq) }, () => spec.body(call, spec.writesDecision ? { record: allowed, written: running } : null));
      // A body that should have written the decision and did not: it is still recorded (or the call fails).
      if (!written) {
        await this.write(call, allowed);
        written = true;
      }
    } catch (caught) {
      let err = caught;
      // The body failed before its first entry: the decision still goes on the record, or the call
      // fails as unrecorded. When it was the ledger that refused (locked past its deadline), asking it
      // again would only hold the caller another deadline for the same answer.
      if (!written && !(caught instanceof WardenError && caught.code === 'E_LEDGER')) {
        try {
          await this.write(call, allowed);
        } catch (ledgerErr) {
          err = ledgerErr;
        }
      }
      const info = toErrorInfo(err);
      call.status = 'failed';
      call.error = { code: info.code, message: info.message };
      this.finish(call);
      run.failures++;
      breaker.settle(false, probe);
      this.runs.callChanged(call);
      this.runs.changed(run);
      throw err;
    }
    const ok = spec.settle(call, value);
    call.status = ok ? 'ok' : 'failed';
    this.finish(call);
    if (!ok) run.failures++;
    breaker.settle(ok, probe);
    this.runs.callChanged(call);
    this.runs.changed(run);
    return value;
  }

  private finish(call: ToolCallInfo): void {
    call.endedAt = new Date().toISOString();
    call.durationMs = Date.parse(call.endedAt) - Date.parse(call.startedAt);
  }
}

/** The breaker of a call the breaker does not apply to. */
const NO_BREAKER: Pick<Breaker, 'admit' | 'settle' | 'release'> = {
  admit: () => ({ ok: true, probe: false }),
  settle: () => undefined,
  release: () => undefined,
};

const MAX_ARGS_JSON = 8 * 1024;

/** Arguments for the record: kept whole when small, else a digest, the keys and a preview. */
export function boundArgs(args: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(args) ?? '';
  // JSON.stringify writes a lone surrogate as an escape; the ledger refuses such strings.
  const loneSurrogate = /\\ud[89a-f][0-9a-f]{2}/i.test(text);
  if (text.length <= MAX_ARGS_JSON && !loneSurrogate) return args;
  return { truncated: true, sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text), keys: Object.keys(args), preview: text.slice(0, 1024) };
}
