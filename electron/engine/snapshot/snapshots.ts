// Snapshots of a sandbox and the two ways back to one: reset (the same name, recreated from the
// snapshot) and fork (a new sandbox from it, beside the original). A snapshot is the root filesystem's
// changes, committed as a Podman image (its layer's ids mapped back to the sandbox's own: layer-ids.ts),
// and /workspace as a tar archive under WARDEN_HOME (workspace-archive.ts); each snapshot, reset, fork
// and removal is a ledger entry with the image id and the archive's sha256 it saved or restored.
import { existsSync } from 'node:fs';
import { WardenError } from '../../../shared/errors.js';
import { SANDBOX_NAME_PATTERN, type SandboxInfo } from '../../../shared/types/sandbox.js';
import type { SnapshotInfo } from '../../../shared/types/snapshot.js';
import type { PodmanEngine } from '../podman/podman-engine.js';
import type { LibpodInspect } from '../podman/sandbox-info.js';
import { hostRange } from '../podman/workspace-lease.js';
import { appendDurably, type AuditRecord, type AuditSink } from '../audit-sink.js';
import type { Attestations } from '../attest/attestations.js';
import type { WorkspaceChanges } from '../diff/workspace-changes.js';
import type { Manifest } from '../diff/manifest.js';
import { createdPayload } from '../sandbox-create.js';
import { unshiftLayerIds } from './layer-ids.js';
import { archiveDigest, archiveWorkspace, restoreWorkspace } from './workspace-archive.js';
import { infoOf, ownerOf, ownerOfLabels, SnapshotStore, specOf } from './snapshot-store.js';
import type { SnapshotManifest, SnapshotScope, SnapshotSpec } from './snapshot-store.js';
import { ensureRoomFor } from './free-space.js';
import { defaultTag, imageRepo } from './snapshot-names.js';
import { baseImageChanges } from './image-config.js';

interface ImageInspect {
  Id: string;
  Labels?: Record<string, string> | null;
  GraphDriver?: { Name?: string; Data?: { UpperDir?: string } };
}

/** The most one snapshot's workspace archive may take on the host (what the sandbox streams is its choice). */
export const DEFAULT_ARCHIVE_MAX_BYTES = 16 * 1024 ** 3;

export class Snapshots {
  readonly store: SnapshotStore;
  /** Overridable for a home (and a spec) that wants a different bound. */
  archiveMaxBytes = DEFAULT_ARCHIVE_MAX_BYTES;

  constructor(
    private readonly podman: PodmanEngine,
    private readonly audit: AuditSink,
    private readonly attestations: Attestations,
    private readonly actor: () => string,
    private readonly changes: WorkspaceChanges,
  ) {
    this.store = new SnapshotStore(podman.options.home);
  }

  private get conn() {
    return this.podman.connection;
  }

  private async record(entries: Array<Omit<AuditRecord, 'actor'>>): Promise<void> {
    await appendDurably(
      this.audit,
      entries.map((e) => ({ ...e, actor: this.actor() })),
    );
  }

  /**
   * The sandbox a ref names, or only its name when it is gone but has snapshots (a reset brings it
   * back; its snapshots are kept by name).
   */
  async target(ref: string): Promise<{ name: string; info: SandboxInfo | null }> {
    try {
      const info = await this.podman.sandboxes.resolve(ref);
      return { name: info.name, info };
    } catch (err) {
      if (err instanceof WardenError && err.code === 'E_NOT_FOUND' && SANDBOX_NAME_PATTERN.test(ref) && this.store.has(ref)) {
        return { name: ref, info: null };
      }
      throw err;
    }
  }

