// A workspace diff for a terminal: a summary line, one line per file, then the unified diffs, as
// `git diff --stat` and `git diff` would show them. Paths and texts come from inside a sandbox: their
// control characters are replaced, so a file cannot drive the terminal.
import type { WorkspaceDiff } from '../../shared/types/diff.js';
import { printJson } from './output.js';

/** Text from a sandbox, safe to print: control and bidi characters become '?'. */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
export const clean = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?');
const MARK = { added: 'A', modified: 'M', deleted: 'D' } as const;

export function formatDiff(d: WorkspaceDiff): string {
  const { added, modified, deleted } = d.totals;
  let out = `/workspace of ${d.sandboxId.slice(0, 12)} since the ${d.base.kind === 'run' ? `run ${d.base.id}` : 'sandbox was created'} (${d.base.takenAt}): ${added} added, ${modified} modified, ${deleted} deleted\n`;
  if (d.truncated) out += 'warning: the workspace holds more files than a manifest lists; changes past that are not shown\n';
  for (const f of d.files) out += `${MARK[f.change]}  ${clean(f.path).replace(/\n/g, '?')}  (${f.summary})\n`;
  for (const f of d.files) if (f.diff) out += `\n${clean(f.diff)}`;
  return out;
}

export function printDiff(json: boolean, d: WorkspaceDiff): void {
  if (json) printJson(d);
  else process.stdout.write(formatDiff(d));
}
