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

/** What a socket did when pinged: answered, accepted the connection but stayed silent (a busy
 * engine), or is not there at all (no file, nobody listening). */
export type SocketProbe = 'answers' | 'silent' | 'absent';

export function probeSocket(socketPath: string, timeoutMs = 1500): Promise<SocketProbe> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? 'answers' : 'absent');
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('silent');
    });
    req.on('error', () => resolve('absent'));
    req.end();
  });
}

/** True when a Podman (or Docker-compatible) API answers `_ping` on the socket within the time limit. */
export async function pingSocket(socketPath: string, timeoutMs = 1500): Promise<boolean> {
  return (await probeSocket(socketPath, timeoutMs)) === 'answers';
}

/** How long a socket that is there but busy (hundreds of calls in flight) gets on a second try. */
const BUSY_SOCKET_WAIT_MS = 15_000;

/**
 * The first candidate that answers, or null. A candidate that is there but slow is tried again
 * with a longer wait before giving up on it: a busy engine is not a missing one.
 */
export async function findAnsweringSocket(candidates: SocketCandidate[]): Promise<SocketCandidate | null> {
  const busy: SocketCandidate[] = [];
  for (const candidate of candidates) {
    const probe = await probeSocket(candidate.path);
    if (probe === 'answers') return candidate;
    if (probe === 'silent') busy.push(candidate);
  }
  for (const candidate of busy) {
    if (await pingSocket(candidate.path, BUSY_SOCKET_WAIT_MS)) return candidate;
  }
  return null;
}
