// What changed in a sandbox's /workspace since its create, or since a run's first call: a baseline
// manifest is kept at those moments, and a diff is computed on demand against a fresh manifest of
// the workspace (which sends only the bytes of files that differ). Added, modified and deleted files;
// unified diffs for text, a summary for the rest. Taking a baseline never fails the call it precedes:
// a run without one says so when its diff is asked for.
import { WardenError } from '../../../shared/errors.js';
import type { WorkspaceDiff, WorkspaceFileChange, WorkspaceFileState } from '../../../shared/types/diff.js';
import type { PodmanConnection } from '../podman/connection.js';
import { BaselineStore, type Baseline } from './baseline-store.js';
import { asText, unifiedHunks } from './line-diff.js';
import { takeManifest, type Manifest, type ManifestEntry } from './manifest.js';

const octal = (mode: number) => mode.toString(8).padStart(3, '0');

export class WorkspaceChanges {
  readonly store: BaselineStore;
  /** Run baselines under way, so parallel first calls of one run take one. */
  private readonly taking = new Map<string, Promise<void>>();

  constructor(
    private readonly conn: PodmanConnection,
    home: string,
  ) {
    this.store = new BaselineStore(home);
  }

  /**
   * A new sandbox's baseline. An empty workspace (none bound from the host: the image's own
   * /workspace is empty) needs no look inside; a bound one is walked now, before anyone can change it.
   * Never fails the create: a sandbox without one says so when its diff is asked for. A reset or fork
   * (`restored`) has its /workspace unpacked from a snapshot already: it is walked too.
   */
  async atCreate(sandbox: { id: string; workspace: string | null }, restored = false): Promise<void> {
    try {
      const empty = sandbox.workspace === null && !restored;
      const manifest = empty ? { files: [], truncated: false } : await takeManifest(this.conn, sandbox.id);
      this.store.save('sandbox', sandbox.id, sandbox.id, manifest);
    } catch (err) {
      process.stderr.write(`warden: no workspace baseline for sandbox ${sandbox.id}: ${(err as Error).message}\n`);
    }
  }

  /** A reset's or fork's baseline: the restored tree as read from its archive, or (null) walked like a create's. */
  async atRestore(sandbox: { id: string; workspace: string | null }, restored: Manifest | null): Promise<void> {
    if (!restored) return this.atCreate(sandbox, true);
    try {
      this.store.save('sandbox', sandbox.id, sandbox.id, restored);
    } catch (err) {
      process.stderr.write(`warden: no workspace baseline for sandbox ${sandbox.id}: ${(err as Error).message}\n`);
    }
  }

  /** A run's baseline, once, before its first call that can change the workspace; a run that created the sandbox starts from its create. */
  atRunStart(runId: string, sandboxId: string, createdIt = false): Promise<void> {
    if (this.store.has('run', runId)) return Promise.resolve();
    const under = this.taking.get(runId);
    if (under) return under;
    const take = (async () => {
      const fromCreate = createdIt ? this.store.load('sandbox', sandboxId) : null;
      if (fromCreate) this.store.copy(fromCreate, 'run', runId);
      else this.store.save('run', runId, sandboxId, await takeManifest(this.conn, sandboxId));
    })()
      .catch((err: Error) => {
        process.stderr.write(`warden: no workspace baseline for run ${runId}: ${err.message}\n`);
      })
      .finally(() => this.taking.delete(runId));
    this.taking.set(runId, take);
    return take;
  }

  forget(sandboxId: string): void {
    this.store.forgetSandbox(sandboxId);
  }

  /** The diff of the sandbox's workspace now against a baseline (the sandbox's, or a run's). */
  async diff(kind: Baseline['kind'], id: string): Promise<WorkspaceDiff> {
    const base = this.store.load(kind, id);
    if (!base)
      throw new WardenError(
        'E_NOT_FOUND',
        `no workspace baseline for ${kind} ${id}`,
        kind === 'run'
          ? 'a run has one from its first exec or file write on a sandbox (or from the create of its sandbox); one that only read has none'
          : 'sandboxes created by this version of Warden have one from their create',
      );
    const known: Record<string, string> = {};
    for (const f of base.files) if (f.sha256) known[f.path] = f.sha256;
    const now = await takeManifest(this.conn, base.sandboxId, known);
    const before = new Map(base.files.map((f) => [f.path, f]));
    const files: WorkspaceFileChange[] = [];
    for (const after of now.files) {
      const was = before.get(after.path) ?? null;
      before.delete(after.path);
      if (was && was.type === after.type && was.sha256 === after.sha256 && was.mode === after.mode) continue;
      files.push(this.change(after.path, was, after));
    }
    for (const was of before.values()) files.push(this.change(was.path, was, null));
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const totals = { added: 0, modified: 0, deleted: 0 };
    for (const f of files) totals[f.change]++;
    return {
      sandboxId: base.sandboxId,
      base: { kind, id, takenAt: base.takenAt },
      files,
      totals,
      truncated: base.truncated || now.truncated,
    };
  }

  private change(path: string, was: WorkspaceFileState | null, now: ManifestEntry | null): WorkspaceFileChange {
    const state = (s: WorkspaceFileState | null) => (s ? { type: s.type, size: s.size, mode: s.mode, sha256: s.sha256 } : null);
    const change = !was ? 'added' : !now ? 'deleted' : 'modified';
    const out: WorkspaceFileChange = {
      path,
      change,
      before: state(was),
      after: state(now),
      diff: null,
      summary: '',
      linesAdded: 0,
      linesRemoved: 0,
    };
    const notes: string[] = [];
    if (was && now && was.mode !== now.mode) notes.push(`mode ${octal(was.mode)} → ${octal(now.mode)}`);
    if (was && now && was.type !== now.type) notes.push(`${was.type} → ${now.type}`);
    const contentChanged = !was || !now || was.sha256 !== now.sha256;
    if (contentChanged) {
      const beforeBytes = !was ? Buffer.alloc(0) : was.sha256 ? this.store.bytes(was.sha256) : null;
      const afterBytes = !now ? Buffer.alloc(0) : (now.data ?? null);
      const beforeText = beforeBytes && asText(beforeBytes);
      const afterText = afterBytes && asText(afterBytes);
      const text = beforeText !== null && afterText !== null ? unifiedHunks(beforeText, afterText) : null;
      if (text) {
        const link = (now ?? was)!.type === 'symlink' ? 'symlink target' : 'text';
        out.diff = `--- ${was ? `a/${path}` : '/dev/null'}\n+++ ${now ? `b/${path}` : '/dev/null'}\n${text.hunks}`;
        out.linesAdded = text.added;
        out.linesRemoved = text.removed;
        notes.push(`${link}, +${text.added} −${text.removed}`);
      } else {
        const why =
          beforeBytes === null || afterBytes === null
            ? 'contents not kept (too large for a text diff)'
            : beforeText === null || afterText === null
              ? 'binary'
              : 'too many changed lines for a text diff';
        notes.push(`${why}, ${was ? was.size : 0} → ${now ? now.size : 0} bytes`);
      }
    }
    out.summary = notes.join('; ');
    return out;
  }
}
