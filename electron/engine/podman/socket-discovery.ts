// Where a Podman API socket may be, in the order a user would expect them to win.
import { request } from 'node:http';
import type { ConnectionInfo } from '../../../shared/types/engine.js';

export type SocketSource = ConnectionInfo['source'];

export interface SocketCandidate {
  path: string;
  source: SocketSource;
}

/** Reads a unix socket path from a CONTAINER_HOST/DOCKER_HOST value; other schemes are not ours to use. */
export function socketPathFromHostUrl(value: string | undefined): string | null {
  if (!value) return null;
  if (value.startsWith('unix://')) return value.slice('unix://'.length) || null;
  if (value.startsWith('/')) return value;
  return null;
}

export function socketCandidates(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): SocketCandidate[] {
  const found: SocketCandidate[] = [];
  const add = (path: string | null, source: SocketSource) => {
    if (path && !found.some((c) => c.path === path)) found.push({ path, source });
  };
  add(socketPathFromHostUrl(env.CONTAINER_HOST), 'CONTAINER_HOST');
  add(socketPathFromHostUrl(env.DOCKER_HOST), 'DOCKER_HOST');
  if (uid === 0) add('/run/podman/podman.sock', 'rootful');
  const runtimeDir = env.XDG_RUNTIME_DIR || (uid !== 0 ? `/run/user/${uid}` : null);
  if (runtimeDir) add(`${runtimeDir}/podman/podman.sock`, 'rootless');
  if (uid !== 0) add('/run/podman/podman.sock', 'rootful');
  return found;
}

/** True when a Podman (or Docker-compatible) API answers `_ping` on the socket within the time limit. */
export function pingSocket(socketPath: string, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** The first candidate that answers, or null. */
export async function findAnsweringSocket(candidates: SocketCandidate[]): Promise<SocketCandidate | null> {
  for (const candidate of candidates) {
    if (await pingSocket(candidate.path)) return candidate;
  }
  return null;
}
