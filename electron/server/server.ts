// The agent HTTP API on loopback: fastify with Host/Origin checks and bearer tokens on every route,
// JSON bodies only (bytes for file uploads), size limits, and the shared error envelope.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import { WardenError } from '../../shared/errors.js';
import { RUN_HEADER, RunKeySchema, type TokenInfo } from '../../shared/types/api.js';
import type { WardenEngine } from '../engine/engine.js';
import type { AgentContext, Gateway } from '../engine/gateway/gateway.js';
import { bearerToken, checkHostAndOrigin } from './http-guard.js';
import { clientErrorAnswer, sendError } from './http-errors.js';
import type { TokenStore } from './tokens.js';
import { registerAgentRoutes } from './routes-agent.js';
import { registerRunRoutes } from './routes-runs.js';
import { registerWebShell } from './web-shell/index.js';
import type { LedgerView } from '../engine/ledger/ledger-view.js';
import type { StreamMeter } from './stream-meter.js';

export const JSON_BODY_LIMIT = 1024 * 1024;
export const WS_FRAME_LIMIT = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    caller: TokenInfo | null;
  }
}

export interface ServerDeps {
  engine: WardenEngine;
  gateway: Gateway;
  tokens: TokenStore;
  home: string;
  /** The ledger view for the web shell (null when the server runs without the home's ledger). */
  ledgerView?: LedgerView | null;
  /** Bytes queued to slow clients, and the bounds that hold them (one per server). */
  streams?: StreamMeter;
}

/** Paths that need no token (still Host/Origin checked): a liveness probe that says nothing. */
const PUBLIC = new Set(['/v1/health']);

export function agentContext(req: FastifyRequest): AgentContext {
  const caller = req.caller;
  if (!caller) throw new WardenError('E_UNAUTHORIZED', 'missing or invalid token');
  const raw = req.headers[RUN_HEADER];
  let runKey: string | null = null;
  if (raw !== undefined) {
    const parsed = RunKeySchema.safeParse(Array.isArray(raw) ? raw[0] : raw);
    if (!parsed.success) throw new WardenError('E_BAD_INPUT', parsed.error.issues[0]!.message);
    runKey = parsed.data;
  }
  return { agent: caller.agent, runKey, ...(caller.role === 'user' ? { trusted: true } : {}) };
}

export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: JSON_BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: true,
    clientErrorHandler: (err: Error & { code?: string }, socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(clientErrorAnswer(err));
      socket.destroy(err);
    },
  });
  // Only JSON (and raw bytes where a route asks for them): no forms or text a browser can send cross-site.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('caller', null);
  await app.register(websocket, { options: { maxPayload: WS_FRAME_LIMIT } });

  app.addHook('onRequest', async (req, reply) => {
    try {
      checkHostAndOrigin(req.headers, req.socket.localPort ?? 0);
      if (PUBLIC.has(req.routeOptions.url ?? '')) return;
      // The web shell's routes authenticate with its own session (a browser cannot send our bearer token).
      if ((req.routeOptions.config as { webShell?: boolean } | undefined)?.webShell === true) return;
      const caller = deps.tokens.verify(bearerToken(req.headers));
      if (!caller) throw new WardenError('E_UNAUTHORIZED', 'missing, invalid or revoked token', 'send Authorization: Bearer <token> (create one with `warden token create --agent NAME`)');
      req.caller = caller;
    } catch (err) {
      return sendError(reply, err);
    }
  });
  app.setErrorHandler((err, _req, reply) => sendError(reply, err));
  app.setNotFoundHandler((req, reply) => sendError(reply, new WardenError('E_NOT_FOUND', `no endpoint ${req.method} ${req.url.split('?')[0]}`, 'see the API in README.md')));

  app.get('/v1/health', async () => ({ result: { ok: true } }));
  app.get('/v1/whoami', async (req) => ({ result: { agent: req.caller!.agent, role: req.caller!.role } }));
  registerAgentRoutes(app, deps);
  registerRunRoutes(app, deps);
  await registerWebShell(app, deps);
  return app;
}
