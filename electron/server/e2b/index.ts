// The E2B door: the `e2b` SDK, pointed at `warden serve` (E2B_API_URL and E2B_SANDBOX_URL both
// <server>/e2b, E2B_API_KEY a Warden agent token), works unchanged and every call goes through the
// gateway. One fastify scope under /e2b: its own authentication (X-API-KEY for the control plane,
// the sandbox's access token for envd, after the server's Host/Origin checks), its own error shapes
// (E2B's REST {code,message}, Connect errors for RPCs), and "not supported by Warden" for the rest.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { E2B_PREFIX, EnvdRpcs, type EnvdRpcName } from '../../../shared/contracts/e2b-routes.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import { EnvdFilesQuerySchema } from '../../../shared/types/e2b.js';
import type { ServerDeps } from '../server-deps.js';
import type { RevokedConnections } from '../revoked-connections.js';
import { CONNECT_STREAM_TYPE, connectErrorBody, connectStreamError, readEnvelopedRequest } from './connect-protocol.js';
import { contextOf, E2bAccess } from './e2b-access.js';
import { e2bFailure, E2bUnsupported } from './e2b-errors.js';
import { registerE2bRest } from './e2b-rest.js';
import { listDir, makeDir, move, readFile, remove, stat, writeFiles } from './envd-files.js';
import { closeStdin, connectProcess, sendInput, updateProcess } from './envd-attach.js';
import { keepaliveMs, listProcesses, signalProcess, startProcess } from './envd-process.js';
import { ProcessTable } from './process-table.js';
import { watchDir, WatchTable } from './envd-watch.js';

/** What a route of this door is: the control plane, envd (RPC or HTTP), or an answer that needs no key. */
type E2bRouteKind = 'api' | 'envd-rpc' | 'envd-http' | 'open';

const kindOf = (req: FastifyRequest): E2bRouteKind | undefined => (req.routeOptions.config as { e2b?: E2bRouteKind } | undefined)?.e2b;

/** True for a request of this door: the server's own bearer check leaves it to the door. */
export function isE2bRequest(req: FastifyRequest): boolean {
  return kindOf(req) !== undefined;
}

function sendFailure(req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  if (kindOf(req) === 'envd-rpc' && String(req.headers['content-type'] ?? '').startsWith(CONNECT_STREAM_TYPE))
    return reply.code(200).type(CONNECT_STREAM_TYPE).send(connectStreamError(err));
  if (kindOf(req) === 'envd-rpc') {
    const { status, body } = connectErrorBody(err);
    return reply.code(status).type('application/json').send(body);
  }
  const { status, message } = e2bFailure(err);
  return reply.code(status).type('application/json').send({ code: status, message });
}

