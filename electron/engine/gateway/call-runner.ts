// One tool call through the gateway, in a fixed order: run → budgets (wall time, steps) → breaker →
// policy (allow / deny / ask, waiting on a person for ask) → ledger entry for the decision → the
// engine, under the agent's name → result into the run and the breaker. Every decision, allowed or
// denied, is a ledger entry; a denied call never reaches the engine.
import { WardenError, toErrorInfo } from '../../../shared/errors.js';
import { createHash } from 'node:crypto';
import type { PolicyAction } from '../../../shared/types/policy.js';
import type { CallDecision, DenyReason, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { AuditRecord } from '../audit-sink.js';
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
  /** What "approve for this run" covers (e.g. "exec:git"). */
  scope: string;
  /** For the approval prompt. */
  summary: string;
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
    const { run, ctx } = spec;
    const budgets = run.budgets;
    const call = this.runs.addCall(run, spec.tool, spec.args);
    spec.hooks?.onStart?.(run, call);

    // Budgets first, synchronously, so parallel calls at the limit cannot all slip through.
    if (run.status !== 'active') {
      return this.deny(spec, call, { action: 'deny', source: 'run', reason: `run ${run.id} has ${run.status}`, denyReason: 'budget' }, new GatewayDenial('budget', `run ${run.id} has ${run.status === 'expired' ? 'used its wall time' : 'ended'}; no more calls in it`, 'start a new run (another X-Warden-Run)'));
    }
    if (Date.now() - run.startedMs > budgets.wallTimeMs) {
      this.runs.end(run, 'expired');
      return this.deny(spec, call, { action: 'deny', source: 'budgets.wallTimeMs', reason: `the run's wall time of ${budgets.wallTimeMs} ms is used`, denyReason: 'budget' }, new GatewayDenial('budget', `budget exceeded: the run's wall time (${budgets.wallTimeMs} ms) is used`, 'start a new run'));
    }
    if (run.reserved >= budgets.maxCalls) {
      return this.deny(spec, call, { action: 'deny', source: 'budgets.maxCalls', reason: `the run has made its ${budgets.maxCalls} calls`, denyReason: 'budget' }, new GatewayDenial('budget', `budget exceeded: the run may make ${budgets.maxCalls} tool calls and has made them`, 'start a new run, or raise budgets.maxCalls in the policy'));
    }
    run.reserved++;
    const admitted = run.breaker.admit();
    if (!admitted.ok) {
      return this.deny(spec, call, { action: 'deny', source: 'breaker', reason: `the breaker is open after ${budgets.breaker.failures} failures in a row`, denyReason: 'breaker' }, new GatewayDenial('breaker', `the run's breaker is open after ${run.breaker.info().consecutiveFailures} failed calls in a row; retry in ${Math.ceil(admitted.retryAfterMs / 1000)} s`, 'look at why the calls fail; one probe call is let through after the cool-down', admitted.retryAfterMs, 'E_CONFLICT'));
    }
    const probe = admitted.probe;
    let verdict: PolicyVerdict;
    try {
      verdict = spec.verdict();
    } catch (err) {
      run.breaker.settle(false, probe);
      run.failures++;
      const info = toErrorInfo(err);
      const reason = (err as GatewayDenial).reason ?? 'policy';
      return this.deny(spec, call, { action: 'deny', source: 'policy', reason: info.message, denyReason: reason }, err instanceof GatewayDenial ? err : new GatewayDenial(reason, info.message, info.hint, undefined, info.code));
    }
    let decision: CallDecision = { action: verdict.action, source: verdict.source, reason: verdict.reason, ...(verdict.denyReason ? { denyReason: verdict.denyReason } : {}) };
    if (verdict.action === 'ask' && run.approvedForRun.has(verdict.scope)) {
      decision = { action: 'allow', source: `approved for this run (${verdict.scope})`, reason: verdict.reason };
    } else if (verdict.action === 'ask') {
      call.status = 'awaiting-approval';
      call.decision = decision;
      this.runs.callChanged(call);
      const approval = await this.approvals.request(
        { runId: run.id, callId: call.id, agent: ctx.agent, sandboxId: spec.sandboxId, tool: spec.tool, summary: verdict.summary, reason: verdict.reason },
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
      await this.record(call, approval.decidedBy ?? 'system', spec.sandboxId, 'approval.decided', { runId: run.id, callId: call.id, approvalId: approval.id, tool: spec.tool, summary: verdict.summary, status: approval.status, decision: approval.decision, by: approval.decidedBy, requestedAt: approval.requestedAt, decidedAt: approval.decidedAt });
      if (approval.decision === 'approve-run') run.approvedForRun.add(verdict.scope);
      if (!approved) {
        run.breaker.settle(false, probe);
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
      run.breaker.settle(false, probe);
      run.failures++;
      return this.deny(spec, call, decision, new GatewayDenial(verdict.denyReason ?? 'policy', `denied by policy: ${verdict.reason}`, verdict.source === 'dynamic' ? 'write the program name out literally so policy can check it' : 'the policy is in $WARDEN_HOME/policy.yaml'));
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
      run.breaker.settle(false, probe);
      this.runs.callChanged(call);
      this.runs.changed(run);
      throw err;
    }
    const ok = spec.settle(call, value);
    call.status = ok ? 'ok' : 'failed';
    this.finish(call);
    if (!ok) run.failures++;
    run.breaker.settle(ok, probe);
    this.runs.callChanged(call);
    this.runs.changed(run);
    return value;
  }

  private finish(call: ToolCallInfo): void {
    call.endedAt = new Date().toISOString();
    call.durationMs = Date.parse(call.endedAt) - Date.parse(call.startedAt);
  }
}

const MAX_ARGS_JSON = 8 * 1024;

/** Arguments for the record: kept whole when small, else a digest, the keys and a preview. */
export function boundArgs(args: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(args) ?? '';
  // JSON.stringify writes a lone surrogate as an escape; the ledger refuses such strings.
  const loneSurrogate = /\\ud[89a-f][0-9a-f]{2}/i.test(text);
  if (text.length <= MAX_ARGS_JSON && !loneSurrogate) return args;
  return { truncated: true, sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text), keys: Object.keys(args), preview: text.slice(0, 1024) };
}
