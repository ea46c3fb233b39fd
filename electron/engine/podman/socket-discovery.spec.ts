import { describe, expect, it } from 'vitest';
import { socketCandidates, socketPathFromHostUrl } from './socket-discovery.js';

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
});
