// E2B code works in the sandbox user's home, /home/user (the SDK's default cwd, and where its
// examples write); Warden's sandboxes work in /workspace. The door maps one onto the other, so the
// same paths land in the workspace, under the workspace's confinement and path rules. Every other
// path (relative ones are relative to /workspace) goes to the gateway as it is, and is judged there.
const E2B_HOME = '/home/user';
const WORKSPACE = '/workspace';

export function wardenPath(path: string): string {
  if (path === E2B_HOME || path === `${E2B_HOME}/`) return WORKSPACE;
  if (path.startsWith(`${E2B_HOME}/`)) return `${WORKSPACE}${path.slice(E2B_HOME.length)}`;
  return path;
}
