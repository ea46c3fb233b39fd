// The sandbox list, bounded in time. Podman's list locks each container it reads, so one wedged
// sandbox (once, a gVisor sandbox flooded with connections stopped answering) made the whole list —
// and `podman ps` — wait forever, and every door's list with it. So the whole list has a bound; past
// it, each sandbox this process has seen is asked on its own (Podman's list filtered by one id reads
// only that container), each with its own bound. One that answers is shown as it is now; one that
// does not is shown as last seen, marked `unreachable` with what to do; the rest are not held up by
// it. With nothing seen yet (a process just started), the list past its bound is an E_TIMEOUT that
// says so: a list of nothing would be a lie.
import { msFromEnv } from '../env-ms.js';
import { WardenError, toErrorInfo } from '../../../shared/errors.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from './connection.js';
import { MANAGED_FILTER } from './labels.js';
import type { LibpodListEntry } from './sandbox-info.js';

export interface ListBounds {
  /** The whole list (one Podman call over every container). */
  wholeMs: number;
  /** One sandbox, when the whole list did not answer. */
  sandboxMs: number;
}

export const DEFAULT_LIST_BOUNDS: ListBounds = { wholeMs: 10_000, sandboxMs: 10_000 };

/** WARDEN_PODMAN_LIST_BOUND_MS sets both (a slow host; the e2e suite makes it short). */
export function listBoundsFrom(env: NodeJS.ProcessEnv): ListBounds {
  const ms = msFromEnv(env, 'WARDEN_PODMAN_LIST_BOUND_MS', 0);
  return ms ? { wholeMs: ms, sandboxMs: ms } : DEFAULT_LIST_BOUNDS;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

function listPath(id?: string): string {
  const filters = { label: [MANAGED_FILTER], ...(id ? { id: [id] } : {}) };
  return `/containers/json?all=true&filters=${encodeURIComponent(JSON.stringify(filters))}`;
}

export function wholeListLate(ms: number): WardenError {
  return new WardenError(
    'E_TIMEOUT',
    `Podman did not answer the sandbox list within ${seconds(ms)}`,
    "Podman's list waits on every container, so one wedged sandbox holds it up (`podman ps` waits too). " +
      '`podman inspect <id>` on each finds the one that does not answer; `podman rm -f <id>` removes it. Then retry.',
  );
}

export function sandboxLate(ms: number, name: string, id: string): WardenError {
  const short = id.slice(0, 12);
  return new WardenError(
    'E_TIMEOUT',
    `Podman did not answer for sandbox ${name} within ${seconds(ms)}; it may be wedged (shown as last seen)`,
    `if \`podman inspect ${short}\` hangs too, \`podman rm -f ${short}\` removes it (its workspace on the host stays); ` +
      'a gVisor sandbox may first need its stuck `runsc` processes ended',
  );
}

export class SandboxLister {
  /** Every sandbox of this home this process saw last, by id: what a wedged one is shown as. */
  private seen = new Map<string, SandboxInfo>();

  /** `toInfos`: the entries that are this home's callers' sandboxes, as they see them. */
  constructor(
    private readonly conn: PodmanConnection,
    private readonly bounds: ListBounds,
    private readonly toInfos: (entries: LibpodListEntry[]) => SandboxInfo[],
  ) {}

  remember(info: SandboxInfo): void {
    this.seen.set(info.id, info);
  }

  forget(id: string): void {
    this.seen.delete(id);
  }

  async list(): Promise<SandboxInfo[]> {
    let entries: LibpodListEntry[];
    try {
      entries = await this.conn.libpodWithin(this.bounds.wholeMs, listPath(), 'sandbox list', () => wholeListLate(this.bounds.wholeMs));
    } catch (err) {
      if (!(err instanceof WardenError && err.code === 'E_TIMEOUT') || this.seen.size === 0) throw err;
      return this.oneByOne();
    }
    const infos = this.toInfos(entries);
    this.seen = new Map(infos.map((info) => [info.id, info]));
    return infos;
  }

  private async oneByOne(): Promise<SandboxInfo[]> {
    const rows = await Promise.all([...this.seen.values()].map((last) => this.one(last)));
    return rows.filter((row): row is SandboxInfo => row !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The sandbox now; null when it is gone (or no longer one of the callers'); as last seen, marked, when Podman does not say. */
  private async one(last: SandboxInfo): Promise<SandboxInfo | null> {
    const { sandboxMs } = this.bounds;
    try {
      const entries = await this.conn.libpodWithin<LibpodListEntry[]>(sandboxMs, listPath(last.id), `sandbox ${last.name}`, () =>
        sandboxLate(sandboxMs, last.name, last.id),
      );
      const now = this.toInfos(entries).find((info) => info.id === last.id) ?? null;
      if (now) this.seen.set(now.id, now);
      else this.seen.delete(last.id);
      return now;
    } catch (err) {
      if (err instanceof WardenError && err.code === 'E_ENGINE_UNREACHABLE') throw err;
      return { ...last, unreachable: toErrorInfo(err) };
    }
  }
}
