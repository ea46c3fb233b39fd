// The timeline of one run (the Runs view's Timeline tab): its sandbox's resources and ledger entries
// from the run's start to its end (or now, live), with the run's calls in the calls lane.
import { useMemo } from 'react';
import type { RunInfo, ToolCallInfo } from '../../../../shared/types/run.js';
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import type { AppState } from '../../store/index.js';
import { TimelineView } from './TimelineView.js';

const NO_CALLS: readonly ToolCallInfo[] = [];

export function RunTimeline({ run }: { run: RunInfo }) {
  if (!run.sandboxId) return <p className="muted timeline-empty">This run has no sandbox yet: nothing to draw.</p>;
  const runId = run.id;
  return (
    <TimelineView
      key={run.id}
      sandboxId={run.sandboxId}
      from={Date.parse(run.startedAt)}
      to={run.endedAt ? Date.parse(run.endedAt) : null}
      selectCalls={(s: AppState) => s.runCalls[runId] ?? NO_CALLS}
      wholeLabel="run"
      testId="run-timeline"
    />
  );
}

/** Calls of every run of a sandbox the window has loaded, one array per change of the store's calls. */
function sandboxCalls(sandboxId: string): (s: AppState) => readonly ToolCallInfo[] {
  let seen: AppState['runCalls'] | null = null;
  let calls: readonly ToolCallInfo[] = NO_CALLS;
  return (s) => {
    if (s.runCalls === seen) return calls;
    seen = s.runCalls;
    calls = Object.entries(s.runCalls)
      .filter(([id]) => s.runs[id]?.sandboxId === sandboxId)
      .flatMap(([, list]) => list);
    return calls;
  };
}

/** A sandbox's whole life so far (its detail view): every loaded run's calls, its entries, its resources. */
export function SandboxTimeline({ sandbox }: { sandbox: SandboxInfo }) {
  const select = useMemo(() => sandboxCalls(sandbox.id), [sandbox.id]);
  return (
    <TimelineView
      key={sandbox.id}
      sandboxId={sandbox.id}
      from={Date.parse(sandbox.createdAt)}
      to={null}
      selectCalls={select}
      wholeLabel="life"
      testId="sandbox-timeline"
      title="Timeline"
    />
  );
}
