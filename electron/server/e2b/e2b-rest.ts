// The E2B control plane (E2B_API_URL) over the gateway: create, list, get, kill and connect, each the
// same gateway verb the agent API's route calls, so policy, create limits, runs and the ledger see
// an E2B sandbox as any other. Template `base` is Warden's default image; metadata is labels; a
// timeout is the TTL (setTimeout, pause and connect: e2b-lifecycle.ts). What Warden cannot do is
// refused with "not supported by Warden".
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { E2B_ENVD_VERSION, E2B_TEMPLATES, E2bRoutes, type E2bRouteName } from '../../../shared/contracts/e2b-routes.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import { WardenError } from '../../../shared/errors.js';
import type { E2bListedSandbox, E2bListQuery, E2bNewSandbox, E2bSandbox } from '../../../shared/types/e2b.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { Gateway } from '../../engine/gateway/gateway.js';
import { contextOf, type E2bAccess } from './e2b-access.js';
import { E2bUnsupported } from './e2b-errors.js';
import { metricsOf } from './e2b-metrics.js';
import { registerE2bLifecycle } from './e2b-lifecycle.js';

const TEMPLATE_LABEL = 'e2b.template';
/** Labels that are Warden's own, not the caller's metadata. */
const RESERVED_LABEL = /^(warden\.|e2b\.)/;
const MiB = 1024 * 1024;
const NO_END = '9999-12-31T23:59:59.000Z';
const E2B_DEFAULT_TIMEOUT_S = 300;

export type E2bRouteHandler = (
  input: { params: { sandboxID: string }; query: unknown; body: unknown },
  req: FastifyRequest,
) => Promise<unknown>;
type Handler = E2bRouteHandler;
export type E2bRouteRegistrar = typeof register;

function register(app: FastifyInstance, name: E2bRouteName, handler: Handler): void {
  const route = E2bRoutes[name];
  app.route({
    method: route.method,
    url: route.path,
    config: { e2b: 'api' },
    handler: async (req, reply: FastifyReply) => {
      const params = 'params' in route ? (parseWith(route.params, req.params, 'sandbox id') as { sandboxID: string }) : { sandboxID: '' };
      const query = 'query' in route ? parseWith(route.query, req.query ?? {}, 'query') : undefined;
      const body = 'body' in route ? parseWith(route.body, req.body ?? {}, route.bodyName) : undefined;
      const answer = await handler({ params, query, body }, req);
      reply.code('status' in route ? route.status : 200);
      return answer ?? reply.send();
    },
  });
}

function listed(info: SandboxInfo): E2bListedSandbox {
  const metadata = Object.fromEntries(Object.entries(info.labels).filter(([k]) => !RESERVED_LABEL.test(k)));
  return {
    sandboxID: info.id,
    templateID: info.labels[TEMPLATE_LABEL] ?? info.image,
    alias: info.name,
    clientID: 'warden',
    startedAt: info.startedAt ?? info.createdAt,
    endAt: info.expiresAt ?? NO_END,
    cpuCount: info.limits.cpus,
    memoryMB: Math.round(info.limits.memoryBytes / MiB),
    diskSizeMB: Math.round((info.limits.diskBytes ?? 0) / MiB),
    metadata,
    state: info.state === 'paused' ? 'paused' : 'running',
    envdVersion: E2B_ENVD_VERSION,
  };
}

/** The list's filters: every metadata pair, one of the states, the template. */
function matching(q: E2bListQuery): (s: E2bListedSandbox) => boolean {
  const pairs = [...new URLSearchParams(q.metadata ?? '')];
  const states = q.state ? q.state.split(',') : null;
  return (s) =>
    pairs.every(([k, v]) => s.metadata[k] === v) && (!states || states.includes(s.state)) && (!q.template || s.templateID === q.template);
}

