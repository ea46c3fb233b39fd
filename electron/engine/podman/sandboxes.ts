// Sandbox lifecycle on one Podman connection. Only containers labelled warden.managed=true are ours.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { WardenError } from '../../../shared/errors.js';
import type { SandboxInfo, SandboxSpec, RuntimeName } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from './connection.js';
import { buildSpecGenerator, resolveSandbox } from './container-spec.js';
import { hostLimits } from './host-limits.js';
import { isManaged, isThisHome, LABEL, MANAGED_FILTER, reservedLabelKeys } from './labels.js';
import { infoFromInspect, infoFromListEntry, type LibpodInspect, type LibpodListEntry } from './sandbox-info.js';
import { RUNTIME_INSTALL_HINTS } from './runtimes.js';
import type { RuntimeRouter } from './runtime-router.js';
import { hostRange, parseOwner, returnWorkspace, workspaceOwner } from './workspace-lease.js';
import { hostDiskSupport, type DiskLimits } from './disk-limit.js';
import { removeContainer } from './container-removal.js';

export interface SandboxesOptions {
  defaultImage: string;
  /** Host path of the seccomp profile every sandbox gets (wall.ts). */
  seccompProfile: string | null;
  /** This Warden home's id: put on every sandbox made, and only sandboxes with it (or legacy ones) are seen. */
  homeId: string;
  router: RuntimeRouter;
  disks: DiskLimits;
  /** Called after a successful create, so the engine can record it. */
  now?: () => Date;
}

export interface SandboxRef {
  id: string;
  name: string;
}

const NO_SUBORDINATE_IDS = new WardenError(
  'E_ENGINE',
  'Podman has no subordinate ids to give this sandbox its own user namespace',
  'add the range Podman hands out with `echo containers:2147483647:2147483648 | tee -a /etc/subuid /etc/subgid` (or run `npm run setup`)',
);

export class Sandboxes {
  constructor(
    private readonly conn: PodmanConnection,
    private readonly options: SandboxesOptions,
  ) {}

  get defaultImage(): string {
    return this.options.defaultImage;
  }

  get homeId(): string {
    return this.options.homeId;
  }

