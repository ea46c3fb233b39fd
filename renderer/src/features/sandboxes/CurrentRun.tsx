// The list's "Run" cell: the agent whose run in this sandbox is active (the newest, if several),
// a click away from its timeline.
import type { RunInfo } from '../../../../shared/types/run.js';
import { useStore } from '../../store/index.js';

function activeRunOf(runs: Record<string, RunInfo>, sandboxId: string): RunInfo | null {
  let best: RunInfo | null = null;
  for (const r of Object.values(runs)) {
    if (r.sandboxId !== sandboxId || r.status !== 'active') continue;
    if (!best || r.startedAt > best.startedAt) best = r;
  }
  return best;
}

export function CurrentRun({ sandboxId }: { sandboxId: string }) {
  const run = useStore((s) => activeRunOf(s.runs, sandboxId));
  const selectRun = useStore((s) => s.selectRun);
  const navigate = useStore((s) => s.navigate);
  if (!run) return <span className="muted">–</span>;
  return (
    <button
      type="button"
      className="link-button"
      data-testid="sandbox-current-run"
      title={`${run.agent}: ${run.calls} calls — open the run`}
      onClick={(e) => {
        e.stopPropagation();
        selectRun(run.id);
        navigate({ name: 'runs' });
      }}
    >
      {run.agent}
    </button>
  );
}
