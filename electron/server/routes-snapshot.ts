// The agent API's snapshot routes (shared/contracts/agent-routes.ts), each through the gateway's
// snapshot verbs, which check access and file the call into the agent's run.
import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../engine/gateway/gateway.js';
import { agentContext } from './agent-context.js';
import { registerRoute } from './register-route.js';

export function registerSnapshotRoutes(app: FastifyInstance, { gateway }: { gateway: Gateway }): void {
  const verbs = gateway.snapshots;
  registerRoute(app, 'sandbox.snapshot', async ({ params, body }, req) => verbs.snapshot(agentContext(req), params.id, body.tag));
  registerRoute(app, 'sandbox.snapshots', async ({ params }, req) => verbs.list(agentContext(req), params.id));
  registerRoute(app, 'snapshot.remove', async ({ params }, req) => verbs.remove(agentContext(req), params.id, params.tag));
  registerRoute(app, 'sandbox.reset', async ({ params, body }, req) => verbs.reset(agentContext(req), params.id, body.to));
  registerRoute(app, 'sandbox.fork', async ({ params, body }, req) => verbs.fork(agentContext(req), params.id, body.from, body.name));
}
