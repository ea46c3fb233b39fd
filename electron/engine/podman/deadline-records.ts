// A sandbox's TTL after its create. Podman cannot change a container's labels, so the expiry a
// create wrote (label warden.expires-at) can only be changed here: one small file per container id
// under WARDEN_HOME/deadlines/, which wins over the label wherever SandboxInfo is derived
// (sandboxes.ts), so the reaper, lists, the UI and the E2B door's endAt all see the same deadline.
// A file per id, replaced whole by rename, needs no read-modify-write: every process of the home
// (serve, app, CLI) reads it safely. Records are never cached: another process may change one.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { writeFileDurably } from '../durable-file.js';

export interface DeadlineRecord {
  /** When the sandbox expires now; null: never. */
  expiresAt: string | null;
  setAt: string;
}

const ID = /^[0-9a-f]{64}$/;

export class DeadlineRecords {
  readonly dir: string;

  constructor(home: string) {
    this.dir = join(home, 'deadlines');
  }

  get(id: string): DeadlineRecord | null {
    if (!ID.test(id)) return null;
    try {
      return parseRecord(readFileSync(join(this.dir, `${id}.json`), 'utf8'));
    } catch {
      return null;
    }
  }

  /** Durable when it returns: a temp file, synced, renamed into place, the directory synced. */
  put(id: string, record: DeadlineRecord): void {
    if (!ID.test(id)) throw new Error(`not a container id: ${id}`);
    writeFileDurably(this.dir, `${id}.json`, JSON.stringify(record));
  }

  remove(id: string): void {
    if (ID.test(id)) rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  /** The ids that have a record (one directory read, so a list of many sandboxes reads only those). */
  ids(): Set<string> {
    try {
      return new Set(
        readdirSync(this.dir)
          .filter((n) => n.endsWith('.json'))
          .map((n) => n.slice(0, -5)),
      );
    } catch {
      return new Set();
    }
  }

  /** The sandbox with the deadline its record says, when it has one. */
  view(info: SandboxInfo, known?: Set<string>): SandboxInfo {
    if (known && !known.has(info.id)) return info;
    const record = this.get(info.id);
    return record ? { ...info, expiresAt: record.expiresAt } : info;
  }
}

function parseRecord(text: string): DeadlineRecord | null {
  try {
    const r = JSON.parse(text) as Partial<DeadlineRecord>;
    if (typeof r.setAt !== 'string') return null;
    if (r.expiresAt !== null && (typeof r.expiresAt !== 'string' || Number.isNaN(Date.parse(r.expiresAt)))) return null;
    return { expiresAt: r.expiresAt, setAt: r.setAt };
  } catch {
    return null;
  }
}
