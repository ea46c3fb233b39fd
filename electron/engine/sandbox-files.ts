// The engine's file verbs in a sandbox's /workspace: the sandbox as the caller resolved it, the path's
// components as it checked them (the gateway's file-call.ts). Each read, write, listing, mkdir, removal and move is recorded
// in the ledger with its size and digest, named after the call it served; kept apart from engine.ts
// so the engine reads as its method map.
import { createHash } from 'node:crypto';
import type { DirMade, FileList, FileMoved, FileWritten } from '../../shared/types/api.js';
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import type { PodmanConnection } from './podman/connection.js';
import { listDirIn, makeDirIn, moveIn, readFileIn, removeIn, writeFileIn } from './podman/file-helper.js';
import { workspacePath } from './podman/workspace-path.js';
import { listTreeIn, MAX_TREE_DEPTH, removeTreeIn, type TreeEntry } from './podman/file-tree.js';

/** Which call of which run a file entry belongs to (the gateway's), first in its payload. */
export interface CallRef {
  runId: string;
  callId: string;
}

/** Writes one ledger entry for a sandbox, durable when it resolves (the engine's, with its actor). */
export type RecordEntry = (sandboxId: string, kind: string, payload: unknown) => Promise<void>;

export class SandboxFiles {
  constructor(
    private readonly conn: PodmanConnection,
    private readonly record: RecordEntry,
  ) {}

  async readFile(sandbox: SandboxInfo, comps: string[], maxBytes: number, call?: CallRef): Promise<Buffer> {
    const data = await readFileIn(this.conn, sandbox.id, comps, maxBytes);
    const sha256 = createHash('sha256').update(data).digest('hex');
    await this.record(sandbox.id, 'file.read', { ...call, path: workspacePath(comps), bytes: data.length, sha256 });
    return data;
  }

  async writeFile(sandbox: SandboxInfo, comps: string[], data: Buffer, call?: CallRef): Promise<FileWritten> {
    const written = await writeFileIn(this.conn, sandbox.id, comps, data);
    const path = workspacePath(comps);
    await this.record(sandbox.id, 'file.written', { ...call, path, bytes: written.bytes, sha256: written.sha256 });
    return { path, bytes: written.bytes, sha256: written.sha256 };
  }

  /** A directory with its missing parents (inside /workspace, never through a symlink). */
  async makeDir(sandbox: SandboxInfo, comps: string[], call?: CallRef): Promise<DirMade> {
    const created = await makeDirIn(this.conn, sandbox.id, comps);
    const path = workspacePath(comps);
    await this.record(sandbox.id, 'file.dir-made', { ...call, path, created });
    return { path, created };
  }

  /** A file, a symlink or an empty directory. */
  async remove(sandbox: SandboxInfo, comps: string[], call?: CallRef): Promise<{ path: string }> {
    const type = await removeIn(this.conn, sandbox.id, comps);
    const path = workspacePath(comps);
    await this.record(sandbox.id, 'file.removed', { ...call, path, type });
    return { path };
  }

  /** Everything under a directory down to `depth` levels (no record: what a call checks before it acts). */
  walk(sandbox: SandboxInfo, comps: string[], depth = MAX_TREE_DEPTH): Promise<TreeEntry[]> {
    return listTreeIn(this.conn, sandbox.id, comps, depth);
  }

  /** A listing `depth` levels down; `visible` (by full path) as for one level. */
  async listTree(sandbox: SandboxInfo, comps: string[], depth: number, visible: (path: string) => boolean, call?: CallRef) {
    const path = workspacePath(comps);
    const entries = (await listTreeIn(this.conn, sandbox.id, comps, depth)).filter((e) => visible(`${path}/${e.path}`));
    await this.record(sandbox.id, 'file.listed', { ...call, path, depth, entries: entries.length });
    return { path, entries };
  }

  /** A directory and everything in it. */
  async removeTree(sandbox: SandboxInfo, comps: string[], call?: CallRef): Promise<{ path: string }> {
    const entries = await removeTreeIn(this.conn, sandbox.id, comps);
    const path = workspacePath(comps);
    await this.record(sandbox.id, 'file.removed', { ...call, path, type: 'dir', entries });
    return { path };
  }

  /** A file or symlink (a directory too, with `dirs`) to another path in the workspace. */
  async move(sandbox: SandboxInfo, comps: string[], to: string[], call?: CallRef, dirs = false): Promise<FileMoved> {
    const entry = await moveIn(this.conn, sandbox.id, comps, to, dirs);
    const path = workspacePath(to);
    await this.record(sandbox.id, 'file.moved', { ...call, path: workspacePath(comps), to: path, type: entry.type });
    return { path, entry };
  }

  /** The directory's entries that `visible` lets through (by full path): the record counts only those. */
  async listDir(sandbox: SandboxInfo, comps: string[], visible: (path: string) => boolean = () => true, call?: CallRef): Promise<FileList> {
    const path = workspacePath(comps);
    const entries = (await listDirIn(this.conn, sandbox.id, comps)).filter((e) => visible(`${path}/${e.name}`));
    await this.record(sandbox.id, 'file.listed', { ...call, path, entries: entries.length });
    return { path, entries };
  }
}
