// One run: who and where, its budgets spent, and its tool calls in order, live; on its Timeline tab
// the calls on one time axis with the sandbox's resources and ledger entries; on its Changes tab,
// what it changed in the sandbox's /workspace.
import { useLayoutEffect, useRef, useState } from 'react';
import { useStore } from '../../store/index.js';
import { BudgetGauges } from './BudgetGauges.js';
import { CallItem } from './CallItem.js';
import { RunChanges } from './RunChanges.js';
import { formatClock, runTitle } from './run-format.js';
import { RunTimeline } from '../timeline/RunTimeline.js';

const SHOWN = 300;
const TAB_TITLES = { calls: 'Calls', timeline: 'Timeline', changes: 'Changes' } as const;

export function RunDetail({ runId }: { runId: string }) {
  const run = useStore((s) => s.runs[runId]);
  const calls = useStore((s) => s.runCalls[runId]);
  const complete = useStore((s) => !!s.runCallsComplete[runId]);
  const navigate = useStore((s) => s.navigate);
  const sandboxKnown = useStore((s) => !!(run?.sandboxId && s.sandboxes[run.sandboxId]));
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [tab, setTab] = useState<'calls' | 'timeline' | 'changes'>('calls');
  const count = calls?.length ?? 0;
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [count, runId, tab]);
  if (!run) {
    return (
      <div className="run-detail empty" data-testid="run-detail-missing">
        <p>This run is no longer known to Warden.</p>
      </div>
    );
  }
  const shown = calls ? calls.slice(-SHOWN) : [];
  return (
    <section
      className="run-detail"
      aria-labelledby="run-detail-title"
      data-testid="run-detail"
      data-run-id={run.id}
      data-status={run.status}
    >
      <header className="run-head">
        <h2 id="run-detail-title" title={`${run.agent} in ${runTitle(run)}`}>
          <span>{run.agent}</span> <span className="muted">in</span>{' '}
          {sandboxKnown ? (
            <button
              type="button"
              className="link mono"
              onClick={() => navigate({ name: 'sandbox', id: run.sandboxId! })}
              title={`${runTitle(run)}: open the sandbox`}
            >
              {runTitle(run)}
            </button>
          ) : (
            <span className="mono">{runTitle(run)}</span>
          )}
        </h2>
        <span className={`badge run-status-${run.status}`} data-testid="run-detail-status">
          {run.status}
        </span>
        <span className="run-meta muted small">
          <span className="mono" title="run id">
            {run.id}
          </span>
          {run.key ? (
            <span>
              key <span className="mono">{run.key}</span>
            </span>
          ) : null}
          <span>started {formatClock(run.startedAt)}</span>
          {run.endedAt ? <span>ended {formatClock(run.endedAt)}</span> : null}
        </span>
      </header>
      <BudgetGauges run={run} />
      <div className="run-tabs" role="tablist" aria-label="Run views">
        {(['calls', 'timeline', 'changes'] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={tab === t}
            className={`btn${tab === t ? ' primary' : ''}`}
            onClick={() => setTab(t)}
            data-testid={`run-tab-${t}`}
          >
            {TAB_TITLES[t]}
          </button>
        ))}
      </div>
      {tab === 'changes' ? <RunChanges runId={run.id} /> : null}
      {tab === 'timeline' ? (
        <div className="timeline-scroll">
          <RunTimeline run={run} />
        </div>
      ) : null}
      <div
        hidden={tab !== 'calls'}
        className="timeline-scroll"
        ref={scroller}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {count > SHOWN ? (
          <p className="muted small">
            {count - SHOWN} earlier calls not shown (`warden run show {run.id}` lists them all).
          </p>
        ) : null}
        {shown.length ? (
          <ol className="timeline" aria-label="Tool calls, in order" data-testid="timeline">
            {shown.map((c) => (
              <CallItem key={c.id} call={c} />
            ))}
          </ol>
        ) : (
          <p className="muted timeline-empty">{complete || run.calls === 0 ? 'No tool calls yet.' : 'loading calls…'}</p>
        )}
      </div>
    </section>
  );
}
