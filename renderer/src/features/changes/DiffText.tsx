// One diff as plain text, either as it is (unified: the <pre>'s text is exactly the diff, line for
// line, so what a person reads is what a digest covers) or side by side. Untrusted texts from a
// sandbox: React text nodes only, never HTML.
import { sideBySideRows, type SideLine } from './diff-rows.js';
import './changes.css';

export type DiffLayout = 'unified' | 'split';

const LINE_CLASS: Record<string, string> = { '+': 'diff-add', '-': 'diff-del', '@': 'diff-hunk' };

/** The diff's lines in spans (for colour); their text, joined, is the diff itself. */
export function UnifiedText({ text }: { text: string }) {
  const lines = text.split('\n');
  const tail = lines.pop();
  return (
    <>
      {lines.map((line, i) => (
        <span key={i} className={line.startsWith('+++') || line.startsWith('---') ? 'diff-head' : (LINE_CLASS[line[0] ?? ''] ?? undefined)}>
          {line}
          {'\n'}
        </span>
      ))}
      {tail ? <span>{tail}</span> : null}
    </>
  );
}

function Cell({ side }: { side: SideLine | null }) {
  if (!side) return <td className="diff-no" aria-hidden="true" colSpan={2} />;
  const cls = side.mark === '-' ? 'diff-del' : side.mark === '+' ? 'diff-add' : undefined;
  return (
    <>
      <td className="diff-no">{side.no}</td>
      <td className={cls}>
        <span className="sr-only">{side.mark === ' ' ? '' : side.mark === '-' ? 'removed: ' : 'added: '}</span>
        {side.text}
      </td>
    </>
  );
}

export function SplitDiff({ text, path }: { text: string; path: string }) {
  return (
    <table className="diff-split">
      <caption className="diff-head">{path}: before, after</caption>
      {/* Fixed layout takes its widths from here, not from the first row (a hunk header across all four). */}
      <colgroup>
        <col className="diff-col-no" />
        <col />
        <col className="diff-col-no" />
        <col />
      </colgroup>
      <tbody>
        {sideBySideRows(text).map((row, i) =>
          row.kind === 'line' ? (
            <tr key={i}>
              <Cell side={row.left} />
              <Cell side={row.right} />
            </tr>
          ) : (
            <tr key={i} className={row.kind === 'hunk' ? 'diff-hunk' : 'diff-note'}>
              <td colSpan={4}>{row.text}</td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}
