// The warm pool: per shape, a few sandboxes created, started, made ready and attested ahead of
// time, so a create request of that shape is a rename and a durable owner record instead of a
// create + start + disk + first exec. A pooled sandbox goes to exactly one owner (taken from the
// queue synchronously, so parallel claims get distinct ones), is never offered again once taken,
// and is invisible to every door until claimed (owner-records.ts). Refills run in the background,
// one at a time, within the configured size per shape and total memory. On open it adopts what a
// previous process of this home left (clean close or kill -9) when healthy, and sweeps the rest.
import { randomBytes } from 'node:crypto';
import type { PoolConfig, PoolStatus } from '../../../shared/types/pool.js';
import type { SandboxInfo, SandboxSpec } from '../../../shared/types/sandbox.js';
import type { Attestations } from '../attest/attestations.js';
import { appendDurably, type AuditSink } from '../audit-sink.js';
import type { PodmanEngine } from '../podman/podman-engine.js';
import { nameInUse, nameTaken, POOL_NAME_PREFIX } from '../podman/container-names.js';
import { handOver, type Announce, type ClaimStep } from './hand-over.js';
import { listPoolContainers } from './pool-containers.js';
import { takePoolLock } from './pool-lock.js';
import { poolableShape, shapeKey, shapeOf, specOf, type Shape, type ShapeDefaults } from './shape.js';

export { POOL_NAME_PREFIX } from '../podman/container-names.js';
/** After a failed fill, the shape waits this long (times the failures in a row, up to 10) before the next try. */
const RETRY_MS = 30_000;

export interface WarmPoolDeps {
  podman: PodmanEngine;
  attestations: Attestations;
  audit: AuditSink;
  /** Extra Podman labels on pooled sandboxes (specs: their run label, so a crashed run's pool is swept). */
  labels?: Record<string, string>;
  /**
   * Awaited before a sandbox is offered, after its start and before its attestation: the hook for
   * the in-sandbox runner ("runner-ready"). Throwing discards the sandbox.
   */
  ready?: (sandbox: SandboxInfo) => Promise<void>;
  /** Whether the ledger holds a claim (sandbox.created) of this sandbox: adoption keeps a claimed one only then. */
  claimRecorded: (sandboxId: string) => boolean;
  /** Specs only: awaited after each step of a claim (hand-over.ts). */
  claimStep?: (step: ClaimStep, id: string) => Promise<void> | void;
  now?: () => Date;
}

interface Slot {
  key: string;
  shape: Shape;
  target: number;
  ready: SandboxInfo[];
  failures: number;
  retryAt: number;
}

export class WarmPool {
  private readonly slots = new Map<string, Slot>();
  private fillingBytes = 0;
  private pumping: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(
    private readonly deps: WarmPoolDeps,
    private readonly config: PoolConfig,
    private readonly releaseLock: () => void,
  ) {
    for (const spec of config.shapes) {
      const shape = shapeOf(spec, this.defaults());
      if (!shape) continue;
      const key = shapeKey(shape);
      if (!this.slots.has(key)) this.slots.set(key, { key, shape, target: config.size, ready: [], failures: 0, retryAt: 0 });
    }
  }

  /**
   * Adopts or sweeps what a previous process left, then starts filling. Null when the pool is off
   * (size 0: leftovers are still swept) or another live process of this home holds it.
   */
  static async open(deps: WarmPoolDeps, config: PoolConfig): Promise<WarmPool | null> {
    const release = takePoolLock(deps.podman.options.home);
    if (!release) return null;
    const pool = new WarmPool(deps, config, release);
    try {
      await pool.adopt();
    } catch (err) {
      release();
      throw err;
    }
    if (config.size === 0 || pool.slots.size === 0) {
      await pool.close();
      return null;
    }
    pool.pump();
    return pool;
  }

  private defaults(): ShapeDefaults {
    return { image: this.deps.podman.sandboxes.defaultImage, runtime: this.deps.podman.connection.defaultRuntime ?? null };
  }

  /**
   * A started, attested sandbox for this spec, renamed and owned by its caller; null when the spec
   * is not poolable or its pool is empty (the caller creates it cold, as it would without a pool).
   * `announce` records the claim before the hand-over; a name in use is E_CONFLICT, nothing taken.
   */
  async claim(spec: SandboxSpec, announce: Announce): Promise<SandboxInfo | null> {
    if (this.closed) return null;
    const shape = poolableShape(spec, this.defaults());
    const slot = shape ? this.slots.get(shapeKey(shape)) : undefined;
    if (!slot || slot.ready.length === 0) return null;
    // A name the pool cannot take must not cost a pooled sandbox: refused before one is taken.
    if (spec.name && (await nameInUse(this.deps.podman.connection, spec.name))) throw nameTaken(spec.name);
    const taken = slot.ready.shift();
    try {
      const name = spec.name ?? `sbx-${randomBytes(3).toString('hex')}`;
      const handOverDeps = { ...this.deps, discard: (info: SandboxInfo, why: string) => this.discard(info, why) };
      return taken ? await handOver(handOverDeps, taken, spec, name, announce) : null;
    } finally {
      this.pump();
    }
  }

  status(): PoolStatus {
    const shapes = [...this.slots.values()].map((s) => ({
      key: s.key,
      image: s.shape.image,
      runtime: s.shape.runtime,
      memoryBytes: s.shape.memoryBytes,
      network: s.shape.network,
      ready: s.ready.length,
      target: s.target,
    }));
    return { enabled: !this.closed, ready: shapes.reduce((n, s) => n + s.ready, 0), shapes };
  }

