import { describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findAnsweringSocket, probeSocket, socketCandidates, socketPathFromHostUrl } from './socket-discovery.js';

/** A unix-socket API that leaves its first `silentFor` requests unanswered, like a Podman service
 * under load, and answers the rest: silence and answer are forced, not raced against a timer. */
async function busyEngine(path: string, silentFor: number): Promise<Server> {
  let seen = 0;
  const server = createServer((_req, res) => {
    if (++seen > silentFor) res.end('OK');
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

describe('socket discovery', () => {
  it('reads unix sockets from CONTAINER_HOST and DOCKER_HOST and ignores other schemes', () => {
    expect(socketPathFromHostUrl('unix:///run/x.sock')).toBe('/run/x.sock');
    expect(socketPathFromHostUrl('/run/y.sock')).toBe('/run/y.sock');
    expect(socketPathFromHostUrl('tcp://10.0.0.1:2375')).toBeNull();
    expect(socketPathFromHostUrl('ssh://core@host/run/podman.sock')).toBeNull();
    expect(socketPathFromHostUrl(undefined)).toBeNull();
  });

  it('tries env vars first, then the rootful socket for root, then the rootless one', () => {
    const env = { CONTAINER_HOST: 'unix:///a.sock', DOCKER_HOST: 'unix:///b.sock', XDG_RUNTIME_DIR: '/run/user/0' };
    expect(socketCandidates(env, 0)).toEqual([
      { path: '/a.sock', source: 'CONTAINER_HOST' },
      { path: '/b.sock', source: 'DOCKER_HOST' },
      { path: '/run/podman/podman.sock', source: 'rootful' },
      { path: '/run/user/0/podman/podman.sock', source: 'rootless' },
    ]);
  });

  it('prefers the rootless socket for an ordinary user and never lists a path twice', () => {
    expect(socketCandidates({ DOCKER_HOST: 'unix:///run/podman/podman.sock' }, 1000)).toEqual([
      { path: '/run/podman/podman.sock', source: 'DOCKER_HOST' },
      { path: '/run/user/1000/podman/podman.sock', source: 'rootless' },
    ]);
  });

  it('waits for a socket that is there but busy, and passes over one that is not there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-sock-'));
    const busy = join(dir, 'busy.sock');
    // Silent to this spec's probe and to discovery's first probe; discovery's wait then gets the answer.
    const server = await busyEngine(busy, 2);
    try {
      expect(await probeSocket(join(dir, 'missing.sock'), 300)).toBe('absent');
      expect(await probeSocket(busy, 300)).toBe('silent');
      const found = await findAnsweringSocket([
        { path: join(dir, 'missing.sock'), source: 'CONTAINER_HOST' },
        { path: busy, source: 'rootful' },
      ]);
      expect(found).toEqual({ path: busy, source: 'rootful' });
    } finally {
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
