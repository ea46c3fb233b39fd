// Composition root of `warden serve`: one engine, its ledger, the gateway, tokens and the HTTP API
// on loopback (127.0.0.1; not ::1). Writes server.json so local commands find it.
import type { FastifyInstance } from 'fastify';
import { ensureWardenHome } from '../engine/paths.js';
import type { PodmanEngine, PodmanEngineOptions } from '../engine/podman/podman-engine.js';
import type { WardenEngine } from '../engine/engine.js';
import type { Ledger } from '../engine/ledger/ledger.js';
import type { AuditSink } from '../engine/audit-sink.js';
import type { Gateway } from '../engine/gateway/gateway.js';
import { openWarden } from '../engine/open-warden.js';
import type { Policy } from '../../shared/types/policy.js';
import { buildServer } from './server.js';
import { StreamMeter } from './stream-meter.js';
import { TokenStore } from './tokens.js';
import { removeServerFile, writeServerFile } from './server-file.js';
import { closePool, openPool } from '../engine/pool/open-pool.js';
import type { PoolConfig } from '../../shared/types/pool.js';

export interface StartOptions {
  home?: string;
  port?: number;
  /** Use this policy instead of the one in WARDEN_HOME. */
  policy?: Policy;
  /** Use this Podman engine (tests); otherwise one is opened for the home. */
  podman?: PodmanEngine;
  podmanOptions?: Partial<PodmanEngineOptions>;
  /** Use this ledger (tests, bench); otherwise the ledger of the home. Closed with the server. */
  ledger?: Ledger;
  /** Write through this sink around the ledger (a spec that makes the ledger refuse); closed with the server. */
  audit?: AuditSink & { close?: () => void };
  /** Follow engine events and reap expired sandboxes (default true). */
  watch?: boolean;
  /** Write server.json (default true). */
  announce?: boolean;
  /**
   * The warm pool: WARDEN_HOME/pool.yaml by default; off (false) by default when the Podman engine
   * is borrowed (specs and benches own what is made on it).
   */
  pool?: PoolConfig | false;
  /** Extra Podman labels on pooled sandboxes (specs: their run label). */
  poolLabels?: Record<string, string>;
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
  /**
   * For a close that Podman keeps from finishing (serve's stop bound): the engine (and a Podman
   * service it started) and the ledger close now, the ledger with its checkpoint; what Podman did
   * not remove stays.
   */
  abandon(): void;
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const home = options.home ?? ensureWardenHome();
  const warden = await openWarden(home, options);
  const { engine, gateway, ledgerReader } = warden;
  const tokens = new TokenStore(home);
  tokens.userToken();
  if (options.watch !== false) await engine.watch().catch(() => undefined);
  const poolConfig = options.pool ?? (options.podman ? false : undefined);
  const pool =
    poolConfig === false
      ? null
      : await openPool(engine, warden, {
          ...(poolConfig ? { config: poolConfig } : {}),
          ...(options.poolLabels ? { labels: options.poolLabels } : {}),
        }).catch((err: Error) => {
          process.stderr.write(`warden: no warm pool: ${err.message}\n`);
          return null;
        });
  const streams = new StreamMeter();
  const app = await buildServer({ engine, gateway, tokens, home, ledgerReader, streams });
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
      // The gateway first: it ends agents' waits (approvals), so the HTTP server can drain.
      gateway.close();
      await app.close();
      await closePool(engine, pool);
      warden.close();
    },
    abandon() {
      warden.close();
    },
  };
}
