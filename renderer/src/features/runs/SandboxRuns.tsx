// The runs agents made in one sandbox, for its detail view: each opens the Runs view on that run.
import { useMemo } from 'react';
import { useStore } from '../../store/index.js';
import { formatClock } from './run-format.js';
import './runs.css';

const SHOWN = 8;

export function SandboxRuns({ sandboxId }: { sandboxId: string }) {
  const runs = useStore((s) => s.runs);
  const selectRun = useStore((s) => s.selectRun);
  const navigate = useStore((s) => s.navigate);
  const mine = useMemo(
    () =>
      Object.values(runs)
        .filter((r) => r.sandboxId === sandboxId)
        .sort((a, b) => b.startedAt.localeCompare(a.startedAt)),
    [runs, sandboxId],
  );
  const open = (id: string) => {
    selectRun(id);
    navigate({ name: 'runs' });
  };
  return (
    <section className="sandbox-runs" aria-labelledby="sandbox-runs-title" data-testid="sandbox-runs">
      <h2 id="sandbox-runs-title">Agent runs</h2>
      {mine.length === 0 ? (
        <span className="muted small">No agent has worked in this sandbox through Warden.</span>
      ) : (
        <ul>
          {mine.slice(0, SHOWN).map((r) => (
            <li key={r.id}>
              <button
                type="button"
                className="run-chip"
                onClick={() => open(r.id)}
                data-testid="sandbox-run-link"
                data-run-id={r.id}
                title={`Open run ${r.id} in the Runs view`}
              >
                <span className={`dot run-${r.status}`} aria-hidden="true" />
                <span className="run-agent">{r.agent}</span>
                <span className="muted">
                  {r.status} · {r.calls} {r.calls === 1 ? 'call' : 'calls'}
                  {r.failures ? ` · ${r.failures} failed` : ''} · {formatClock(r.startedAt)}
                </span>
              </button>
            </li>
          ))}
          {mine.length > SHOWN ? <li className="muted small">and {mine.length - SHOWN} more in Runs</li> : null}
        </ul>
      )}
    </section>
  );
}
