// Who is calling the agent API: the token's owner (set on the request by the server's auth hook) and
// the run it names (X-Warden-Run), as the gateway's AgentContext. Its own module, so the route files
// and the server that registers them do not import each other.
import type { FastifyRequest } from 'fastify';
import { WardenError } from '../../shared/errors.js';
import { RUN_HEADER, RunKeySchema, type TokenInfo } from '../../shared/types/api.js';
import type { AgentContext } from '../engine/gateway/gateway.js';
import { parseWith } from '../../shared/contracts/parse.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: TokenInfo | null;
  }
}

export function agentContext(req: FastifyRequest): AgentContext {
  const caller = req.caller;
  if (!caller) throw new WardenError('E_UNAUTHORIZED', 'missing or invalid token');
  const raw = req.headers[RUN_HEADER];
  let runKey: string | null = null;
  if (raw !== undefined) {
    runKey = parseWith(RunKeySchema, Array.isArray(raw) ? raw[0] : raw, RUN_HEADER);
  }
  return { agent: caller.agent, runKey, ...(caller.role === 'user' ? { trusted: true } : {}) };
}
