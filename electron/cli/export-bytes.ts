// The exact bytes of the files an export carries whole (binary, or text too large to diff), read
// from the sandbox through the running Warden's file API as the user: under the policy's read limit
// (files.maxReadBytes) each, recorded like any file read, and checked against the digest the diff
// showed, so what is exported is what the person saw (a file changed since is a conflict, not a
// silent substitution).
import { createHash } from 'node:crypto';
import { WardenError } from '../../shared/errors.js';
import type { WorkspaceFileChange } from '../../shared/types/diff.js';
import type { AgentClient } from '../server/client.js';

/** The most one export holds in memory of such files together; past it, the rest are left out (and listed). */
export const EXPORT_BYTES_TOTAL = 256 * 1024 * 1024;

/** Each file's bytes by path, or why it could not be had (too large, unreadable). */
export async function fetchBytes(
  api: AgentClient,
  sandboxId: string | null,
  files: WorkspaceFileChange[],
): Promise<Map<string, Buffer | string>> {
  const out = new Map<string, Buffer | string>();
  let total = 0;
  for (const f of files) {
    if (!sandboxId) {
      out.set(f.path, 'the run has no sandbox to read it from');
      continue;
    }
    if (total + f.after!.size > EXPORT_BYTES_TOTAL) {
      out.set(f.path, `over the ${EXPORT_BYTES_TOTAL} bytes an export carries whole`);
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = await api.request('files.read', { params: { id: sandboxId }, query: { path: `/workspace/${f.path}` } });
    } catch (err) {
      if (!(err instanceof WardenError) || err.code === 'E_ENGINE_UNREACHABLE') throw err;
      out.set(f.path, `its bytes could not be read: ${err.message}`);
      continue;
    }
    if (createHash('sha256').update(bytes).digest('hex') !== f.after!.sha256) {
      throw new WardenError(
        'E_CONFLICT',
        `${JSON.stringify(f.path)} changed in the sandbox since its diff was taken`,
        'export again: the diff and the bytes must be of the same moment',
      );
    }
    total += bytes.length;
    out.set(f.path, bytes);
  }
  return out;
}
