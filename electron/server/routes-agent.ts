// Sandboxes, exec (NDJSON stream) and files, for agents: each route validates its input with the
// shared schemas and goes through the gateway.
import type { FastifyInstance } from 'fastify';
import { WardenError } from '../../shared/errors.js';
import { ApiExecBodySchema, FileListQuerySchema, FileQuerySchema } from '../../shared/types/api.js';
import { AGENT_FORBIDDEN_CREATE_FIELDS } from '../../shared/types/policy.js';
import { SandboxRefSchema, SandboxSpecSchema } from '../../shared/types/sandbox.js';
import { toErrorInfo } from '../../shared/errors.js';
import type { z } from 'zod';
import { NdjsonWriter } from './ndjson.js';
import { agentContext, type ServerDeps } from './server.js';
import { errorResponse } from './http-errors.js';

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new WardenError('E_BAD_INPUT', `${what}: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  return r.data;
}

const ref = (params: unknown) => parse(SandboxRefSchema, (params as { id?: string }).id, 'sandbox id');

export function registerAgentRoutes(app: FastifyInstance, { gateway, streams }: ServerDeps): void {
  app.get('/v1/sandboxes', async (req) => ({ result: await gateway.listSandboxes(agentContext(req)) }));
  app.get('/v1/sandboxes/:id', async (req) => ({ result: await gateway.inspectSandbox(agentContext(req), ref(req.params)) }));

  app.post('/v1/sandboxes', async (req, reply) => {
    const ctx = agentContext(req);
    const body = req.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw new WardenError('E_BAD_INPUT', 'sandbox spec: expected a JSON object');
    // Fields no agent may ask for are a policy decision (403, recorded); anything else malformed is 400 here.
    const forbidden = Object.keys(body).some((k) => (AGENT_FORBIDDEN_CREATE_FIELDS as readonly string[]).includes(k));
    if (!forbidden || ctx.trusted) parse(SandboxSpecSchema, body, 'sandbox spec');
    const info = await gateway.createSandbox(ctx, body);
    return reply.code(201).send({ result: info });
  });

  app.post('/v1/sandboxes/:id/start', async (req) => ({ result: await gateway.startSandbox(agentContext(req), ref(req.params)) }));
  app.post('/v1/sandboxes/:id/stop', async (req) => ({ result: await gateway.stopSandbox(agentContext(req), ref(req.params)) }));
  app.delete('/v1/sandboxes/:id', async (req) => ({ result: await gateway.destroySandbox(agentContext(req), ref(req.params)) }));

  app.post('/v1/sandboxes/:id/exec', async (req, reply) => {
    const ctx = agentContext(req);
    const id = ref(req.params);
    const body = parse(ApiExecBodySchema, req.body, 'exec');
    const out = new NdjsonWriter(reply.raw, streams);
    // Until the call is allowed the answer is a plain HTTP error; once it runs (or waits for a
    // person) the answer is a 200 stream, and a later failure is its last event.
    try {
      const result = await gateway.exec(ctx, id, body, {
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
      out.end({ type: 'exit', code: result.exitCode, durationMs: result.durationMs, timedOut: result.timedOut, truncated: result.truncated, stdoutBytes: result.stdoutBytes, stderrBytes: result.stderrBytes, oomKilled: result.oomKilled, callId: result.callId });
    } catch (err) {
      if (!out.isStarted) throw err;
      const { info } = errorResponse(err);
      out.end({ type: 'error', error: toErrorInfo(new WardenError(info.code, info.message, info.hint)) });
    }
    return reply;
  });

  app.get('/v1/sandboxes/:id/files', async (req, reply) => {
    const q = parse(FileQuerySchema, req.query, 'query');
    const data = await gateway.readFile(agentContext(req), ref(req.params), q.path);
    return reply.type('application/octet-stream').header('x-content-type-options', 'nosniff').header('content-disposition', 'attachment').send(data);
  });

  app.get('/v1/sandboxes/:id/files/list', async (req) => {
    const q = parse(FileListQuerySchema, req.query, 'query');
    return { result: await gateway.listFiles(agentContext(req), ref(req.params), q.path) };
  });

  app.register(async (scoped) => {
    // File uploads are raw bytes, up to the policy's write limit (plus slack: the gateway says the exact limit).
    scoped.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: gateway.policy.files.maxWriteBytes + 1 }, (_req, body, done) => done(null, body));
    scoped.put('/v1/sandboxes/:id/files', { bodyLimit: gateway.policy.files.maxWriteBytes + 1 }, async (req) => {
      const q = parse(FileQuerySchema, req.query, 'query');
      if (!Buffer.isBuffer(req.body)) throw new WardenError('E_BAD_INPUT', 'send the file as the body with Content-Type: application/octet-stream');
      return { result: await gateway.writeFile(agentContext(req), ref(req.params), q.path, req.body) };
    });
  });
}
