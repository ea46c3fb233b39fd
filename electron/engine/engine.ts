// The engine behind every door: implements the shared method map on Podman, records every
// action in the audit ledger, and pushes engine events to subscribers.
import type { MethodHandlers, MethodParams, ExecRunResponse } from '../../shared/contracts/methods.js';
import type { ExecRequest, ExecResult } from '../../shared/types/exec.js';
import type { SandboxInfo, SandboxSpec } from '../../shared/types/sandbox.js';
import type { PoolStatus } from '../../shared/types/pool.js';
import { EventBus } from './event-bus.js';
import { appendDurably, type AuditRecord, type AuditSink } from './audit-sink.js';
import { execRunResponse, recordedExec, type ExecAudit, type ExecRecorder } from './exec-record.js';
import type { PodmanEngine } from './podman/podman-engine.js';
import type { ExecHandlers } from './podman/exec-session.js';
import { EngineEvents } from './podman/events.js';
import { subscribeStats, type StatsSubscription } from './podman/stats.js';
import { openTerminal, type TerminalOptions, type TerminalSession } from './podman/terminal-session.js';
import { runDoctor } from './doctor.js';
import { Attestations } from './attest/attestations.js';
import { runnersOf } from './runner/runner-registry.js';
import { SandboxFiles } from './sandbox-files.js';
import { SandboxTtl } from './sandbox-ttl.js';
import { RunningExecs } from './running-execs.js';
import { createdPayload, NamesUnderWay } from './sandbox-create.js';
import { WorkspaceChanges } from './diff/workspace-changes.js';
import { Snapshots } from './snapshot/snapshots.js';
import { adoptEgress, serveEgress, type EgressService } from './egress/serve-egress.js';
import { settlingOf } from './podman/settling.js';

export type { ExecAudit } from './exec-record.js';
export type { CallRef } from './sandbox-files.js';
/** Default cap of output kept by a buffered exec (exec.run); streamed execs keep none. */
const DEFAULT_COLLECT_LIMIT = 4 * 1024 * 1024;

export type DigestedExecResult = ExecResult & { stdoutDigest: string; stderrDigest: string };

export interface WardenEngineOptions {
  /** Who is acting: "user", an agent's name, "system". */
  actor: string;
}

/** What the engine asks of a warm pool (pool/warm-pool.ts): a ready sandbox for a spec, or null (create cold). */
export interface SandboxPool {
  /** `announce` records the claim durably before the hand-over; a name in use is E_CONFLICT before anything is taken. */
  claim(spec: SandboxSpec, announce: (claimed: SandboxInfo) => Promise<void>): Promise<SandboxInfo | null>;
  status(): PoolStatus;
}

export class WardenEngine implements MethodHandlers {
  readonly events = new EventBus();
  private engineEvents: EngineEvents | null = null;
  private reaper: NodeJS.Timeout | null = null;
  readonly attestations: Attestations;
  private readonly execs: ExecRecorder;
  /** Files in a sandbox's /workspace, each read, write and listing recorded (the gateway's file verbs). */
  readonly files: SandboxFiles;
  /** TTLs changed after create, recorded (sandbox-ttl.ts). */
  readonly ttl: SandboxTtl;
  /** Workspace baselines and diffs (diff/); snapshots, reset and fork (snapshot/); what `egress` sandboxes may reach (egress/). */
  readonly changes: WorkspaceChanges;
  readonly snapshots: Snapshots;
  readonly egress: EgressService;
  /** Set by long-lived doors (app, serve): creates are served from it first. */
  pool: SandboxPool | null = null;
  private readonly naming = new NamesUnderWay();

  constructor(
    readonly podman: PodmanEngine,
    private readonly audit: AuditSink,
    private readonly options: WardenEngineOptions = { actor: 'user' },
  ) {
    this.attestations = new Attestations(podman.connection, audit, this.events, podman.options.home);
    this.execs = {
      conn: podman.connection,
      audit,
      running: new RunningExecs(),
      entry: (id, kind, payload) => this.entry(id, kind, payload),
    };
    this.files = new SandboxFiles(podman.connection, (id, kind, payload) => this.record(id, kind, payload));
    this.ttl = new SandboxTtl(podman, audit, (id, kind, payload) => this.record(id, kind, payload));
    this.changes = new WorkspaceChanges(podman.connection, podman.options.home);
    this.snapshots = new Snapshots(podman, audit, this.attestations, () => this.options.actor, this.changes);
    this.egress = serveEgress(podman.connection, audit, podman.options.home);
    podman.connection.on('status', (status) => {
      this.events.emit('engine.status', { status });
      this.record(null, status === 'connected' ? 'engine.up' : 'engine.down', { status }).catch((err: Error) =>
        process.stderr.write(`warden: the ledger did not record engine.${status === 'connected' ? 'up' : 'down'}: ${err.message}\n`),
      );
    });
    // A sandbox's runner died or misbehaved: the engine records it (the registry already failed its calls).
    runnersOf(podman.connection).on('lost', ({ sandboxId, ...payload }) => {
      appendDurably(this.audit, [{ actor: 'system', sandboxId, kind: 'runner.lost', payload }]).catch((err: Error) =>
        process.stderr.write(`warden: the ledger did not record runner.lost: ${err.message}\n`),
      );
    });
  }

