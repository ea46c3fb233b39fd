// A snapshot is refused, before anything is written, when its archive could eat into the host's
// reserve: the archive may take up to its bound (twice the sandbox's disk, whatever the sandbox's own
// `tar` claims), so an agent looping on snapshots (manual ones, or a policy's automatic ones) meets
// this wall before the host's disk is full. The count caps per sandbox and per agent bound how many;
// this bounds what they may cost the disk WARDEN_HOME is on. (The engine's image layers land in
// Podman's store, usually the same disk; they are not counted ahead, only through the reserve.)
import { mkdirSync, statfsSync } from 'node:fs';
import { WardenError } from '../../../shared/errors.js';
import { formatByteSize } from '../../../shared/types/units.js';

/** Kept free whatever a snapshot needs: 2 GiB, or 5% of the filesystem when that is more. */
export function reserveOf(totalBytes: number): number {
  return Math.max(2 * 1024 ** 3, Math.floor(totalBytes * 0.05));
}

/** Throws E_TOO_LARGE when `need` bytes written under `dir` would eat into the reserve. */
export function ensureRoomFor(dir: string, need: number, what: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  const reserve = reserveOf(fs.blocks * fs.bsize);
  if (free - need >= reserve) return;
  throw new WardenError(
    'E_TOO_LARGE',
    `not enough free disk for ${what}: it may take up to ${formatByteSize(need)}, ${formatByteSize(free)} is free and ${formatByteSize(reserve)} stays free for the host`,
    'remove snapshots that are no longer needed (`warden sandbox snapshots NAME`, then `warden sandbox snapshot-rm NAME TAG`), or free space on the disk that holds WARDEN_HOME',
  );
}
