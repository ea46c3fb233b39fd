// Whole trees under /workspace, for the E2B door's files.list with depth > 1 and files.remove of a
// directory with content: done by a small python3 program run with exec, like the file API's helper
// (file-helper.ts), and with the same rules. Every directory is opened relative to its parent's fd
// with O_NOFOLLOW | O_DIRECTORY, never by a path string, so a symlink is listed as a link and never
// entered, and a directory swapped for a symlink mid-walk is refused (ELOOP), not followed out of
// /workspace. A removal unlinks each name in the directory it holds (unlinkat): a symlink is removed
// as the link. Each walk is bounded in depth and in entries; past either, the call is refused, not
// half-done (a removal checks its tree first; see the gateway's file-call.ts for the path rules).
import type { FileEntry } from '../../../shared/types/api.js';
import type { PodmanConnection } from './connection.js';
import { runHelper } from './file-helper.js';

/** Levels a listing or removal goes down at most. */
export const MAX_TREE_DEPTH = 32;
/** Entries one listing or removal covers at most. */
export const MAX_TREE_ENTRIES = 10_000;

const TREE = String.raw`
import os, sys, stat, json, errno
op, limit, depth, comps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
NF = os.O_NOFOLLOW | os.O_CLOEXEC
DIRF = os.O_RDONLY | os.O_DIRECTORY | NF
def fail(code, msg):
    sys.stderr.write(json.dumps({"code": code, "message": msg})); sys.stderr.flush(); os._exit(3)
def where(rel): return "/workspace/" + rel
def kind(m): return "dir" if stat.S_ISDIR(m) else "file" if stat.S_ISREG(m) else "symlink" if stat.S_ISLNK(m) else "other"
def opendir(parent, name, rel):
    try: return os.open(name, DIRF, dir_fd=parent)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            try: st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError: st = None
            if st is not None and stat.S_ISLNK(st.st_mode): fail("E_POLICY_DENIED", where(rel) + " is a symlink; the file API does not follow symlinks")
            fail("E_BAD_INPUT", where(rel) + " is not a directory")
        if e.errno == errno.ENOENT: fail("E_NOT_FOUND", where(rel) + " does not exist")
        fail("E_POLICY_DENIED", where(rel) + ": " + e.strerror)
try: d = os.open("/workspace", DIRF)
except OSError: fail("E_NOT_FOUND", "/workspace is missing or is not a plain directory in this sandbox")
parent = None
for i, c in enumerate(comps):
    parent = d
    d = opendir(d, c, "/".join(comps[:i + 1]))
base = "/".join(comps)
out = []
def walk(fd, rel, level):
    with os.scandir(fd) as it: ents = sorted(it, key=lambda e: e.name)
    for e in ents:
        st = e.stat(follow_symlinks=False)
        p = rel + "/" + e.name if rel else e.name
        out.append({"path": p, "name": e.name, "type": kind(st.st_mode), "size": st.st_size, "mode": stat.S_IMODE(st.st_mode), "mtime": st.st_mtime})
        if len(out) > limit: fail("E_TOO_LARGE", "more than %d entries under %s" % (limit, where(base)))
        if stat.S_ISDIR(st.st_mode) and level < depth:
            child = opendir(fd, e.name, (base + "/" if base else "") + p)
            try: walk(child, p, level + 1)
            finally: os.close(child)
        elif stat.S_ISDIR(st.st_mode) and op == "rmtree": fail("E_TOO_LARGE", where(base) + " is more than %d levels deep" % depth)
if op == "tree":
    walk(d, "", 1); sys.stdout.write(json.dumps(out)); sys.exit(0)
# rmtree: every name under the directory held by fd, children first, then the directory itself.
def rm(fd, level):
    with os.scandir(fd) as it: names = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    for name, isdir in names:
        if isdir:
            if level >= depth: fail("E_TOO_LARGE", where(base) + " is more than %d levels deep" % depth)
            child = opendir(fd, name, base + "/" + name)
            try: rm(child, level + 1)
            finally: os.close(child)
            os.rmdir(name, dir_fd=fd)
        else: os.unlink(name, dir_fd=fd)
if op == "rmtree":
    if parent is None: fail("E_BAD_INPUT", "/workspace itself cannot be removed")
    walk(d, "", 1)
    try: rm(d, 1); os.rmdir(comps[-1], dir_fd=parent)
    except OSError as e: fail("E_POLICY_DENIED", where(base) + " could not be removed whole: " + e.strerror)
    sys.stdout.write(json.dumps({"entries": len(out)})); sys.exit(0)
fail("E_BAD_INPUT", "unknown op " + op)
`;

export interface TreeEntry extends FileEntry {
  /** Relative to the listed directory. */
  path: string;
}

/** Every entry under the directory down to `depth` levels (1: its own entries), sorted by path; symlinks listed, never entered. */
export async function listTreeIn(conn: PodmanConnection, containerId: string, comps: string[], depth: number): Promise<TreeEntry[]> {
  const run = await runHelper(conn, containerId, 'tree', MAX_TREE_ENTRIES, [String(depth), ...comps], undefined, TREE);
  const raw = JSON.parse(run.stdout.toString('utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error('the tree listing was not a list');
  return raw
    .filter(
      (e): e is Omit<TreeEntry, 'mtime'> & { mtime: number } =>
        typeof e === 'object' && e !== null && typeof (e as TreeEntry).path === 'string' && typeof (e as TreeEntry).name === 'string',
    )
    .map((e) => ({ ...e, mtime: new Date(e.mtime * 1000).toISOString() }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Removes a directory and everything under it (bounded as a listing is); answers how many entries went with it. */
export async function removeTreeIn(conn: PodmanConnection, containerId: string, comps: string[]): Promise<number> {
  const run = await runHelper(conn, containerId, 'rmtree', MAX_TREE_ENTRIES, [String(MAX_TREE_DEPTH), ...comps], undefined, TREE);
  return (JSON.parse(run.stdout.toString('utf8')) as { entries: number }).entries;
}