/** `revoked` closes this door's connections too when their agent's token is revoked (a command's stream included). */
export async function registerE2b(app: FastifyInstance, deps: ServerDeps, revoked: RevokedConnections): Promise<void> {
  const access = new E2bAccess(deps.tokens);
  const processes = new ProcessTable();
  const watches = new WatchTable();
  const { gateway } = deps;
  await app.register(
    async (scope) => {
      const bodyLimit = gateway.policy.files.maxWriteBytes * 2 + 64 * 1024;
      scope.addContentTypeParser(CONNECT_STREAM_TYPE, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      // Uploads: raw bytes or a multipart form (the gateway holds each file to the policy's write limit).
      scope.addContentTypeParser(
        ['application/octet-stream', 'multipart/form-data'],
        { parseAs: 'buffer', bodyLimit },
        (_req, body, done) => done(null, body),
      );
      scope.decorateRequest('e2bSandbox', '');
      scope.addHook('onRequest', async (req, reply) => {
        const kind = kindOf(req);
        if (kind === 'api') req.caller = access.apiCaller(req.headers).caller;
        if (kind === 'envd-rpc' || kind === 'envd-http') {
          const who = access.envdCaller(req.headers);
          req.caller = who.caller;
          req.e2bSandbox = who.sandboxId;
          E2bAccess.checkUser(req.headers, (req.query as { username?: unknown } | undefined)?.username as string | undefined);
        }
        if (req.caller) revoked.track(req.caller.id, req.raw.socket, reply.raw);
      });
      scope.setErrorHandler((err, req, reply) => sendFailure(req, reply, err));

      registerE2bRest(scope, { gateway, access });

      const rpc = (service: string) => async (req: FastifyRequest, reply: FastifyReply) => {
        const { method } = req.params as { method: string };
        const name = `${service}/${method}` as EnvdRpcName;
        const spec = EnvdRpcs[name] as (typeof EnvdRpcs)[EnvdRpcName] | undefined;
        if (!spec) throw new E2bUnsupported(`envd's ${service}/${method}`);
        const raw = spec.kind === 'server-stream' ? readEnvelopedRequest(req.body) : (req.body ?? {});
        const ctx = contextOf(req.caller!);
        const sandboxId = req.e2bSandbox;
        switch (name) {
          case 'process.Process/Start':
            await startProcess(
              { gateway, processes, ...(deps.streams ? { streams: deps.streams } : {}) },
              ctx,
              sandboxId,
              parseWith(EnvdRpcs[name].request, raw, method),
              reply,
              keepaliveMs(req.headers['keepalive-ping-interval']),
            );
            return reply;
          case 'process.Process/SendSignal':
            return signalProcess(processes, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method).process);
          case 'process.Process/List':
            return listProcesses(processes, ctx, sandboxId);
          case 'process.Process/Connect':
            connectProcess(
              processes,
              ctx,
              sandboxId,
              parseWith(EnvdRpcs[name].request, raw, method).process,
              reply,
              keepaliveMs(req.headers['keepalive-ping-interval']),
              deps.streams,
            );
            return reply;
          case 'process.Process/SendInput':
            return sendInput(processes, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method));
          case 'process.Process/CloseStdin':
            return closeStdin(processes, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method).process);
          case 'process.Process/Update':
            return updateProcess(processes, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method));
          case 'filesystem.Filesystem/ListDir': {
            const r = parseWith(EnvdRpcs[name].request, raw, method);
            return listDir(gateway, ctx, sandboxId, r.path, r.depth);
          }
          case 'filesystem.Filesystem/MakeDir':
            return makeDir(gateway, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method).path);
          case 'filesystem.Filesystem/Remove':
            return remove(gateway, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method).path);
          case 'filesystem.Filesystem/Move': {
            const r = parseWith(EnvdRpcs[name].request, raw, method);
            return move(gateway, ctx, sandboxId, r.source, r.destination);
          }
          case 'filesystem.Filesystem/Stat':
            return stat(gateway, ctx, sandboxId, parseWith(EnvdRpcs[name].request, raw, method).path);
          case 'filesystem.Filesystem/WatchDir': {
            const request = parseWith(EnvdRpcs[name].request, raw, method);
            const keepalive = keepaliveMs(req.headers['keepalive-ping-interval']);
            await watchDir(
              { gateway, watches, ...(deps.streams ? { streams: deps.streams } : {}) },
              ctx,
              sandboxId,
              request,
              reply,
              keepalive,
            );
            return reply;
          }
        }
      };
      for (const service of ['process.Process', 'filesystem.Filesystem'])
        scope.post(`/${service}/:method`, { config: { e2b: 'envd-rpc' } }, rpc(service));

      // envd answers while its sandbox runs; a paused one's does not (the SDK's isRunning() is then false).
      scope.get('/health', { config: { e2b: 'envd-http' } }, async (req, reply) => {
        const info = await gateway.inspectSandbox(contextOf(req.caller!), req.e2bSandbox);
        return reply.code(info.state === 'running' ? 204 : 502).send();
      });
      scope.get('/files', { config: { e2b: 'envd-http' } }, async (req, reply) => {
        const query = parseWith(EnvdFilesQuerySchema, req.query, 'query');
        const data = await readFile(gateway, contextOf(req.caller!), req.e2bSandbox, query.path);
        return reply.type('application/octet-stream').header('x-content-type-options', 'nosniff').send(data);
      });
      scope.post('/files', { config: { e2b: 'envd-http' }, bodyLimit }, async (req) => {
        const query = parseWith(EnvdFilesQuerySchema, req.query, 'query');
        const contentType = String(req.headers['content-type'] ?? '');
        const contentEncoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
        return writeFiles(gateway, contextOf(req.caller!), req.e2bSandbox, {
          contentType,
          contentEncoding,
          body: req.body,
          path: query.path,
        });
      });

      // Everything else of the E2B API (templates, volumes, snapshots, network updates …), named.
      scope.all('/*', { config: { e2b: 'open' } }, async (req) => {
        throw new E2bUnsupported(`${req.method} ${req.url.split('?')[0]}`);
      });
    },
    { prefix: E2B_PREFIX },
  );
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The sandbox an envd call's access token is for. */
    e2bSandbox: string;
  }
}
