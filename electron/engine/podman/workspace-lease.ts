// A host workspace lent to a sandbox whose root is an unprivileged host uid (wall.ts). While the
// sandbox has it, Podman chowns it to the sandbox's root (the `U` mount option, at every start), so
// the agent can write without any capability. When the sandbox is removed, everything owned by the
// sandbox's id range goes back to the workspace's owner, recorded in a label at create; files the
// agent made are then the owner's like any other.
import { lchownSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Owner {
  uid: number;
  gid: number;
}

export function workspaceOwner(dir: string): Owner {
  const { uid, gid } = statSync(dir);
  return { uid, gid };
}

export function formatOwner(owner: Owner): string {
  return `${owner.uid}:${owner.gid}`;
}

export function parseOwner(label: string | undefined): Owner | null {
  const m = /^(\d+):(\d+)$/.exec(label ?? '');
  return m ? { uid: Number(m[1]), gid: Number(m[2]) } : null;
}

/** One line of inspect's IDMappings ("container:host:size"): the host range a sandbox's ids live in. */
export interface HostRange {
  first: number;
  size: number;
}

export function hostRange(mappings: string[] | undefined): HostRange | null {
  const m = /^0:(\d+):(\d+)$/.exec(mappings?.[0] ?? '');
  return m ? { first: Number(m[1]), size: Number(m[2]) } : null;
}

const inRange = (id: number, r: HostRange) => id >= r.first && id < r.first + r.size;

/**
 * Gives back what the sandbox owns under `dir` (symlinks themselves, never their targets; no
 * crossing into other filesystems the agent could not have written anyway). Returns how many
 * entries changed hands. Errors on single entries are skipped: a file the host user removed meanwhile
 * is not a failure of the removal.
 */
export function returnWorkspace(dir: string, uids: HostRange, gids: HostRange, owner: Owner): number {
  let changed = 0;
  const visit = (path: string, dev: number) => {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      return;
    }
    if (st.dev !== dev) return;
    const uid = inRange(st.uid, uids) ? owner.uid : st.uid;
    const gid = inRange(st.gid, gids) ? owner.gid : st.gid;
    if (uid !== st.uid || gid !== st.gid) {
      try {
        lchownSync(path, uid, gid);
        changed++;
      } catch {
        /* gone or not ours to change */
      }
    }
    if (st.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(path);
      } catch {
        return;
      }
      for (const name of names) visit(join(path, name), dev);
    }
  };
  visit(dir, lstatSync(dir).dev);
  return changed;
}
