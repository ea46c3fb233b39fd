// Where snapshots live on the host: WARDEN_HOME/snapshots/<sandbox name>/<tag>/ for the user's
// sandboxes and <sandbox name>/@<agent>/<tag>/ for an agent's, each holding manifest.json (what
// SnapshotInfo says, plus the spec to recreate the sandbox from) and workspace.tar. Kept by name, so a
// reset finds them after the sandbox is gone, and apart by owner: a name is free again once its
// sandbox is gone, and whoever takes it next has tags of its own, neither blocked by nor told of the
// last owner's. The image itself is Podman's (named by container id: snapshots.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WardenError } from '../../../shared/errors.js';
import { AGENT_NAME_PATTERN } from '../../../shared/types/agent-name.js';
import type { SandboxInfo, SandboxSpec } from '../../../shared/types/sandbox.js';
import { RUNTIMES, SANDBOX_NAME_PATTERN } from '../../../shared/types/sandbox.js';
import { SNAPSHOT_TAG_PATTERN, type SnapshotInfo } from '../../../shared/types/snapshot.js';
import { AGENT_LABEL } from '../gateway/sandbox-access.js';

/** What a reset or fork recreates: the spec as the sandbox was made (its env is in the image's config). */
export type SnapshotSpec = Omit<SandboxSpec, 'name' | 'image' | 'env'>;

export interface SnapshotManifest extends SnapshotInfo {
  spec: SnapshotSpec;
}

/** Whose snapshots a tag is unique among: the agent whose sandbox it was, or null for the user's. */
export type SnapshotOwner = string | null;

/**
 * Which snapshot a tag names: exactly the owner's (an agent that sees only its own), or, for a caller
 * that sees every owner's, the preferred owner's (the sandbox holding the name now) and else the newest.
 */
export type SnapshotScope = { owner: SnapshotOwner } | { prefer?: SnapshotOwner };

export const ownerOfLabels = (labels: Record<string, string> | undefined): SnapshotOwner => labels?.[AGENT_LABEL] ?? null;
export const ownerOf = (m: SnapshotManifest): SnapshotOwner => ownerOfLabels(m.spec.labels);

