// The Podman half of the engine: one connection, its sandboxes, exec, stats and events.
import type { ConnectionInfo } from '../../../shared/types/engine.js';
import { DEFAULT_SANDBOX_IMAGE } from '../../../shared/types/sandbox.js';
import { PodmanConnection, type ConnectOptions } from './connection.js';
import { detectRuntimes } from './runtimes.js';
import { Sandboxes } from './sandboxes.js';
import { homeId } from '../home-id.js';
import { RuntimeRouter } from './runtime-router.js';
import { installSeccompProfile } from './wall.js';
import { DiskLimits, storeDiskSupport } from './disk-limit.js';
import { OwnerRecords } from '../pool/owner-records.js';
import { DeadlineRecords } from './deadline-records.js';
import { installRunner } from '../runner/runner-binary.js';
import { runnersOf } from '../runner/runner-registry.js';
import { egressOf } from '../egress/egress-registry.js';
import { listBoundsFrom, type ListBounds } from './sandbox-list.js';

export interface PodmanEngineOptions extends ConnectOptions {
  image?: string;
  /** How long the sandbox list and a view's inspect wait for Podman; default from WARDEN_PODMAN_LIST_BOUND_MS or 10 s. */
  listBounds?: ListBounds;
}

export class PodmanEngine {
  readonly sandboxes: Sandboxes;
  readonly router: RuntimeRouter;
  readonly disks: DiskLimits;
  /** Owners of claimed warm-pool sandboxes (read by every process of the home). */
  readonly owners: OwnerRecords;
  /** TTLs set after create (read by every process of the home). */
  readonly deadlines: DeadlineRecords;

  private constructor(
    readonly connection: PodmanConnection,
    readonly options: PodmanEngineOptions,
  ) {
    this.router = new RuntimeRouter(connection, { home: options.home, detached: options.detachedService ?? false });
    this.disks = new DiskLimits(options.home);
    this.owners = new OwnerRecords(options.home);
    this.deadlines = new DeadlineRecords(options.home);
    this.sandboxes = new Sandboxes(connection, {
      defaultImage: options.image ?? defaultImage(options.env),
      router: this.router,
      seccompProfile: installSeccompProfile(options.home),
      disks: this.disks,
      owners: this.owners,
      deadlines: this.deadlines,
      homeId: homeId(options.home),
      home: options.home,
      runnerBinary: installRunner(options.home),
      listBounds: options.listBounds ?? listBoundsFrom(options.env ?? process.env),
    });
  }

  static async open(options: PodmanEngineOptions): Promise<PodmanEngine> {
    const connection = await PodmanConnection.open(options);
    const engine = new PodmanEngine(connection, options);
    // Disks of sandboxes removed with the podman CLI, behind Warden's back (local only: no engine call).
    await engine.disks.sweep();
    await engine.detectRuntimes();
    return engine;
  }

  /** Probes runtimes (from cache unless fresh); needs the default image, so a missing one leaves them unknown. */
  async detectRuntimes(fresh = false): Promise<void> {
    if (await this.sandboxes.imageExists(this.sandboxes.defaultImage)) {
      await detectRuntimes(this.connection, this.router, this.options.home, this.sandboxes.defaultImage, { fresh });
    }
  }

  /** Why sandbox disks cannot be bounded through this engine, or null when they can (asks Podman where its store is). */
  async diskSupport(): Promise<string | null> {
    const info = await this.connection.libpod<{ store?: { graphDriverName?: string; graphRoot?: string } }>(
      'GET',
      '/info',
      undefined,
      'engine info',
    );
    return storeDiskSupport({
      rootless: this.info().rootless ?? false,
      driver: info.store?.graphDriverName,
      graphRoot: info.store?.graphRoot,
    });
  }

  info(): ConnectionInfo {
    return this.connection.info();
  }

  close(): void {
    runnersOf(this.connection).close();
    egressOf(this.connection).close();
    this.router.close();
    this.connection.close();
  }
}

export function defaultImage(env: NodeJS.ProcessEnv = process.env): string {
  return env.WARDEN_IMAGE || DEFAULT_SANDBOX_IMAGE;
}