  private entry(sandboxId: string | null, kind: string, payload: unknown): AuditRecord {
    return { actor: this.options.actor, sandboxId, kind, payload };
  }

  /** Durable when it resolves; a ledger locked by another process does not hold the event loop. */
  private async record(sandboxId: string | null, kind: string, payload: unknown): Promise<void> {
    await appendDurably(this.audit, [this.entry(sandboxId, kind, payload)]);
  }

  /** Follows engine events and expires sandboxes past their TTL: for long-lived doors (app, server). */
  async watch(reapEveryMs = 10_000): Promise<void> {
    if (this.engineEvents) return; // already watching: a second stream would double every event
    this.engineEvents = new EngineEvents(this.podman.connection, {
      homeId: this.podman.sandboxes.homeId,
      onEvent: (event) => {
        // A sandbox removed with the podman CLI leaves its disk mounted: release it now, not at the next open.
        if (event.kind === 'remove') void this.podman.disks.releaseIfOrphan(event.sandboxId).catch(() => undefined);
        // A limit that ended the whole sandbox (gVisor) goes to the ledger with its reason.
        if (event.kind === 'die' && event.reason) {
          // Off the event loop's back: a ledger locked by another process must not freeze the door.
          appendDurably(this.audit, [
            {
              actor: 'system',
              sandboxId: event.sandboxId,
              kind: 'sandbox.limit-ended',
              payload: { name: event.name, exitCode: event.exitCode, reason: event.reason },
            },
          ]).catch((err: Error) => process.stderr.write(`warden: the ledger did not record sandbox.limit-ended: ${err.message}\n`));
        }
        this.events.emit('sandbox.event', event);
      },
      onResync: () => this.events.emit('sandbox.resync', {}),
    });
    await this.engineEvents.start();
    void adoptEgress(this.podman.connection, this.listSandboxes());
    this.reaper = setInterval(() => void this.reapExpired().catch(() => undefined), reapEveryMs);
    this.reaper.unref();
  }

  /** Destroys sandboxes whose TTL (as set at create or since) has passed; returns their names. */
  reapExpired(now = new Date()): Promise<string[]> {
    return this.ttl.reap(now);
  }

  async 'engine.info'() {
    return this.podman.info();
  }

  async 'engine.doctor'(params: MethodParams<'engine.doctor'>) {
    return runDoctor({
      home: this.podman.options.home,
      env: this.podman.options.env ?? process.env,
      engine: this.podman,
      fresh: params.fresh ?? false,
    });
  }

  /** This home's sandboxes. */
  listSandboxes(): Promise<SandboxInfo[]> {
    return this.podman.sandboxes.list();
  }

  /**
   * A sandbox by name, id or id prefix; E_NOT_FOUND for anything that is not one of this home's.
   * Bounded as the list is (E_TIMEOUT, saying it may be wedged): every agent call looks its sandbox
   * up first, and a Podman that hangs must fail them, not hold them for ever (red team, stop 23).
   */
  resolveSandbox(ref: string): Promise<SandboxInfo> {
    return this.podman.sandboxes.inspect(ref);
  }

  /** The image a sandbox gets when its spec names none. */
  get defaultImage(): string {
    return this.podman.sandboxes.defaultImage;
  }

  async 'sandbox.list'() {
    return this.listSandboxes();
  }

  async 'sandbox.inspect'(params: MethodParams<'sandbox.inspect'>) {
    return this.podman.sandboxes.inspect(params.ref);
  }

  async 'sandbox.create'(spec: MethodParams<'sandbox.create'>) {
    return this.naming.hold(spec.name, () => this.createSandbox(spec));
  }

  private async createSandbox(spec: SandboxSpec): Promise<SandboxInfo> {
    // A pooled claim is in the ledger before its sandbox is anyone's (pool/hand-over.ts).
    const pooled =
      (await this.pool?.claim(spec, (claimed) => this.record(claimed.id, 'sandbox.created', createdPayload(claimed, true)))) ?? null;
    if (pooled) {
      // Attested before it was offered; its create and start events were hidden, so UIs hear of it here.
      this.events.emit('sandbox.event', { kind: 'create', sandboxId: pooled.id, name: pooled.name, time: Date.now() });
      await this.changes.atCreate(pooled);
      return pooled;
    }
    const info = await this.podman.sandboxes.create(spec);
    await this.record(info.id, 'sandbox.created', createdPayload(info, false));
    await this.changes.atCreate(info);
    this.attestations.later(info);
    return info;
  }

