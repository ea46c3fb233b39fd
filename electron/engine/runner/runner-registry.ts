// The runners of one Podman connection, by sandbox. A runner is started in the background when
// Warden starts a sandbox (create, start, restart, resume) and the first call waits for it if it is
// still starting; a sandbox this process did not start (made before, or by another Warden process)
// gets one after its second plain call, so a one-shot CLI command never pays for a runner it would
// not use. A lost runner is reported ('lost', which the engine records as runner.lost) and started
// again for later calls; after a few losses in a row the sandbox stays on the plain path.
import { EventEmitter } from 'node:events';
import { RUNNER_MOUNT_PATH } from '../../../shared/contracts/runner.js';
import type { PodmanConnection } from '../podman/connection.js';
import { RunnerChannel } from './runner-channel.js';

/** Losses in a row after which a sandbox's calls stay on the plain path (in this process). */
const MAX_LOSSES = 3;

export interface RunnerLost {
  sandboxId: string;
  reason: string;
  /** Calls that failed with it. */
  inFlight: number;
  /** Whether another runner will be started for the next calls. */
  restarting: boolean;
}

interface Entry {
  channel: Promise<RunnerChannel | null>;
  current: RunnerChannel | null;
  losses: number;
}

/** How long stopping, pausing or removing a sandbox waits for its runner still starting. */
const FORGET_WAIT_MS = 2000;

export class RunnerRegistry extends EventEmitter<{ lost: [RunnerLost] }> {
  private readonly entries = new Map<string, Entry>();
  /** Sandboxes seen without a runner: plain calls so far, or false when they have no runner mount. */
  private readonly unknown = new Map<string, number | false>();
  private closed = false;

  constructor(private readonly conn: PodmanConnection) {
    super();
  }

  /** Starts the sandbox's runner in the background (after a start by Warden). */
  start(containerId: string, losses = 0): void {
    if (this.closed) return;
    this.unknown.delete(containerId);
    const entry: Entry = { channel: Promise.resolve(null), current: null, losses };
    entry.channel = RunnerChannel.open(this.conn, containerId, (reason, inFlight, engineGone) =>
      this.onLost(containerId, entry, reason, inFlight, engineGone),
    ).then(
      (channel) => {
        // Forgotten while it started: whoever forgot it shuts it down.
        if (this.entries.get(containerId) === entry && !this.closed) entry.current = channel;
        return channel;
      },
      () => {
        // Its loss (if it got that far) is already reported. The plain path serves, and a later
        // plain call may adopt a new runner (the engine may have been away).
        if (this.entries.get(containerId) === entry) this.entries.delete(containerId);
        return null;
      },
    );
    this.entries.set(containerId, entry);
  }

  /**
   * Stops using the sandbox's runner (it is being stopped, paused or removed): not a loss. Resolves
   * once a runner still starting has settled and the runner has exited, so no engine exec of it is
   * left to race the action.
   */
  async forget(containerId: string): Promise<void> {
    const entry = this.entries.get(containerId);
    this.entries.delete(containerId);
    this.unknown.delete(containerId);
    if (!entry) return;
    if (entry.current) return entry.current.shutdown();
    // Still starting (a busy engine can take seconds): the action waits a moment for it, then goes
    // on without it, and it is let go as soon as it is up. A stop must never hang on a runner.
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), FORGET_WAIT_MS)));
    const channel = await Promise.race([entry.channel, waited]);
    clearTimeout(timer);
    if (channel === 'late') void entry.channel.then((late) => late?.shutdown());
    else await channel?.shutdown();
  }

  /** Lets the runner go and keeps the sandbox on the plain path in this process (a spec's baseline, a misbehaving image). */
  async usePlain(containerId: string): Promise<void> {
    await this.forget(containerId);
    this.unknown.set(containerId, false);
  }

  /** The sandbox's runner when it is up (waiting for one that is starting), else null: use the plain path. */
  async channelFor(containerId: string): Promise<RunnerChannel | null> {
    const entry = this.entries.get(containerId);
    if (!entry) {
      this.notePlainCall(containerId);
      return null;
    }
    const channel = entry.current ?? (await entry.channel);
    return channel && !channel.lost ? channel : null;
  }

  private notePlainCall(containerId: string): void {
    const seen = this.unknown.get(containerId);
    if (seen === false || this.closed) return;
    const calls = (seen ?? 0) + 1;
    this.unknown.set(containerId, calls);
    if (calls !== 2) return;
    void this.hasRunnerMount(containerId).then(
      (yes) => {
        if (this.unknown.get(containerId) === undefined) return; // forgotten or started meanwhile
        if (yes) this.start(containerId);
        else this.unknown.set(containerId, false);
      },
      () => undefined,
    );
  }

  private async hasRunnerMount(containerId: string): Promise<boolean> {
    const raw = await this.conn.libpod<{ Mounts?: Array<{ Destination?: string }>; State?: { Running?: boolean } }>(
      'GET',
      `/containers/${encodeURIComponent(containerId)}/json`,
      undefined,
      `sandbox ${containerId}`,
    );
    return Boolean(raw.State?.Running) && (raw.Mounts ?? []).some((m) => m.Destination === RUNNER_MOUNT_PATH);
  }

  private onLost(containerId: string, entry: Entry, reason: string, inFlight: number, engineGone: boolean): void {
    const mine = this.entries.get(containerId) === entry;
    // One let go on purpose (its sandbox stopped, paused or removed, or replaced by a newer start)
    // ending is not a loss.
    if (!mine) return;
    if (engineGone) {
      // Not the runner's doing (the engine went away): no loss recorded; a later call adopts a new one.
      if (mine) this.entries.delete(containerId);
      return;
    }
    const restarting = mine && !this.closed && entry.losses + 1 < MAX_LOSSES;
    if (mine) {
      this.entries.delete(containerId);
      if (restarting) this.start(containerId, entry.losses + 1);
      else this.unknown.set(containerId, false);
    }
    this.emit('lost', { sandboxId: containerId, reason, inFlight, restarting });
  }

  /** The engine is closing: every runner's channel is cut (each runner exits on its end of input). */
  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) void entry.channel.then((c) => c?.close());
    this.entries.clear();
  }
}

const registries = new WeakMap<PodmanConnection, RunnerRegistry>();

/** The connection's registry (one per connection, made on first use). */
export function runnersOf(conn: PodmanConnection): RunnerRegistry {
  let registry = registries.get(conn);
  if (!registry) {
    registry = new RunnerRegistry(conn);
    registries.set(conn, registry);
  }
  return registry;
}
