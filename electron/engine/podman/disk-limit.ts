// A per-sandbox disk limit on hosts without filesystem quotas (Podman's `--storage-opt size=` needs
// them). Right after create, the container's writable overlay layer (containers/storage's
// overlay/<layer>/, holding diff/ and work/) is copied into an ext4 filesystem made in a sparse file
// of the sandbox's disk size, loop-mounted at WARDEN_HOME/disks/<id>/, and the layer directory is
// replaced by a symlink to that mount. Podman then mounts the sandbox's root with its upper and work
// directories on the bounded filesystem: a write past the limit fails with ENOSPC inside, and the
// host file never grows past the disk size.
//
// Why a symlink and not a mount over the layer directory: Podman's rm removes the layer directory, a
// mount point gives EBUSY there, and the half-removed layer then breaks every later podman command on
// the host (tried). With the symlink, `podman rm` behind Warden's back just unlinks it, and what is
// left (mount and file) is an orphan that `sweep` removes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { WardenError } from '../../../shared/errors.js';

const run = promisify(execFile);
// mkfs, mount and umount live in sbin, which a non-login PATH may lack.
const TOOL_ENV = { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin:/usr/bin:/bin` };
/** Options that keep mkfs fast and the sparse file small: nothing reserved for root, no zeroed tables (a sparse file reads as zeros). */
const MKFS_ARGS = ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1'];
/** A disk image younger than this may be mid-attach in another Warden process: the sweep leaves it. */
export const SWEEP_MIN_AGE_MS = 60_000;

export interface DiskPaths {
  /** The sparse file holding the sandbox's filesystem. */
  img: string;
  /** Where it is mounted; the container's layer directory is a symlink to it. */
  mnt: string;
  /** The layer directory it serves, so a sweep can tell a live disk from an orphan without asking Podman. */
  layerFile: string;
}

function isMountPoint(path: string): boolean {
  try {
    return statSync(path).dev !== statSync(dirname(path)).dev;
  } catch {
    return false;
  }
}

function findTool(name: string): string | null {
  return ['/usr/sbin', '/sbin', '/usr/bin', '/bin'].map((d) => join(d, name)).find((p) => existsSync(p)) ?? null;
}

let hostReason: string | null | undefined;

/** Why this host cannot bound disks at all (not root, no loop devices, no mkfs.ext4), or null when it can. */
export function hostDiskSupport(): string | null {
  if (hostReason !== undefined) return hostReason;
  const uid = process.getuid?.();
  if (process.platform !== 'linux') hostReason = 'disk limits need Linux loop devices';
  else if (uid !== 0) hostReason = `Warden runs as uid ${uid}: mounting a sandbox's disk needs root (and rootful Podman)`;
  else if (!existsSync('/dev/loop-control'))
    hostReason = 'this kernel has no loop devices (/dev/loop-control is missing; try `modprobe loop`)';
  else if (!findTool('mkfs.ext4')) hostReason = 'mkfs.ext4 is missing (`apt-get install e2fsprogs`)';
  else hostReason = null;
  return hostReason;
}

/** What `warden doctor` says: can this engine's store hold per-sandbox disks, and if not, why. */
export function storeDiskSupport(s: { rootless: boolean; driver: string | undefined; graphRoot: string | undefined }): string | null {
  const host = hostDiskSupport();
  if (host) return host;
  if (s.rootless) return 'Podman is rootless: its storage lives in a user namespace Warden cannot mount into';
  if (s.driver !== 'overlay') return `Podman's storage driver is ${s.driver ?? 'unknown'}, not overlay`;
  if (!s.graphRoot || !existsSync(join(s.graphRoot, 'overlay')))
    return `Podman's storage (${s.graphRoot ?? '?'}) is not on this machine (a remote socket?)`;
  return null;
}

export class DiskLimits {
  readonly dir: string;

  constructor(home: string) {
    this.dir = join(home, 'disks');
  }

  paths(id: string, dir = this.dir): DiskPaths {
    return { img: join(dir, `${id}.img`), mnt: join(dir, id), layerFile: join(dir, `${id}.layer`) };
  }

  /** Why this sandbox's disk cannot be bounded here, or null when it can. */
  unsupported(c: { rootless: boolean; driver: string | undefined; layerDir: string | undefined }): string | null {
    const host = hostDiskSupport();
    if (host) return host;
    if (c.rootless) return 'Podman is rootless: its storage lives in a user namespace Warden cannot mount into';
    if (c.driver !== 'overlay') return `Podman's storage driver is ${c.driver ?? 'unknown'}, not overlay`;
    if (!c.layerDir || !existsSync(c.layerDir) || !lstatSync(c.layerDir).isDirectory()) {
      return "the sandbox's layer directory is not on this machine (a remote Podman socket?)";
    }
    return null;
  }