  /** Resolves once nothing is being filled (specs wait on it; it never waits on a clock). */
  async settled(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stops filling; the ready ones stay for the next open to adopt, unless drained. */
  async close(opts: { drain?: boolean } = {}): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.settled();
    if (opts.drain) {
      for (const slot of this.slots.values()) {
        for (const sandbox of slot.ready.splice(0)) await this.discard(sandbox, 'the pool was drained');
      }
    }
    this.releaseLock();
  }

  private memoryInUse(): number {
    let bytes = this.fillingBytes;
    for (const s of this.slots.values()) bytes += s.ready.length * s.shape.memoryBytes;
    return bytes;
  }

  private async adopt(): Promise<void> {
    const { podman } = this.deps;
    const found = await listPoolContainers(podman.connection, podman.sandboxes.homeId);
    podman.owners.prune(new Set(found.map((c) => c.info.id)));
    for (const { key, info } of found) {
      // A claim is kept when the ledger and the owner record both have it; a process killed in
      // its hand-over leaves one without the other, and its caller never heard back: removed.
      const owned = podman.owners.get(info.id) !== null;
      const recorded = this.deps.claimRecorded(info.id);
      if (owned && recorded) {
        await this.finishRename(info); // claimed: its owner's now
        continue;
      }
      if (owned || recorded) {
        await this.discard(
          info,
          owned
            ? 'its claim was not in the ledger (a process ended during its hand-over)'
            : 'its hand-over did not finish (a process ended during it)',
        );
        continue;
      }
      const slot = this.slots.get(key);
      const fits =
        slot !== undefined &&
        this.config.size > 0 &&
        info.state === 'running' &&
        info.name.startsWith(POOL_NAME_PREFIX) &&
        slot.ready.length < slot.target &&
        this.memoryInUse() + slot.shape.memoryBytes <= this.config.maxMemory;
      // The whole inspect (runtime in use, disk held), as a fresh create would give the attestation.
      const full = fits ? await podman.sandboxes.resolve(info.id, { pooled: true }).catch(() => null) : null;
      if (full && (await this.offerable(full).catch(() => false))) slot!.ready.push(full);
      else await this.discard(info, fits ? 'it was not healthy after a restart' : 'a previous process left it');
    }
  }

  /** A claim killed before Podman renamed it: it takes its owner's name now, if still free. */
  private async finishRename(info: SandboxInfo): Promise<void> {
    const name = this.deps.podman.owners.get(info.id)?.name;
    if (!name || info.name === name) return;
    const path = `/containers/${info.id}/rename?name=${encodeURIComponent(name)}`;
    await this.deps.podman.connection.libpod('POST', path, undefined, `sandbox ${name}`, [200, 204]).catch(() => undefined);
  }

  /** Ready for an owner: the runner hook, then an attestation that holds (recorded as for any sandbox). */
  private async offerable(info: SandboxInfo): Promise<boolean> {
    await this.deps.ready?.(info);
    return (await this.deps.attestations.run(info, false, 'system')).ok;
  }

  private async discard(info: SandboxInfo, reason: string): Promise<void> {
    await this.deps.podman.sandboxes.destroy(info.id, { pooled: true }).catch(() => undefined);
    this.deps.attestations.forget(info.id);
    await appendDurably(this.deps.audit, [
      { actor: 'system', sandboxId: info.id, kind: 'sandbox.destroyed', payload: { name: info.name, pooled: true, reason } },
    ]).catch(() => undefined);
  }

  /** Starts the background fill if it is not running; it stops when every shape is full or waiting. */
  private pump(): void {
    if (this.closed || this.pumping) return;
    const run = () => this.fillAll();
    const job = this.deps.audit.detached ? this.deps.audit.detached(run) : run();
    this.pumping = job.finally(() => {
      this.pumping = null;
    });
  }

  private async fillAll(): Promise<void> {
    for (let slot = this.nextSlot(); slot && !this.closed; slot = this.nextSlot()) await this.fillOne(slot);
  }

  private nextSlot(): Slot | null {
    const now = Date.now();
    for (const slot of this.slots.values()) {
      if (slot.ready.length >= slot.target || slot.retryAt > now) continue;
      if (this.memoryInUse() + slot.shape.memoryBytes > this.config.maxMemory) continue;
      return slot;
    }
    return null;
  }

  private async fillOne(slot: Slot): Promise<void> {
    const { podman } = this.deps;
    this.fillingBytes = slot.shape.memoryBytes;
    let info: SandboxInfo | null = null;
    try {
      const name = `${POOL_NAME_PREFIX}${randomBytes(6).toString('hex')}`;
      info = await podman.sandboxes.create(
        { ...specOf(slot.shape), name, labels: { ...this.config.labels, ...this.deps.labels } },
        { poolKey: slot.key },
      );
      await appendDurably(this.deps.audit, [
        {
          actor: 'system',
          sandboxId: info.id,
          kind: 'sandbox.pooled',
          payload: {
            name: info.name,
            shape: slot.key,
            image: info.image,
            runtime: info.runtime,
            network: info.network,
            limits: info.limits,
          },
        },
      ]);
      if (!(await this.offerable(info))) throw new Error('its attestation did not hold');
      slot.ready.push(info);
      slot.failures = 0;
    } catch (err) {
      if (info) await this.discard(info, `not offered: ${(err as Error).message}`);
      slot.failures++;
      const wait = RETRY_MS * Math.min(slot.failures, 10);
      slot.retryAt = Date.now() + wait;
      process.stderr.write(`warden: the warm pool could not fill a ${slot.shape.image} sandbox: ${(err as Error).message}\n`);
      if (!this.closed && !this.retry) {
        this.retry = setTimeout(() => {
          this.retry = null;
          this.pump();
        }, wait + 100); // past retryAt whatever the clocks' granularity
        this.retry.unref();
      }
    } finally {
      this.fillingBytes = 0;
    }
  }
}