  /**
   * `by`: who takes it, for the manifest (the gateway names its agent; the ledger's actor comes from
   * the audit context). `automatic`: policy took it (the run and call it protects), not a person.
   */
  async snapshot(ref: string, tag?: string, by = this.actor(), automatic?: SnapshotInfo['automatic']): Promise<SnapshotInfo> {
    const info = await this.podman.sandboxes.resolve(ref);
    if (info.state !== 'running') {
      throw new WardenError('E_CONFLICT', `sandbox ${info.name} is ${info.state}`, `start it first: \`warden sandbox start ${info.name}\``);
    }
    const now = new Date();
    const name = info.name;
    const t = tag ?? defaultTag(now);
    // Room for the archive up to its bound, above the host's reserve (free-space.ts).
    ensureRoomFor(this.store.dir, this.archiveBound(info), `a snapshot of ${name}`);
    // Tags are unique among the owner's snapshots of this name: another owner's are neither in the way nor named.
    const owner = ownerOfLabels(info.labels);
    this.store.begin(name, t, owner);
    let imageId: string | null = null;
    try {
      const workspace = await archiveWorkspace(this.conn, info.id, this.store.archivePath(name, t, owner), this.archiveBound(info));
      const raw = await this.conn.libpod<LibpodInspect>('GET', `/containers/${info.id}/json`, undefined, `sandbox ${name}`);
      const image = `${imageRepo(info.id)}:${t}`;
      const changes = (await baseImageChanges(this.conn, raw.Image)).map((c) => `&changes=${encodeURIComponent(c)}`).join('');
      const query = `container=${info.id}&repo=${encodeURIComponent(imageRepo(info.id))}&tag=${encodeURIComponent(t)}&pause=true${changes}`;
      imageId = (await this.conn.libpod<{ Id: string }>('POST', `/commit?${query}`, undefined, `snapshot of ${name}`)).Id;
      const inspect = await this.imageInspect(imageId);
      this.mapIds(raw, inspect);
      const history = await this.conn.libpod<Array<{ Size?: number }>>(
        'GET',
        `/images/${imageId}/history`,
        undefined,
        `snapshot of ${name}`,
      );
      const manifest: SnapshotManifest = {
        sandbox: name,
        sandboxId: info.id,
        tag: t,
        createdAt: now.toISOString(),
        image,
        imageId,
        rootBytes: history[0]?.Size ?? 0,
        workspaceSha256: workspace.sha256,
        workspaceBytes: workspace.bytes,
        takenBy: by,
        ...(automatic ? { automatic } : {}),
        spec: specOf(info, now.getTime()),
      };
      this.store.finish(manifest);
      const { spec: _spec, ...payload } = manifest;
      await this.record([{ sandboxId: info.id, kind: 'snapshot.taken', payload }]);
      return infoOf(manifest);
    } catch (err) {
      if (imageId) await this.removeImage(imageId).catch(() => undefined);
      this.store.abandon(name, t, owner);
      throw err;
    }
  }

  /**
   * A /workspace on the sandbox's own disk fits in twice that disk (tar's headers and padding
   * included): more is a sandbox's tar that lies, and each snapshot would cost the host that much.
   */
  private archiveBound(info: SandboxInfo): number {
    const disk = info.limits.diskBytes;
    return info.workspace === null && disk !== null ? Math.min(this.archiveMaxBytes, 2 * disk + 1024 * 1024) : this.archiveMaxBytes;
  }

  private imageInspect(id: string): Promise<ImageInspect> {
    return this.conn.libpod<ImageInspect>('GET', `/images/${id}/json`, undefined, `image ${id.slice(0, 12)}`);
  }

  /** The committed layer's files get the ids the sandbox saw (layer-ids.ts); a sandbox with no namespace of its own needs none. */
  private mapIds(raw: LibpodInspect, image: ImageInspect): void {
    const uids = hostRange(raw.HostConfig.IDMappings?.UidMap);
    const gids = hostRange(raw.HostConfig.IDMappings?.GidMap);
    if (!uids || !gids || uids.first === 0) return;
    const upper = image.GraphDriver?.Data?.UpperDir;
    if (!upper || !existsSync(upper)) {
      throw new WardenError(
        'E_ENGINE',
        "the snapshot's layer is not on this machine, so its files cannot be given the sandbox's own ids",
        'snapshots of sandboxes with their own user namespace need rootful Podman with its store on this host',
      );
    }
    unshiftLayerIds(upper, uids, gids);
  }

  private async removeImage(id: string): Promise<void> {
    await this.conn.libpod('DELETE', `/images/${id}`, undefined, `image ${id.slice(0, 12)}`, [200]);
  }

  async list(ref: string): Promise<SnapshotInfo[]> {
    const { name } = await this.target(ref);
    return this.store.list(name).map(infoOf);
  }

  /**
   * Which snapshot a tag names: in `scope` when the caller gives one (an agent that sees only its own),
   * else the user's view: of the sandbox holding the name now, or else the newest (SnapshotScope).
   */
  private pick(name: string, info: SandboxInfo | null, tag: string, scope?: SnapshotScope): SnapshotManifest {
    return this.store.get(name, tag, scope ?? { prefer: info ? ownerOfLabels(info.labels) : undefined });
  }

  /** `why`: for the record, when it is not a person's or agent's own removal (policy pruning automatic ones). */
  async remove(ref: string, tag: string, why?: string, scope?: SnapshotScope): Promise<SnapshotInfo> {
    const { name, info } = await this.target(ref);
    const manifest = this.pick(name, info, tag, scope);
    await this.removeImage(manifest.imageId).catch((err: unknown) => {
      if (err instanceof WardenError && err.code === 'E_NOT_FOUND') return; // removed behind Warden's back: the rest still goes
      if (err instanceof WardenError && err.code === 'E_CONFLICT') {
        throw new WardenError(
          'E_CONFLICT',
          `snapshot ${tag} of ${name} is in use by a sandbox made from it`,
          'destroy that sandbox (a reset or fork of it) first',
        );
      }
      throw err;
    });
    this.store.abandon(name, tag, ownerOf(manifest));
    await this.record([
      {
        sandboxId: manifest.sandboxId,
        kind: 'snapshot.removed',
        payload: { name, tag, imageId: manifest.imageId, workspaceSha256: manifest.workspaceSha256, ...(why ? { why } : {}) },
      },
    ]);
    return infoOf(manifest);
  }

