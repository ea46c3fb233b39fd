// A workspace diff as one patch that `git apply` takes: git's extended headers (new, deleted and mode
// lines) around the text diffs the engine made. What a text patch cannot carry (binary files, text
// too large to diff, symlinks, paths git would have to quote) is listed in a `#` comment at the top,
// which git apply skips, so nothing the agent changed is dropped without a word.
import { createHash } from 'node:crypto';
import type { WorkspaceDiff, WorkspaceFileChange } from '../../shared/types/diff.js';

export interface GitPatch {
  /** The patch, comment header first. */
  text: string;
  /** SHA-256 hex of `text`: what the ledger and the commit message name. */
  sha256: string;
  /** Files in the patch. */
  included: string[];
  /** Files not in it, each with why ("binary, 0 → 8 bytes"). */
  left: Array<{ path: string; change: WorkspaceFileChange['change']; why: string }>;
}

/** git writes these paths unquoted; anything else (quotes, backslashes, controls, non-ASCII) it would quote. */
const PLAIN_PATH = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

const gitMode = (mode: number) => `100${(mode & 0o111 ? 0o755 : 0o644).toString(8)}`;

/** The headers and hunks of one file, or why it cannot be a text patch. */
function fileSection(f: WorkspaceFileChange): { text: string } | { why: string } {
  if (!PLAIN_PATH.test(f.path) || f.path.includes('"') || f.path.includes('\\')) return { why: 'path git would have to quote' };
  if ((f.before && f.before.type !== 'file') || (f.after && f.after.type !== 'file')) return { why: `not a regular file: ${f.summary}` };
  const contentChanged = f.change !== 'modified' || f.before!.sha256 !== f.after!.sha256;
  if (contentChanged && f.diff === null) return { why: f.summary };
  let head = `diff --git a/${f.path} b/${f.path}\n`;
  if (f.change === 'added') head += `new file mode ${gitMode(f.after!.mode)}\n`;
  else if (f.change === 'deleted') head += `deleted file mode ${gitMode(f.before!.mode)}\n`;
  else if (gitMode(f.before!.mode) !== gitMode(f.after!.mode))
    head += `old mode ${gitMode(f.before!.mode)}\nnew mode ${gitMode(f.after!.mode)}\n`;
  else if (!contentChanged) return { why: f.summary }; // a mode change git does not track (e.g. 644 → 600)
  // An empty file added or removed has no hunks: git writes only the headers then.
  const hunks = contentChanged && f.diff!.includes('\n@@ ') ? f.diff! : '';
  return { text: head + hunks };
}

/** `name` is what the header says the patch is of, e.g. "run run_abc (agent alice, sandbox box1)". */
export function gitPatch(diff: WorkspaceDiff, name: string): GitPatch {
  const included: string[] = [];
  const left: GitPatch['left'] = [];
  let body = '';
  for (const f of diff.files) {
    const section = fileSection(f);
    if ('text' in section) {
      included.push(f.path);
      body += section.text;
    } else left.push({ path: f.path, change: f.change, why: section.why });
  }
  const oneLine = (s: string) => JSON.stringify(s).slice(1, -1);
  let header = `# Warden: /workspace changes of ${oneLine(name)} since ${diff.base.takenAt}\n`;
  header += `# ${included.length} file(s) in this patch; ${left.length} not in it${left.length ? ':' : '.'}\n`;
  for (const l of left) header += `#   ${l.change} ${JSON.stringify(l.path)} (${oneLine(l.why)})\n`;
  if (diff.truncated) header += '# warning: the workspace held more files than a manifest lists; changes past that are not here\n';
  const text = `${header}\n${body}`;
  return { text, sha256: createHash('sha256').update(text).digest('hex'), included, left };
}
