// The egress sockets this process serves, by sandbox, on one Podman connection: for each `egress`
// sandbox, a Unix socket server on proxy.sock in its host directory (egress-dir.ts), mounted into
// the sandbox, where the relay (resources/runner/relay.c) brings every connection a program makes
// to 127.0.0.1:3128. A connection's sandbox is the socket it reached. Started wherever Warden starts
// an `egress` sandbox (create, start, restart, resume; podman/sandboxes.ts), together with the relay;
// let go before it stops, pauses or goes. A socket another live Warden process answers on is left to
// it; one nobody answers on (its process gone) is taken over. Connections go to whoever serves them
// (the engine's EgressProxy); with none set they are cut at once, so there is no way out without it.
import { EventEmitter } from 'node:events';
import { chmodSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { EGRESS_MOUNT_PATH, EGRESS_PROXY_PORT, EGRESS_SOCKET_NAME, RUNNER_MOUNT_PATH } from '../../../shared/contracts/runner.js';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from '../podman/connection.js';
import { collectExec } from '../podman/exec-session.js';
import { runtimeFromInspect } from '../podman/oci-runtime.js';
import type { LibpodInspect } from '../podman/sandbox-info.js';
import { egressDirOf, socketPathOf } from './egress-dir.js';
import { canHandOver, refuseDescriptors } from './hand-over.js';
import { intakeFor } from './egress-intake.js';
import { Dialers } from './dialers.js';

/** How long ensure() leaves a sandbox alone once another process was found serving it. */
const ENSURE_RETRY_MS = 30_000;
const PROBE_WAIT_MS = 2000;

export type EgressHandler = (socket: Socket, sandboxId: string) => void;

/** What start() found: serving it here, or another live process already does. */
type Served = 'here' | 'elsewhere';

/** True when something accepts a connection on the socket (a live Warden process serves it). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    const done = (up: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(up);
    };
    const timer = setTimeout(() => done(true), PROBE_WAIT_MS); // a busy server is still a server
    probe.once('connect', () => done(true));
    probe.once('error', () => done(false));
  });
}

function listenOn(server: Server, path: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const failed = (err: NodeJS.ErrnoException) => resolve(err);
    server.once('error', failed);
    server.listen(path, () => {
      server.off('error', failed);
      resolve(null);
    });
  });
}

export class EgressRegistry extends EventEmitter<{
  lost: [{ sandboxId: string; reason: string; restarting: boolean }];
  /** Connections refused for the sandbox's rate since the last report (egress-intake.ts). */
  throttled: [{ sandboxId: string; refused: number }];
}> {
  private readonly servers = new Map<string, Promise<Server | null>>();
  /** When ensure() last found another process serving a sandbox. */
  private readonly elsewhereAt = new Map<string, number>();
  private closed = false;
  /** Each served sandbox's dialer (dialers.ts). */
  readonly dialers: Dialers;
  handler: EgressHandler | null = null;

  constructor(private readonly conn: PodmanConnection) {
    super();
    this.dialers = new Dialers(conn);
  }

  /** Serves the sandbox's socket here (unless a live process does) and starts its relay; fails with the reason. */
  async start(containerId: string, opts: { relay?: boolean } = {}): Promise<Served> {
    if (this.closed) throw new WardenError('E_ENGINE', 'the engine is closing');
    const raw = await this.conn.libpod<LibpodInspect>('GET', `/containers/${encodeURIComponent(containerId)}/json`, undefined, 'egress');
    const dir = egressDirOf(raw);
    if (!dir)
      throw new WardenError(
        'E_ENGINE',
        `sandbox ${containerId.slice(0, 12)} has no egress socket directory mounted at ${EGRESS_MOUNT_PATH} (it was made by an older Warden)`,
        'destroy it and create it again',
      );
    // Where the sandbox's sockets are the host kernel's (hand-over.ts): gVisor's (and a microVM's) carry no descriptors to the host.
    const handOver = canHandOver() && /(^|\/)(runc|crun)$/.test(runtimeFromInspect(raw.OCIRuntime));
    const served = await this.listen(containerId, socketPathOf(dir));
    if (served === 'here') this.dialers.ensure(containerId, raw.State.Pid);
    if (opts.relay !== false) await this.startRelay(containerId, handOver);
    return served;
  }

  /** start(), the error said as Warden's own. */
  async startOrFail(containerId: string): Promise<void> {
    try {
      await this.start(containerId);
    } catch (err) {
      if (err instanceof WardenError) throw err;
      throw new WardenError(
        'E_ENGINE',
        `the sandbox's egress relay did not start: ${(err as Error).message}`,
        'see `warden doctor`; or use --network none',
      );
    }
  }

  /**
   * The sandbox's socket is served by someone before a command runs in it (this process may not be
   * the one that started it: that one may be gone). Taking it over also starts its relay again, in
   * case it went with the sandbox's processes; a live server elsewhere is asked again only after ENSURE_RETRY_MS.
   */
  async ensure(containerId: string): Promise<void> {
    if (this.closed || this.servers.has(containerId)) return;
    const elsewhere = this.elsewhereAt.get(containerId);
    if (elsewhere !== undefined && Date.now() - elsewhere < ENSURE_RETRY_MS) return;
    const served = await this.start(containerId).catch((err: Error) => {
      this.emit('lost', { sandboxId: containerId, reason: err.message, restarting: false });
      return null;
    });
    if (served === 'elsewhere') this.elsewhereAt.set(containerId, Date.now());
    else this.elsewhereAt.delete(containerId);
  }

  /** Whether this process serves the sandbox's socket. */
  async serving(containerId: string): Promise<boolean> {
    return (await this.servers.get(containerId)?.catch(() => null)) != null;
  }

  /** Stops serving it (the sandbox stops, pauses or goes): its socket is removed; open connections end with the relay. */
  async forget(containerId: string): Promise<void> {
    const server = this.servers.get(containerId);
    this.servers.delete(containerId);
    this.elsewhereAt.delete(containerId);
    this.dialers.close(containerId);
    const s = server ? await server.catch(() => null) : null;
    // Not waiting for its connections: they end with the relay (the sandbox stops or goes), or go on.
    s?.close();
    await new Promise((resolve) => setImmediate(resolve));
  }

  private async listen(containerId: string, path: string): Promise<Served> {
    const existing = await this.servers.get(containerId);
    if (existing) return 'here';
    const intake = intakeFor((stream) => (this.handler ? this.handler(stream, containerId) : stream.destroy()), {
      onThrottled: (refused) => this.emit('throttled', { sandboxId: containerId, refused }),
    });
    // Paused until its first byte says whether its relay can hand the program's connection over (egress-intake.ts).
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) =>
      this.handler ? intake(socket) : socket.destroy(),
    );
    const listening = (async (): Promise<Server | null> => {
      let err = await listenOn(server, path);
      if (err?.code === 'EADDRINUSE') {
        if (await answers(path)) return null;
        unlinkSync(path); // left by a process that is gone
        err = await listenOn(server, path);
      }
      if (err) throw err;
      chmodSync(path, 0o666);
      // No descriptor from the sandbox ever reaches this process (hand-over.ts says why); the
      // kernels that cannot refuse them are named by `warden doctor`.
      refuseDescriptors(server);
      server.unref(); // serving must not keep a one-shot process (the CLI) alive
      server.on('error', (e: Error) => this.lose(containerId, server, e.message));
      return server;
    })();
    this.servers.set(containerId, listening);
    try {
      const s = await listening;
      if (!s) this.servers.delete(containerId);
      return s ? 'here' : 'elsewhere';
    } catch (err) {
      this.servers.delete(containerId);
      throw err;
    }
  }

  /** Runs the relay's start in the sandbox: it returns once the relay listens (or one already does). */
  private async startRelay(containerId: string, handOver: boolean): Promise<void> {
    const r = await collectExec(this.conn, containerId, {
      cmd: [
        RUNNER_MOUNT_PATH,
        'egress-relay',
        String(EGRESS_PROXY_PORT),
        `${EGRESS_MOUNT_PATH}/${EGRESS_SOCKET_NAME}`,
        ...(handOver ? ['--hand-over'] : []),
      ],
    });
    if (r.exitCode !== 0) throw new Error(r.stderr.toString().trim().slice(0, 300) || `exit ${r.exitCode}`);
  }

  private lose(containerId: string, server: Server, reason: string): void {
    void this.servers.get(containerId)?.then((s) => {
      if (s !== server) return;
      this.servers.delete(containerId);
      server.close();
      this.emit('lost', { sandboxId: containerId, reason, restarting: false });
    });
  }

  close(): void {
    this.closed = true;
    this.dialers.closeAll();
    for (const server of this.servers.values())
      void server.then(
        (s) => s?.close(),
        () => undefined,
      );
    this.servers.clear();
  }
}

const registries = new WeakMap<PodmanConnection, EgressRegistry>();

/** The connection's egress registry (one per connection, made on first use). */
export function egressOf(conn: PodmanConnection): EgressRegistry {
  let registry = registries.get(conn);
  if (!registry) {
    registry = new EgressRegistry(conn);
    registries.set(conn, registry);
  }
  return registry;
}
