// Sandbox lifecycle on one Podman connection. Only containers labelled warden.managed=true are ours.
import { randomBytes } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { SandboxInfo, SandboxSpec } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from './connection.js';
import { buildSpecGenerator, resolveSandbox } from './container-spec.js';
import { hostLimits } from './host-limits.js';
import { isManaged, isThisHome, LABEL } from './labels.js';
import { infoFromInspect, infoFromListEntry, type LibpodInspect, type LibpodListEntry } from './sandbox-info.js';
import { chooseRuntime, validateSpec } from './create-checks.js';
import type { RuntimeRouter } from './runtime-router.js';
import { returnWorkspace, workspaceOwner } from './workspace-lease.js';
import { hostDiskSupport, type DiskLimits } from './disk-limit.js';
import { removeContainer } from './container-removal.js';
import { createRefusal, runtimeSwapped } from './create-refusals.js';
import type { OwnerRecords } from '../pool/owner-records.js';
import type { DeadlineRecords } from './deadline-records.js';
import { letCompanionsGo, settleStarted } from './sandbox-companions.js';
import { settlingOf } from './settling.js';
import { hasRunnerMount, layerDirOf, workspaceLease } from './raw-inspect.js';
import { egressDirOf, makeEgressDir, removeEgressDir } from '../egress/egress-dir.js';
import { DEFAULT_LIST_BOUNDS, SandboxLister, sandboxLate, type ListBounds } from './sandbox-list.js';

export interface SandboxesOptions {
  defaultImage: string;
  /** Host path of the seccomp profile every sandbox gets (wall.ts). */
  seccompProfile: string | null;
  /** This Warden home's id: put on every sandbox made, and only sandboxes with it (or legacy ones) are seen. */
  homeId: string;
  /** WARDEN_HOME: where an `egress` sandbox's socket directory is made (egress/egress-dir.ts). */
  home: string;
  router: RuntimeRouter;
  disks: DiskLimits;
  /** Owners of claimed pool sandboxes; an unclaimed one is the pool's alone (hidden from list and resolve). */
  owners: OwnerRecords;
  /** TTLs changed after create (deadline-records.ts): they win over the create's label. */
  deadlines: DeadlineRecords;
  /** Host path of the runner binary mounted into every new sandbox (runner/runner-binary.ts); null: none. */
  runnerBinary?: string | null;
  /** Called after a successful create, so the engine can record it. */
  now?: () => Date;
  /** How long the list and an inspect wait for Podman (sandbox-list.ts). */
  listBounds?: ListBounds;
}

export type SandboxRef = { id: string; name: string };

export class Sandboxes {
  private readonly lister: SandboxLister;

  constructor(
    private readonly conn: PodmanConnection,
    private readonly options: SandboxesOptions,
  ) {
    this.lister = new SandboxLister(conn, options.listBounds ?? DEFAULT_LIST_BOUNDS, (entries) => this.callersOf(entries));
  }

  get defaultImage(): string {
    return this.options.defaultImage;
  }

  /** Whether new sandboxes get the in-sandbox runner (its binary is mounted into each). */
  get withRunner(): boolean {
    return !!this.options.runnerBinary;
  }

  get homeId(): string {
    return this.options.homeId;
  }

  imageExists(image: string): Promise<boolean> {
    const absent = (err: unknown) => ((err as { statusCode?: number }).statusCode === 404 ? false : Promise.reject(err as Error));
    return this.conn.call(`image ${image}`, (docker) =>
      docker
        .getImage(image)
        .inspect()
        .then(() => true, absent),
    );
  }