  /** The manifest and its archive's path, the archive checked against the digest the snapshot recorded. */
  private load(manifest: SnapshotManifest): { manifest: SnapshotManifest; archive: string } {
    const { sandbox: name, tag } = manifest;
    const file = this.store.archivePath(name, tag, ownerOf(manifest));
    const archive = archiveDigest(file);
    if (archive.sha256 !== manifest.workspaceSha256) {
      throw new WardenError(
        'E_ENGINE',
        `the workspace archive of snapshot ${tag} of ${name} has changed since it was taken (sha256 ${archive.sha256.slice(0, 12)}…, recorded ${manifest.workspaceSha256.slice(0, 12)}…)`,
        'it cannot be restored as it was; remove that snapshot',
      );
    }
    return { manifest, archive: file };
  }

  /** A sandbox made from the snapshot's image, its workspace restored; removed again if the restore fails. */
  private async recreate(manifest: SnapshotManifest, archive: string, name: string, spec: SnapshotSpec): Promise<SandboxInfo> {
    const image = await this.imageInspect(manifest.imageId);
    const blankLabels = Object.keys(image.Labels ?? {}).filter((k) => k.startsWith('warden.'));
    const info = await this.podman.sandboxes.create({ ...spec, name, image: manifest.image }, { blankLabels });
    // A read-only root without a host workspace cannot have changed /workspace: the image has it as it was.
    let restored: Manifest | null = null;
    if (!(spec.readOnlyRoot && !spec.workspace)) {
      restored = await restoreWorkspace(this.conn, info.id, archive, manifest.workspaceSha256).catch(async (err: unknown) => {
        await this.podman.sandboxes.destroy(info.id).catch(() => undefined);
        throw err;
      });
    }
    // Made like a create, so its diff starts here: from what the archive held, or else the restored workspace walked.
    await this.changes.atRestore(info, restored);
    return info;
  }

  private restored(manifest: SnapshotManifest) {
    return {
      tag: manifest.tag,
      image: manifest.image,
      imageId: manifest.imageId,
      workspaceSha256: manifest.workspaceSha256,
      workspaceBytes: manifest.workspaceBytes,
    };
  }

  /** Back to the snapshot, under the same name: the sandbox is destroyed and made again from it. */
  async reset(ref: string, tag: string, scope?: SnapshotScope): Promise<SandboxInfo> {
    const { name, info: old } = await this.target(ref);
    const { manifest, archive } = this.load(this.pick(name, old, tag, scope));
    const records: Array<Omit<AuditRecord, 'actor'>> = [];
    if (old) {
      await this.attestations.settle(old.id);
      const gone = await this.podman.sandboxes.destroy(old.id);
      this.attestations.forget(gone.id);
      this.changes.forget(gone.id); // its baselines and theirs of its runs go with it, as on a destroy
      records.push({ sandboxId: gone.id, kind: 'sandbox.destroyed', payload: { name: gone.name, reason: `reset to snapshot ${tag}` } });
    }
    const info = await this.recreate(manifest, archive, name, manifest.spec).catch(async (err: unknown) => {
      if (records.length) await this.record(records); // the old one is gone either way
      throw err;
    });
    records.push(
      { sandboxId: info.id, kind: 'sandbox.created', payload: createdPayload(info, false) },
      { sandboxId: info.id, kind: 'sandbox.reset', payload: { name, fromId: old?.id ?? null, ...this.restored(manifest) } },
    );
    await this.record(records);
    this.attestations.later(info);
    return info;
  }

  /**
   * A new sandbox from the snapshot, beside the original. A host workspace is not lent twice: the
   * fork's /workspace is its own, restored from the archive. `labels` go over the original's (the
   * gateway names the agent that forks as the fork's creator).
   */
  async fork(ref: string, tag: string, newName: string, labels: Record<string, string> = {}, scope?: SnapshotScope): Promise<SandboxInfo> {
    const { name, info: from } = await this.target(ref);
    const { manifest, archive } = this.load(this.pick(name, from, tag, scope));
    const { workspace: _hostDir, ...spec } = manifest.spec;
    const info = await this.recreate(manifest, archive, newName, { ...spec, labels: { ...spec.labels, ...labels } });
    await this.record([
      { sandboxId: info.id, kind: 'sandbox.created', payload: createdPayload(info, false) },
      {
        sandboxId: info.id,
        kind: 'sandbox.forked',
        payload: { name: newName, from: name, fromId: manifest.sandboxId, ...this.restored(manifest) },
      },
    ]);
    this.attestations.later(info);
    return info;
  }
}
