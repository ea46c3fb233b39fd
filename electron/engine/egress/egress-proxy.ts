// Warden's egress proxy: the far end of every connection a program in an `egress` sandbox opens to
// HTTP_PROXY. Node's HTTP server parses what arrives on each forwarder stream (it takes any Duplex
// as a connection); CONNECT goes to egress-tunnel.ts, a plain HTTP request is decided on its
// absolute URI (whose host the Host header must repeat) and sent on by a fresh connection to the
// decided address, so every request is one decision and one pair of ledger entries. The policy is
// read per connection, so a reload applies to running sandboxes at once.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EgressPolicy } from '../../../shared/types/policy.js';
import { ConnectionRecord, rawResponse, refusal, type EgressMeter, type EgressRecorder } from './connection-record.js';
import { parseTarget } from './destination.js';
import type { Resolver } from './egress-decision.js';
import { decideConnection, type ConnectionContext, type EgressAsker } from './egress-ask.js';
import { CONNECT_WAIT_MS, openTunnel } from './egress-tunnel.js';

export interface EgressProxyOptions {
  /** The egress section as it is now (read for each connection). */
  policy: () => EgressPolicy;
  record: EgressRecorder;
  ask: EgressAsker;
  /** The run behind a connection from this sandbox, and its budget (null: nobody's). */
  meter: (sandboxId: string) => EgressMeter | null;
  /** Instead of DNS (specs). */
  resolve?: Resolver;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own: not passed on either way.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

export class EgressProxy {
  private readonly server: Server;
  private readonly sandboxOf = new WeakMap<object, string>();

  constructor(private readonly options: EgressProxyOptions) {
    this.server = createServer({ requestTimeout: 0, headersTimeout: 60_000 });
    this.server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
      const sandboxId = this.sandboxOf.get(req.socket) ?? '';
      openTunnel(
        { ...this.context(sandboxId), record: options.record, meter: options.meter(sandboxId) },
        req.url ?? '',
        client,
        head,
      ).catch(() => client.destroy());
    });
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.forward(req, res).catch(() => res.destroy());
    });
    this.server.on('clientError', (_err: Error, socket: Duplex) => {
      if (!socket.destroyed) socket.end(rawResponse(400, 'warden egress: not an HTTP proxy request\n'));
    });
  }

  /** Serves one connection from inside the sandbox. */
  handle(stream: Duplex, sandboxId: string): void {
    this.sandboxOf.set(stream, sandboxId);
    stream.on('error', () => undefined);
    this.server.emit('connection', stream);
  }

  private context(sandboxId: string): ConnectionContext {
    return { policy: this.options.policy(), ask: this.options.ask, resolve: this.options.resolve, sandboxId };
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sandboxId = this.sandboxOf.get(req.socket) ?? '';
    const refuse = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end(body);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return refuse(400, 'warden egress: send requests with an absolute http:// URI (this is a proxy)\n');
    }
    if (url.protocol !== 'http:') return refuse(400, `warden egress: ${url.protocol} is not proxied as plain HTTP; use CONNECT\n`);
    const target = parseTarget(url.hostname, url.port || 80);
    if (!target) return refuse(400, 'warden egress: not a destination this proxy can reach\n');
    const hostHeader = parseTarget((req.headers.host ?? '').replace(/:\d+$/, ''), target.port);
    if (req.headers.host !== undefined && hostHeader?.host !== target.host)
      return refuse(403, `warden egress: Host header ${req.headers.host.slice(0, 200)} is not the request's host ${target.host}\n`);
    const what = `${req.method ?? 'GET'} http://${target.host}:${target.port}`;
    const conn = new ConnectionRecord(this.options.record, sandboxId, target, this.options.meter(sandboxId));
    const decision = await decideConnection(this.context(sandboxId), conn, 'http', target);
    conn.decided('http', decision);
    if (decision.action === 'deny') {
      const { status, body } = refusal(what, decision);
      return refuse(status, body);
    }
    const upstream = httpRequest({
      host: decision.address!,
      port: target.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...endToEnd(req.headers), host: req.headers.host ?? url.host },
      setHost: false,
      agent: false,
      timeout: CONNECT_WAIT_MS,
    });
    upstream.once('socket', (socket) => socket.once('connect', () => upstream.setTimeout(0)));
    upstream.once('timeout', () => upstream.destroy(new Error(`no answer from ${decision.address} in ${CONNECT_WAIT_MS / 1000} s`)));
    const cut = () => {
      conn.close(conn.overBudget);
      upstream.destroy();
      res.destroy();
    };
    req.on('data', (c: Buffer) => conn.count('out', c.length) || cut());
    req.pipe(upstream);
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
      answer.on('data', (c: Buffer) => conn.count('in', c.length) || cut());
      answer.pipe(res);
      answer.once('end', () => conn.close(null));
      answer.once('error', (err) => conn.close(err.message));
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      conn.close(`${err.code ?? 'error'}: ${err.message}`);
      if (!res.headersSent) refuse(502, `warden egress: ${what} failed: ${err.code ?? err.message}\n`);
      else res.destroy();
    });
    res.once('close', () => {
      if (!res.writableFinished) {
        upstream.destroy();
        conn.close('the client went away');
      }
    });
  }

  close(): void {
    this.server.close();
  }
}