  /**
   * Creates the sandbox and, unless told not to, starts it. A failed start removes it again.
   * `blankLabels`: Warden labels the image carries (a snapshot's image has its sandbox's) that this
   * sandbox must not inherit; Podman copies an image's labels it is not given, so they are set empty.
   */
  async create(spec: SandboxSpec, opts: { start?: boolean; poolKey?: string; blankLabels?: string[] } = {}): Promise<SandboxInfo> {
    validateSpec(spec, opts.poolKey !== undefined, !!this.options.runnerBinary);
    const image = spec.image ?? this.options.defaultImage;
    const runtime = chooseRuntime(this.conn, spec.runtime);
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
      runnerBinary: this.options.runnerBinary ?? null,
    };
    const resolved = resolveSandbox(spec, ctx);
    const creator = await this.options.router.connectionFor(runtime);
    const egressDir = resolved.network === 'egress' ? makeEgressDir(this.options.home) : null;
    // No separate image check: the create call says so itself, and a round trip is saved.
    const generator = buildSpecGenerator(spec, resolved, { ...ctx, egressDir });
    generator.labels = {
      ...Object.fromEntries((opts.blankLabels ?? []).map((key) => [key, ''])),
      ...(generator.labels as Record<string, string>),
      [LABEL.home]: this.options.homeId,
      ...(opts.poolKey ? { [LABEL.pool]: opts.poolKey } : {}),
    };
    const created = await creator
      .libpod<{ Id: string }>('POST', '/containers/create', generator, `sandbox ${name}`)
      .catch((err: unknown) => {
        removeEgressDir(egressDir);
        throw createRefusal(err, { image, defaultImage: this.options.defaultImage, name });
      });
    try {
      await this.boundDisk(created.Id, resolved.diskBytes);
      const info = await settlingOf(this.conn).hold(created.Id, async () => {
        if (opts.start !== false)
          await this.conn.libpod('POST', `/containers/${created.Id}/start`, undefined, `sandbox ${name}`, [204, 304]);
        const raw = await this.rawInspect(created.Id);
        const made = this.fromRaw(raw);
        // libpod falls back to its default runtime for a name it does not know: refuse that (nothing else ran yet).
        if (made.runtime !== runtime) throw runtimeSwapped(runtime, made.runtime);
        if (opts.start !== false) await settleStarted(this.conn, raw, this.withRunner, this.options.runnerBinary ?? null);
        return made;
      });
      if (opts.poolKey === undefined) this.lister.remember(info);
      return info;
    } catch (err) {
      await letCompanionsGo(this.conn, created.Id);
      await this.removeId(created.Id).catch(() => undefined);
      removeEgressDir(egressDir);
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

  /** What callers see: a pool owner's labels and TTL over the pool's, then a TTL changed since create. */
  private view(info: SandboxInfo, labels: Record<string, string> | null, known?: Set<string>): SandboxInfo {
    return this.options.deadlines.view(this.options.owners.view(info, labels), known);
  }

  private fromRaw = (raw: LibpodInspect): SandboxInfo => this.view(this.withDisk(infoFromInspect(raw), raw), raw.Config.Labels);

  private async inspectId(id: string): Promise<SandboxInfo> {
    return this.fromRaw(await this.rawInspect(id));
  }

  /** Finds a Warden sandbox by name, id or id prefix; anything else is not found. */
  async resolve(ref: string, opts: { pooled?: boolean } = {}): Promise<SandboxInfo> {
    const info = this.fromRaw(await this.resolveRaw(ref, opts.pooled));
    if (!opts.pooled) this.lister.remember(info);
    return info;
  }

  /** `boundMs`: give up after it (E_TIMEOUT, saying the sandbox may be wedged) rather than wait on Podman. */
  private async resolveRaw(ref: string, pooled = false, boundMs?: number): Promise<LibpodInspect> {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(ref)) throw new WardenError('E_BAD_INPUT', `"${ref}" is not a sandbox name or id`);
    let raw: LibpodInspect;
    const path = `/containers/${encodeURIComponent(ref)}/json`;
    try {
      raw =
        boundMs === undefined
          ? await this.conn.libpod<LibpodInspect>('GET', path, undefined, `sandbox ${ref}`)
          : await this.conn.libpodWithin<LibpodInspect>(boundMs, path, `sandbox ${ref}`, () => sandboxLate(boundMs, ref, ref));
    } catch (err) {
      if (err instanceof WardenError && err.code === 'E_NOT_FOUND') {
        throw new WardenError('E_NOT_FOUND', `no sandbox named ${ref}`, 'list sandboxes with `warden sandbox ls`');
      }
      throw err;
    }
    if (!isManaged(raw.Config.Labels)) {
      throw new WardenError(
        'E_NOT_FOUND',
        `${ref} is not a Warden sandbox`,
        'Warden only acts on containers it created (label warden.managed=true)',
      );
    }
    if (!isThisHome(raw.Config.Labels, this.options.homeId) || (!pooled && this.options.owners.waiting(raw.Id, raw.Config.Labels))) {
      // Another Warden home's sandbox, or one of the warm pool: not there, as far as callers are concerned.
      throw new WardenError('E_NOT_FOUND', `no sandbox named ${ref}`, 'list sandboxes with `warden sandbox ls`');
    }
    return raw;
  }

