// A workspace diff as one patch that `git apply` takes: git's extended headers (new, deleted and mode
// lines) around the text diffs the engine made, and a new file without a text diff (binary, or too
// large to diff) as a git binary patch of its exact bytes when the caller fetched them (git-binary.ts).
// What the patch cannot carry (such files changed or deleted: a binary patch must name the old
// contents' git blob id, which Warden does not keep; symlinks; paths git would have to quote) is
// listed in a `#` comment at the top, which git apply skips, so nothing is dropped without a word.
// A git branch export carries the changed and deleted ones too (git-export.ts): `bytesOnly` marks them.
import { createHash } from 'node:crypto';
import type { WorkspaceDiff, WorkspaceFileChange } from '../../shared/types/diff.js';
import { addedBinarySection } from './git-binary.js';

export interface GitPatch {
  /** The patch, comment header first. */
  text: string;
  /** SHA-256 hex of `text`: what the ledger and the commit message name. */
  sha256: string;
  /** Files in the patch. */
  included: string[];
  /** Of those, the ones carried as git binary patches (their exact bytes). */
  binary: string[];
  /**
   * Files not in it, each with why ("binary, 0 → 8 bytes"). `bytesOnly`: a regular file whose change
   * a text patch cannot say (binary or too large) but its bytes can: a branch export carries it.
   */
  left: Array<{ path: string; change: WorkspaceFileChange['change']; why: string; bytesOnly?: boolean }>;
}

/** A regular file (each side that exists) whose contents changed and have no text diff: only its bytes can carry it. */
export function needsBytes(f: WorkspaceFileChange): boolean {
  const regular = (!f.before || f.before.type === 'file') && (!f.after || f.after.type === 'file');
  const contentChanged = f.change !== 'modified' || f.before!.sha256 !== f.after!.sha256;
  return regular && contentChanged && f.diff === null && plainPath(f.path);
}

const plainPath = (p: string) => PLAIN_PATH.test(p) && !p.includes('"') && !p.includes('\\');

/** git writes these paths unquoted; anything else (quotes, backslashes, controls, non-ASCII) it would quote. */
const PLAIN_PATH = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

const gitMode = (mode: number) => `100${(mode & 0o111 ? 0o755 : 0o644).toString(8)}`;

/** The headers and hunks of one file (a binary patch: `bytes` are its new contents), or why it is not in the patch. */
function fileSection(
  f: WorkspaceFileChange,
  bytes: Buffer | string | undefined,
): { text: string; binary?: true } | { why: string; bytesOnly?: true } {
  if (!plainPath(f.path)) return { why: 'path git would have to quote' };
  if (needsBytes(f)) {
    if (f.change === 'added' && Buffer.isBuffer(bytes))
      return { text: addedBinarySection(f.path, gitMode(f.after!.mode), bytes), binary: true };
    if (typeof bytes === 'string') return { why: `${f.summary}; ${bytes}` };
    const why = f.change === 'added' ? `${f.summary}; its bytes were not fetched` : `${f.summary}; a patch of it needs the old contents`;
    return { why, bytesOnly: true };
  }
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

/**
 * `name` is what the header says the patch is of, e.g. "run run_abc (agent alice, sandbox box1)";
 * `bytes`: the new contents of files that need them (needsBytes), by path, checked by the caller, or
 * why they could not be had.
 */
export function gitPatch(diff: WorkspaceDiff, name: string, bytes: ReadonlyMap<string, Buffer | string> = new Map()): GitPatch {
  const included: string[] = [];
  const binary: string[] = [];
  const left: GitPatch['left'] = [];
  let body = '';
  for (const f of diff.files) {
    const section = fileSection(f, bytes.get(f.path));
    if ('text' in section) {
      included.push(f.path);
      if (section.binary) binary.push(f.path);
      body += section.text;
    } else left.push({ path: f.path, change: f.change, why: section.why, ...(section.bytesOnly ? { bytesOnly: true } : {}) });
  }
  const oneLine = (s: string) => JSON.stringify(s).slice(1, -1);
  let header = `# Warden: /workspace changes of ${oneLine(name)} since ${diff.base.takenAt}\n`;
  header += `# ${included.length} file(s) in this patch; ${left.length} not in it${left.length ? ':' : '.'}\n`;
  for (const l of left) header += `#   ${l.change} ${JSON.stringify(l.path)} (${oneLine(l.why)})\n`;
  if (diff.truncated) header += '# warning: the workspace held more files than a manifest lists; changes past that are not here\n';
  const text = `${header}\n${body}`;
  return { text, sha256: createHash('sha256').update(text).digest('hex'), included, binary, left };
}