  /** Moves a freshly created (not yet started) container's writable layer onto a filesystem of `bytes`. */
  async attach(id: string, layerDir: string, bytes: number): Promise<void> {
    const p = this.paths(id);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const owner = statSync(layerDir);
    try {
      const fd = openSync(p.img, 'wx', 0o600);
      try {
        ftruncateSync(fd, bytes);
      } finally {
        closeSync(fd);
      }
      // -d copies the layer as containers/storage made it (owners, modes), which user namespaces rely on.
      await run(findTool('mkfs.ext4') ?? 'mkfs.ext4', [...MKFS_ARGS, '-d', layerDir, p.img], { env: TOOL_ENV });
      writeFileSync(p.layerFile, layerDir, { mode: 0o600 });
      await this.mount(p);
      chmodSync(p.mnt, owner.mode & 0o7777);
      chownSync(p.mnt, owner.uid, owner.gid);
      if (existsSync(join(p.mnt, 'lost+found'))) rmdirSync(join(p.mnt, 'lost+found'));
      // Swap the directory for the symlink; the host copy goes, so nothing stale is left to start from.
      const fresh = `${layerDir}.warden-new`;
      const old = `${layerDir}.warden-old`;
      symlinkSync(p.mnt, fresh);
      renameSync(layerDir, old);
      try {
        renameSync(fresh, layerDir);
      } catch (err) {
        renameSync(old, layerDir);
        rmSync(fresh, { force: true });
        throw err;
      }
      rmSync(old, { recursive: true, force: true });
    } catch (err) {
      await this.release(p).catch(() => undefined);
      throw new WardenError(
        'E_ENGINE',
        `could not give sandbox ${id.slice(0, 12)} its own disk: ${(err as Error).message.split('\n')[0]}`,
        '`warden doctor` says whether this host can bound sandbox disks',
      );
    }
  }

  /** The disk of a sandbox, found through its layer's symlink (whichever WARDEN_HOME made it) or in this home. */
  locate(id: string, layerDir: string | undefined): DiskPaths | null {
    try {
      if (layerDir && lstatSync(layerDir).isSymbolicLink()) {
        const target = readlinkSync(layerDir);
        if (basename(target) === id) return this.paths(id, dirname(target));
      }
    } catch {
      // No layer directory: fall through to this home's own file.
    }
    const own = this.paths(id);
    return existsSync(own.img) ? own : null;
  }

  /** Before a start: the sandbox's disk, if it has one, mounted (after a host reboot it is not, and Podman would find its layer empty). */
  async ensureMountedFor(id: string, layerDir: string | undefined): Promise<void> {
    const disk = this.locate(id, layerDir);
    if (disk) await this.ensureMounted(disk);
  }

  /** Mounts a disk that is not mounted (after a host reboot), so Podman's start finds the layer. */
  async ensureMounted(p: DiskPaths): Promise<void> {
    if (isMountPoint(p.mnt)) return;
    await this.mount(p).catch((err: unknown) => {
      throw new WardenError(
        'E_ENGINE',
        `could not mount the sandbox's disk ${p.img}: ${(err as Error).message.split('\n')[0]}`,
        'check the file exists and `losetup -f` finds a free loop device',
      );
    });
  }

  private async mount(p: DiskPaths): Promise<void> {
    mkdirSync(p.mnt, { recursive: true, mode: 0o700 });
    await run('mount', ['-o', 'loop', p.img, p.mnt], { env: TOOL_ENV });
  }

  /** Unmounts and deletes a disk whose container is gone. */
  async release(p: DiskPaths): Promise<void> {
    // Lazy: the container is gone, so nothing needs the filesystem, and the journal flush need not be waited for.
    // Another release of the same disk (a sweep, a second destroy) may unmount it between the check and
    // the umount ("not mounted", seen in a loaded CI run): what counts is the check below, not umount's word.
    if (isMountPoint(p.mnt)) await run('umount', ['-l', p.mnt], { env: TOOL_ENV }).catch(() => undefined);
    // Never recurse into a filesystem that is still mounted: it would be the sandbox's data.
    if (isMountPoint(p.mnt))
      throw new WardenError('E_ENGINE', `the disk at ${p.mnt} is still mounted`, `unmount it with \`umount ${p.mnt}\``);
    rmSync(p.mnt, { recursive: true, force: true });
    rmSync(p.img, { force: true });
    rmSync(p.layerFile, { force: true });
  }

  /** Whether the container's layer still points at this disk (read from the file written at attach). */
  private isLive(p: DiskPaths): boolean {
    const layerDir = existsSync(p.layerFile) ? readFileSync(p.layerFile, 'utf8') : null;
    return (
      layerDir !== null && lstatSync(layerDir, { throwIfNoEntry: false })?.isSymbolicLink() === true && readlinkSync(layerDir) === p.mnt
    );
  }

  /** On Podman's remove event: releases the sandbox's disk here unless its layer still uses it; true when it did. */
  async releaseIfOrphan(id: string): Promise<boolean> {
    const p = this.paths(id);
    if (!existsSync(p.img) || this.isLive(p)) return false;
    await this.release(p);
    return true;
  }

  /** Releases disks whose container is gone (removed with the podman CLI); returns their ids. */
  async sweep(minAgeMs = SWEEP_MIN_AGE_MS, now = Date.now()): Promise<string[]> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const gone: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.img'))) {
      const id = name.slice(0, -'.img'.length);
      const p = this.paths(id);
      try {
        if (now - statSync(p.img).mtimeMs < minAgeMs) continue;
        if (this.isLive(p)) continue;
        await this.release(p);
        gone.push(id);
      } catch {
        // One stuck disk must not stop the others; the next sweep tries again.
      }
    }
    return gone;
  }
}
