// How the CallRunner puts decisions on the record. An allowed call's decision must be durable before
// its effect, so a ledger that refuses it fails the call (fail closed); a denied call does not run
// either way, so a refused denial entry is held and written later (late-records.ts), never dropped.
// The seqs of every entry a call causes are added to the call as the ledger reports them.
import { WardenError } from '../../../shared/errors.js';
import type { CallDecision, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { AuditRecord } from '../audit-sink.js';
import type { ContextAuditSink } from './audit-context.js';
import { boundArgs, type AgentContext } from './call-spec.js';
import type { GatewayDenial } from './denial.js';
import { LateRecords } from './late-records.js';
import type { RunStore } from './runs.js';

export class DecisionLog {
  /** Denials the ledger could not take at once: written later, never dropped silently. */
  private readonly late: LateRecords;

  constructor(
    private readonly runs: RunStore,
    private readonly audit: ContextAuditSink,
  ) {
    this.late = new LateRecords(audit);
  }

  entry(actor: string, sandboxId: string | null, kind: string, payload: Record<string, unknown>): AuditRecord {
    return {
      actor,
      sandboxId,
      kind,
      payload: { ...payload, ...('args' in payload ? { args: boundArgs(payload.args as Record<string, unknown>) } : {}) },
    };
  }

  /** Writes a decision to the ledger; if the ledger refuses it, the call does not go ahead (fail closed). */
  record(call: ToolCallInfo, actor: string, sandboxId: string | null, kind: string, payload: Record<string, unknown>): Promise<void> {
    return this.write(call, this.entry(actor, sandboxId, kind, payload));
  }

  /** Durable when it resolves; the event loop stays free while another process holds the ledger. */
  async write(call: ToolCallInfo, record: AuditRecord): Promise<void> {
    try {
      await this.under(record.actor, call, () => this.audit.appendBatchAsync([record]));
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

  /** Runs body as `actor`: every entry it causes carries that name and is added to the call's seqs. */
  under<T>(actor: string, call: ToolCallInfo, body: () => T): T {
    return this.audit.run({ actor, onSeq: (seq) => this.addSeq(call, seq) }, body);
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
}
