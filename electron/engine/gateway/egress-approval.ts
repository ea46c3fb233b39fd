// An egress rule that says `ask` puts the connection before a person through the same approvals as
// an exec's ask (the app's pop-up, `warden run approvals`, POST /v1/approvals/{id}): it shows the
// destination, the sandbox, and the run and command most likely to have made it (the exec in flight
// in that sandbox, if any). The answer is recorded as approval.decided, as for calls; nobody
// answering within the policy's approvals.timeoutMs denies it.
import type { EgressAsker } from '../egress/egress-ask.js';
import { sharedAsker } from '../egress/ask-queue.js';
import type { EgressService } from '../egress/serve-egress.js';
import { appendDurably, type AuditSink } from '../audit-sink.js';
import type { Gateway } from './gateway.js';
import { MAX_CALL_CONNECTIONS, type ToolCallInfo } from '../../../shared/types/run.js';
import type { Run, RunStore } from './runs.js';

/**
 * The engine's egress decided by this gateway: its policy (read per connection, so a reload applies
 * to running sandboxes at once), its approvals for `ask`, and its runs to name the call behind a connection.
 */
export function egressThroughGateway(egress: EgressService, gateway: Gateway, audit: AuditSink): void {
  egress.policy = () => gateway.policy.egress;
  egress.ask = sharedAsker(egressAsker(gateway, audit), (sandboxId) => callInFlight(gateway.runs, sandboxId)?.run.id ?? null);
  egress.meter = (sandboxId) => {
    const made = callInFlight(gateway.runs, sandboxId);
    if (!made) return null;
    const { run, call } = made;
    return {
      runId: run.id,
      callId: call.id,
      bounded: run.budgets.egressBytes !== undefined,
      show(connection) {
        const list = (call.connections ??= []);
        const at = list.findIndex((c) => c.connId === connection.connId);
        if (at >= 0) list[at] = connection;
        else if (list.length < MAX_CALL_CONNECTIONS) list.push(connection);
        else return;
        gateway.runs.callChanged(call);
      },
      take(bytes) {
        run.egressBytes += bytes;
        const limit = run.budgets.egressBytes;
        return limit !== undefined && run.egressBytes > limit ? `run ${run.id} used its egressBytes budget (${limit} bytes)` : null;
      },
    };
  };
}

export function egressAsker(gateway: Gateway, audit: AuditSink): EgressAsker {
  return async (q) => {
    const made = callInFlight(gateway.runs, q.sandboxId);
    // "Approve for the rest of the run" covers this destination (host and port) for that run's later connections.
    const scope = `net.connect ${q.target.host}:${q.target.port}`;
    if (made?.run.approvedForRun.has(scope)) return { approved: true, why: `approved for run ${made.run.id}` };
    const command = made && Array.isArray(made.call.args.argv) ? ` while \`${(made.call.args.argv as unknown[]).join(' ')}\` ran` : '';
    const where = `${q.target.host}:${q.target.port}${q.address && q.address !== q.target.host ? ` (${q.address})` : ''}`;
    const summary = `${q.via === 'connect' ? 'CONNECT' : 'HTTP request to'} ${where} from sandbox ${q.sandboxId.slice(0, 12)}${command}`;
    const timeoutMs = gateway.policy.approvals.timeoutMs;
    const approval = await gateway.approvals.request(
      {
        runId: made?.run.id ?? '',
        callId: made?.call.id ?? q.connId,
        agent: made?.run.agent ?? 'sandbox',
        sandboxId: q.sandboxId,
        tool: 'net.connect',
        summary,
        programs: [],
        reason: q.rule,
      },
      timeoutMs,
    );
    await appendDurably(audit, [
      {
        actor: approval.decidedBy ?? 'system',
        sandboxId: q.sandboxId,
        kind: 'approval.decided',
        payload: {
          runId: approval.runId || null,
          callId: made?.call.id ?? null,
          connId: q.connId,
          approvalId: approval.id,
          tool: 'net.connect',
          summary,
          status: approval.status,
          decision: approval.decision,
          by: approval.decidedBy,
          requestedAt: approval.requestedAt,
          decidedAt: approval.decidedAt,
        },
      },
    ]);
    if (approval.decision === 'approve-run') made?.run.approvedForRun.add(scope);
    if (approval.status === 'approved') return { approved: true, why: `approved by ${approval.decidedBy ?? 'someone'}` };
    if (approval.status === 'timeout') return { approved: false, why: `nobody answered within ${timeoutMs / 1000} s` };
    return { approved: false, why: `denied by ${approval.decidedBy ?? 'someone'}` };
  };
}

/**
 * The call that most likely made a connection from this sandbox: the latest exec in flight in an
 * active run bound to it (null when none is running: the connection is nobody's call).
 */
function callInFlight(runs: RunStore, sandboxId: string): { run: Run; call: ToolCallInfo } | null {
  let best: { run: Run; call: ToolCallInfo } | null = null;
  for (const run of runs.live()) {
    if (run.sandboxId !== sandboxId || run.status !== 'active' || run.inFlight === 0) continue;
    for (const call of run.calls)
      if (call.tool === 'exec' && call.status === 'running' && (!best || call.startedAt > best.call.startedAt)) best = { run, call };
  }
  return best;
}