/** What Warden's create is asked for, or why it cannot be. */
export function createSpec(body: E2bNewSandbox, defaultImage: string): Record<string, unknown> {
  if (!(E2B_TEMPLATES as readonly string[]).includes(body.templateID))
    throw new WardenError(
      'E_NOT_FOUND',
      `template "${body.templateID}" is not known to Warden`,
      `known templates: ${E2B_TEMPLATES.join(', ')} (Warden's default image, ${defaultImage})`,
    );
  if (body.mcp !== undefined && body.mcp !== null) throw new E2bUnsupported('an MCP gateway (mcp)');
  if (body.volumeMounts?.length) throw new E2bUnsupported('volumes (volumeMounts)');
  if (body.autoPause) throw new E2bUnsupported('pausing on timeout (autoPause)');
  if (body.network !== undefined && body.network !== null)
    throw new E2bUnsupported('network rules (network)', 'Warden sandboxes have no network unless its policy gives them one');
  if (body.allow_internet_access === true)
    throw new E2bUnsupported('internet access (allowInternetAccess)', 'Warden sandboxes have no network unless its policy gives them one');
  const metadata = body.metadata ?? {};
  const reserved = Object.keys(metadata).find((k) => RESERVED_LABEL.test(k));
  if (reserved)
    throw new WardenError('E_BAD_INPUT', `metadata key "${reserved}" is reserved`, "keys starting with warden. or e2b. are Warden's own");
  return {
    labels: { ...metadata, [TEMPLATE_LABEL]: body.templateID },
    ...(body.envVars && Object.keys(body.envVars).length ? { env: body.envVars } : {}),
    // E2B's own default when the SDK sends none: a forgotten sandbox goes away as it would there.
    ttlSeconds: body.timeout ?? E2B_DEFAULT_TIMEOUT_S,
  };
}

export function registerE2bRest(app: FastifyInstance, { gateway, access }: { gateway: Gateway; access: E2bAccess }): void {
  const sandboxAnswer = (info: SandboxInfo, apiKey: string): E2bSandbox => ({
    sandboxID: info.id,
    templateID: info.labels[TEMPLATE_LABEL] ?? info.image,
    clientID: 'warden',
    envdVersion: E2B_ENVD_VERSION,
    envdAccessToken: access.grant(apiKey, info.id),
    domain: null,
    trafficAccessToken: null,
  });

  const create: Handler = async ({ body }, req) => {
    const { caller, apiKey } = access.apiCaller(req.headers);
    const info = await gateway.createSandbox(contextOf(caller), createSpec(body as E2bNewSandbox, gateway.engine.defaultImage));
    return sandboxAnswer(info, apiKey);
  };
  register(app, 'sandbox.create', create);
  register(app, 'sandbox.create.v1', create);

  const list: Handler = async ({ query }, req) => {
    const { caller } = access.apiCaller(req.headers);
    const all = (await gateway.listSandboxes(contextOf(caller))).filter((s) => s.state === 'running' || s.state === 'paused');
    return all.map(listed).filter(matching(query as E2bListQuery));
  };
  register(app, 'sandbox.list', list);
  register(app, 'sandbox.list.v1', list);

  register(app, 'sandbox.get', async ({ params }, req) => {
    const { caller, apiKey } = access.apiCaller(req.headers);
    const info = await gateway.inspectSandbox(contextOf(caller), params.sandboxID);
    return { ...listed(info), envdAccessToken: access.grant(apiKey, info.id) };
  });

  register(app, 'sandbox.metrics', async ({ params }, req) => {
    const { caller } = access.apiCaller(req.headers);
    return metricsOf(gateway.engine, await gateway.inspectSandbox(contextOf(caller), params.sandboxID));
  });

  register(app, 'sandbox.kill', async ({ params }, req) => {
    const { caller } = access.apiCaller(req.headers);
    const gone = await gateway.destroySandbox(contextOf(caller), params.sandboxID);
    access.forget(gone.id);
    return undefined;
  });

  registerE2bLifecycle(app, { gateway, access, register, answer: sandboxAnswer });
}
