// A client of a running Warden server's agent API: for the CLI, `warden mcp`, tests and the bench.
// Every call is typed from the shared route map (one `request` by route name, one `stream` for the
// NDJSON routes, and `exec` on top of it). The token goes in the Authorization header only, never
// in a URL. It speaks node:http, not fetch(): on Node 20 the first fetch() in a process loads undici
// (measured 30–80 ms of CPU here), which every one-shot `warden` command talking to a running server
// would pay, more than loading the engine in-process costs.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { WardenError, fromErrorInfo, type ErrorInfo } from '../../shared/errors.js';
import {
  AgentRoutes,
  routePath,
  type AgentCallName,
  type AgentRequest,
  type AgentResponse,
  type AgentRouteName,
  type AgentStreamName,
  type RouteSpec,
} from '../../shared/contracts/agent-routes.js';
import type { ApiExecBody, ExecStreamEvent } from '../../shared/types/api.js';

/** The exec stream's last event: how the command ended. */
export type ExecExit = Omit<Extract<ExecStreamEvent, { type: 'exit' }>, 'type'>;

/** How a streamed exec ended, with the output kept of it (all of it, or none when the caller streams it on). */
export interface AgentExecResult extends ExecExit {
  stdout: Buffer;
  stderr: Buffer;
}

/** Bytes come back as a Buffer. */
export type ClientAnswer<N extends AgentRouteName> = AgentResponse<N> extends Uint8Array ? Buffer : AgentResponse<N>;
/** A door's verbs typed from the route map: one function per route, request in, answer out. */
export type AgentVerbs<N extends AgentCallName> = { [K in N]: (...request: RequestArg<K>) => Promise<ClientAnswer<K>> };
/** A route with nothing to send may be called without a request. */
type RequestArg<N extends AgentRouteName> =
  Record<never, never> extends AgentRequest<N> ? [request?: AgentRequest<N>] : [request: AgentRequest<N>];

