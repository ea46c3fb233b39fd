// Sandboxes, exec (NDJSON stream) and files, for agents: each route is registered from the shared
// route map (which parses its input) and goes through the gateway.
import type { FastifyInstance } from 'fastify';
import { WardenError, toErrorInfo } from '../../shared/errors.js';
import { AgentRoutes } from '../../shared/contracts/agent-routes.js';
import { AGENT_FORBIDDEN_CREATE_FIELDS } from '../../shared/types/policy.js';
import type { Gateway } from '../engine/gateway/gateway.js';
import { NdjsonWriter } from './ndjson.js';
import { agentContext } from './agent-context.js';
import { errorResponse } from './http-errors.js';
import { parseWith } from '../../shared/contracts/parse.js';
import { registerRoute } from './register-route.js';
import type { StreamMeter } from './stream-meter.js';

export function registerAgentRoutes(app: FastifyInstance, { gateway, streams }: { gateway: Gateway; streams?: StreamMeter }): void {
  registerRoute(app, 'sandbox.list', async (_in, req) => gateway.listSandboxes(agentContext(req)));
  registerRoute(app, 'sandbox.inspect', async ({ params }, req) => gateway.inspectSandbox(agentContext(req), params.id));

  registerRoute(app, 'sandbox.diff', async ({ params }, req) => gateway.diffSandbox(agentContext(req), params.id));

  registerRoute(app, 'sandbox.create', async ({ body: raw }, req) => {
    const ctx = agentContext(req);
    const body = raw ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw new WardenError('E_BAD_INPUT', 'sandbox spec: expected a JSON object');
    // Fields no agent may ask for are a policy decision (403, recorded); anything else malformed is 400 here.
    const forbidden = Object.keys(body).some((k) => (AGENT_FORBIDDEN_CREATE_FIELDS as readonly string[]).includes(k));
    const route = AgentRoutes['sandbox.create'];
    if (!forbidden || ctx.trusted) parseWith(route.body, body, route.bodyName);
    return gateway.createSandbox(ctx, body as Record<string, unknown>);
  });

  registerRoute(app, 'sandbox.start', async ({ params }, req) => gateway.startSandbox(agentContext(req), params.id));
  registerRoute(app, 'sandbox.stop', async ({ params }, req) => gateway.stopSandbox(agentContext(req), params.id));
  registerRoute(app, 'sandbox.pause', async ({ params }, req) => gateway.lifecycleVerbs.pause(agentContext(req), params.id));
  registerRoute(app, 'sandbox.resume', async ({ params }, req) => gateway.lifecycleVerbs.resume(agentContext(req), params.id));
  registerRoute(app, 'sandbox.ttl', async ({ params, body }, req) =>
    gateway.lifecycleVerbs.setTtl(agentContext(req), params.id, body.ttlSeconds),
  );
  registerRoute(app, 'sandbox.destroy', async ({ params }, req) => gateway.destroySandbox(agentContext(req), params.id));

  registerRoute(app, 'sandbox.exec', async ({ params, body }, req, reply) => {
    const ctx = agentContext(req);
    const out = new NdjsonWriter(reply.raw, streams);
    // Until the call is allowed the answer is a plain HTTP error; once it runs (or waits for a
    // person) the answer is a 200 stream, and a later failure is its last event.
    try {
      const result = await gateway.exec(ctx, params.id, body, {
        onStdout: out.stdout,
        onStderr: out.stderr,
        // A client that stops reading pauses the command; one that hangs up ends it (recorded as "clientGone").
        drain: out.drain,
        signal: out.gone,
        onApproval: (a) => {
          reply.hijack();
          out.write({ type: 'approval', id: a.id, deadline: a.deadline, reason: a.reason });
        },
        onRunning: (call) => {
          reply.hijack();
          out.write({ type: 'start', runId: call.runId, callId: call.id });
        },
      });
      out.end({
        type: 'exit',
        code: result.exitCode,
        durationMs: result.durationMs,
        timedOut: result.timedOut,
        truncated: result.truncated,
        stdoutBytes: result.stdoutBytes,
        stderrBytes: result.stderrBytes,
        oomKilled: result.oomKilled,
        callId: result.callId,
      });
    } catch (err) {
      if (!out.isStarted) throw err;
      const { info } = errorResponse(err);
      out.end({ type: 'error', error: toErrorInfo(new WardenError(info.code, info.message, info.hint)) });
    }
    return reply;
  });

  registerRoute(app, 'files.read', async ({ params, query }, req, reply) => {
    const data = await gateway.files.read(agentContext(req), params.id, query.path);
    return reply
      .type('application/octet-stream')
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', 'attachment')
      .send(data);
  });

  registerRoute(app, 'files.list', async ({ params, query }, req) => gateway.files.list(agentContext(req), params.id, query.path));

  app.register(async (scoped) => {
    // File uploads are raw bytes, up to the policy's write limit (plus slack: the gateway says the exact limit).
    const bodyLimit = gateway.policy.files.maxWriteBytes + 1;
    scoped.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
    registerRoute(
      scoped,
      'files.write',
      async ({ params, query, body }, req) => {
        if (!Buffer.isBuffer(body))
          throw new WardenError('E_BAD_INPUT', 'send the file as the body with Content-Type: application/octet-stream');
        return gateway.files.write(agentContext(req), params.id, query.path, body);
      },
      { bodyLimit },
    );
  });
}
