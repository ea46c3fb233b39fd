// Where snapshots live on the host: WARDEN_HOME/snapshots/<sandbox name>/<tag>/ holds manifest.json
// (what SnapshotInfo says, plus the spec to recreate the sandbox from) and workspace.tar. Kept by
// name, so a reset finds them after the sandbox it came from is gone; the image itself is Podman's.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WardenError } from '../../../shared/errors.js';
import type { SandboxInfo, SandboxSpec } from '../../../shared/types/sandbox.js';
import { RUNTIMES, SANDBOX_NAME_PATTERN } from '../../../shared/types/sandbox.js';
import { SNAPSHOT_TAG_PATTERN, type SnapshotInfo } from '../../../shared/types/snapshot.js';

/** What a reset or fork recreates: the spec as the sandbox was made (its env is in the image's config). */
export type SnapshotSpec = Omit<SandboxSpec, 'name' | 'image' | 'env'>;

export interface SnapshotManifest extends SnapshotInfo {
  spec: SnapshotSpec;
}

/** The spec a sandbox was made with, read back from its info (its limits and labels are Warden's own record of it). */
export function specOf(info: SandboxInfo, now = Date.now()): SnapshotSpec {
  const runtime = (RUNTIMES as readonly string[]).includes(info.runtime) ? (info.runtime as SandboxSpec['runtime']) : undefined;
  const ttl = info.expiresAt ? Math.max(1, Math.ceil((new Date(info.expiresAt).getTime() - now) / 1000)) : undefined;
  return {
    memory: info.limits.memoryBytes,
    cpus: info.limits.cpus,
    pids: info.limits.pids,
    network: info.network,
    ...(runtime ? { runtime } : {}),
    ...(info.workspace ? { workspace: info.workspace } : {}),
    ...(Object.keys(info.labels).length ? { labels: info.labels } : {}),
    ...(ttl ? { ttlSeconds: ttl } : {}),
    readOnlyRoot: info.limits.readOnlyRoot,
    ...(info.limits.tmpSizeBytes !== null ? { tmpSize: info.limits.tmpSizeBytes } : {}),
    ...(info.limits.diskBytes !== null ? { disk: info.limits.diskBytes } : {}),
  };
}

export class SnapshotStore {
  readonly dir: string;

  constructor(home: string) {
    this.dir = join(home, 'snapshots');
  }

  /** Names and tags become path components: anything but a plain name is refused here too, not only at the doors. */
  folder(sandbox: string, tag: string): string {
    if (!SANDBOX_NAME_PATTERN.test(sandbox)) throw new WardenError('E_BAD_INPUT', `"${sandbox}" is not a sandbox name`);
    if (!SNAPSHOT_TAG_PATTERN.test(tag)) throw new WardenError('E_BAD_INPUT', `"${tag}" is not a snapshot tag`);
    return join(this.dir, sandbox, tag);
  }

  /** Whether any snapshot (finished or not) was ever kept under this name. */
  has(sandbox: string): boolean {
    return SANDBOX_NAME_PATTERN.test(sandbox) && existsSync(join(this.dir, sandbox));
  }

  /** Every sandbox name with snapshots kept (also of sandboxes that are gone). */
  names(): string[] {
    try {
      return readdirSync(this.dir).filter((n) => SANDBOX_NAME_PATTERN.test(n));
    } catch {
      return [];
    }
  }

  archivePath(sandbox: string, tag: string): string {
    return join(this.folder(sandbox, tag), 'workspace.tar');
  }

  /** A new, empty folder for a tag: a tag already taken is E_CONFLICT (a snapshot is never overwritten). */
  begin(sandbox: string, tag: string): string {
    const dir = this.folder(sandbox, tag);
    mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
    try {
      // Not recursive: of two snapshots of one tag at once, exactly one makes the folder.
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      throw new WardenError(
        'E_CONFLICT',
        `sandbox ${sandbox} already has a snapshot tagged ${tag}`,
        'pick another --tag, or remove that one first',
      );
    }
    return dir;
  }

  /** The manifest goes last, and whole (rename): a folder without one is a snapshot that never finished. */
  finish(manifest: SnapshotManifest): void {
    const file = join(this.folder(manifest.sandbox, manifest.tag), 'manifest.json');
    writeFileSync(`${file}.tmp`, JSON.stringify(manifest, null, 2), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }

  abandon(sandbox: string, tag: string): void {
    rmSync(this.folder(sandbox, tag), { recursive: true, force: true });
  }

  get(sandbox: string, tag: string): SnapshotManifest {
    const file = join(this.folder(sandbox, tag), 'manifest.json');
    if (!existsSync(file)) {
      throw new WardenError(
        'E_NOT_FOUND',
        `sandbox ${sandbox} has no snapshot tagged ${tag}`,
        `list them with \`warden sandbox snapshots ${sandbox}\``,
      );
    }
    return JSON.parse(readFileSync(file, 'utf8')) as SnapshotManifest;
  }

  /** The finished snapshots of a sandbox name, oldest first. */
  list(sandbox: string): SnapshotManifest[] {
    let tags: string[];
    if (!this.has(sandbox)) return [];
    try {
      tags = readdirSync(join(this.dir, sandbox));
    } catch {
      return [];
    }
    return tags
      .filter((tag) => SNAPSHOT_TAG_PATTERN.test(tag) && existsSync(join(this.folder(sandbox, tag), 'manifest.json')))
      .map((tag) => this.get(sandbox, tag))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}

/** What a door shows of a manifest (the spec is the engine's). */
export function infoOf(m: SnapshotManifest): SnapshotInfo {
  const { spec: _spec, ...info } = m;
  return info;
}
