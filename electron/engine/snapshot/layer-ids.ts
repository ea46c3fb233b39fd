// Podman 4.3's commit of a sandbox with its own user namespace (--userns=auto, wall.ts) writes the
// layer with the *host* ids its files have on disk (0 inside is 2147549183 outside), not the ids the
// sandbox saw: a sandbox made from that image then sees every file it saved as owned by nobody, and
// Podman refuses to size its namespace for ids that large (tried). So right after the commit the new
// layer's files are given back the ids the sandbox saw, in Podman's store, the way the disk limit
// (podman/disk-limit.ts) works there: rootful Podman with its store on this machine. The layer is new
// and no container uses it yet; Podman mounts it as it is on disk, so that is what later sandboxes see.
import { chmodSync, lchownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HostRange } from '../podman/workspace-lease.js';

const inRange = (id: number, r: HostRange) => id >= r.first && id < r.first + r.size;

/** Maps every host id in the ranges back to the sandbox's own under `dir` (symlinks themselves); returns how many changed. */
export function unshiftLayerIds(dir: string, uids: HostRange, gids: HostRange): number {
  let changed = 0;
  const visit = (path: string, dev: number) => {
    const st = lstatSync(path);
    if (st.dev !== dev) return;
    const uid = inRange(st.uid, uids) ? st.uid - uids.first : st.uid;
    const gid = inRange(st.gid, gids) ? st.gid - gids.first : st.gid;
    if (uid !== st.uid || gid !== st.gid) {
      lchownSync(path, uid, gid);
      // chown clears set-id bits on files: a saved setuid program must stay one.
      if (!st.isSymbolicLink() && st.mode & 0o6000) chmodSync(path, st.mode & 0o7777);
      changed++;
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name), dev);
  };
  visit(dir, lstatSync(dir).dev);
  return changed;
}
