import { describe, expect, it } from 'vitest';
import { SandboxSpecSchema } from '../../../shared/types/sandbox.js';
import { buildSpecGenerator, resolveSandbox, type BuildContext } from './container-spec.js';
import { parseProcLimits } from './host-limits.js';
import { infoFromListEntry } from './sandbox-info.js';

const ctx: BuildContext = {
  name: 'box',
  image: 'localhost/warden-sandbox:1',
  runtime: 'runc',
  rootless: false,
  hostLimits: { nofileHard: 20000, nprocHard: 96365 },
  now: new Date('2026-01-01T00:00:00Z'),
  seccompProfile: '/home/u/.local/share/warden/seccomp/warden-0123.json',
  wall: { workspaceOwner: null },
};

function build(input: Record<string, unknown>, over: Partial<BuildContext> = {}) {
  const spec = SandboxSpecSchema.parse(input);
  const c = { ...ctx, ...over };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a loose JSON shape read field by field
  return buildSpecGenerator(spec, resolveSandbox(spec, c), c) as Record<string, any>;
}

describe('container spec', () => {
  it('hardens by default: no capabilities, no new privileges, init, no network, no devices, limits', () => {
    const g = build({});
    expect(g).toMatchObject({
      privileged: false,
      cap_drop: ['ALL'],
      no_new_privileges: true,
      init: true,
      devices: [],
      read_only_filesystem: false,
      oci_runtime: 'runc',
      netns: { nsmode: 'none' },
      resource_limits: {
        memory: { limit: 512 * 1024 ** 2, swap: 512 * 1024 ** 2 },
        cpu: { quota: 100_000, period: 100_000 },
        pids: { limit: 256 },
      },
    });
    expect(g.labels['warden.managed']).toBe('true');
    expect(g.labels['warden.disk']).toBe(String(4 * 1024 ** 3));
    expect(build({ disk: '1g' }).labels['warden.disk']).toBe(String(1024 ** 3));
    expect(g.mounts).toEqual([]);
  });

  it("gives every rootful sandbox its own user namespace and Warden's seccomp profile", () => {
    const g = build({});
    expect(g.userns).toEqual({ nsmode: 'auto' });
    expect(g.idmappings).toEqual({ HostUIDMapping: false, HostGIDMapping: false, AutoUserNs: true, AutoUserNsOpts: { Size: 65536 } });
    expect(g.seccomp_profile_path).toBe(ctx.seccompProfile);
    expect(g.seccomp_policy).toBe('default');
    // A workspace is lent: chowned to the sandbox's root at start, its owner recorded to give it back.
    const lent = build({ workspace: '/srv/ws' }, { wall: { workspaceOwner: { uid: 1000, gid: 1000 } } });
    expect(lent.mounts[0].options).toEqual(['rbind', 'rw', 'U']);
    expect(lent.labels['warden.workspace-owner']).toBe('1000:1000');
    // Rootless: root is already the user; no user namespace is asked for.
    const rootless = build({ workspace: '/srv/ws' }, { rootless: true, wall: null });
    expect(rootless.userns).toBeUndefined();
    expect(rootless.mounts[0].options).toEqual(['rbind', 'rw']);
  });

  it('clamps ulimits to the host hard limits so the sandbox can start', () => {
    const g = build({}, { hostLimits: { nofileHard: 1024, nprocHard: 2000 } });
    expect(g.r_limits).toEqual([
      { type: 'nofile', soft: 1024, hard: 1024 },
      { type: 'nproc', soft: 2000, hard: 2000 },
    ]);
  });

  it('adds a workspace bind, a read-only root with a sized tmpfs, NAT and a TTL when asked', () => {
    const g = build({ workspace: '/srv/ws', readOnlyRoot: true, tmpSize: '16m', network: 'nat', ttlSeconds: 60, cpus: 1.5 });
    expect(g.mounts).toContainEqual({ destination: '/workspace', source: '/srv/ws', type: 'bind', options: ['rbind', 'rw', 'U'] });
    expect(g.mounts).toContainEqual(
      expect.objectContaining({ destination: '/tmp', type: 'tmpfs', options: expect.arrayContaining([`size=${16 * 1024 ** 2}`]) }),
    );
    expect(g.read_only_filesystem).toBe(true);
    expect(g.netns).toEqual({ nsmode: 'bridge' });
    expect(g.labels['warden.expires-at']).toBe('2026-01-01T00:01:00.000Z');
    expect(g.resource_limits.cpu.quota).toBe(150_000);
    expect(build({ network: 'nat' }, { rootless: true }).netns).toEqual({ nsmode: 'slirp4netns' });
  });

  it('reads the host limits from /proc/self/limits', () => {
    const text =
      'Limit                     Soft Limit           Hard Limit           Units\nMax processes             96365                96365                processes\nMax open files            1024                 20000                files\n';
    expect(parseProcLimits(text)).toEqual({ nofileHard: 20000, nprocHard: 96365 });
    expect(parseProcLimits('Max open files unlimited unlimited files\n').nofileHard).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('maps a list entry back to a SandboxInfo from its labels alone', () => {
    const labels = build({ memory: '1g', pids: 99, labels: { team: 'a' } }).labels as Record<string, string>;
    const info = infoFromListEntry({
      Id: 'abc',
      Names: ['box'],
      Image: 'img',
      State: 'running',
      Labels: labels,
      Created: '2026-01-01T00:00:00Z',
      StartedAt: 1767225600,
      ExitCode: 0,
      Exited: false,
    });
    expect(info).toMatchObject({
      name: 'box',
      state: 'running',
      runtime: 'runc',
      network: 'none',
      labels: { team: 'a' },
      limits: { memoryBytes: 1024 ** 3, pids: 99, cpus: 1 },
    });
    expect(info.startedAt).toBe('2026-01-01T00:00:00.000Z');
  });
});
