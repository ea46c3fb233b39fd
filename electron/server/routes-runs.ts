// Runs (list, get, follow live as NDJSON), approvals (only the user decides), and a WebSocket of
// live run and approval events. Agents see only their own runs.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WardenError } from '../../shared/errors.js';
import { ApprovalDecideSchema, RunQuerySchema, type RunInfo, type ToolCallInfo } from '../../shared/types/run.js';
import { agentContext, type ServerDeps } from './server.js';
import { BoundedResponse } from './ndjson.js';
import { liveFrames } from './live-frames.js';
import { STREAM_MAX_QUEUED } from './stream-meter.js';

function isUser(req: FastifyRequest): boolean {
  return req.caller?.role === 'user';
}

function requireUser(req: FastifyRequest): void {
  if (!isUser(req)) throw new WardenError('E_POLICY_DENIED', 'only the user decides approvals', 'agents cannot approve their own calls');
}

export function registerRunRoutes(app: FastifyInstance, { gateway, streams }: ServerDeps): void {
  const visibleRun = (req: FastifyRequest, id: string) => {
    const run = gateway.runs.detail(id);
    if (!isUser(req) && run.agent !== agentContext(req).agent) throw new WardenError('E_NOT_FOUND', `no run ${id}`);
    return run;
  };

  app.get('/v1/runs', async (req) => {
    const raw = req.query as Record<string, string>;
    const q = RunQuerySchema.safeParse({ ...raw, ...(raw.limit !== undefined ? { limit: Number(raw.limit) } : {}) });
    if (!q.success) throw new WardenError('E_BAD_INPUT', `query: ${q.error.issues[0]!.message}`);
    const query = isUser(req) ? q.data : { ...q.data, agent: agentContext(req).agent };
    return { result: gateway.runs.list(query) };
  });

  app.get('/v1/runs/:run', async (req) => ({ result: visibleRun(req, (req.params as { run: string }).run) }));

  app.get('/v1/runs/:run/events', async (req, reply) => {
    const detail = visibleRun(req, (req.params as { run: string }).run);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    // Run events cannot be paused at their source: a follower that falls STREAM_MAX_QUEUED behind is cut off.
    const queue = new BoundedResponse(res, streams);
    const send = (e: unknown) => queue.writeLine(`${JSON.stringify(e)}\n`);
    send({ type: 'snapshot', run: detail });
    if (detail.status !== 'active') {
      queue.end();
      return;
    }
    const stop = gateway.follow(
      detail.id,
      (call: ToolCallInfo) => send({ type: 'call', call }),
      (run: RunInfo) => {
        send({ type: 'run', run });
        if (run.status !== 'active') {
          stop();
          queue.end();
        }
      },
    );
    res.on('close', stop);
  });

  app.get('/v1/approvals', async (req) => {
    const all = await gateway['approval.list']();
    return { result: isUser(req) ? all : all.filter((a) => a.agent === agentContext(req).agent) };
  });

  app.post('/v1/approvals/:id', async (req) => {
    requireUser(req);
    // Who decided is the token's owner, never a name the request gives.
    if (req.body && typeof req.body === 'object' && 'by' in req.body) throw new WardenError('E_BAD_INPUT', 'approval: by: who decides is taken from the token, not from the request', 'send only {"decision": …}');
    const body = ApprovalDecideSchema.omit({ id: true, by: true }).safeParse(req.body ?? {});
    if (!body.success) throw new WardenError('E_BAD_INPUT', `approval: ${body.error.issues[0]!.path.join('.')}: ${body.error.issues[0]!.message}`);
    return { result: await gateway['approval.decide']({ id: (req.params as { id: string }).id, decision: body.data.decision, by: req.caller!.agent }) };
  });

  // Live runs and approvals over WebSocket; the user's connections count as someone to ask.
  app.get('/v1/live', { websocket: true }, (socket, req) => {
    const user = isUser(req);
    const agent = req.caller!.agent;
    const ws = socket as unknown as { readyState: number; bufferedAmount: number; send(data: string): void; close(code: number, reason: string): void };
    // Frames are split to ≤ 64 KiB; a socket whose client has fallen STREAM_MAX_QUEUED behind is closed (1013).
    const send = (type: string, payload: unknown) => {
      if (ws.readyState !== 1) return;
      if (ws.bufferedAmount > STREAM_MAX_QUEUED) {
        streams?.count('cutOff');
        ws.close(1013, 'not keeping up: reconnect for a fresh snapshot');
        return;
      }
      for (const frame of liveFrames(type, payload)) ws.send(frame);
      streams?.queued(ws.bufferedAmount);
    };
    const ev = gateway.engine.events;
    const stops = [
      ev.on('run.updated', (r) => (user || r.agent === agent) && send('run.updated', r)),
      ev.on('run.call', (c) => (user || gateway.runs.get(c.runId).agent === agent) && send('run.call', c)),
      ev.on('approval.requested', (a) => (user || a.agent === agent) && send('approval.requested', a)),
      ev.on('approval.decided', (a) => (user || a.agent === agent) && send('approval.decided', a)),
    ];
    if (user) stops.push(gateway.approvals.watch());
    send('snapshot', { runs: user ? gateway.runs.list() : gateway.runs.list({ agent }), approvals: user ? gateway.approvals.list() : [] });
    socket.on('message', (data: Buffer) => {
      if (!user) return;
      try {
        const { type, ...rest } = JSON.parse(data.toString('utf8')) as { type?: string };
        if (type !== 'approval.decide') return;
        const p = ApprovalDecideSchema.parse({ ...rest, by: agent }); // the token's owner, whatever the message says
        gateway.approvals.decide(p.id, p.decision, agent);
      } catch (err) {
        send('error', { message: (err as Error).message });
      }
    });
    socket.on('close', () => stops.forEach((s) => s()));
  });
}
