// Who owns a claimed pool sandbox. Podman cannot change a container's labels after create, so the
// owner's labels and TTL are kept here, one small file per container id under
// WARDEN_HOME/pool/owners/, and merged wherever SandboxInfo is derived (sandboxes.ts). A file per
// id needs no read-modify-write, so every process of the home (serve, app, CLI) reads it safely.
// A pool-labelled container without a record is still waiting in the pool: no one owns it yet.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { LABEL } from '../podman/labels.js';
import { writeFileDurably } from '../durable-file.js';

export interface OwnerRecord {
  /** The name it was claimed under (Podman's name says the current one). */
  name: string;
  labels: Record<string, string>;
  expiresAt: string | null;
  claimedAt: string;
}

const ID = /^[0-9a-f]{64}$/;

export class OwnerRecords {
  readonly dir: string;
  /** Records never change once written (a claimed sandbox is never pooled again): cache them. */
  private readonly known = new Map<string, OwnerRecord>();

  constructor(home: string) {
    this.dir = join(home, 'pool', 'owners');
  }

  get(id: string): OwnerRecord | null {
    const hit = this.known.get(id);
    if (hit) return hit;
    if (!ID.test(id)) return null;
    let text: string;
    try {
      text = readFileSync(join(this.dir, `${id}.json`), 'utf8');
    } catch {
      return null;
    }
    const record = parseRecord(text);
    if (record) this.known.set(id, record);
    return record;
  }

  /** Durable when it returns: written to a temp file, synced, renamed into place, directory synced. */
  put(id: string, record: OwnerRecord): void {
    if (!ID.test(id)) throw new Error(`not a container id: ${id}`);
    writeFileDurably(this.dir, `${id}.json`, JSON.stringify(record));
    this.known.set(id, record);
  }

  /** Still waiting in the warm pool: no one's yet, so no door may see or touch it. */
  waiting(id: string, labels: Record<string, string> | null): boolean {
    // An empty key is a pooled sandbox's label blanked on a sandbox made from its snapshot (snapshot/).
    return !!labels?.[LABEL.pool] && this.get(id) === null;
  }

  /** A claimed pool sandbox as its owner sees it; any other sandbox unchanged. */
  view(info: SandboxInfo, labels: Record<string, string> | null): SandboxInfo {
    const owner = labels?.[LABEL.pool] ? this.get(info.id) : null;
    return owner ? withOwner(info, owner) : info;
  }

  remove(id: string): void {
    this.known.delete(id);
    if (ID.test(id)) rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  /** Drops the records of containers that are gone (ids are never reused). */
  prune(live: Set<string>): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const id = name.slice(0, 64);
      if (name.endsWith('.tmp') || !live.has(id)) rmSync(join(this.dir, name), { force: true });
    }
  }
}

function parseRecord(text: string): OwnerRecord | null {
  try {
    const r = JSON.parse(text) as Partial<OwnerRecord>;
    if (typeof r.name !== 'string' || typeof r.claimedAt !== 'string') return null;
    if (r.expiresAt !== null && typeof r.expiresAt !== 'string') return null;
    if (!r.labels || typeof r.labels !== 'object') return null;
    const labels = Object.fromEntries(Object.entries(r.labels).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    return { name: r.name, labels, expiresAt: r.expiresAt ?? null, claimedAt: r.claimedAt };
  } catch {
    return null;
  }
}

/** The info as its owner sees it: the owner's labels and TTL in place of the pool's. */
export function withOwner(info: SandboxInfo, owner: OwnerRecord): SandboxInfo {
  return { ...info, labels: { ...owner.labels }, expiresAt: owner.expiresAt };
}
