// What changed in a sandbox's /workspace, for a run (the Runs view's Changes tab) or for the whole
// sandbox (the detail view's): one line per file with its summary, then each text diff, unified or
// side by side. Paths and texts come from inside a sandbox: React text nodes, never HTML. A large
// diff is cut for the eye (the CLI has all of it); files without a text diff have their summary.
import { useEffect, useState, type ReactNode } from 'react';
import type { WorkspaceDiff } from '../../../../shared/types/diff.js';
import { toErrorInfo } from '../../../../shared/errors.js';
import { SplitDiff, UnifiedText, type DiffLayout } from './DiffText.js';

/** Lines of one file's diff shown before the rest is summarised. */
const SHOWN_LINES = 400;
const MARK = { added: 'A', modified: 'M', deleted: 'D' } as const;

function shownDiff(diff: string): { text: string; hidden: number } {
  const lines = diff.split('\n');
  if (lines.length <= SHOWN_LINES) return { text: diff, hidden: 0 };
  return { text: lines.slice(0, SHOWN_LINES).join('\n') + '\n', hidden: lines.length - SHOWN_LINES };
}

interface Props {
  /** Test ids start with it: "run-changes", "sandbox-changes". */
  testId: string;
  /** Asks for the diff; a new function (another run or sandbox) asks again. */
  load: () => Promise<WorkspaceDiff>;
  /** Said beside Refresh: how to take the changes home. */
  hint: ReactNode;
  /** The command that prints a cut diff whole. */
  fullCommand: string;
}

export function ChangesView({ testId, load, hint, fullCommand }: Props) {
  const [diff, setDiff] = useState<WorkspaceDiff | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(0);
  const [layout, setLayout] = useState<DiffLayout>('unified');

  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (d) => live && setDiff(d),
      (err: unknown) => {
        if (!live) return;
        const info = toErrorInfo(err);
        setError(info.hint ? `${info.message} (${info.hint})` : info.message);
      },
    );
    return () => {
      live = false;
    };
  }, [load, asked]);

  const head = (
    <div className="changes-head">
      <button type="button" className="btn small" onClick={() => setAsked((n) => n + 1)} data-testid={`${testId}-refresh`}>
        Refresh
      </button>
      <div className="changes-layout" role="group" aria-label="Diff layout">
        {(['unified', 'split'] as const).map((l) => (
          <button
            key={l}
            type="button"
            className={`btn small${layout === l ? ' primary' : ''}`}
            aria-pressed={layout === l}
            onClick={() => setLayout(l)}
            data-testid={`${testId}-layout-${l}`}
          >
            {l === 'unified' ? 'Unified' : 'Side by side'}
          </button>
        ))}
      </div>
      <span className="muted small changes-hint">{hint}</span>
    </div>
  );
  if (error || !diff)
    return (
      <div className="changes" data-testid={testId}>
        {head}
        {error ? (
          <p className="error-text" role="alert" data-testid={`${testId}-error`}>
            {error}
          </p>
        ) : (
          <p className="muted" role="status">
            loading changes…
          </p>
        )}
      </div>
    );
  const { added, modified, deleted } = diff.totals;
  return (
    <div className="changes" data-testid={testId} data-layout={layout}>
      {head}
      <p className="small" data-testid={`${testId}-totals`}>
        {added} added, {modified} modified, {deleted} deleted since {diff.base.kind === 'run' ? 'the run began' : 'the sandbox was made'} (
        {new Date(diff.base.takenAt).toLocaleString()})
      </p>
      {diff.truncated ? (
        <p className="muted small">The workspace holds more files than a manifest lists: changes past that are not shown.</p>
      ) : null}
      <ul className="changes-files" aria-label="Changed files">
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
            <div key={f.path} className="changes-file">
              {layout === 'unified' ? (
                <pre
                  className="changes-diff"
                  data-testid={`${testId}-diff`}
                  data-path={f.path}
                  tabIndex={0}
                  aria-label={`Diff of ${f.path}`}
                >
                  <UnifiedText text={shown.text} />
                </pre>
              ) : (
                <div className="changes-split" data-testid={`${testId}-split`} data-path={f.path}>
                  <SplitDiff text={shown.text} path={f.path} />
                </div>
              )}
              {shown.hidden ? (
                <p className="muted small">
                  {shown.hidden} more lines not shown (+{f.linesAdded} −{f.linesRemoved} in all; `{fullCommand}` prints them)
                </p>
              ) : null}
            </div>
          );
        })}
    </div>
  );
}
