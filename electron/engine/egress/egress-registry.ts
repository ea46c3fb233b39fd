// The egress forwarders of one Podman connection, by sandbox. Started wherever Warden starts an
// `egress` sandbox (create, start, restart, resume; podman/sandboxes.ts), let go before it stops,
// pauses or goes. Connections are handed to whoever serves them (the engine's EgressProxy); with
// none set they are cut at once, so an `egress` sandbox without a proxy has no way out at all.
import { EventEmitter } from 'node:events';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from '../podman/connection.js';
import type { EgressStream } from './egress-stream.js';
import { ForwardSession } from './forward-session.js';

/** Losses in a row after which a sandbox's forwarder is not started again (in this process). */
const MAX_LOSSES = 3;
/** How long ensure() leaves a sandbox alone after its forwarder would not start (another process holds the port). */
const ENSURE_RETRY_MS = 30_000;
const FORGET_WAIT_MS = 2000;

export type EgressHandler = (stream: EgressStream, sandboxId: string) => void;

interface Entry {
  session: Promise<ForwardSession | null>;
  losses: number;
}

export class EgressRegistry extends EventEmitter<{ lost: [{ sandboxId: string; reason: string; restarting: boolean }] }> {
  private readonly entries = new Map<string, Entry>();
  /** When ensure() last failed to start a sandbox's forwarder. */
  private readonly failedAt = new Map<string, number>();
  private closed = false;
  handler: EgressHandler | null = null;

  constructor(private readonly conn: PodmanConnection) {
    super();
  }

  /** Starts the sandbox's forwarder in the background; resolves once it listens (or could not start). */
  start(containerId: string, losses = 0, quiet = false): Promise<ForwardSession | null> {
    if (this.closed) return Promise.resolve(null);
    const entry: Entry = { session: Promise.resolve(null), losses };
    entry.session = ForwardSession.open(this.conn, containerId, {
      onStream: (stream) => {
        if (this.handler) this.handler(stream, containerId);
        else stream.destroy();
      },
      onLost: (reason) => this.onLost(containerId, entry, reason),
    }).then(
      (session) => session,
      (err: Error) => {
        if (this.entries.get(containerId) === entry) {
          this.entries.delete(containerId);
          if (!quiet) this.emit('lost', { sandboxId: containerId, reason: err.message, restarting: false });
        }
        return null;
      },
    );
    this.entries.set(containerId, entry);
    return entry.session;
  }

  /**
   * A forwarder for a running sandbox this process did not start (made by an earlier or a one-shot
   * Warden process, whose forwarder ended with it): started here unless one is up. When another
   * process still serves it, the port is taken and this one gives way until ENSURE_RETRY_MS has passed.
   */
  async ensure(containerId: string): Promise<void> {
    if (this.closed || this.entries.has(containerId)) return;
    const failed = this.failedAt.get(containerId);
    if (failed !== undefined && Date.now() - failed < ENSURE_RETRY_MS) return;
    if (await this.start(containerId, MAX_LOSSES - 1, true)) this.failedAt.delete(containerId);
    else this.failedAt.set(containerId, Date.now());
  }

  /** start(), and an error that says so when it could not. */
  async startOrFail(containerId: string): Promise<void> {
    if (!(await this.start(containerId)))
      throw new WardenError('E_ENGINE', "the sandbox's egress forwarder did not start", 'see `warden doctor`; or use --network none');
  }

  /** The sandbox's forwarder once it listens, or null. */
  async sessionFor(containerId: string): Promise<ForwardSession | null> {
    const session = await this.entries.get(containerId)?.session;
    return session && !session.ended ? session : null;
  }

  /** Lets the forwarder go (the sandbox stops, pauses or goes): not a loss. */
  async forget(containerId: string): Promise<void> {
    const entry = this.entries.get(containerId);
    this.entries.delete(containerId);
    if (!entry) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), FORGET_WAIT_MS)));
    const session = await Promise.race([entry.session, late]);
    clearTimeout(timer);
    if (session === 'late') void entry.session.then((s) => s?.shutdown());
    else await session?.shutdown();
  }

  private onLost(containerId: string, entry: Entry, reason: string): void {
    if (this.entries.get(containerId) !== entry) return;
    this.entries.delete(containerId);
    const restarting = !this.closed && entry.losses + 1 < MAX_LOSSES;
    if (restarting) void this.start(containerId, entry.losses + 1);
    this.emit('lost', { sandboxId: containerId, reason, restarting });
  }

  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) void entry.session.then((s) => s?.close());
    this.entries.clear();
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
