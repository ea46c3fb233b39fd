import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestEngine } from '../../test-support/podman-fixture.js';
import type { LibpodInspect } from './sandbox-info.js';

const t = useTestEngine();
const sh = (id: string, cmd: string) => t.sh(id, cmd);

interface FullInspect extends LibpodInspect {
  HostConfig: LibpodInspect['HostConfig'] & {
    CapDrop: string[];
    SecurityOpt: string[];
    Init: boolean;
    Privileged: boolean;
    Ulimits: Array<{ Name: string; Soft: number; Hard: number }>;
    NetworkMode: string;
    Devices: unknown[];
  };
}

describe('sandbox hardening', () => {
  it('applies every hardened default, as seen by inspect and from inside', async () => {
    const sb = await t.create({ memory: '256m', cpus: 0.5, pids: 128 });
    expect(sb.state).toBe('running');
    expect(sb.runtime).toBe(t.engine.info().defaultRuntime);

    const raw = await t.engine.connection.libpod<FullInspect>('GET', `/containers/${sb.id}/json`, undefined, 'inspect');
    expect(raw.HostConfig.Privileged).toBe(false);
    expect(raw.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(raw.HostConfig.Init).toBe(true);
    expect(raw.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(raw.HostConfig.CpuQuota).toBe(50_000);
    expect(raw.HostConfig.PidsLimit).toBe(128);
    expect(raw.HostConfig.NetworkMode).toBe('none');
    expect(raw.HostConfig.Devices ?? []).toEqual([]);
    expect(raw.HostConfig.Ulimits.map((u) => u.Name).sort()).toEqual(['RLIMIT_NOFILE', 'RLIMIT_NPROC']);
    expect(raw.OCIRuntime).toBe(sb.runtime);

    const status = await sh(sb.id, 'grep -E "^(CapEff|CapPrm|NoNewPrivs)" /proc/self/status');
    expect(status.out).toMatch(/CapEff:\s+0000000000000000/);
    expect(status.out).toMatch(/CapPrm:\s+0000000000000000/);
    expect(status.out).toMatch(/NoNewPrivs:\s+1/);

    const net = await sh(sb.id, 'ls /sys/class/net');
    expect(net.out.trim().split(/\s+/)).toEqual(['lo']);

    const init = await sh(sb.id, 'cat /proc/1/comm');
    expect(init.out.trim()).not.toBe('sh');

    // Root can install into its own throwaway layer, but cannot mount or change ownership of what it does not own.
    const write = await sh(sb.id, 'echo ok > /usr/local/agent-file && cat /usr/local/agent-file');
    expect(write.out.trim()).toBe('ok');
    const mount = await sh(sb.id, 'mount -t tmpfs none /mnt');
    expect(mount.exitCode).not.toBe(0);
  });

  it('makes the root filesystem read-only on request, with a size-limited /tmp', async () => {
    const sb = await t.create({ readOnlyRoot: true, tmpSize: '8m' });
    expect(sb.limits.readOnlyRoot).toBe(true);
    const root = await sh(sb.id, 'touch /root-file');
    expect(root.exitCode).not.toBe(0);
    expect(root.err).toMatch(/Read-only file system/);
    const tmp = await sh(sb.id, 'dd if=/dev/zero of=/tmp/big bs=1M count=16 2>&1; ls -l /tmp/big');
    expect(tmp.out).toMatch(/No space left on device/);
  });

  it('bind-mounts a host workspace at /workspace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-ws-'));
    try {
      const sb = await t.create({ workspace: dir });
      expect(sb.workspace).toBe(dir);
      const r = await sh(sb.id, 'echo from-sandbox > /workspace/note.txt && pwd');
      expect(r.out.trim()).toBe('/workspace');
      expect(readFileSync(join(dir, 'note.txt'), 'utf8')).toBe('from-sandbox\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sandbox network and environment', () => {
  it('gives a NAT interface only when asked, and passes the spec env to commands', async () => {
    const sb = await t.create({ network: 'nat', env: { PROJECT: 'warden', EMPTY: '' } });
    expect(sb.network).toBe('nat');
    const net = await sh(sb.id, 'ls /sys/class/net');
    const interfaces = net.out.trim().split(/\s+/);
    expect(interfaces).toContain('lo');
    expect(interfaces.length).toBeGreaterThan(1);
    const env = await sh(sb.id, 'echo "$PROJECT|${EMPTY-unset}"');
    expect(env.out.trim()).toBe('warden|');
  });
});

describe('sandbox lifecycle', () => {
  it('stops, starts, pauses, resumes, restarts and destroys', async () => {
    const sb = await t.create();
    const s = t.engine.sandboxes;
    expect((await s.stop(sb.name)).state).toBe('exited');
    expect((await s.start(sb.name)).state).toBe('running');
    expect((await s.pause(sb.name)).state).toBe('paused');
    expect((await s.resume(sb.name)).state).toBe('running');
    expect((await s.restart(sb.id.slice(0, 12))).state).toBe('running');
    expect((await s.list()).some((x) => x.id === sb.id)).toBe(true);
    await s.destroy(sb.name);
    expect((await s.list()).some((x) => x.id === sb.id)).toBe(false);
    await expect(s.inspect(sb.name)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });

  it('stops on SIGTERM, because an init process forwards the signal (no SIGKILL after the grace time)', async () => {
    const sb = await t.create();
    const stopped = await t.engine.sandboxes.stop(sb.name);
    // 143 = ended by SIGTERM; 137 would mean Podman had to SIGKILL it after the stop timeout.
    expect(stopped.exitCode).toBe(143);
  });

  it('never touches containers it did not create', async () => {
    const name = `foreign-${t.runId}`;
    await t.engine.connection.libpod(
      'POST',
      '/containers/create',
      { name, image: t.engine.sandboxes.defaultImage, command: ['true'] },
      'foreign',
    );
    try {
      await expect(t.engine.sandboxes.destroy(name)).rejects.toMatchObject({
        code: 'E_NOT_FOUND',
        message: expect.stringMatching(/not a Warden sandbox/),
      });
      expect((await t.engine.sandboxes.list()).some((x) => x.name === name)).toBe(false);
    } finally {
      await t.engine.connection.libpod('DELETE', `/containers/${name}?force=true`, undefined, 'foreign', [200, 204, 404]);
    }
  });

  it('refuses bad input with clear errors and leaves nothing behind', async () => {
    const before = (await t.engine.sandboxes.list()).length;
    await expect(t.create({ image: 'localhost/does-not-exist:0' })).rejects.toMatchObject({ code: 'E_IMAGE_MISSING' });
    await expect(t.create({ runtime: 'krun' })).rejects.toMatchObject({ code: 'E_RUNTIME_UNAVAILABLE' });
    await expect(t.create({ workspace: '/definitely/not/here' })).rejects.toMatchObject({ code: 'E_BAD_INPUT' });
    await expect(t.create({ labels: { 'warden.managed': 'false' } })).rejects.toMatchObject({ code: 'E_BAD_INPUT' });
    expect((await t.engine.sandboxes.list()).length).toBe(before);
  });

  it('names the runtime it really used, and refuses one that does not run here', async () => {
    const works = t.engine.info().runtimes.filter((r) => r.works);
    expect(works.length).toBeGreaterThan(0);
    for (const r of works) {
      const sb = await t.create({ runtime: r.name });
      expect(sb.runtime).toBe(r.name);
    }
    for (const r of t.engine.info().runtimes.filter((x) => !x.works)) {
      await expect(t.create({ runtime: r.name })).rejects.toMatchObject({ code: 'E_RUNTIME_UNAVAILABLE' });
    }
  });
});
