// The disk limit, tried from inside: a sandbox that fills its disk gets ENOSPC, the host file stays
// bounded, the sandbox still works after freeing space, and removal (Warden's or the podman CLI's)
// leaves no mount and no file. Run against the code without disk-limit.ts, the fills succeed.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { useTestEngine } from '../../test-support/podman-fixture.js';
import { SANDBOX_DEFAULTS } from '../../../shared/types/sandbox.js';

const MiB = 1024 ** 2;
const t = useTestEngine();
const sh = (id: string, cmd: string) => t.sh(id, cmd);

const mounted = (path: string) =>
  readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1] === path);

/** Fills the disk two ways and checks each stops at the limit with ENOSPC, inside and on the host. */
async function expectBounded(id: string, bytes: number) {
  const fa = await sh(id, 'fallocate -l 3G /root/x');
  expect(fa.exitCode).not.toBe(0);
  expect(fa.err).toMatch(/No space left on device/);
  const dd = await sh(id, 'rm -f /root/x; dd if=/dev/zero of=/tmp/fill bs=1M count=2048 2>&1');
  expect(dd.exitCode).not.toBe(0);
  expect(dd.out).toMatch(/No space left on device/);
  const size = Number((await sh(id, 'df -B1 --output=size / | tail -1')).out.trim());
  expect(size).toBeLessThanOrEqual(bytes);
  const disk = t.engine.disks.paths(id);
  expect(statSync(disk.img).size).toBe(bytes);
  expect(statSync(disk.img).blocks * 512).toBeLessThanOrEqual(bytes);
  // Freed space is usable again: the sandbox is not wedged by having been full.
  const after = await sh(id, 'rm -f /tmp/fill && echo still-works > /root/after && cat /root/after');
  expect(after.out.trim()).toBe('still-works');
}

async function expectGone(id: string) {
  const disk = t.engine.disks.paths(id);
  expect(mounted(disk.mnt)).toBe(false);
  expect(existsSync(disk.img)).toBe(false);
  expect(existsSync(disk.mnt)).toBe(false);
}

describe('sandbox disk limit', () => {
  it('gives ENOSPC inside at the limit, never a fuller host, and removal leaves no mount or file', async () => {
    const sb = await t.create({ disk: '256m' });
    await expectBounded(sb.id, 256 * MiB);
    expect(sb.limits).toMatchObject({ diskBytes: 256 * MiB, diskEnforced: true });
    expect(mounted(t.engine.disks.paths(sb.id).mnt)).toBe(true);
    const listed = (await t.engine.sandboxes.list()).find((s) => s.id === sb.id);
    expect(listed?.limits).toMatchObject({ diskBytes: 256 * MiB, diskEnforced: true });
    await t.engine.sandboxes.destroy(sb.name);
    await expectGone(sb.id);
  });

  it('defaults to 4 GiB, held as a sparse file', async () => {
    const sb = await t.create();
    expect(sb.limits).toMatchObject({ diskBytes: SANDBOX_DEFAULTS.diskBytes, diskEnforced: true });
    const img = statSync(t.engine.disks.paths(sb.id).img);
    expect(img.size).toBe(SANDBOX_DEFAULTS.diskBytes);
    expect(img.blocks * 512).toBeLessThan(64 * MiB);
    await t.engine.sandboxes.destroy(sb.id);
    await expectGone(sb.id);
  });

  it('holds with the user namespace every sandbox has (idmapped layers keep their owners)', async () => {
    const sb = await t.create({ disk: '128m' });
    expect(sb.limits.diskEnforced).toBe(true);
    const map = await sh(sb.id, 'cat /proc/self/uid_map; stat -c %u /');
    expect(map.out.trim().split(/\s+/)[1]).not.toBe('0');
    expect(map.out.trim().split('\n').at(-1)).toBe('0');
    await expectBounded(sb.id, 128 * MiB);
    await t.engine.sandboxes.destroy(sb.id);
    await expectGone(sb.id);
  });

  it('remounts a disk that is not mounted (as after a host reboot) before start, keeping its files', async () => {
    const sb = await t.create({ disk: '64m' });
    await sh(sb.id, 'echo kept > /root/keep');
    await t.engine.sandboxes.stop(sb.id);
    const disk = t.engine.disks.paths(sb.id);
    expect(spawnSync('umount', [disk.mnt]).status).toBe(0);
    expect(mounted(disk.mnt)).toBe(false);
    const started = await t.engine.sandboxes.start(sb.id);
    expect(started.state).toBe('running');
    expect(mounted(disk.mnt)).toBe(true);
    expect((await sh(sb.id, 'cat /root/keep')).out.trim()).toBe('kept');
    await expectBounded(sb.id, 64 * MiB);
  });

  it('a sandbox removed with the podman CLI leaves the host store working, and the sweep removes its disk', async () => {
    const sb = await t.create({ disk: '64m' });
    const rm = spawnSync('podman', ['rm', '-f', '-t', '0', sb.id], { encoding: 'utf8' });
    expect(rm.status, rm.stderr).toBe(0);
    // The store is healthy: another sandbox can be made from the same image.
    const other = await t.create({ disk: '64m' });
    expect(other.state).toBe('running');
    expect(mounted(t.engine.disks.paths(sb.id).mnt)).toBe(true);
    expect(await t.engine.disks.sweep(0)).toEqual([sb.id]);
    await expectGone(sb.id);
    expect(mounted(t.engine.disks.paths(other.id).mnt)).toBe(true);
  });
});
