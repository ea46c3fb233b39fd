// Composition root of `warden serve`: one engine, its ledger, the gateway, tokens and the HTTP API
// on loopback (127.0.0.1; not ::1). Writes server.json so local commands find it.
import type { FastifyInstance } from 'fastify';
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine, type PodmanEngineOptions } from '../engine/podman/podman-engine.js';
import { WardenEngine } from '../engine/engine.js';
import { openAuditLedger } from '../engine/open-ledger.js';
import { Ledger } from '../engine/ledger/ledger.js';
import { LedgerView } from '../engine/ledger/ledger-view.js';
import type { AuditSink } from '../engine/audit-sink.js';
import { ContextAuditSink } from '../engine/gateway/audit-context.js';
import { Gateway } from '../engine/gateway/gateway.js';
import { loadPolicy } from '../engine/gateway/policy-load.js';
import type { Policy } from '../../shared/types/policy.js';
import { buildServer } from './server.js';
import { StreamMeter } from './stream-meter.js';
import { TokenStore } from './tokens.js';
import { removeServerFile, writeServerFile } from './server-file.js';

export interface StartOptions {
  home?: string;
  port?: number;
  /** Use this policy instead of the one in WARDEN_HOME. */
  policy?: Policy;
  /** Use this Podman engine (tests); otherwise one is opened for the home. */
  podman?: PodmanEngine;
  podmanOptions?: Partial<PodmanEngineOptions>;
  /** Use this audit sink (tests, bench); otherwise the ledger of the home. */
  audit?: AuditSink & { close?: () => void };
  /** Follow engine events and reap expired sandboxes (default true). */
  watch?: boolean;
  /** Write server.json (default true). */
  announce?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  app: FastifyInstance;
  engine: WardenEngine;
  gateway: Gateway;
  tokens: TokenStore;
  home: string;
  /** What serve holds for slow clients (bounded; see stream-meter.ts). */
  streams: StreamMeter;
  close(): Promise<void>;
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const home = options.home ?? ensureWardenHome();
  const { policy, source } = options.policy ? { policy: options.policy, source: 'given' } : loadPolicy(home);
  const podman = options.podman ?? (await PodmanEngine.open({ home, ...options.podmanOptions }));
  const ledger = options.audit ?? openAuditLedger(home);
  const audit = new ContextAuditSink(ledger);
  const engine = new WardenEngine(podman, audit, { actor: 'user' });
  const gateway = new Gateway(engine, audit, { policy, policySource: source });
  const tokens = new TokenStore(home);
  tokens.userToken();
  if (options.watch !== false) await engine.watch().catch(() => undefined);
  const ledgerView = ledger instanceof Ledger ? new LedgerView(ledger) : null;
  const stopFollowing = ledger instanceof Ledger ? ledger.subscribe((entry) => engine.events.emit('ledger.appended', entry)) : () => undefined;
  const streams = new StreamMeter();
  const app = await buildServer({ engine, gateway, tokens, home, ledgerView, streams });
  // 127.0.0.1 only, on every host: "localhost" would follow /etc/hosts (IPv4, IPv6 or both), and
  // the URL printed and written to server.json must be where the server really is.
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const url = `http://127.0.0.1:${port}`;
  if (options.announce !== false) writeServerFile(home, { pid: process.pid, port, url, startedAt: new Date().toISOString() });
  let closed = false;
  return {
    url,
    port,
    app,
    engine,
    gateway,
    tokens,
    home,
    streams,
    async close() {
      if (closed) return;
      closed = true;
      if (options.announce !== false) removeServerFile(home);
      stopFollowing();
      gateway.close();
      await app.close();
      if (!options.podman) engine.close();
      ledger.close?.();
    },
  };
}
