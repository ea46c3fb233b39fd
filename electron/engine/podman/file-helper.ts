// File access inside a sandbox's /workspace, done by a small python3 helper run with exec, so the
// path is resolved by the sandbox's own kernel view: from an fd on /workspace, each component is
// opened relative to its parent with O_NOFOLLOW (openat), never by a path string. A symlink anywhere
// (first, middle, last, dangling, chained) is refused, as are hard-linked and special files; a
// directory swapped for a symlink after a check cannot redirect us because we hold fds, not names.
// Writes go to a temp file in the same directory and are renamed over the entry (rename never
// follows a symlink). The script is passed in argv and never stored in the sandbox, where the
// agent could change it. Where the sandbox's runner is up, it does the same in C instead
// (resources/runner/files.c, same answers), and this helper is the fallback.
import { createHash } from 'node:crypto';
import { WardenError, type ErrorCode } from '../../../shared/errors.js';
import type { FileEntry } from '../../../shared/types/api.js';
import type { PodmanConnection } from './connection.js';
import { collectExec } from './exec-session.js';
import { runnersOf } from '../runner/runner-registry.js';
import { listThroughRunner, readThroughRunner, writeThroughRunner } from '../runner/runner-files.js';

const HELPER = String.raw`
import os, sys, stat, json, base64, errno
op, limit, comps = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
NF = os.O_NOFOLLOW | os.O_CLOEXEC
DIRF = os.O_RDONLY | os.O_DIRECTORY | NF
def fail(code, msg):
    sys.stderr.write(json.dumps({"code": code, "message": msg})); sys.stderr.flush(); os._exit(3)
def where(i): return "/workspace/" + "/".join(comps[:i + 1])
def entry_type(st):
    m = st.st_mode
    return "dir" if stat.S_ISDIR(m) else "file" if stat.S_ISREG(m) else "symlink" if stat.S_ISLNK(m) else "other"
def kind(parent, name):
    try: st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError: return None
    return st
def opendir(parent, i, create=False):
    name = comps[i]
    try: return os.open(name, DIRF, dir_fd=parent)
    except OSError as e:
        st = kind(parent, name)
        if st is not None and stat.S_ISLNK(st.st_mode): fail("E_POLICY_DENIED", where(i) + " is a symlink; the file API does not follow symlinks")
        if e.errno == errno.ENOENT and create:
            try: os.mkdir(name, 0o755, dir_fd=parent)
            except FileExistsError: pass
            return opendir(parent, i, False)
        if e.errno == errno.ENOENT: fail("E_NOT_FOUND", where(i) + " does not exist")
        if e.errno == errno.ENOTDIR: fail("E_BAD_INPUT", where(i) + " is not a directory")
        if e.errno == errno.EACCES: fail("E_POLICY_DENIED", where(i) + ": permission denied")
        fail("E_BAD_INPUT", where(i) + ": " + e.strerror)
# A write takes all of its stdin before any check can refuse it: a helper that exits while Warden
# is still sending would have the exec's stream cut under its own answer (seen under load).
data = base64.b64decode(sys.stdin.buffer.read()) if op == "write" else None
try: root = os.open("/workspace", DIRF)
except OSError as e: fail("E_NOT_FOUND", "/workspace is missing or is not a plain directory in this sandbox")
d = root
last = len(comps) - 1
if op == "list":
    for i in range(len(comps)): d = opendir(d, i)
    out = []
    with os.scandir(d) as it:
        for e in it:
            st = e.stat(follow_symlinks=False)
            m = st.st_mode
            t = "dir" if stat.S_ISDIR(m) else "file" if stat.S_ISREG(m) else "symlink" if stat.S_ISLNK(m) else "other"
            out.append({"name": e.name, "type": t, "size": st.st_size, "mode": stat.S_IMODE(m), "mtime": st.st_mtime})
            if len(out) >= limit: break
    sys.stdout.write(json.dumps(out)); sys.exit(0)
if op == "mkdir":
    made = False
    for i in range(len(comps)):
        existed = kind(d, comps[i]) is not None
        d = opendir(d, i, create=True)
        made = made or not existed
    sys.stdout.write(json.dumps({"created": made})); sys.exit(0)
def entry(parent, name):
    st = os.stat(name, dir_fd=parent, follow_symlinks=False); m = st.st_mode
    t = "dir" if stat.S_ISDIR(m) else "file" if stat.S_ISREG(m) else "symlink" if stat.S_ISLNK(m) else "other"
    return {"name": name, "type": t, "size": st.st_size, "mode": stat.S_IMODE(m), "mtime": st.st_mtime}
# remove and move act on the last component itself (unlinkat, renameat): a symlink there is the link, never its target.
if op in ("remove", "move", "movedir"):
    split = len(comps) if op == "remove" else limit
    src, dst = comps[:split], comps[split:]
    if not src or (op != "remove" and not dst): fail("E_BAD_INPUT", "name a path inside /workspace")
    ds = root
    for i in range(len(src) - 1): ds = opendir(ds, i)
    sname = src[-1]
    st = kind(ds, sname)
    if st is None: fail("E_NOT_FOUND", where(len(src) - 1) + " does not exist")
    if op == "remove":
        try:
            if stat.S_ISDIR(st.st_mode): os.rmdir(sname, dir_fd=ds)
            else: os.unlink(sname, dir_fd=ds)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST): fail("E_BAD_INPUT", where(len(src) - 1) + " is a directory that is not empty; the file API removes files and empty directories")
            fail("E_POLICY_DENIED", where(len(src) - 1) + ": " + e.strerror)
        sys.stdout.write(json.dumps({"type": entry_type(st)})); sys.exit(0)
    if stat.S_ISDIR(st.st_mode) and op == "move": fail("E_BAD_INPUT", where(len(src) - 1) + " is a directory; the file API moves files and symlinks")
    comps = dst; dd = root
    for i in range(len(dst) - 1): dd = opendir(dd, i)
    dname = dst[-1]
    dt = kind(dd, dname)
    if dt is not None and stat.S_ISDIR(dt.st_mode): fail("E_BAD_INPUT", where(len(dst) - 1) + " is a directory")
    try: os.rename(sname, dname, src_dir_fd=ds, dst_dir_fd=dd)
    except OSError as e: fail("E_POLICY_DENIED", where(len(dst) - 1) + ": " + e.strerror)
    sys.stdout.write(json.dumps(entry(dd, dname))); sys.exit(0)
if last < 0: fail("E_BAD_INPUT", "/workspace is a directory")
for i in range(last): d = opendir(d, i, create=(op == "write"))
name = comps[last]
def check(st):
    if stat.S_ISLNK(st.st_mode): fail("E_POLICY_DENIED", where(last) + " is a symlink; the file API does not follow symlinks")
    if stat.S_ISDIR(st.st_mode): fail("E_BAD_INPUT", where(last) + " is a directory")
    if not stat.S_ISREG(st.st_mode): fail("E_POLICY_DENIED", where(last) + " is not a regular file")
    if st.st_nlink > 1: fail("E_POLICY_DENIED", where(last) + " has other hard links; the file API refuses hard-linked files")
if op == "read":
    try: fd = os.open(name, os.O_RDONLY | NF | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=d)
    except OSError as e:
        st = kind(d, name)
        if st is not None: check(st)
        if e.errno == errno.ENOENT: fail("E_NOT_FOUND", where(last) + " does not exist")
        fail("E_POLICY_DENIED", where(last) + ": " + e.strerror)
    st = os.fstat(fd); check(st)
    if st.st_size > limit: fail("E_TOO_LARGE", where(last) + " is %d bytes, more than the %d the file API reads" % (st.st_size, limit))
    w = sys.stdout.buffer; n = 0
    while True:
        b = os.read(fd, 1 << 16)
        if not b: break
        n += len(b)
        if n > limit: fail("E_TOO_LARGE", where(last) + " grew past the read limit")
        w.write(b)
    w.flush(); sys.exit(0)
if op == "write":
    st = kind(d, name)
    mode = 0o644
    if st is not None: check(st); mode = stat.S_IMODE(st.st_mode)
    tmp = ".warden-%s.tmp" % os.urandom(6).hex()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NF, mode, dir_fd=d)
    try:
        v = memoryview(data)
        while v: v = v[os.write(fd, v):]
        os.close(fd)
        os.rename(tmp, name, src_dir_fd=d, dst_dir_fd=d)
    except OSError as e:
        try: os.unlink(tmp, dir_fd=d)
        except OSError: pass
        if e.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST): fail("E_BAD_INPUT", where(last) + " is a directory")
        fail("E_POLICY_DENIED", where(last) + ": " + e.strerror)
    sys.stdout.write(json.dumps({"bytes": len(data)})); sys.exit(0)
fail("E_BAD_INPUT", "unknown op " + op)
`;

