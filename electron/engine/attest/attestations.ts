// The engine's attestations: run one (on demand, or automatically once a sandbox has started, off
// the create's path), record it in the ledger as sandbox.attested, push it to UIs, and keep each
// sandbox's latest so policy can refuse agents a sandbox whose promises were seen not to hold.
import type { Attestation } from '../../../shared/types/attestation.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { appendDurably, type AuditSink } from '../audit-sink.js';
import type { EventBus } from '../event-bus.js';
import type { PodmanConnection } from '../podman/connection.js';
import { attest } from './attest.js';

/** Who asks for the automatic attestation after start. */
export const AUTO_ACTOR = 'system';

export class Attestations {
  private readonly latest = new Map<string, Attestation>();
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly conn: PodmanConnection,
    private readonly audit: AuditSink,
    private readonly events: EventBus,
    private readonly home: string,
  ) {}

  async run(sandbox: SandboxInfo, deep: boolean, actor: string): Promise<Attestation> {
    const result = await attest(this.conn, sandbox, { deep, actor, home: this.home });
    // Durable without holding the event loop: a background attestation must not freeze the door
    // while another process holds the ledger (ledger-lock.int.spec).
    await appendDurably(this.audit, [
      {
        actor,
        sandboxId: sandbox.id,
        kind: 'sandbox.attested',
        payload: { name: result.name, runtime: result.runtime, deep, ok: result.ok, durationMs: result.durationMs, checks: result.checks },
      },
    ]);
    this.latest.set(sandbox.id, result);
    this.events.emit('sandbox.attested', result);
    return result;
  }

  /**
   * Attests in the background: the caller (create, start) returns at once. A sandbox removed or
   * stopped meanwhile is simply not attested (nothing is recorded for it).
   */
  later(sandbox: SandboxInfo): void {
    if (sandbox.state !== 'running') return;
    const start = () => this.run(sandbox, false, AUTO_ACTOR).catch(() => undefined);
    const job = this.audit.detached ? this.audit.detached(start) : start();
    this.pending.set(sandbox.id, job);
    void job.finally(() => {
      if (this.pending.get(sandbox.id) === job) this.pending.delete(sandbox.id);
    });
  }

  /**
   * Waits for the sandbox's background attestation, if one is running: pausing would freeze its
   * exec mid-way, and removing a container while an exec is still being set up or torn down can
   * fail to remove its root filesystem.
   */
  async settle(sandboxId: string): Promise<void> {
    await this.pending.get(sandboxId);
  }

  /** Some background attestation is running (callers skip a lookup when none is). */
  get busy(): boolean {
    return this.pending.size > 0;
  }

  /** Resolves once every background attestation has landed (a CLI waits before it closes). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending.values()]);
  }

  latestFor(sandboxId: string): Attestation | null {
    return this.latest.get(sandboxId) ?? null;
  }

  forget(sandboxId: string): void {
    this.latest.delete(sandboxId);
  }
}
