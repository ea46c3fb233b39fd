// Podman 4.3 ignores the OCI runtime asked for through its API (libpod `oci_runtime` and compat
// `HostConfig.Runtime` alike) and uses the service's default. So a create that needs another
// runtime goes through a service of Warden's own started with `--runtime NAME`; every later call
// (start, exec, stop) works through the main connection, since a container keeps its runtime.
// The runtime used is always read back from inspect, so a Podman that honours the field needs nothing.
import { WardenError } from '../../../shared/errors.js';
import type { RuntimeName } from '../../../shared/types/sandbox.js';
import { PodmanConnection } from './connection.js';
import { OwnedService, ownedLogPath, ownedSocketPath, podmanInstalled, stopAdoptedService } from './owned-service.js';
import { readFileSync } from 'node:fs';

function lastLogLine(file: string): string | null {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    return lines[lines.length - 1]?.replace(/^Error: /, '') || null;
  } catch {
    return null;
  }
}
import { pingSocket } from './socket-discovery.js';

export interface RuntimeRouterOptions {
  home: string;
  /** Leave per-runtime services running (idle timeout) after this process exits: the CLI. */
  detached: boolean;
}

const IDLE_SECONDS = 300;

export class RuntimeRouter {
  private readonly byRuntime = new Map<string, Promise<PodmanConnection>>();
  private readonly services: OwnedService[] = [];
  /** Sockets of per-runtime services another Warden process started and this one went through. */
  private readonly adopted = new Set<string>();

  constructor(
    private readonly main: PodmanConnection,
    private readonly options: RuntimeRouterOptions,
  ) {}

  /**
   * The connection whose creates use `runtime`. Its service is Warden's own, and may have died or
   * exited after its idle timeout since the last create: then it is started again, whichever
   * Warden process started it first.
   */
  async connectionFor(runtime: RuntimeName): Promise<PodmanConnection> {
    if (this.main.serviceRuntime === runtime) return this.main;
    const cached = this.byRuntime.get(runtime);
    if (cached) {
      const conn = await cached.catch(() => null);
      if (conn && conn.status === 'connected' && (await pingSocket(conn.socketPath, 1000))) return conn;
      if (this.byRuntime.get(runtime) === cached) {
        this.byRuntime.delete(runtime);
        conn?.close();
      }
    }
    let pending = this.byRuntime.get(runtime);
    if (!pending) {
      pending = this.open(runtime);
      this.byRuntime.set(runtime, pending);
      pending.catch(() => this.byRuntime.delete(runtime));
    }
    return pending;
  }

  private async open(runtime: RuntimeName): Promise<PodmanConnection> {
    const socketPath = ownedSocketPath(this.options.home, runtime);
    if (await pingSocket(socketPath, 500)) {
      this.adopted.add(socketPath);
    } else {
      if (!podmanInstalled()) {
        throw new WardenError(
          'E_RUNTIME_UNAVAILABLE',
          `this Podman service uses ${this.main.serviceRuntime} and cannot be asked for ${runtime} through its API`,
          'run Warden on the same host as Podman (it then starts a service per runtime), or start the service with `podman --runtime ' +
            runtime +
            ' system service`',
        );
      }
      let service: OwnedService;
      try {
        service = await OwnedService.start({
          home: this.options.home,
          runtime,
          idleSeconds: this.options.detached ? IDLE_SECONDS : 0,
          detached: this.options.detached,
        });
      } catch (err) {
        // The service refuses to start with a runtime Podman does not have.
        throw new WardenError(
          'E_RUNTIME_UNAVAILABLE',
          `Podman cannot use the ${runtime} runtime here: ${lastLogLine(ownedLogPath(this.options.home, runtime)) ?? (err as Error).message}`,
        );
      }
      this.services.push(service);
    }
    return PodmanConnection.open({ home: this.options.home, socketPath });
  }

  close(): void {
    for (const pending of this.byRuntime.values()) pending.then((c) => c.close()).catch(() => undefined);
    if (this.options.detached) return;
    for (const s of this.services) s.stop();
    // Owned as much as those started here (README, "The engine"): left running, they would never stop.
    for (const socket of this.adopted) stopAdoptedService(socket);
  }
}
