// Which disks the sweep removes: only those whose container's layer no longer points at them, and
// never one young enough to be mid-attach in another Warden process. (Mounts are in the int spec.)
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskLimits, hostDiskSupport, storeDiskSupport, SWEEP_MIN_AGE_MS } from './disk-limit.js';

let root: string;
let disks: DiskLimits;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'warden-disk-unit-'));
  disks = new DiskLimits(join(root, 'home'));
  mkdirSync(disks.dir, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A disk as attach leaves it (file, mount point, layer record), with the layer a symlink to it or not. */
function disk(id: string, layer: 'linked' | 'gone' | 'directory', ageMs = 2 * SWEEP_MIN_AGE_MS) {
  const p = disks.paths(id);
  const layerDir = join(root, 'overlay', id.slice(0, 8));
  mkdirSync(join(root, 'overlay'), { recursive: true });
  writeFileSync(p.img, '');
  mkdirSync(p.mnt);
  writeFileSync(p.layerFile, layerDir);
  if (layer === 'linked') symlinkSync(p.mnt, layerDir);
  if (layer === 'directory') mkdirSync(layerDir);
  const when = new Date(Date.now() - ageMs);
  utimesSync(p.img, when, when);
  return p;
}

describe('disk sweep', () => {
  it('removes disks whose layer is gone or no longer points at them, and keeps live ones', async () => {
    const live = disk('a'.repeat(64), 'linked');
    const removed = disk('b'.repeat(64), 'gone');
    const replaced = disk('c'.repeat(64), 'directory');
    expect((await disks.sweep()).sort()).toEqual(['b'.repeat(64), 'c'.repeat(64)]);
    expect(existsSync(live.img) && existsSync(live.mnt)).toBe(true);
    for (const p of [removed, replaced]) expect([p.img, p.mnt, p.layerFile].some((f) => existsSync(f))).toBe(false);
  });

  it('leaves a disk young enough to be mid-attach, unless told no age is needed', async () => {
    const young = disk('d'.repeat(64), 'directory', 1000);
    expect(await disks.sweep()).toEqual([]);
    expect(existsSync(young.img)).toBe(true);
    expect(await disks.sweep(0)).toEqual(['d'.repeat(64)]);
  });

  it('releases on a remove event only a disk whose layer no longer uses it', async () => {
    disk('e'.repeat(64), 'linked');
    disk('f'.repeat(64), 'gone');
    expect(await disks.releaseIfOrphan('e'.repeat(64))).toBe(false);
    expect(await disks.releaseIfOrphan('f'.repeat(64))).toBe(true);
    expect(await disks.releaseIfOrphan('0'.repeat(64))).toBe(false);
  });

  it('finds a disk through the layer symlink, whichever home made it', () => {
    const other = new DiskLimits(join(root, 'other-home'));
    mkdirSync(other.dir, { recursive: true });
    const id = '1'.repeat(64);
    const p = other.paths(id);
    mkdirSync(p.mnt);
    symlinkSync(p.mnt, join(root, 'layer'));
    expect(disks.locate(id, join(root, 'layer'))).toEqual(p);
    expect(disks.locate(id, undefined)).toBeNull();
  });
});

describe('disk support', () => {
  // Only where this host itself could do it (root, loop devices, mkfs.ext4) do the store's reasons show.
  it.runIf(hostDiskSupport() === null)('says why a store cannot hold bounded disks: rootless, not overlay, not on this machine', () => {
    const layer = join(root, 'layer');
    mkdirSync(layer);
    expect(disks.unsupported({ rootless: false, driver: 'overlay', layerDir: layer })).toBeNull();
    expect(disks.unsupported({ rootless: true, driver: 'overlay', layerDir: layer })).toMatch(/rootless/);
    expect(disks.unsupported({ rootless: false, driver: 'vfs', layerDir: layer })).toMatch(/driver is vfs/);
    expect(disks.unsupported({ rootless: false, driver: 'overlay', layerDir: join(root, 'elsewhere') })).toMatch(/not on this machine/);
    expect(storeDiskSupport({ rootless: false, driver: 'overlay', graphRoot: join(root, 'remote-store') })).toMatch(/not on this machine/);
  });
});
