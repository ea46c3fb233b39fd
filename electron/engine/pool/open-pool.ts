// How a long-lived door (app, serve) gets its warm pool: the home's pool config, the engine's
// Podman half, attestations and ledger, and the engine told to claim from it. Short-lived doors
// (CLI, MCP) never open one: a pool that ends with its process is only a cost.
import type { PoolConfig } from '../../../shared/types/pool.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { AuditSink } from '../audit-sink.js';
import type { WardenEngine } from '../engine.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ClaimStep } from './hand-over.js';
import { runnersOf } from '../runner/runner-registry.js';
import { egressOf } from '../egress/egress-registry.js';
import { loadPoolConfig } from './pool-config.js';
import { WarmPool } from './warm-pool.js';

export interface OpenPoolOptions {
  /** Instead of WARDEN_HOME/pool.yaml. */
  config?: PoolConfig;
  /** Extra Podman labels on pooled sandboxes (specs: their run label). */
  labels?: Record<string, string>;
  /** Awaited before a sandbox is offered; by default, its runner up (runnerReady). */
  ready?: (sandbox: SandboxInfo) => Promise<void>;
  /** Specs only: awaited after each step of a claim, to stop the process at a known point. */
  claimStep?: (step: ClaimStep, id: string) => Promise<void> | void;
}

/** Where the pool records (the engine's audit sink) and reads back whether a claim was recorded. */
export interface PoolLedger {
  audit: AuditSink;
  ledger: Pick<Ledger, 'entries'>;
}

/**
 * A pooled sandbox is offered with its runner up, so its first call is the fast one. One adopted
 * after a restart has no runner of this process yet: it is started here.
 */
async function runnerReady(engine: WardenEngine, sandbox: SandboxInfo): Promise<void> {
  if (!engine.podman.sandboxes.withRunner) return;
  // An `egress` sandbox's only way out is its socket and relay: up before the sandbox is anyone's.
  if (sandbox.network === 'egress' && !(await egressOf(engine.podman.connection).serving(sandbox.id)))
    await egressOf(engine.podman.connection).startOrFail(sandbox.id);
  const runners = runnersOf(engine.podman.connection);
  if (await runners.channelFor(sandbox.id)) return;
  runners.start(sandbox.id);
  if (!(await runners.channelFor(sandbox.id))) throw new Error('its runner did not start');
}

export async function openPool(engine: WardenEngine, ledger: PoolLedger, options: OpenPoolOptions = {}): Promise<WarmPool | null> {
  const config = options.config ?? loadPoolConfig(engine.podman.options.home).config;
  const pool = await WarmPool.open(
    {
      podman: engine.podman,
      attestations: engine.attestations,
      audit: ledger.audit,
      ...(options.labels ? { labels: options.labels } : {}),
      ready: options.ready ?? ((sandbox) => runnerReady(engine, sandbox)),
      claimRecorded: (sandboxId) => ledger.ledger.entries({ sandboxId, kind: 'sandbox.created', limit: 1 }).length > 0,
      ...(options.claimStep ? { claimStep: options.claimStep } : {}),
    },
    config,
  );
  engine.pool = pool;
  return pool;
}

/**
 * The door's close: no more claims, and the ready ones removed, so nothing of Warden's runs after it
 * has quit. Kept (drain: false) they would be adopted by the next open, as after a kill -9.
 */
export async function closePool(engine: WardenEngine, pool: WarmPool | null, opts: { drain?: boolean } = {}): Promise<void> {
  if (engine.pool === pool) engine.pool = null;
  await pool?.close({ drain: opts.drain ?? true });
}
