// Baselines of workspaces under WARDEN_HOME/baselines: a manifest per sandbox (taken at create) and
// per run (at its first call), and the bytes of the small files in them, by digest, for text
// diffs later. Files are the owner's alone (workspaces hold an agent's work). A baseline's bytes are
// untrusted input kept as data: named only by their SHA-256, never by a path from the sandbox.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkspaceFileState } from '../../../shared/types/diff.js';
import { DATA_MAX_BYTES, DATA_TOTAL_BYTES, MAX_FILES, type Manifest } from './manifest.js';

export interface Baseline {
  kind: 'sandbox' | 'run';
  id: string;
  sandboxId: string;
  takenAt: string;
  truncated: boolean;
  files: Array<WorkspaceFileState & { path: string }>;
}

const SAFE_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Run baselines kept per sandbox. Every new run key may add up to DATA_TOTAL_BYTES of new bytes, and
 * an agent picks its run keys: past this many, the oldest runs' baselines go (their diff says none).
 */
export const MAX_RUN_BASELINES = 16;

export class BaselineStore {
  private readonly dir: string;
  private readonly blobs: string;

  constructor(home: string) {
    this.dir = join(home, 'baselines');
    this.blobs = join(this.dir, 'blobs');
  }

  private file(kind: Baseline['kind'], id: string): string {
    if (!SAFE_ID.test(id)) throw new Error(`not a ${kind} id: ${id}`);
    return join(this.dir, `${kind}-${id}.json`);
  }

  /** Writes the manifest and the bytes it carries (each checked against its digest); atomic per file. */
  save(kind: Baseline['kind'], id: string, sandboxId: string, manifest: Manifest, takenAt = new Date().toISOString()): Baseline {
    mkdirSync(this.blobs, { recursive: true, mode: 0o700 });
    // The walker runs in the sandbox, which may replace it: its bounds are kept here too, not taken on trust.
    const files = manifest.files.slice(0, MAX_FILES);
    let budget = DATA_TOTAL_BYTES;
    for (const f of files) {
      if (!f.data || !f.sha256 || f.data.length > DATA_MAX_BYTES || f.data.length > budget) continue;
      budget -= f.data.length;
      if (createHash('sha256').update(f.data).digest('hex') !== f.sha256) continue;
      const blob = join(this.blobs, f.sha256);
      if (!existsSync(blob)) writeAtomic(blob, f.data);
    }
    const baseline: Baseline = {
      kind,
      id,
      sandboxId,
      takenAt,
      truncated: manifest.truncated || files.length < manifest.files.length,
      files: files.map(({ path, type, size, mode, sha256 }) => ({ path, type, size, mode, sha256 })),
    };
    writeAtomic(this.file(kind, id), Buffer.from(JSON.stringify(baseline)));
    if (kind === 'run') this.trimRuns(sandboxId);
    return baseline;
  }

  private trimRuns(sandboxId: string): void {
    const runs = this.stored().filter(({ b }) => b.kind === 'run' && b.sandboxId === sandboxId);
    if (runs.length <= MAX_RUN_BASELINES) return;
    runs.sort((x, y) => x.b.takenAt.localeCompare(y.b.takenAt));
    const old = new Set(runs.slice(0, runs.length - MAX_RUN_BASELINES).map((r) => r.path));
    this.drop((path) => old.has(path));
  }

  /** The same baseline under another name (a run that began with its sandbox's create). */
  copy(from: Baseline, kind: Baseline['kind'], id: string): void {
    writeAtomic(this.file(kind, id), Buffer.from(JSON.stringify({ ...from, kind, id })));
  }

  load(kind: Baseline['kind'], id: string): Baseline | null {
    try {
      return JSON.parse(readFileSync(this.file(kind, id), 'utf8')) as Baseline;
    } catch {
      return null;
    }
  }

  has(kind: Baseline['kind'], id: string): boolean {
    return existsSync(this.file(kind, id));
  }

  /** The kept bytes of a digest, or null (too large, over the budget, or swept). */
  bytes(sha256: string): Buffer | null {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return null;
    try {
      return readFileSync(join(this.blobs, sha256));
    } catch {
      return null;
    }
  }

  /** Drops a sandbox's baselines (it is gone), its runs' too; bytes no baseline names any more go with them. */
  forgetSandbox(sandboxId: string): void {
    this.drop((_path, b) => b.sandboxId === sandboxId);
  }

  private drop(which: (path: string, b: Baseline) => boolean): void {
    const used = new Set<string>();
    for (const { path, b } of this.stored()) {
      if (which(path, b)) rmSync(path, { force: true });
      else for (const f of b.files) if (f.sha256) used.add(f.sha256);
    }
    for (const blob of safeList(this.blobs)) if (!used.has(blob)) rmSync(join(this.blobs, blob), { force: true });
  }

  private stored(): Array<{ path: string; b: Baseline }> {
    const out: Array<{ path: string; b: Baseline }> = [];
    for (const name of safeList(this.dir).filter((n) => n.endsWith('.json'))) {
      const path = join(this.dir, name);
      try {
        out.push({ path, b: JSON.parse(readFileSync(path, 'utf8')) as Baseline });
      } catch {
        // half-written by a process that died, or not ours: not a baseline
      }
    }
    return out;
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function writeAtomic(path: string, data: Buffer): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  renameSync(tmp, path);
}