  /** This home's sandboxes; one Podman does not answer for is shown as last seen, marked `unreachable` (sandbox-list.ts). */
  list(): Promise<SandboxInfo[]> {
    return this.lister.list();
  }

  /** The entries that are callers' sandboxes (this home's, not the pool's waiting ones), as they see them. */
  private callersOf(entries: LibpodListEntry[]): SandboxInfo[] {
    const known = this.options.deadlines.ids();
    return entries
      .filter((e) => isThisHome(e.Labels, this.options.homeId) && !this.options.owners.waiting(e.Id, e.Labels))
      .map((e) => this.view(this.withDisk(infoFromListEntry(e)), e.Labels, known))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** A read for a view (the panel, after an engine event): bounded as the list is, so a wedged sandbox answers E_TIMEOUT. */
  async inspect(ref: string): Promise<SandboxInfo> {
    const info = this.fromRaw(await this.resolveRaw(ref, false, (this.options.listBounds ?? DEFAULT_LIST_BOUNDS).sandboxMs));
    this.lister.remember(info);
    return info;
  }

  /**
   * `runner`: what the action does to the sandbox's runner. Stopping, pausing or restarting ends it
   * on purpose (not a loss), so it is let go first; a started, restarted or resumed sandbox gets a new one.
   */
  private async act(
    ref: string,
    action: string,
    okCodes: number[],
    mountDisk = false,
    runner: { before?: boolean; after?: boolean } = {},
  ): Promise<SandboxInfo> {
    const raw = await this.resolveRaw(ref);
    const name = raw.Name.replace(/^\//, '');
    if (runner.before) await letCompanionsGo(this.conn, raw.Id);
    if (mountDisk) await this.options.disks.ensureMountedFor(raw.Id, layerDirOf(raw));
    const after = await settlingOf(this.conn).hold(raw.Id, async () => {
      await this.conn.libpod('POST', `/containers/${raw.Id}/${action}`, undefined, `sandbox ${name}`, okCodes);
      const started = await this.rawInspect(raw.Id);
      if (runner.after) await settleStarted(this.conn, started, hasRunnerMount(raw), this.options.runnerBinary ?? null);
      return started;
    });
    return this.fromRaw(after);
  }

  start(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'start', [204, 304], true, { after: true });
  }

  stop(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'stop?timeout=2', [204, 304], false, { before: true });
  }

  restart(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'restart?t=2', [204], true, { before: true, after: true });
  }

  pause(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'pause', [204], false, { before: true });
  }

  resume(ref: string): Promise<SandboxInfo> {
    return this.act(ref, 'unpause', [204], false, { after: true });
  }

  /** Removes the sandbox and its throwaway root filesystem; a bind-mounted workspace stays on the host. */
  async destroy(ref: string, opts: { pooled?: boolean } = {}): Promise<SandboxRef> {
    const raw = await this.resolveRaw(ref, opts.pooled);
    const lease = workspaceLease(raw);
    await letCompanionsGo(this.conn, raw.Id);
    await this.removeId(raw.Id, layerDirOf(raw));
    removeEgressDir(egressDirOf(raw));
    this.options.owners.remove(raw.Id);
    this.options.deadlines.remove(raw.Id);
    this.lister.forget(raw.Id);
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
