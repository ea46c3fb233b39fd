// Registers one route of the agent API from the shared route map (shared/contracts/agent-routes.ts):
// its method and path come from the map, and its path parameters, query and JSON body are parsed
// with the map's schemas before the handler runs, so a route is written down once.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { z } from 'zod';
import {
  AgentRoutes,
  type AgentInput,
  type AgentRouteName,
  type AgentResponse,
  type RouteSpec,
} from '../../shared/contracts/agent-routes.js';
import { parseWith } from '../../shared/contracts/parse.js';

type Kind<N extends AgentRouteName> = (typeof AgentRoutes)[N] extends { answers: infer K } ? K : 'json';

/** A JSON route returns its result (sent as {result}); a bytes or stream route answers on the reply itself. */
export type RouteHandler<N extends AgentRouteName> = (
  input: AgentInput<N>,
  req: FastifyRequest,
  reply: FastifyReply,
) => Promise<Kind<N> extends 'json' ? AgentResponse<N> : FastifyReply | void>;

export interface RouteOptions {
  bodyLimit?: number;
}

/** Each path parameter on its own, named by its schema's description ("sandbox id: …"). */
function parseParams(schema: z.ZodObject, raw: unknown): unknown {
  const values = (raw ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>))
    out[name] = parseWith(field, values[name], field.description ?? name);
  return out;
}

/** A query string is text: a field the schema wants as a number is converted first. */
function parseQuery(schema: z.ZodObject, raw: unknown): unknown {
  const values = { ...((raw ?? {}) as Record<string, unknown>) };
  for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const inner = field instanceof z.ZodOptional ? field.unwrap() : field;
    if (inner instanceof z.ZodNumber && values[name] !== undefined) values[name] = Number(values[name]);
  }
  return parseWith(schema, values, 'query');
}

export function registerRoute<N extends AgentRouteName>(
  app: FastifyInstance,
  name: N,
  handler: RouteHandler<N>,
  options: RouteOptions = {},
): void {
  const route: RouteSpec = AgentRoutes[name];
  const shorthand: RouteShorthandOptions = options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {};
  app.route({
    ...shorthand,
    method: route.method,
    url: route.path,
    handler: async (req, reply) => {
      const input = {
        params: route.params ? parseParams(route.params, req.params) : undefined,
        query: route.query ? parseQuery(route.query, req.query) : undefined,
        // A route with `sends` checks its body itself; bytes come as the content-type parser gave them.
        body:
          route.body && route.body !== 'bytes' && !('sends' in route) ? parseWith(route.body, req.body, route.bodyName ?? name) : req.body,
      } as AgentInput<N>;
      const answer = await handler(input, req, reply);
      if ((route.answers ?? 'json') !== 'json') return answer;
      if (route.status !== undefined) reply.code(route.status);
      return { result: answer };
    },
  });
}
