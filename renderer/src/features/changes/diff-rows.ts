// A unified diff (as the engine writes it: --- a/… +++ b/… then @@ hunks) laid out side by side: each
// row the old line on the left and the new one on the right, a removed run paired with the added run
// after it. Pure, so the layout is tested without a browser; the texts stay untrusted strings.

export interface SideLine {
  no: number;
  text: string;
  mark: ' ' | '-' | '+';
}

export type DiffRow =
  { kind: 'hunk'; text: string } | { kind: 'note'; text: string } | { kind: 'line'; left: SideLine | null; right: SideLine | null };

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function sideBySideRows(diff: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let a = 0;
  let b = 0;
  let inHunk = false;
  let removed: SideLine[] = [];
  let added: SideLine[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++)
      rows.push({ kind: 'line', left: removed[i] ?? null, right: added[i] ?? null });
    removed = [];
    added = [];
  };
  const lines = diff.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      flush();
      inHunk = true;
      // A range of 0 lines names the line before it: the next line is number start + 1.
      a = Number(hunk[1]) - (/^@@ -\d+,0 /.test(line) ? 0 : 1);
      b = Number(hunk[2]) - (/ \+\d+,0 @@/.test(line) ? 0 : 1);
      rows.push({ kind: 'hunk', text: line });
    } else if (!inHunk) continue;
    else if (line.startsWith('-')) removed.push({ no: ++a, text: line.slice(1), mark: '-' });
    else if (line.startsWith('+')) added.push({ no: ++b, text: line.slice(1), mark: '+' });
    else if (line.startsWith('\\')) {
      flush();
      rows.push({ kind: 'note', text: line });
    } else {
      flush();
      rows.push({ kind: 'line', left: { no: ++a, text: line.slice(1), mark: ' ' }, right: { no: ++b, text: line.slice(1), mark: ' ' } });
    }
  }
  flush();
  return rows;
}