/** An answer as raw() gives it: the status, and the body to stream (Buffers) or to read whole once. */
export interface HttpAnswer {
  status: number;
  body: AsyncIterable<Buffer>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

function answerOf(res: IncomingMessage): HttpAnswer {
  const whole = async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  return {
    status: res.statusCode ?? 0,
    body: res,
    json: async () => JSON.parse((await whole()).toString('utf8')) as unknown,
    arrayBuffer: async () => {
      const bytes = await whole();
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}

function queryString(query: Record<string, unknown> | undefined): string {
  const pairs = Object.entries(query ?? {}).filter(([, v]) => v !== undefined);
  return pairs.length ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}` : '';
}

async function failure(res: HttpAnswer, what: string): Promise<WardenError> {
  const json = (await res.json().catch(() => null)) as { error?: ErrorInfo } | null;
  return json?.error ? fromErrorInfo(json.error) : new WardenError('E_INTERNAL', `${what} failed (${res.status})`);
}

export class AgentClient {
  constructor(
    readonly url: string,
    private readonly token: string,
    private readonly runKey: string | null = null,
  ) {}

  withRun(runKey: string | null): AgentClient {
    return new AgentClient(this.url, this.token, runKey);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...(this.runKey ? { 'x-warden-run': this.runKey } : {}), ...extra };
  }

  /** One HTTP exchange as it is (for specs of the wire itself); a route's callers use request/stream. */
  async raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    const isBytes = body instanceof Uint8Array;
    const payload = body === undefined ? undefined : isBytes ? body : Buffer.from(JSON.stringify(body), 'utf8');
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest(`${this.url}${path}`, {
          method,
          headers: this.headers({
            ...(payload !== undefined
              ? { 'content-type': isBytes ? 'application/octet-stream' : 'application/json', 'content-length': String(payload.length) }
              : {}),
            ...headers,
          }),
        });
        req.once('response', resolve);
        req.on('error', reject);
        req.end(payload);
      });
      return answerOf(res);
    } catch (err) {
      throw new WardenError(
        'E_ENGINE_UNREACHABLE',
        `cannot reach Warden at ${this.url}: ${(err as Error).message}`,
        'is `warden serve` (or the app) running?',
      );
    }
  }
  private send(name: AgentRouteName, request: { params?: object; query?: object; body?: unknown } = {}): Promise<HttpAnswer> {
    const route: RouteSpec = AgentRoutes[name];
    const path = routePath(route.path, request.params as Record<string, unknown>) + queryString(request.query as Record<string, unknown>);
    return this.raw(route.method, path, request.body);
  }

  /** Calls a route that answers with one value: its `{result}`, or its bytes. */
  async request<N extends AgentCallName>(name: N, ...[request]: RequestArg<N>): Promise<ClientAnswer<N>> {
    const res = await this.send(name, request);
    if ((AgentRoutes[name] as RouteSpec).answers === 'bytes') {
      if (res.status !== 200) throw await failure(res, name);
      return Buffer.from(await res.arrayBuffer()) as ClientAnswer<N>;
    }
    const json = (await res.json().catch(() => null)) as { result?: ClientAnswer<N>; error?: ErrorInfo } | null;
    if (!json) throw new WardenError('E_INTERNAL', `unexpected answer from Warden (${res.status})`);
    if (json.error) throw fromErrorInfo(json.error);
    return json.result as ClientAnswer<N>;
  }

  /** The named routes as a door's verbs, each calling `request`. */
  verbs<N extends AgentCallName>(names: readonly N[]): AgentVerbs<N> {
    const call = (name: N) => (request?: AgentRequest<N>) => this.request(name, ...([request] as RequestArg<N>));
    return Object.fromEntries(names.map((name) => [name, call(name)])) as unknown as AgentVerbs<N>;
  }

  /**
   * Calls an NDJSON route, handing each line to onEvent as it arrives (a returned promise is awaited:
   * the stream is not read further until it settles). A refusal before the stream is thrown.
   */
  async stream<N extends AgentStreamName>(name: N, request: AgentRequest<N>, onEvent: (e: AgentResponse<N>) => unknown): Promise<void> {
    const res = await this.send(name, request);
    if (res.status !== 200) throw await failure(res, name);
    let pending = '';
    const decoder = new TextDecoder();
    const handle = async (line: string) => {
      if (!line) return;
      const waited = onEvent(JSON.parse(line) as AgentResponse<N>);
      if (waited instanceof Promise) await waited;
    };
    for await (const chunk of res.body) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        await handle(line);
      }
    }
    await handle(pending);
  }

  /**
   * Runs a command, handing each event to onEvent as it arrives (awaited like stream's); resolves
   * with how it ended. With collect false the output is not kept (the caller streams it), so memory
   * stays flat.
   */
  async exec(
    id: string,
    body: ApiExecBody,
    onEvent?: (e: ExecStreamEvent) => unknown,
    opts: { collect?: boolean } = {},
  ): Promise<AgentExecResult> {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let exit: ExecExit | null = null;
    const collect = opts.collect !== false;
    await this.stream('sandbox.exec', { params: { id }, body }, async (e) => {
      const waited = onEvent?.(e);
      if (waited instanceof Promise) await waited;
      if ((e.type === 'stdout' || e.type === 'stderr') && collect)
        (e.type === 'stdout' ? out : err).push(Buffer.from(e.data, e.encoding === 'base64' ? 'base64' : 'utf8'));
      else if (e.type === 'exit') {
        const { type: _type, ...ended } = e;
        exit = ended;
      } else if (e.type === 'error') throw fromErrorInfo(e.error as ErrorInfo);
    });
    if (!exit) throw new WardenError('E_ENGINE_UNREACHABLE', 'the exec stream ended without an exit event');
    return { ...(exit as ExecExit), stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
  }
}
