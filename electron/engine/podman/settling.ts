// A sandbox Warden is starting (create, start, restart, resume) is not the agent's until it has
// settled (sandbox-companions.ts settleStarted: its TCP memory bound, Podman's files read-only, its
// runner and relay). Agent calls that come meanwhile wait for that here. Stop 25's red team sent
// execs during a start: one held /etc/hosts open for writing before the remount, which the kernel
// then refused (EBUSY), and the file stayed writable on the host's disk.
import type { PodmanConnection } from './connection.js';

export class Settling {
  private readonly waits = new Map<string, Promise<void>>();
  private readonly waiters = new Map<string, number>();

  /** Runs `work` (a start and its settling) while the sandbox's agent calls wait for it to end. */
  hold<T>(containerId: string, work: () => Promise<T>): Promise<T> {
    const running = work();
    const ended = running.then(
      () => undefined,
      () => undefined,
    );
    this.waits.set(containerId, ended);
    void ended.then(() => {
      if (this.waits.get(containerId) === ended) this.waits.delete(containerId);
    });
    return running;
  }

  /** Whether a start of the sandbox is settling now. */
  settling(containerId: string): boolean {
    return this.waits.has(containerId);
  }

  /** Calls waiting for the sandbox's start to settle (specs: a call held here is seen held). */
  waiting(containerId: string): number {
    return this.waiters.get(containerId) ?? 0;
  }

  /** Resolves once no start of the sandbox is settling (at once when none is). */
  async settled(containerId: string): Promise<void> {
    const wait = this.waits.get(containerId);
    if (!wait) return;
    this.waiters.set(containerId, this.waiting(containerId) + 1);
    try {
      await wait;
    } finally {
      const left = this.waiting(containerId) - 1;
      if (left > 0) this.waiters.set(containerId, left);
      else this.waiters.delete(containerId);
    }
  }
}

const byConnection = new WeakMap<PodmanConnection, Settling>();

export function settlingOf(conn: PodmanConnection): Settling {
  let s = byConnection.get(conn);
  if (!s) byConnection.set(conn, (s = new Settling()));
  return s;
}
