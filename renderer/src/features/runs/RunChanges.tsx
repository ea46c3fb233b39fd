// The run's Changes tab: what it changed in its sandbox's /workspace, one line per file and then the
// unified diffs. Paths and texts come from inside a sandbox: React text nodes in a <pre>, never HTML.
// A large diff is cut for the eye (the CLI and `warden run export` have all of it).
import { useEffect, useState } from 'react';
import type { WorkspaceDiff } from '../../../../shared/types/diff.js';
import { useServices } from '../../services.js';

/** Lines of one file's diff shown before the rest is summarised. */
const SHOWN_LINES = 400;
const MARK = { added: 'A', modified: 'M', deleted: 'D' } as const;

function shownDiff(diff: string): { text: string; hidden: number } {
  const lines = diff.split('\n');
  if (lines.length <= SHOWN_LINES) return { text: diff, hidden: 0 };
  return { text: lines.slice(0, SHOWN_LINES).join('\n') + '\n', hidden: lines.length - SHOWN_LINES };
}

export function RunChanges({ runId }: { runId: string }) {
  const { client } = useServices();
  const [diff, setDiff] = useState<WorkspaceDiff | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    client.call('run.diff', { id: runId }).then(
      (d) => live && setDiff(d),
      (err: unknown) => live && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [client, runId, asked]);

  const head = (
    <div className="run-changes-head">
      <button type="button" className="btn" onClick={() => setAsked((n) => n + 1)} data-testid="run-changes-refresh">
        Refresh
      </button>
      <span className="muted small">
        take them home: <span className="mono">warden run export {runId} --repo DIR --branch NAME</span>
      </span>
    </div>
  );
  if (error)
    return (
      <div className="run-changes" data-testid="run-changes">
        {head}
        <p className="muted" data-testid="run-changes-error">
          {error}
        </p>
      </div>
    );
  if (!diff)
    return (
      <div className="run-changes" data-testid="run-changes">
        <p className="muted">loading changes…</p>
      </div>
    );
  const { added, modified, deleted } = diff.totals;
  return (
    <div className="run-changes" data-testid="run-changes">
      {head}
      <p className="small" data-testid="run-changes-totals">
        {added} added, {modified} modified, {deleted} deleted since {new Date(diff.base.takenAt).toLocaleString()}
      </p>
      {diff.truncated ? (
        <p className="muted small">The workspace holds more files than a manifest lists: changes past that are not shown.</p>
      ) : null}
      <ul className="run-changes-files" aria-label="Changed files">
        {diff.files.map((f) => (
          <li key={f.path} data-change={f.change}>
            <span className="mono">{MARK[f.change]}</span> <span className="mono">{f.path}</span>{' '}
            <span className="muted small">({f.summary})</span>
          </li>
        ))}
      </ul>
      {diff.files
        .filter((f) => f.diff !== null)
        .map((f) => {
          const shown = shownDiff(f.diff!);
          return (
            <div key={f.path} className="run-changes-file">
              <pre className="run-changes-diff" data-testid="run-changes-diff" data-path={f.path}>
                {shown.text}
              </pre>
              {shown.hidden ? (
                <p className="muted small">
                  {shown.hidden} more lines not shown (+{f.linesAdded} −{f.linesRemoved} in all; `warden run diff {runId}` prints them)
                </p>
              ) : null}
            </div>
          );
        })}
    </div>
  );
}