/** An owner's folder among a name's tags: "@" never starts a tag. */
const ownerDir = (owner: string) => `@${owner}`;
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
    this.migrate();
  }

  /** Names, owners and tags become path components: anything but a plain name is refused here too, not only at the doors. */
  folder(sandbox: string, tag: string, owner: SnapshotOwner = null): string {
    if (!SANDBOX_NAME_PATTERN.test(sandbox)) throw new WardenError('E_BAD_INPUT', `"${sandbox}" is not a sandbox name`);
    if (!SNAPSHOT_TAG_PATTERN.test(tag)) throw new WardenError('E_BAD_INPUT', `"${tag}" is not a snapshot tag`);
    if (owner !== null && !AGENT_NAME_PATTERN.test(owner)) throw new WardenError('E_BAD_INPUT', `"${owner}" is not an agent name`);
    return owner === null ? join(this.dir, sandbox, tag) : join(this.dir, sandbox, ownerDir(owner), tag);
  }

  /** Whether any snapshot (finished or not) was ever kept under this name. */
  has(sandbox: string): boolean {
    return SANDBOX_NAME_PATTERN.test(sandbox) && existsSync(join(this.dir, sandbox));
  }

  /** Every sandbox name with snapshots kept (also of sandboxes that are gone). */
  names(): string[] {
    return entries(this.dir).filter((n) => SANDBOX_NAME_PATTERN.test(n));
  }

  /** The owners with a folder under a name: the user's (null) and each agent's. */
  private owners(sandbox: string): SnapshotOwner[] {
    const agents = entries(join(this.dir, sandbox))
      .filter((n) => n.startsWith('@') && AGENT_NAME_PATTERN.test(n.slice(1)))
      .map((n) => n.slice(1));
    return [null, ...agents];
  }

  archivePath(sandbox: string, tag: string, owner: SnapshotOwner = null): string {
    return join(this.folder(sandbox, tag, owner), 'workspace.tar');
  }

  /**
   * A new, empty folder for a tag among its owner's: one taken is E_CONFLICT (a snapshot is never
   * overwritten). Only the owner's own are looked at, so the conflict names nothing another owner kept.
   */
  begin(sandbox: string, tag: string, owner: SnapshotOwner = null): string {
    const dir = this.folder(sandbox, tag, owner);
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
    const file = join(this.folder(manifest.sandbox, manifest.tag, ownerOf(manifest)), 'manifest.json');
    writeFileSync(`${file}.tmp`, JSON.stringify(manifest, null, 2), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }

  abandon(sandbox: string, tag: string, owner: SnapshotOwner = null): void {
    rmSync(this.folder(sandbox, tag, owner), { recursive: true, force: true });
  }

  /** The finished snapshot of this owner, or null; one whose manifest names another owner is not its (nor anyone's). */
  private read(sandbox: string, tag: string, owner: SnapshotOwner): SnapshotManifest | null {
    const file = join(this.folder(sandbox, tag, owner), 'manifest.json');
    if (!existsSync(file)) return null;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as SnapshotManifest;
    return ownerOf(manifest) === owner ? manifest : null;
  }

  /** The snapshot a tag names in a scope (SnapshotScope); none is E_NOT_FOUND, worded as for a tag never taken. */
  get(sandbox: string, tag: string, scope: SnapshotScope = {}): SnapshotManifest {
    this.folder(sandbox, tag);
    let found: SnapshotManifest | null;
    if ('owner' in scope) found = this.read(sandbox, tag, scope.owner);
    else {
      const all = this.owners(sandbox).flatMap((o) => this.read(sandbox, tag, o) ?? []);
      const newest = all.sort((x, y) => y.createdAt.localeCompare(x.createdAt))[0] ?? null;
      found = all.find((m) => scope.prefer !== undefined && ownerOf(m) === scope.prefer) ?? newest;
    }
    if (!found) {
      throw new WardenError(
        'E_NOT_FOUND',
        `sandbox ${sandbox} has no snapshot tagged ${tag}`,
        `list them with \`warden sandbox snapshots ${sandbox}\``,
      );
    }
    return found;
  }

  /** The finished snapshots of a sandbox name, every owner's, oldest first. */
  list(sandbox: string): SnapshotManifest[] {
    if (!this.has(sandbox)) return [];
    return this.owners(sandbox)
      .flatMap((owner) =>
        entries(owner === null ? join(this.dir, sandbox) : join(this.dir, sandbox, ownerDir(owner)))
          .filter((tag) => SNAPSHOT_TAG_PATTERN.test(tag))
          .map((tag) => this.read(sandbox, tag, owner)),
      )
      .filter((m): m is SnapshotManifest => m !== null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Homes from before snapshots were kept apart by owner held an agent's beside the user's, under
   * <name>/<tag>: each moves once into its agent's folder (a rename; another process that moved it
   * first, or a folder already there, leaves it as it is), so old snapshots read as they did.
   */
  private migrate(): void {
    for (const sandbox of this.names()) {
      for (const tag of entries(join(this.dir, sandbox)).filter((t) => SNAPSHOT_TAG_PATTERN.test(t))) {
        let owner: SnapshotOwner;
        try {
          owner = ownerOf(JSON.parse(readFileSync(join(this.dir, sandbox, tag, 'manifest.json'), 'utf8')) as SnapshotManifest);
          if (owner === null) continue;
          const to = this.folder(sandbox, tag, owner);
          if (existsSync(to)) continue;
          mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
          renameSync(join(this.dir, sandbox, tag), to);
        } catch {
          continue; // unfinished, unreadable, moved meanwhile, or an owner that is no agent name: left where it is
        }
      }
    }
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** What a door shows of a manifest (the spec is the engine's). */
export function infoOf(m: SnapshotManifest): SnapshotInfo {
  const { spec: _spec, ...info } = m;
  return info;
}