  async imageExists(image: string): Promise<boolean> {
    const status = await this.conn.call(`image ${image}`, async (docker) => {
      try {
        await docker.getImage(image).inspect();
        return true;
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) return false;
        throw err;
      }
    });
    return status;
  }

  private imageMissing(image: string): WardenError {
    return new WardenError(
      'E_IMAGE_MISSING',
      `image ${image} is not present in the local Podman store`,
      image === this.options.defaultImage
        ? 'build it offline with `npm run setup` (resources/image/build.sh)'
        : `pull or build it first (\`podman pull ${image}\`), or leave --image out to use ${this.options.defaultImage}`,
    );
  }

  private chooseRuntime(requested: RuntimeName | undefined): RuntimeName {
    if (requested) {
      const check = this.conn.runtimes.find((r) => r.name === requested);
      if (check && !check.works) {
        throw new WardenError(
          'E_RUNTIME_UNAVAILABLE',
          `the ${requested} runtime is ${check.installed ? 'installed but does not run containers here' : 'not available'}${check.reason ? ` (${check.reason})` : ''}`,
          check.installed ? `use ${this.conn.defaultRuntime ?? 'runc'} instead; \`warden doctor\` lists what works` : RUNTIME_INSTALL_HINTS[requested],
        );
      }
      return requested;
    }
    if (!this.conn.defaultRuntime) {
      throw new WardenError('E_RUNTIME_UNAVAILABLE', 'no OCI runtime runs containers on this host', 'install runc (`apt-get install runc`) and run `warden doctor`');
    }
    return this.conn.defaultRuntime;
  }

  private validateSpec(spec: SandboxSpec): void {
    const reserved = reservedLabelKeys(spec.labels);
    if (reserved.length) {
      throw new WardenError('E_BAD_INPUT', `labels ${reserved.join(', ')} use the reserved warden. prefix`, 'pick label names that do not start with "warden."');
    }
    if (spec.workspace !== undefined) {
      if (!existsSync(spec.workspace) || !statSync(spec.workspace).isDirectory()) {
        throw new WardenError('E_BAD_INPUT', `workspace ${spec.workspace} is not a directory on this host`, 'create it first, or leave --workspace out');
      }
    }
  }

  /** Creates the sandbox and, unless told not to, starts it. A failed start removes it again. */
  async create(spec: SandboxSpec, opts: { start?: boolean } = {}): Promise<SandboxInfo> {
    this.validateSpec(spec);
    const image = spec.image ?? this.options.defaultImage;
    const runtime = this.chooseRuntime(spec.runtime);
    const name = spec.name ?? `sbx-${randomBytes(3).toString('hex')}`;
    const rootless = this.conn.info().rootless ?? false;
    const ctx = {
      name,
      image,
      runtime,
      rootless,
      hostLimits: hostLimits(),
      now: this.options.now?.() ?? new Date(),
      seccompProfile: this.options.seccompProfile,
      wall: rootless ? null : { workspaceOwner: spec.workspace ? workspaceOwner(spec.workspace) : null },
    };
    const resolved = resolveSandbox(spec, ctx);
    const creator = await this.options.router.connectionFor(runtime);
    // No separate image check: the create call says so itself, and a round trip is saved.
    const generator = buildSpecGenerator(spec, resolved, ctx);
    generator.labels = { ...(generator.labels as Record<string, string>), [LABEL.home]: this.options.homeId };
    const created = await creator
      .libpod<{ Id: string }>('POST', '/containers/create', generator, `sandbox ${name}`)
      .catch((err: unknown) => {
        const message = (err as Error).message;
        if (/image not known|no such image/i.test(message)) throw this.imageMissing(image);
        if (/enough available IDs|no subuid ranges/i.test(message)) throw NO_SUBORDINATE_IDS;
        throw err;
      });
    try {
      await this.boundDisk(created.Id, resolved.diskBytes);
      if (opts.start !== false) {
        await this.conn.libpod('POST', `/containers/${created.Id}/start`, undefined, `sandbox ${name}`, [204, 304]);
      }
      const info = await this.inspectId(created.Id);
      // libpod falls back to its default runtime for a name it does not know: refuse that.
      // (Checked after start to save a round trip; nothing but the keep-alive has run by then.)
      if (info.runtime !== runtime) {
        throw new WardenError('E_RUNTIME_UNAVAILABLE', `asked for the ${runtime} runtime but Podman used ${info.runtime}`, RUNTIME_INSTALL_HINTS[runtime]);
      }
      return info;
    } catch (err) {
      await this.removeId(created.Id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Puts a created container's writable layer on a filesystem of its disk size, where this host allows
   * it; elsewhere the sandbox runs without, and its info says the limit is not enforced (doctor says why).
   */
  private async boundDisk(id: string, bytes: number): Promise<void> {
    // No inspect when the host cannot do it anyway.
    if (hostDiskSupport() || this.conn.info().rootless) return;
    const raw = await this.rawInspect(id);
    const layerDir = layerDirOf(raw);
    if (layerDir && !this.options.disks.unsupported({ rootless: false, driver: raw.GraphDriver?.Name, layerDir })) {
      await this.options.disks.attach(id, layerDir, bytes);
    }
  }

  /** The info, with whether its disk limit is really held: only a disk image on this host says so. */
  private withDisk(info: SandboxInfo, raw?: LibpodInspect): SandboxInfo {
    info.limits.diskEnforced = info.limits.diskBytes !== null && this.options.disks.locate(info.id, raw && layerDirOf(raw)) !== null;
    return info;
  }

  private rawInspect(id: string): Promise<LibpodInspect> {
    return this.conn.libpod<LibpodInspect>('GET', `/containers/${encodeURIComponent(id)}/json`, undefined, `sandbox ${id}`);
  }

  private async inspectId(id: string): Promise<SandboxInfo> {
    const raw = await this.rawInspect(id);
    return this.withDisk(infoFromInspect(raw), raw);
  }

  /** Finds a Warden sandbox by name, id or id prefix; anything else is not found. */
  async resolve(ref: string): Promise<SandboxInfo> {
    const raw = await this.resolveRaw(ref);
    return this.withDisk(infoFromInspect(raw), raw);
  }

  private async resolveRaw(ref: string): Promise<LibpodInspect> {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(ref)) {
      throw new WardenError('E_BAD_INPUT', `"${ref}" is not a sandbox name or id`);
    }
    let raw: LibpodInspect;
    try {
      raw = await this.conn.libpod<LibpodInspect>('GET', `/containers/${encodeURIComponent(ref)}/json`, undefined, `sandbox ${ref}`);
    } catch (err) {
      if (err instanceof WardenError && err.code === 'E_NOT_FOUND') {
        throw new WardenError('E_NOT_FOUND', `no sandbox named ${ref}`, 'list sandboxes with `warden sandbox ls`');
      }
      throw err;
    }
    if (!isManaged(raw.Config.Labels)) {
      throw new WardenError('E_NOT_FOUND', `${ref} is not a Warden sandbox`, 'Warden only acts on containers it created (label warden.managed=true)');
    }
    if (!isThisHome(raw.Config.Labels, this.options.homeId)) {
      // Another Warden home's sandbox: not there, as far as this home is concerned.
      throw new WardenError('E_NOT_FOUND', `no sandbox named ${ref}`, 'list sandboxes with `warden sandbox ls`');
    }
    return raw;
  }

  async list(): Promise<SandboxInfo[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: [MANAGED_FILTER] }));
    const entries = await this.conn.libpod<LibpodListEntry[]>('GET', `/containers/json?all=true&filters=${filters}`, undefined, 'sandbox list');
    return entries
      .filter((e) => isThisHome(e.Labels, this.options.homeId))
      .map((e) => this.withDisk(infoFromListEntry(e)))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  inspect(ref: string): Promise<SandboxInfo> {
    return this.resolve(ref);
  }

  private async act(ref: string, action: string, okCodes: number[], mountDisk = false): Promise<SandboxInfo> {
    const raw = await this.resolveRaw(ref);
    const name = raw.Name.replace(/^\//, '');
    if (mountDisk) {
      // After a host reboot the disk is not mounted, and Podman would find its layer empty.
      const disk = this.options.disks.locate(raw.Id, layerDirOf(raw));
      if (disk) await this.options.disks.ensureMounted(disk);
    }
    await this.conn.libpod('POST', `/containers/${raw.Id}/${action}`, undefined, `sandbox ${name}`, okCodes);
    return this.inspectId(raw.Id);
  }

  start(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'start', [204, 304], true);
  }

  stop(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'stop?timeout=2', [204, 304]);
  }

  restart(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'restart?t=2', [204], true);
  }

  pause(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'pause', [204]);
  }

  resume(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'unpause', [204]);
  }

  /** Removes the sandbox and its throwaway root filesystem; a bind-mounted workspace stays on the host. */
  async destroy(ref: string): Promise<SandboxRef> {
    const raw = await this.resolveRaw(ref);
    const lease = workspaceLease(raw);
    await this.removeId(raw.Id, layerDirOf(raw));
    if (lease) returnWorkspace(lease.dir, lease.uids, lease.gids, lease.owner);
    return { id: raw.Id, name: raw.Name.replace(/^\//, '') };
  }

  /** Podman's rm only unlinks the layer's symlink; the disk behind it goes afterwards. */
  private async removeId(id: string, layerDir?: string): Promise<void> {
    const disk = this.options.disks.locate(id, layerDir);
    await removeContainer(this.conn, id);
    if (disk) await this.options.disks.release(disk);
  }
}

/** containers/storage's directory for the container's writable layer (parent of diff/ and work/). */
function layerDirOf(raw: LibpodInspect): string | undefined {
  const upper = raw.GraphDriver?.Data?.UpperDir;
  return upper ? dirname(upper) : undefined;
}

/** What to give back after removal: a lent workspace, the sandbox's id ranges and the owner. */
function workspaceLease(raw: LibpodInspect) {
  const labels = raw.Config.Labels ?? {};
  const dir = labels[LABEL.workspace];
  const owner = parseOwner(labels[LABEL.workspaceOwner]);
  const uids = hostRange(raw.HostConfig.IDMappings?.UidMap);
  const gids = hostRange(raw.HostConfig.IDMappings?.GidMap);
  return dir && existsSync(dir) && owner && uids && gids ? { dir, uids, gids, owner } : null;
}
