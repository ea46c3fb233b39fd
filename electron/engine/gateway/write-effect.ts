// The effect of a file write a person is asked about: the sandbox's file as it is now against the
// bytes the agent sent, as a unified diff (a new file: all added) or, for binary, large or unreadable
// content, a summary with sizes and digests. Computed when the ask is raised, so the prompt shows
// what the gateway binds: the decision's ledger entry carries the sha256 of exactly this text, and
// the write is refused if the file changed between the prompt and the write.
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import { EFFECT_MAX_CHARS, EFFECT_MAX_LINES, type ApprovalEffect, type EffectSide } from '../../../shared/types/approval-effect.js';
import { asText, unifiedHunks } from '../diff/line-diff.js';
import type { PodmanConnection } from '../podman/connection.js';
import { readFileIn } from '../podman/file-helper.js';
import { workspacePath } from '../podman/workspace-path.js';

/** The file now: its bytes, none (a new file), or why it could not be read. */
export type CurrentFile = { bytes: Buffer } | { absent: true } | { unreadable: string };

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
const side = (data: Buffer): EffectSide => ({ size: data.length, sha256: sha256(data) });

/** Reads the file the write would replace, up to `maxBytes` (the file API's read limit). */
export async function currentFile(conn: PodmanConnection, containerId: string, comps: string[], maxBytes: number): Promise<CurrentFile> {
  try {
    return { bytes: await readFileIn(conn, containerId, comps, maxBytes) };
  } catch (err) {
    if (err instanceof WardenError && err.code === 'E_NOT_FOUND') return { absent: true };
    // Never thrown: the person is told it could not be read, and decides on that.
    return { unreadable: err instanceof Error ? err.message : String(err) };
  }
}

/** What the prompt shows for a write of `data` over `now` at `comps`. */
export function writeEffect(comps: string[], now: CurrentFile, data: Buffer): ApprovalEffect {
  const path = workspacePath(comps);
  const rel = comps.join('/');
  const before = 'bytes' in now ? side(now.bytes) : null;
  const after = side(data);
  const effect = (kind: ApprovalEffect['kind'], text: string, linesAdded = 0, linesRemoved = 0): ApprovalEffect => ({
    path,
    kind,
    before,
    after,
    text,
    sha256: sha256(text),
    linesAdded,
    linesRemoved,
  });
  const sides = [
    before ? `now:      ${before.size} bytes, sha256 ${before.sha256}` : 'now:      no file (the write creates it)',
    `proposed: ${after.size} bytes, sha256 ${after.sha256}`,
  ];
  const summary = (why: string) => effect('summary', [`write ${path}: ${why}`, ...sides, ''].join('\n'));
  if ('unreadable' in now) return summary(`the file there now cannot be read (${now.unreadable}); no diff`);
  const oldText = 'bytes' in now ? asText(now.bytes) : '';
  const newText = asText(data);
  if (oldText === null || newText === null) return summary('binary, no text diff');
  if (before && before.sha256 === after.sha256) return summary('the same bytes as the file there now; nothing changes');
  const diff = unifiedHunks(oldText, newText);
  if (!diff) return summary('too long to compare line by line; no diff');
  const text = `--- ${before ? `a/${rel}` : '/dev/null'}\n+++ b/${rel}\n${diff.hunks}`;
  const lines = diff.added + diff.removed;
  if (text.length > EFFECT_MAX_CHARS || lines > EFFECT_MAX_LINES)
    return summary(`text, +${diff.added} −${diff.removed} lines: too long to show whole; no diff`);
  return effect('text', text, diff.added, diff.removed);
}

/** The write goes ahead only over the file the person was shown (or still none). */
export function stillAsShown(shown: ApprovalEffect, now: CurrentFile): void {
  const digest = 'bytes' in now ? sha256(now.bytes) : null;
  if ('unreadable' in now && shown.before === null) return;
  if (digest === (shown.before?.sha256 ?? null)) return;
  throw new WardenError(
    'E_CONFLICT',
    `${shown.path} changed after its diff was shown for approval; nothing was written`,
    'ask again: the new prompt shows the diff against the file as it is now',
  );
}
