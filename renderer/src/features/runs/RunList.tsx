// Runs, newest first, live: who, where, status, when, how many calls and failures, the breaker.
import { memo, useMemo } from 'react';
import type { RunInfo } from '../../../../shared/types/run.js';
import { useStore } from '../../store/index.js';
import { formatClock, runTitle } from './run-format.js';

const SHOWN = 500;

const RunRow = memo(function RunRow({ run, selected }: { run: RunInfo; selected: boolean }) {
  const selectRun = useStore((s) => s.selectRun);
  const waiting = useStore((s) => Object.values(s.approvals).some((a) => a.runId === run.id));
  return (
    <li>
      <button
        type="button"
        className={`run-row${selected ? ' selected' : ''}`}
        aria-current={selected ? 'true' : undefined}
        onClick={() => selectRun(run.id)}
        data-testid="run-row"
        data-run-id={run.id}
        data-agent={run.agent}
        data-sandbox={run.sandboxName ?? ''}
        data-status={run.status}
      >
        <span className="run-row-line">
          <span className={`dot run-${run.status}`} aria-hidden="true" />
          <span className="run-agent" title={run.agent}>
            {run.agent}
          </span>
          <span className="grow" />
          <span className="muted small mono" title={run.startedAt} data-testid="run-started">
            {formatClock(run.startedAt)}
          </span>
        </span>
        <span className="run-row-line small">
          <span className="muted">in</span>
          <span className="run-sandbox mono" title={runTitle(run)}>
            {runTitle(run)}
          </span>
        </span>
        <span className="run-row-line small">
          <span className={`badge run-status-${run.status}`} data-testid="run-status">
            {run.status}
          </span>
          <span data-testid="run-calls">
            {run.calls} {run.calls === 1 ? 'call' : 'calls'}
          </span>
          <span className={run.failures ? 'bad-text' : 'muted'} data-testid="run-failures">
            {run.failures} failed
          </span>
          <span className="grow" />
          {waiting ? <span className="badge ask">approval</span> : null}
          <span className={`badge breaker-${run.breaker.state}`} title="circuit breaker" data-testid="run-breaker">
            breaker {run.breaker.state}
          </span>
        </span>
      </button>
    </li>
  );
});

export function RunList() {
  const runs = useStore((s) => s.runs);
  const selected = useStore((s) => s.selectedRunId);
  const sorted = useMemo(
    () => Object.values(runs).sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.id.localeCompare(a.id)),
    [runs],
  );
  return (
    <nav className="run-list" aria-label="Runs" data-testid="run-list">
      <ol>
        {sorted.slice(0, SHOWN).map((r) => (
          <RunRow key={r.id} run={r} selected={r.id === selected} />
        ))}
      </ol>
      {sorted.length > SHOWN ? (
        <p className="muted small">{sorted.length - SHOWN} older runs not shown (`warden run ls` lists them all).</p>
      ) : null}
    </nav>
  );
}
