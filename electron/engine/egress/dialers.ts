// Each served `egress` sandbox's dialer (sandbox-dialer.ts), kept to the sandbox's current first
// process: a restart or a start after its keep-alive died gives the sandbox a new cgroup and pid, and
// a dialer that died is started again before the next connection, in the cgroup of the sandbox as
// Podman sees it then. Where this host can run dialers, a connection whose dialer cannot be started
// fails rather than being made by Warden's own process outside the sandbox's bound (red team, stop 24:
// the fallback was silent and for good); where it cannot (no runner or addon, a v1 memory cgroup this
// process may not write), connections are made here, as `warden doctor` says.
import type { PodmanConnection } from '../podman/connection.js';
import type { LibpodInspect } from '../podman/sandbox-info.js';
import { tcpMemoryHostCheck } from '../podman/tcp-memory.js';
import { loadAddon } from './hand-over.js';
import { dialHere, SandboxDialer, type Dial } from './sandbox-dialer.js';

type Entry = { dialer: SandboxDialer; pid: number } | { why: string; pid: number };

export class Dialers {
  private readonly entries = new Map<string, Entry>();
  private readonly reopening = new Map<string, Promise<SandboxDialer>>();
  /** Host path of the runner binary whose egress-dialer makes a sandbox's connections; null: this process makes them. */
  runner: string | null = null;

  constructor(private readonly conn: PodmanConnection) {}

  /** Whether this host runs dialers at all (else connections are made here, and doctor says so). */
  get usable(): boolean {
    return this.runner !== null && loadAddon() !== null && tcpMemoryHostCheck().ok;
  }

  /** A live dialer for the sandbox whose first process is `pid` (one for an older pid is let go). */
  ensure(containerId: string, pid: number): void {
    const entry = this.entries.get(containerId);
    if (entry && entry.pid === pid && 'dialer' in entry && entry.dialer.alive) return;
    this.close(containerId);
    const opened = SandboxDialer.open(this.runner, pid);
    this.entries.set(containerId, 'dialer' in opened ? { dialer: opened.dialer, pid } : { why: opened.why, pid });
  }

  /** How the proxy connects for this sandbox now. */
  dialFor(containerId: string): Dial {
    const entry = this.entries.get(containerId);
    if (entry && 'dialer' in entry && entry.dialer.alive) return entry.dialer.dial;
    if (!this.usable) return dialHere;
    return (address, port) => this.reopen(containerId).then((dialer) => dialer.dial(address, port));
  }

  /** Whether the sandbox's connections count in its own TCP memory bound, or why not. */
  boundOf(containerId: string): { bounded: true } | { bounded: false; why: string } {
    const entry = this.entries.get(containerId);
    if (entry && 'dialer' in entry && entry.dialer.alive) return { bounded: true };
    return { bounded: false, why: entry && 'why' in entry ? entry.why : 'no dialer runs for it' };
  }

  /** The sandbox's first process its dialer follows, or null where none is known. */
  pidOf(containerId: string): number | null {
    return this.entries.get(containerId)?.pid ?? null;
  }

  close(containerId: string): void {
    const entry = this.entries.get(containerId);
    this.entries.delete(containerId);
    if (entry && 'dialer' in entry) entry.dialer.close();
  }

  closeAll(): void {
    for (const id of [...this.entries.keys()]) this.close(id);
  }

  /** One try at a time per sandbox, at its pid as Podman says it now. */
  private reopen(containerId: string): Promise<SandboxDialer> {
    let trying = this.reopening.get(containerId);
    if (!trying) {
      trying = (async () => {
        const raw = await this.conn.libpod<LibpodInspect>('GET', `/containers/${containerId}/json`, undefined, 'egress dialer');
        this.ensure(containerId, raw.State.Pid);
        const entry = this.entries.get(containerId);
        if (entry && 'dialer' in entry) return entry.dialer;
        throw new Error(`the sandbox's egress dialer could not start (${entry?.why ?? 'unknown'}): connections stay refused until it can`);
      })().finally(() => this.reopening.delete(containerId));
      this.reopening.set(containerId, trying);
    }
    return trying;
  }
}