const HELPER_EXIT_ERROR = 3;
const HELPER_TIMEOUT_MS = 60_000;
const MAX_LIST_ENTRIES = 10_000;

interface HelperRun {
  stdout: Buffer;
}

/** One run of a python program over /workspace (this file's HELPER, or file-tree.ts's), its refusals as WardenErrors. */
export async function runHelper(
  conn: PodmanConnection,
  containerId: string,
  op: string,
  limit: number,
  comps: string[],
  stdin?: string,
  script = HELPER,
): Promise<HelperRun> {
  const result = await collectExec(conn, containerId, {
    cmd: ['python3', '-I', '-S', '-c', script, op, String(limit), ...comps],
    timeoutMs: HELPER_TIMEOUT_MS,
    outputLimitBytes: op === 'list' ? 8 * 1024 * 1024 : limit + 64 * 1024,
    ...(stdin !== undefined ? { stdin } : {}),
  });
  if (result.exitCode === 0) return { stdout: result.stdout };
  if (result.exitCode === HELPER_EXIT_ERROR) {
    let info: { code?: string; message?: string } = {};
    try {
      info = JSON.parse(result.stderr.toString('utf8')) as typeof info;
    } catch {
      // fall through to the generic error
    }
    if (info.code && info.message) throw new WardenError(info.code as ErrorCode, info.message);
  }
  if (result.exitCode === 127 || result.exitCode === 126) {
    throw new WardenError(
      'E_ENGINE',
      'the file API needs python3 in the sandbox image',
      'use the default image (localhost/warden-sandbox) or one with python3',
    );
  }
  if (result.timedOut) throw new WardenError('E_TIMEOUT', `the file ${op} did not finish within ${HELPER_TIMEOUT_MS / 1000}s`);
  throw new WardenError(
    'E_ENGINE',
    `the file ${op} failed in the sandbox (exit ${result.exitCode}): ${result.stderr.toString('utf8').slice(0, 300)}`,
  );
}

