// The agent HTTP API on loopback: fastify with Host/Origin checks and bearer tokens on every route,
// JSON bodies only (bytes for file uploads), size limits, and the shared error envelope.
import Fastify, { type FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import { WardenError } from '../../shared/errors.js';
import { bearerToken, checkHostAndOrigin } from './http-guard.js';
import { clientErrorAnswer, sendError } from './http-errors.js';
import { registerAgentRoutes } from './routes-agent.js';
import { registerSnapshotRoutes } from './routes-snapshot.js';
import { registerRunRoutes } from './routes-runs.js';
import { registerWebShell } from './web-shell/index.js';
import { isE2bRequest, registerE2b } from './e2b/index.js';
import type { ServerDeps } from './server-deps.js';
import { AgentRoutes, type RouteSpec } from '../../shared/contracts/agent-routes.js';
import { registerRoute } from './register-route.js';
import { RevokedConnections } from './revoked-connections.js';
import './agent-context.js'; // the request's `caller` field

export const JSON_BODY_LIMIT = 1024 * 1024;
export const WS_FRAME_LIMIT = 64 * 1024;

export type { ServerDeps };

/** Paths that need no token (still Host/Origin checked). */
const PUBLIC = new Set<string>(Object.values(AgentRoutes as Record<string, RouteSpec>).flatMap((r) => (r.public ? [r.path] : [])));

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
    // Errors fastify raises before routing (a URL that does not decode, say) answer in the envelope too.
    frameworkErrors: (err, _req, reply) => void sendError(reply, err),
  });
  // Only JSON (and raw bytes where a route asks for them): no forms or text a browser can send cross-site.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('caller', null);
  const revoked = new RevokedConnections(deps.tokens);
  app.addHook('onClose', async () => revoked.close());
  await app.register(websocket, { options: { maxPayload: WS_FRAME_LIMIT } });

  app.addHook('onRequest', async (req, reply) => {
    try {
      checkHostAndOrigin(req.headers, req.socket.localPort ?? 0, req.raw.rawHeaders);
      if (PUBLIC.has(req.routeOptions.url ?? '')) return;
      // The web shell's routes authenticate with its own session (a browser cannot send our bearer token).
      if ((req.routeOptions.config as { webShell?: boolean } | undefined)?.webShell === true) return;
      // The E2B door (e2b/index.ts) takes its keys in E2B's headers and checks them itself.
      if (isE2bRequest(req)) return;
      const caller = deps.tokens.verify(bearerToken(req.headers));
      if (!caller)
        throw new WardenError(
          'E_UNAUTHORIZED',
          'missing, invalid or revoked token',
          'send Authorization: Bearer <token> (create one with `warden token create --agent NAME`)',
        );
      req.caller = caller;
      revoked.track(caller.id, req.raw.socket, reply.raw);
    } catch (err) {
      return sendError(reply, err);
    }
  });
  app.setErrorHandler((err, _req, reply) => sendError(reply, err));
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, new WardenError('E_NOT_FOUND', `no endpoint ${req.method} ${req.url.split('?')[0]}`, 'see the API in README.md')),
  );

  registerRoute(app, 'health', async () => ({ ok: true }));
  registerRoute(app, 'whoami', async (_in, req) => ({ agent: req.caller!.agent, role: req.caller!.role }));
  registerAgentRoutes(app, deps);
  registerSnapshotRoutes(app, deps);
  registerRunRoutes(app, deps);
  await registerWebShell(app, deps);
  await registerE2b(app, deps, revoked);
  return app;
}