  async 'pool.status'() {
    return this.pool?.status() ?? { enabled: false, ready: 0, shapes: [] };
  }

  private async lifecycle(kind: string, info: Promise<SandboxInfo>): Promise<SandboxInfo> {
    const result = await info;
    await this.record(result.id, kind, { name: result.name, state: result.state });
    return result;
  }

  async 'sandbox.start'(p: MethodParams<'sandbox.start'>) {
    const info = await this.lifecycle('sandbox.started', this.podman.sandboxes.start(p.ref));
    this.attestations.later(info);
    return info;
  }

  async 'sandbox.stop'(p: MethodParams<'sandbox.stop'>) {
    return this.lifecycle('sandbox.stopped', this.podman.sandboxes.stop(p.ref));
  }

  async 'sandbox.restart'(p: MethodParams<'sandbox.restart'>) {
    const info = await this.lifecycle('sandbox.restarted', this.podman.sandboxes.restart(p.ref));
    this.attestations.later(info);
    return info;
  }

  async 'sandbox.pause'(p: MethodParams<'sandbox.pause'>) {
    await this.settleAttestation(p.ref);
    const { id } = await this.resolveSandbox(p.ref);
    const pause = () => this.lifecycle('sandbox.paused', this.podman.sandboxes.pause(id));
    return this.execs.running.closedDuring(id, 'the sandbox was paused', pause);
  }

  async 'sandbox.resume'(p: MethodParams<'sandbox.resume'>) {
    return this.lifecycle('sandbox.resumed', this.podman.sandboxes.resume(p.ref));
  }

  /** A background attestation of this sandbox lands before it is paused or removed. */
  private async settleAttestation(ref: string): Promise<void> {
    if (!this.attestations.busy) return;
    const id = (await this.resolveSandbox(ref).catch(() => null))?.id;
    if (id) await this.attestations.settle(id);
  }

  async 'sandbox.destroy'(p: MethodParams<'sandbox.destroy'>) {
    await this.settleAttestation(p.ref);
    const gone = await this.podman.sandboxes.destroy(p.ref);
    await this.record(gone.id, 'sandbox.destroyed', { name: gone.name });
    this.changes.forget(gone.id);
    this.attestations.forget(gone.id);
    return gone;
  }

  async 'sandbox.attest'(p: MethodParams<'sandbox.attest'>) {
    return this.attestations.run(await this.resolveSandbox(p.ref), p.deep ?? false, this.options.actor);
  }

  async 'sandbox.attestation'(p: MethodParams<'sandbox.attestation'>) {
    return this.attestations.latestFor((await this.resolveSandbox(p.ref)).id);
  }

  /** Runs a command, streaming its output to the handlers, and records start and finish. */
  async execStream(ref: string, request: ExecRequest, handlers: ExecHandlers = {}): Promise<DigestedExecResult> {
    return this.execIn(await this.resolveSandbox(ref), request, handlers);
  }

  /**
   * execStream on a sandbox the caller has already resolved (the gateway, which resolves to check
   * access): no second inspect. `audit.before` are written with exec.started in one transaction,
   * durable before the command starts; `audit.onRecorded` runs once they are.
   */
  async execIn(
    sandbox: SandboxInfo,
    request: ExecRequest,
    handlers: ExecHandlers = {},
    audit: ExecAudit = {},
  ): Promise<DigestedExecResult> {
    await settlingOf(this.podman.connection).settled(sandbox.id); // a start in flight settles first (settling.ts)
    return recordedExec(this.execs, sandbox, request, handlers, audit);
  }

  async 'exec.run'(p: MethodParams<'exec.run'>): Promise<ExecRunResponse> {
    const request = { ...p.request, outputLimitBytes: p.request.outputLimitBytes ?? DEFAULT_COLLECT_LIMIT };
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const result = await this.execStream(p.ref, request, { onStdout: (c) => out.push(c), onStderr: (c) => err.push(c) });
    return execRunResponse(result, out, err);
  }

  async openTerminal(ref: string, options: TerminalOptions = {}): Promise<TerminalSession> {
    const sandbox = await this.resolveSandbox(ref);
    await settlingOf(this.podman.connection).settled(sandbox.id);
    const session = await openTerminal(this.podman.connection, sandbox.id, options);
    await this.record(sandbox.id, 'terminal.opened', { execId: session.execId });
    return session;
  }

  subscribeStats(ids: string[]): Promise<StatsSubscription> {
    return subscribeStats(this.podman.connection, ids, (sample) => this.events.emit('stats.sample', sample));
  }

  close(): void {
    this.egress.close();
    this.engineEvents?.stop();
    if (this.reaper) clearInterval(this.reaper);
    this.podman.close();
  }
}
