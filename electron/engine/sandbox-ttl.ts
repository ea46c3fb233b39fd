// A sandbox's TTL changed after its create (E2B's setTimeout, `warden sandbox ttl`): the new deadline
// is kept in WARDEN_HOME (podman/deadline-records.ts), where it wins over the create's label for the
// reaper and every view, and the change is in the ledger as sandbox.ttl-set with both deadlines.
// Whether the caller may ask for it is the gateway's question (gateway/lifecycle-verbs.ts). The
// reaper is here too: it expires sandboxes by the same deadline.
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import type { PodmanEngine } from './podman/podman-engine.js';
import type { RecordEntry } from './sandbox-files.js';
import { appendDurably, type AuditSink } from './audit-sink.js';

export class SandboxTtl {
  constructor(
    private readonly podman: PodmanEngine,
    private readonly audit: AuditSink,
    private readonly record: RecordEntry,
  ) {}

  /** Destroys the sandboxes whose deadline has passed (the record's where there is one, else the label's); their names. */
  async reap(now = new Date()): Promise<string[]> {
    // One Podman does not answer for (wedged) is left: its destroy would wait on it as well.
    const expired = (await this.podman.sandboxes.list()).filter((s) => !s.unreachable && s.expiresAt && new Date(s.expiresAt) <= now);
    for (const s of expired) {
      await this.podman.sandboxes.destroy(s.id).catch(() => undefined);
      await appendDurably(this.audit, [
        { actor: 'system', sandboxId: s.id, kind: 'sandbox.expired', payload: { name: s.name, expiresAt: s.expiresAt } },
      ]);
    }
    return expired.map((s) => s.name);
  }

  /** The sandbox expires `ttlSeconds` from `now` (null: never); answers it as it is now. */
  async set(ref: string, ttlSeconds: number | null, now = new Date()): Promise<SandboxInfo> {
    const before = await this.podman.sandboxes.resolve(ref);
    const expiresAt = ttlSeconds === null ? null : new Date(now.getTime() + ttlSeconds * 1000).toISOString();
    this.podman.deadlines.put(before.id, { expiresAt, setAt: now.toISOString() });
    await this.record(before.id, 'sandbox.ttl-set', { name: before.name, from: before.expiresAt, to: expiresAt, ttlSeconds });
    return { ...before, expiresAt };
  }
}
