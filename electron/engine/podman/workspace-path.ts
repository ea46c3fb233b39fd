// Paths for the file API, checked on the host before anything runs: a path is made of plain
// components under /workspace, or it is refused. This is only the first wall; the helper in the
// sandbox then opens each component with O_NOFOLLOW relative to its parent (file-helper.ts), so a
// symlink or a directory swapped for one between check and use is never followed.
import { WardenError } from '../../../shared/errors.js';

export const WORKSPACE = '/workspace';
const MAX_COMPONENT_BYTES = 255;

/** The components of a workspace path (empty for /workspace itself). */
export function workspaceComponents(input: string): string[] {
  if (input.includes('\0')) throw new WardenError('E_BAD_INPUT', 'path contains a NUL byte');
  let rest: string;
  if (input.startsWith('/')) {
    const parts = input.split('/').filter((p) => p !== '' && p !== '.');
    if (parts[0] !== 'workspace') {
      throw new WardenError(
        'E_POLICY_DENIED',
        `path ${JSON.stringify(input)} is outside ${WORKSPACE}`,
        'file access is confined to /workspace: give a path relative to it or under it',
      );
    }
    rest = parts.slice(1).join('/');
  } else rest = input;
  const comps = rest.split('/').filter((p) => p !== '' && p !== '.');
  for (const c of comps) {
    if (c === '..')
      throw new WardenError(
        'E_POLICY_DENIED',
        `path ${JSON.stringify(input)} has a ".." component`,
        'give a path inside /workspace without ".."',
      );
    if (Buffer.byteLength(c) > MAX_COMPONENT_BYTES)
      throw new WardenError('E_BAD_INPUT', `a component of ${JSON.stringify(input)} is longer than ${MAX_COMPONENT_BYTES} bytes`);
  }
  return comps;
}

export function workspacePath(comps: string[]): string {
  return comps.length ? `${WORKSPACE}/${comps.join('/')}` : WORKSPACE;
}
