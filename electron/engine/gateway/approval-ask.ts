// The step of a tool call (call-runner.ts) that turns the policy's verdict into the call's decision:
// allow and deny pass as they are; an ask already approved for this run passes; any other ask waits on a
// person, and their answer is recorded as approval.decided. Apart from the runner because asking is
// a piece of its own: the approval request, the effect the person is shown, approve-for-run scopes.
import type { CallDecision, ToolCallInfo } from '../../../shared/types/run.js';
import type { Approvals } from './approvals.js';
import type { CallSpec, PolicyVerdict } from './call-spec.js';
import type { DecisionLog } from './decision-log.js';
import { GatewayDenial } from './denial.js';
import type { RunStore } from './runs.js';

export class ApprovalAsk {
  constructor(
    private readonly runs: RunStore,
    private readonly approvals: Approvals,
    private readonly log: DecisionLog,
  ) {}

  /**
   * The verdict as a decision: an ask already approved for this run passes; another waits on a person
   * (the answer is recorded as approval.decided). `refused` when the person said no or nobody answered.
   */
  async decide<T>(
    spec: CallSpec<T>,
    call: ToolCallInfo,
    verdict: PolicyVerdict,
  ): Promise<{ decision: CallDecision; refused?: GatewayDenial }> {
    const { run, ctx } = spec;
    const decision: CallDecision = {
      action: verdict.action,
      source: verdict.source,
      reason: verdict.reason,
      ...(verdict.denyReason ? { denyReason: verdict.denyReason } : {}),
    };
    const scopes = verdict.scopes ?? [verdict.scope];
    if (verdict.action !== 'ask') return { decision };
    if (scopes.every((s) => run.approvedForRun.has(s)))
      return {
        decision: { action: 'allow', source: `approved for this run (${(verdict.programs ?? scopes).join('; ')})`, reason: verdict.reason },
      };
    call.status = 'awaiting-approval';
    call.decision = decision;
    this.runs.callChanged(call);
    // What the person is shown is what the decision binds: the effect's digest goes on the call and in the entry.
    const effect = await verdict.effect?.();
    if (effect) call.digests = { ...call.digests, effect: effect.sha256 };
    const approval = await this.approvals.request(
      {
        runId: run.id,
        callId: call.id,
        agent: ctx.agent,
        sandboxId: spec.sandboxId,
        tool: spec.tool,
        summary: verdict.summary,
        programs: verdict.programs ?? [],
        reason: verdict.reason,
        ...(effect ? { effect } : {}),
      },
      spec.policy.approvals.timeoutMs,
      (info) => spec.hooks?.onApproval?.({ id: info.id, deadline: info.deadline, reason: verdict.reason }),
    );
    const approved = approval.status === 'approved';
    const timeout = approval.status === 'timeout';
    const decided: CallDecision = {
      action: approved ? 'allow' : 'deny',
      source: verdict.source,
      reason: verdict.reason,
      ...(approved ? {} : { denyReason: timeout ? ('approval-timeout' as const) : ('approval-denied' as const) }),
      approval: {
        id: approval.id,
        decision: approval.decision ?? 'timeout',
        by: approval.decidedBy,
        at: approval.decidedAt ?? new Date().toISOString(),
      },
    };
    await this.log.record(call, approval.decidedBy ?? 'system', spec.sandboxId, 'approval.decided', {
      runId: run.id,
      callId: call.id,
      approvalId: approval.id,
      tool: spec.tool,
      summary: verdict.summary,
      programs: approval.programs,
      status: approval.status,
      decision: approval.decision,
      by: approval.decidedBy,
      requestedAt: approval.requestedAt,
      decidedAt: approval.decidedAt,
      ...(effect
        ? { effect: { path: effect.path, kind: effect.kind, sha256: effect.sha256, before: effect.before, after: effect.after } }
        : {}),
    });
    if (approval.decision === 'approve-run') for (const s of scopes) run.approvedForRun.add(s);
    if (approved) return { decision: decided };
    const refused = timeout
      ? GatewayDenial.approvalTimeout(verdict.summary, spec.policy.approvals.timeoutMs, this.approvals.watching())
      : GatewayDenial.approvalDenied(verdict.summary, approval.decidedBy);
    return { decision: decided, refused };
  }
}
