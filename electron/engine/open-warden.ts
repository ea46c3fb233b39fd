// One wiring for every door (the app, `warden serve`, `warden mcp`, the in-process CLI, the specs
// and the bench): policy → Podman engine → audit ledger → ContextAuditSink → WardenEngine →
// Gateway, the LedgerReader beside them and the ledger's appends announced as ledger.appended,
// closed in one order. Doors add only what is theirs (HTTP, IPC, stdio). The ledger half opens on
// its own too, because the app shows its ledger while Podman is still away.
import { join } from 'node:path';
import type { LedgerEntry } from '../../shared/types/ledger.js';
import type { Policy } from '../../shared/types/policy.js';
import type { AuditSink } from './audit-sink.js';
import { WardenEngine } from './engine.js';
import { ContextAuditSink } from './gateway/audit-context.js';
import { Gateway } from './gateway/gateway.js';
import { egressThroughGateway } from './gateway/egress-approval.js';
import { loadPolicy } from './gateway/policy-load.js';
import { RunArchive } from './gateway/run-archive.js';
import { Ledger, type LedgerOptions } from './ledger/ledger.js';
import { LedgerReader } from './ledger/ledger-reader.js';
import { PodmanEngine, type PodmanEngineOptions } from './podman/podman-engine.js';

/** How long a Podman service Warden starts for a short-lived door (CLI, MCP) waits idle for the next command. */
export const SERVICE_IDLE_SECONDS = 300;

/** For a short-lived door: the service it may start outlives it, warm for the next command. */
export const DETACHED_SERVICE: Partial<PodmanEngineOptions> = { detachedService: true, serviceIdleSeconds: SERVICE_IDLE_SECONDS };

export function ledgerFile(home: string): string {
  return join(home, 'ledger.db');
}

/** Runs and their calls, kept across restarts (gateway/run-archive.ts). */
export function runsFile(home: string): string {
  return join(home, 'runs.db');
}

/** The home's ledger, shared by every door (appends from several processes serialize in SQLite). */
export function openAuditLedger(home: string, options: LedgerOptions = {}): Ledger {
  return Ledger.open(ledgerFile(home), { keyDir: join(home, 'keys'), ...options });
}

export interface WardenLedgerOptions {
  /** This ledger instead of the home's (a spec's options); closed with the rest. */
  ledger?: Ledger;
  /** Where the engine writes, if not straight to the ledger (a spec's wrapper around it); closed with the rest. */
  audit?: AuditSink & { close?: () => void };
  /** Told of every append this process makes (as ledger.appended). */
  announce?: (entry: LedgerEntry) => void;
}

export interface WardenLedger {
  home: string;
  ledger: Ledger;
  /** What the engine and the gateway write to: the ledger, with the acting agent swapped in. */
  audit: ContextAuditSink;
  ledgerReader: LedgerReader;
  close(): void;
}

/** The half that needs no Podman. */
export function openWardenLedger(home: string, options: WardenLedgerOptions = {}): WardenLedger {
  const ledger = options.ledger ?? openAuditLedger(home);
  const inner = options.audit ?? ledger;
  const stopAnnouncing = options.announce ? ledger.subscribe(options.announce) : () => undefined;
  return {
    home,
    ledger,
    audit: new ContextAuditSink(inner),
    ledgerReader: new LedgerReader(ledger),
    close() {
      stopAnnouncing();
      if (inner !== ledger) options.audit?.close?.();
      ledger.close();
    },
  };
}

export interface EngineWiringOptions {
  /** Who acts through the engine when no agent's call is running (default "user"). */
  actor?: string;
  /** This policy instead of the home's policy file. */
  policy?: Policy;
  /** false: no gateway, and no policy read (the in-process CLI acts only as the user). */
  gateway?: boolean;
}

export interface LoadedPolicy {
  policy: Policy;
  source: string;
}

/** The gateway's policy (null without a gateway): read before anything starts, so a broken file fails first. */
export function readPolicy(home: string, options: EngineWiringOptions = {}): LoadedPolicy | null {
  if (options.gateway === false) return null;
  return options.policy ? { policy: options.policy, source: 'given' } : loadPolicy(home);
}

/** The half on Podman, over an open ledger half: the engine, and the gateway when there is a policy. */
export function openWardenEngine(
  half: WardenLedger,
  podman: PodmanEngine,
  policy: LoadedPolicy,
  options?: EngineWiringOptions,
): { engine: WardenEngine; gateway: Gateway };
export function openWardenEngine(
  half: WardenLedger,
  podman: PodmanEngine,
  policy: LoadedPolicy | null,
  options?: EngineWiringOptions,
): { engine: WardenEngine; gateway: Gateway | null };
export function openWardenEngine(
  half: WardenLedger,
  podman: PodmanEngine,
  policy: LoadedPolicy | null,
  options: EngineWiringOptions = {},
): { engine: WardenEngine; gateway: Gateway | null } {
  const engine = new WardenEngine(podman, half.audit, { actor: options.actor ?? 'user' });
  const gateway = policy
    ? new Gateway(engine, half.audit, {
        policy: policy.policy,
        policySource: policy.source,
        ...(policy.source !== 'given' ? { policyHome: half.home } : {}),
        runArchive: RunArchive.open(runsFile(half.home)),
      })
    : null;
  if (gateway) egressThroughGateway(engine.egress, gateway, half.audit);
  return { engine, gateway };
}

export interface OpenWardenOptions extends Omit<WardenLedgerOptions, 'announce'>, EngineWiringOptions {
  /** This Podman engine (a spec's, the bench's): the caller closes it. Otherwise one is opened for the home. */
  podman?: PodmanEngine;
  /** For the engine opened here: e.g. DETACHED_SERVICE, a pinned socket. */
  podmanOptions?: Partial<PodmanEngineOptions>;
}

export interface Warden<G extends Gateway | null = Gateway> extends WardenLedger {
  home: string;
  engine: WardenEngine;
  gateway: G;
  /** Gateway (ends agents' waits), engine (and the Podman engine it opened), then the ledger, which signs a checkpoint. */
  close(): void;
}

export async function openWarden(home: string, options: OpenWardenOptions & { gateway: false }): Promise<Warden<null>>;
export async function openWarden(home: string, options?: OpenWardenOptions): Promise<Warden>;
export async function openWarden(home: string, options: OpenWardenOptions = {}): Promise<Warden<Gateway | null>> {
  const policy = readPolicy(home, options);
  // Podman before the ledger: a command that cannot reach Podman leaves the ledger untouched.
  const podman = options.podman ?? (await PodmanEngine.open({ home, ...options.podmanOptions }));
  let engine: WardenEngine | null = null;
  let half: WardenLedger;
  try {
    half = openWardenLedger(home, { ...options, announce: (entry) => engine?.events.emit('ledger.appended', entry) });
  } catch (err) {
    if (!options.podman) podman.close();
    throw err;
  }
  const opened = openWardenEngine(half, podman, policy, options);
  engine = opened.engine;
  let closed = false;
  return {
    ...half,
    home,
    engine: opened.engine,
    gateway: opened.gateway,
    close() {
      if (closed) return;
      closed = true;
      opened.gateway?.close();
      // A given Podman engine is the caller's: its engine is left for the caller to close.
      if (!options.podman) opened.engine.close();
      half.close();
    },
  };
}
