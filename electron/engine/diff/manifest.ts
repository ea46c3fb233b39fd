// A manifest of a sandbox's /workspace (path, type, size, mode, SHA-256 of every file), taken by a
// small python3 program run with exec, as the file API's helper is: the walk happens in the
// sandbox's own view, so no path from inside is ever opened on the host. It never follows a symlink
// (a link is listed with the digest of its target text), and sends the bytes of small files only
// where the caller does not already hold them (the baseline's digests go in on stdin), so a diff of
// a big workspace moves the changed files only. Its output is untrusted and parsed line by line.
import { WardenError } from '../../../shared/errors.js';
import type { WorkspaceFileState } from '../../../shared/types/diff.js';
import type { PodmanConnection } from '../podman/connection.js';
import { collectExec } from '../podman/exec-session.js';

/** Files up to this size keep their bytes (for text diffs); larger ones are compared by digest. */
export const DATA_MAX_BYTES = 128 * 1024;
/** Bytes of file contents one manifest carries at most; files past it are compared by digest. */
export const DATA_TOTAL_BYTES = 16 * 1024 * 1024;
/** Files one manifest lists at most. */
export const MAX_FILES = 50_000;
const TIMEOUT_MS = 120_000;

const WALKER = String.raw`
import os, sys, stat, json, hashlib, base64
data_max, budget, max_files = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
known = json.loads(sys.stdin.read() or "{}")
out = sys.stdout
count = 0
def emit(rec): out.write(json.dumps(rec) + "\n")
def walk(rel):
    global count, budget
    full = "/workspace" + ("/" + rel if rel else "")
    try:
        with os.scandir(full) as it: ents = sorted(it, key=lambda e: e.name)
    except OSError as e:
        if rel: emit({"path": rel, "type": "unreadable", "mode": 0, "size": 0, "sha256": None})
        return
    for e in ents:
        p = rel + "/" + e.name if rel else e.name
        try: st = e.stat(follow_symlinks=False)
        except OSError: continue
        m = st.st_mode
        if stat.S_ISDIR(m):
            walk(p); continue
        count += 1
        if count > max_files:
            emit({"truncated": True}); out.flush(); os._exit(0)
        rec = {"path": p, "mode": stat.S_IMODE(m), "size": st.st_size, "sha256": None}
        data = None
        if stat.S_ISLNK(m):
            rec["type"] = "symlink"
            try: data = os.fsencode(os.readlink(full + "/" + e.name))
            except OSError: data = b""
            rec["size"] = len(data); rec["sha256"] = hashlib.sha256(data).hexdigest()
        elif stat.S_ISREG(m):
            rec["type"] = "file"
            try: fd = os.open(full + "/" + e.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                rec["type"] = "unreadable"; emit(rec); continue
            h = hashlib.sha256(); keep = []; n = 0
            with os.fdopen(fd, "rb") as f:
                while True:
                    chunk = f.read(1 << 20)
                    if not chunk: break
                    h.update(chunk); n += len(chunk)
                    if n <= data_max: keep.append(chunk)
            rec["size"] = n; rec["sha256"] = h.hexdigest()
            if n <= data_max: data = b"".join(keep)
        else:
            rec["type"] = "other"
        if data is not None and known.get(p) != rec["sha256"] and len(data) <= budget:
            budget -= len(data); rec["data"] = base64.b64encode(data).decode()
        emit(rec)
walk("")
`;

export interface ManifestEntry extends WorkspaceFileState {
  path: string;
  /** The bytes, when small enough and not already known to the caller. */
  data?: Buffer;
}

export interface Manifest {
  files: ManifestEntry[];
  truncated: boolean;
}

const TYPES = new Set(['file', 'symlink', 'other', 'unreadable']);

/** One line of the walker's output, or null when it is not one (hostile or cut short). */
function entryOf(line: string): ManifestEntry | { truncated: true } | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (raw.truncated === true) return { truncated: true };
  const { path, type, size, mode, sha256, data } = raw;
  if (typeof path !== 'string' || !path || typeof type !== 'string' || !TYPES.has(type)) return null;
  if (typeof size !== 'number' || typeof mode !== 'number') return null;
  if (sha256 !== null && (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))) return null;
  return {
    path,
    type: type as ManifestEntry['type'],
    size,
    mode,
    sha256,
    ...(typeof data === 'string' ? { data: Buffer.from(data, 'base64') } : {}),
  };
}

/** The manifest of /workspace now; `known` (path → digest) are files whose bytes the caller holds already. */
export async function takeManifest(conn: PodmanConnection, containerId: string, known: Record<string, string> = {}): Promise<Manifest> {
  const r = await collectExec(conn, containerId, {
    cmd: ['python3', '-I', '-S', '-c', WALKER, String(DATA_MAX_BYTES), String(DATA_TOTAL_BYTES), String(MAX_FILES)],
    stdin: JSON.stringify(known),
    timeoutMs: TIMEOUT_MS,
    outputLimitBytes: DATA_TOTAL_BYTES * 2 + MAX_FILES * 512,
  });
  if (r.exitCode === 127 || r.exitCode === 126)
    throw new WardenError(
      'E_ENGINE',
      'a workspace manifest needs python3 in the sandbox image',
      'use the default image or one with python3',
    );
  if (r.timedOut) throw new WardenError('E_TIMEOUT', `the workspace manifest did not finish within ${TIMEOUT_MS / 1000}s`);
  if (r.exitCode !== 0)
    throw new WardenError('E_ENGINE', `the workspace manifest failed (exit ${r.exitCode}): ${r.stderr.toString('utf8').slice(0, 300)}`);
  const files: ManifestEntry[] = [];
  let truncated = r.stdout.length > 0 && r.stdout[r.stdout.length - 1] !== 0x0a;
  for (const line of r.stdout.toString('utf8').split('\n')) {
    if (!line) continue;
    const e = entryOf(line);
    if (e === null) truncated = true;
    else if ('truncated' in e) truncated = true;
    else files.push(e);
  }
  return { files, truncated };
}
