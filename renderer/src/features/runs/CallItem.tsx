// One tool call in a run's timeline: what was asked (tool and command line or path), what policy
// decided and why (with who approved, when), how it went (status, exit code, duration), its output
// as it streams, and the ledger entries it wrote.
import { memo } from 'react';
import type { CallConnection, CallDecision, ToolCallInfo } from '../../../../shared/types/run.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { useStore } from '../../store/index.js';
import { CallOutputView } from './CallOutputView.js';
import { ConnectionLine } from './ConnectionLine.js';
import { approvalText, callTarget, formatClock, formatCountdown, formatMs } from './run-format.js';
import { useNow } from './use-now.js';

const STATUS_TEXT: Record<ToolCallInfo['status'], string> = {
  pending: 'checking',
  'awaiting-approval': 'awaiting approval',
  running: 'running',
  ok: 'ok',
  failed: 'failed',
  denied: 'denied',
};

function Waiting({ callId }: { callId: string }) {
  const approval = useStore((s) => Object.values(s.approvals).find((a) => a.callId === callId));
  const now = useNow(500, !!approval);
  if (!approval) return null;
  return (
    <span className="muted" data-testid="call-waiting">
      {' '}
      · waiting for a person, {formatCountdown(approval.localDeadline - now)} left
    </span>
  );
}

function Decision({ call }: { call: ToolCallInfo }) {
  const d: CallDecision | null = call.decision;
  if (!d)
    return (
      <div className="call-decision muted small">{call.status === 'pending' ? 'checking budgets and policy…' : 'no decision recorded'}</div>
    );
  const asked = !!d.approval || call.status === 'awaiting-approval';
  return (
    <div className="call-decision small" data-testid="call-decision" data-action={d.action} data-asked={asked ? 'true' : 'false'}>
      {asked ? <span className="badge decision-ask">ask</span> : null}
      {/* an ask that was answered: ask → allow / deny */}
      {asked && d.action !== 'ask' ? <span className="muted">→</span> : null}
      {asked && d.action === 'ask' ? null : <span className={`badge decision-${d.action}`}>{d.action}</span>}
      <code className="decision-source" title="what decided">
        {d.source}
      </code>
      <span className="decision-reason">{d.reason}</span>
      {d.approval ? (
        <span
          className={`decision-approval ${d.approval.decision === 'approve-once' || d.approval.decision === 'approve-run' ? 'ok-text' : 'bad-text'}`}
          data-testid="call-approval"
        >
          {approvalText(d.approval)}
        </span>
      ) : null}
      {call.status === 'awaiting-approval' ? <Waiting callId={call.id} /> : null}
    </div>
  );
}

function Duration({ call }: { call: ToolCallInfo }) {
  const live = call.endedAt === null;
  const now = useNow(250, live);
  const ms = call.durationMs ?? (live ? now - Date.parse(call.startedAt) : null);
  return (
    <span className="mono muted" data-testid="call-duration" title={`started ${call.startedAt}`}>
      {formatMs(ms)}
    </span>
  );
}

function Sizes({ call }: { call: ToolCallInfo }) {
  const parts = Object.entries(call.bytes).map(([k, v]) => `${k} ${k === 'entries' ? v : formatByteSize(v)}`);
  return parts.length ? <span>{parts.join(' · ')}</span> : null;
}

/** What the call's programs reached through the egress proxy (an `egress` sandbox): each destination, its decision, its bytes. */
function Connections({ list }: { list: CallConnection[] }) {
  return (
    <ul className="call-connections small" data-testid="call-connections" aria-label="Connections through the egress proxy">
      {list.map((c) => (
        <li key={c.connId} data-testid="call-connection" data-decision={c.decision} title={c.rule}>
          <ConnectionLine connection={c} />
        </li>
      ))}
    </ul>
  );
}

export const CallItem = memo(function CallItem({ call }: { call: ToolCallInfo }) {
  const target = callTarget(call);
  const finished = call.endedAt !== null;
  return (
    <li
      className={`call call-${call.status}`}
      data-testid="call"
      data-call-id={call.id}
      data-index={call.index}
      data-tool={call.tool}
      data-status={call.status}
      aria-label={`Call ${call.index}: ${call.tool} ${target}`.trim()}
    >
      <div className="call-head">
        <span className="call-index mono">#{call.index}</span>
        <span className="call-tool">{call.tool}</span>
        <code className="call-target" data-testid="call-target" title={target}>
          {target}
        </code>
        <span className="grow" />
        {call.exitCode !== null ? (
          <span className={`mono ${call.exitCode === 0 ? 'ok-text' : 'bad-text'}`} data-testid="call-exit" data-exit={call.exitCode}>
            exit {call.exitCode}
          </span>
        ) : null}
        <Duration call={call} />
        <span className={`badge call-status-${call.status}`} data-testid="call-status">
          {STATUS_TEXT[call.status]}
        </span>
      </div>
      <Decision call={call} />
      {call.error ? (
        <div className="call-error small" data-testid="call-error">
          <span className="mono">{call.error.code}</span> {call.error.message}
        </div>
      ) : null}
      {call.tool === 'exec' ? <CallOutputView call={call} /> : null}
      {call.connections?.length ? <Connections list={call.connections} /> : null}
      <div className="call-foot muted small">
        <span>{formatClock(call.startedAt)}</span>
        {finished ? <Sizes call={call} /> : null}
        {Object.keys(call.digests).length ? (
          <span
            className="mono"
            title={Object.entries(call.digests)
              .map(([k, v]) => `${k} sha256 ${v}`)
              .join('\n')}
          >
            sha256 {Object.values(call.digests)[0]!.slice(0, 12)}…
          </span>
        ) : null}
        <span className="grow" />
        <span data-testid="call-ledger" data-seqs={call.ledgerSeqs.join(',')}>
          {call.ledgerSeqs.length ? `ledger ${call.ledgerSeqs.map((s) => `#${s}`).join(' ')}` : 'ledger –'}
        </span>
      </div>
    </li>
  );
});
