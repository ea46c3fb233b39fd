// Runs (list, get, follow live as NDJSON), approvals (only the user decides), and a WebSocket of
// live run and approval events, registered from the shared route map. Agents see only their own runs.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WardenError } from '../../shared/errors.js';
import { AgentRoutes } from '../../shared/contracts/agent-routes.js';
import type { RunStreamEvent } from '../../shared/types/api.js';
import { ApprovalDecideSchema, type RunInfo, type ToolCallInfo } from '../../shared/types/run.js';
import type { Gateway } from '../engine/gateway/gateway.js';
import { agentContext } from './agent-context.js';
import { BoundedResponse } from './ndjson.js';
import { liveFrames } from './live-frames.js';
import { STREAM_MAX_QUEUED, type StreamMeter } from './stream-meter.js';
import { parseWith } from '../../shared/contracts/parse.js';
import { registerRoute } from './register-route.js';

function isUser(req: FastifyRequest): boolean {
  return req.caller?.role === 'user';
}

function requireUser(req: FastifyRequest): void {
  if (!isUser(req)) throw new WardenError('E_POLICY_DENIED', 'only the user decides approvals', 'agents cannot approve their own calls');
}

export function registerRunRoutes(app: FastifyInstance, { gateway, streams }: { gateway: Gateway; streams?: StreamMeter }): void {
  const visibleRun = (req: FastifyRequest, id: string) => {
    const run = gateway.runs.detail(id);
    if (!isUser(req) && run.agent !== agentContext(req).agent) throw new WardenError('E_NOT_FOUND', `no run ${id}`);
    return run;
  };

  registerRoute(app, 'run.list', async ({ query: q }, req) => {
    const query = isUser(req) ? q : { ...q, agent: agentContext(req).agent };
    return gateway.runs.list(query);
  });

  registerRoute(app, 'run.get', async ({ params }, req) => visibleRun(req, params.run));

  registerRoute(app, 'run.diff', async ({ params }, req) =>
    gateway.diffRun(visibleRun(req, params.run).id, isUser(req) ? 'user' : agentContext(req).agent),
  );

  registerRoute(app, 'run.events', async ({ params }, req, reply) => {
    const detail = visibleRun(req, params.run);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    // Run events cannot be paused at their source: a follower that falls STREAM_MAX_QUEUED behind is cut off.
    const queue = new BoundedResponse(res, streams);
    const send = (e: RunStreamEvent) => queue.writeLine(`${JSON.stringify(e)}\n`);
    send({ type: 'snapshot', run: detail });
    // A run of another process (or of one before a restart) is there to read, not to follow.
    if (detail.status !== 'active' || !gateway.runs.has(detail.id)) {
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

  registerRoute(app, 'approval.list', async (_in, req) => {
    const all = await gateway['approval.list']();
    return isUser(req) ? all : all.filter((a) => a.agent === agentContext(req).agent);
  });

  registerRoute(app, 'approval.decide', async ({ params, body: raw }, req) => {
    requireUser(req);
    // Who decided is the token's owner, never a name the request gives.
    if (raw && typeof raw === 'object' && 'by' in raw)
      throw new WardenError(
        'E_BAD_INPUT',
        'approval: by: who decides is taken from the token, not from the request',
        'send only {"decision": …}',
      );
    const route = AgentRoutes['approval.decide'];
    const body = parseWith(route.body, raw, route.bodyName);
    return gateway['approval.decide']({ id: params.id, decision: body.decision, by: req.caller!.agent });
  });

  // Live runs and approvals over WebSocket; the user's connections count as someone to ask.
  app.get(AgentRoutes.live.path, { websocket: true }, (socket, req) => {
    const user = isUser(req);
    const agent = req.caller!.agent;
    const ws = socket as unknown as {
      readyState: number;
      bufferedAmount: number;
      send(data: string): void;
      close(code: number, reason: string): void;
    };
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
