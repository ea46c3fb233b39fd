// Pending `ask`s, wherever the user is: a strip at the top of every view (it covers nothing, unlike
// a floating card over the view's own buttons), each saying who asks, in which sandbox, what and
// why (and, for a file write, the diff it would make), with a countdown to its deadline and the
// three answers. Decided and timed-out ones leave
// (the run's timeline keeps them). It never takes focus by itself (a keystroke meant for a terminal
// must not approve anything); Alt+Shift+A jumps to the oldest one.
import { useEffect, useMemo, useRef } from 'react';
import { createPortal } from 'react-dom';
import type { ApprovalDecision } from '../../../../shared/types/run.js';
import { toErrorInfo } from '../../../../shared/errors.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import type { PendingApproval } from '../../store/runs-slice.js';
import { formatCountdown } from '../runs/run-format.js';
import { useNow } from '../runs/use-now.js';
import { ApprovalEffectView } from './ApprovalEffect.js';
import './approvals.css';

const SHOWN = 3;

const ANSWERS: Array<{ decision: ApprovalDecision; label: string; className: string }> = [
  { decision: 'approve-once', label: 'Approve once', className: 'btn primary' },
  { decision: 'approve-run', label: 'Approve for this run', className: 'btn' },
  { decision: 'deny', label: 'Deny', className: 'btn danger' },
];

function useDecide(): (a: PendingApproval, decision: ApprovalDecision) => Promise<void> {
  const { client } = useServices();
  return async (a, decision) => {
    const s = useStore.getState();
    s.setDeciding(a.id, true);
    try {
      await client.call('approval.decide', { id: a.id, decision });
      useStore.getState().removeApproval(a.id);
    } catch (err) {
      const info = toErrorInfo(err);
      useStore.getState().setDeciding(a.id, false);
      // Already decided elsewhere or timed out: it is gone either way.
      if (info.code === 'E_CONFLICT' || info.code === 'E_NOT_FOUND') useStore.getState().removeApproval(a.id);
      useStore.getState().toast('error', info.message, info.hint);
    }
  };
}

function ApprovalCard({ approval, now }: { approval: PendingApproval; now: number }) {
  const decide = useDecide();
  const busy = useStore((s) => !!s.deciding[approval.id]);
  const sandbox = useStore((s) => {
    const run = s.runs[approval.runId];
    return run?.sandboxName ?? (approval.sandboxId ? (s.sandboxes[approval.sandboxId]?.name ?? approval.sandboxId.slice(0, 12)) : null);
  });
  const left = approval.localDeadline - now;
  const titleId = `approval-${approval.id}-title`;
  return (
    <article
      className={`approval${left < 10_000 ? ' urgent' : ''}`}
      role="group"
      aria-labelledby={titleId}
      data-testid="approval"
      data-approval-id={approval.id}
      data-call-id={approval.callId}
      data-run-id={approval.runId}
      tabIndex={-1}
    >
      <span className="approval-icon" aria-hidden="true">
        ?
      </span>
      <div className="approval-text">
        <div id={titleId} className="approval-title" title={`${approval.agent}${sandbox ? ` in ${sandbox}` : ''} asks:`}>
          <b>{approval.agent}</b>
          {sandbox ? (
            <>
              {' '}
              in <span className="mono">{sandbox}</span>
            </>
          ) : null}{' '}
          asks:
        </div>
        {/* The whole command, never cut: it wraps and scrolls. */}
        <pre className="approval-summary" data-testid="approval-summary" tabIndex={0}>
          {approval.summary}
        </pre>
        {approval.effect ? <ApprovalEffectView effect={approval.effect} /> : null}
        {approval.programs.length ? (
          <ul className="approval-programs small" data-testid="approval-programs" aria-label="Programs this approval covers">
            {approval.programs.map((p) => (
              <li key={p} className="mono">
                {p}
              </li>
            ))}
          </ul>
        ) : null}
        <div className="approval-reason small muted" data-testid="approval-reason" title={approval.reason}>
          {approval.reason}
        </div>
      </div>
      <span
        className="approval-countdown mono"
        data-testid="approval-countdown"
        title={`denied at ${new Date(approval.localDeadline).toLocaleTimeString()} if nobody answers`}
        aria-label={`${Math.max(0, Math.ceil(left / 1000))} seconds left`}
      >
        {left > 0 ? formatCountdown(left) : 'timing out…'}
      </span>
      <div className="approval-actions">
        {ANSWERS.map((a) => (
          <button
            key={a.decision}
            type="button"
            className={`${a.className} small`}
            disabled={busy}
            onClick={() => void decide(approval, a.decision)}
            data-testid={`approval-${a.decision}`}
          >
            {a.label}
          </button>
        ))}
      </div>
    </article>
  );
}

export function ApprovalsPanel() {
  const approvals = useStore((s) => s.approvals);
  const list = useMemo(() => Object.values(approvals).sort((a, b) => a.requestedAt.localeCompare(b.requestedAt)), [approvals]);
  const now = useNow(250, list.length > 0);
  // While a dialog is open the page under it is inert: the strip then floats above the dialog.
  const overModal = useStore((s) => s.modals > 0);
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey && e.shiftKey && e.code === 'KeyA') {
        const first = panel.current?.querySelector<HTMLElement>('[data-testid="approval"]');
        if (first) {
          e.preventDefault();
          first.focus();
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  const strip = (
    <>
      <div className="sr-only" aria-live="assertive">
        {list.length ? `${list.length} ${list.length === 1 ? 'approval is' : 'approvals are'} waiting` : ''}
      </div>
      <aside
        ref={panel}
        className={`approvals${overModal ? ' over-modal' : ''}`}
        aria-label="Approvals waiting"
        data-testid="approvals-panel"
        data-count={list.length}
      >
        {list.slice(0, SHOWN).map((a) => (
          <ApprovalCard key={a.id} approval={a} now={now} />
        ))}
        {list.length ? (
          <div className="approvals-foot small muted">
            {list.length > SHOWN ? <span>{list.length - SHOWN} more waiting (oldest first) · </span> : null}
            <span>
              <kbd>Alt+Shift+A</kbd> goes to the oldest; Tab to its answers
            </span>
          </div>
        ) : null}
      </aside>
    </>
  );
  return overModal ? createPortal(strip, document.body) : strip;
}