export async function readFileIn(conn: PodmanConnection, containerId: string, comps: string[], maxBytes: number): Promise<Buffer> {
  const runner = await runnersOf(conn).channelFor(containerId);
  if (runner) return readThroughRunner(runner, comps, maxBytes);
  return (await runHelper(conn, containerId, 'read', maxBytes, comps)).stdout;
}

export async function writeFileIn(
  conn: PodmanConnection,
  containerId: string,
  comps: string[],
  data: Buffer,
): Promise<{ bytes: number; sha256: string }> {
  const runner = await runnersOf(conn).channelFor(containerId);
  if (runner) await writeThroughRunner(runner, comps, data);
  else await runHelper(conn, containerId, 'write', 1024, comps, data.toString('base64'));
  return { bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
}

/** mkdir -p under /workspace by the helper (the runner has no mkdir): false when it was all there. */
export async function makeDirIn(conn: PodmanConnection, containerId: string, comps: string[]): Promise<boolean> {
  const run = await runHelper(conn, containerId, 'mkdir', 0, comps);
  return (JSON.parse(run.stdout.toString('utf8')) as { created: boolean }).created === true;
}

/** Removes a file, a symlink (the link) or an empty directory; answers what it was. */
export async function removeIn(conn: PodmanConnection, containerId: string, comps: string[]): Promise<FileEntry['type']> {
  const run = await runHelper(conn, containerId, 'remove', 0, comps);
  return (JSON.parse(run.stdout.toString('utf8')) as { type: FileEntry['type'] }).type;
}

/** Renames a file or symlink (a directory too, with `dirs`) to `to`, whose directory must exist; a file there is replaced. */
export async function moveIn(conn: PodmanConnection, containerId: string, from: string[], to: string[], dirs = false): Promise<FileEntry> {
  const run = await runHelper(conn, containerId, dirs ? 'movedir' : 'move', from.length, [...from, ...to]);
  const e = JSON.parse(run.stdout.toString('utf8')) as Omit<FileEntry, 'mtime'> & { mtime: number };
  return { ...e, mtime: new Date(e.mtime * 1000).toISOString() };
}

export async function listDirIn(conn: PodmanConnection, containerId: string, comps: string[]): Promise<FileEntry[]> {
  const runner = await runnersOf(conn).channelFor(containerId);
  if (runner) {
    return (await listThroughRunner(runner, comps, MAX_LIST_ENTRIES))
      .map(({ mtimeMs, ...e }) => ({ ...e, mtime: new Date(mtimeMs).toISOString() }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
  const run = await runHelper(conn, containerId, 'list', MAX_LIST_ENTRIES, comps);
  const raw = JSON.parse(run.stdout.toString('utf8')) as Array<Omit<FileEntry, 'mtime'> & { mtime: number }>;
  return raw.map((e) => ({ ...e, mtime: new Date(e.mtime * 1000).toISOString() })).sort((a, b) => a.name.localeCompare(b.name));
}
