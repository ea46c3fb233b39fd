// Plain HTTP through the egress proxy (`GET http://host/…`): decided on the absolute URI's host, which
// the Host header must repeat. The request goes on by a fresh connection to the decided address, its
// head rewritten (origin-form target, hop-by-hop headers dropped, `Connection: close`), and the
// answer comes back as bytes behind its own rewritten head: no HTTP parser touches a body, so a
// download costs a copy, not a parse. One request per connection from the sandbox, so every request
// is one decision and one pair of ledger entries; a request body goes on only up to its
// Content-Length (a chunked one is refused: its end could not be told without parsing it), and a
// head that names its host or its length twice is refused (http-head.ts `ambiguity`).
import type { Duplex } from 'node:stream';
import { answerAndClose, ConnectionRecord, rawResponse, refusal } from './connection-record.js';
import { parseTarget } from './destination.js';
import { decideConnection } from './egress-ask.js';
import { carry } from './egress-carry.js';
import { boundDestination } from './hand-over.js';
import type { TunnelContext } from './egress-tunnel.js';
import { dialDecided } from './sandbox-dialer.js';
import { ambiguity, forwardHead, header, parseHead, readHead, type MessageHead } from './http-head.js';

const METHOD = /^[A-Z]{1,20}$/;

export async function forwardPlain(ctx: TunnelContext, req: MessageHead, client: Duplex, rest: Buffer): Promise<void> {
  const [method, target, version] = req.start;
  const refuse = (status: number, body: string) => answerAndClose(client, rawResponse(status, body));
  if (!METHOD.test(method) || !/^HTTP\/1\.[01]$/.test(version)) return refuse(400, 'warden egress: not an HTTP proxy request\n');
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return refuse(400, 'warden egress: send requests with an absolute http:// URI (this is a proxy)\n');
  }
  if (url.protocol !== 'http:') return refuse(400, `warden egress: ${url.protocol} is not proxied as plain HTTP; use CONNECT\n`);
  const dest = parseTarget(url.hostname, url.port || 80);
  if (!dest) return refuse(400, 'warden egress: not a destination this proxy can reach\n');
  const what = `${method} http://${dest.host}:${dest.port}`;
  const conn = new ConnectionRecord(ctx.record, ctx.sandboxId, dest, ctx.meter);
  // A request refused for its head is an attempt too: recorded as denied, by what refused it.
  const refuseRecorded = (status: number, why: string) => {
    conn.decided('http', { action: 'deny', rule: `http: ${why}`, address: null });
    return refuse(status, `warden egress: ${why}\n`);
  };
  const twice = ambiguity(req);
  if (twice) return refuseRecorded(400, twice);
  const host = header(req, 'host');
  const hostHeader = parseTarget((host ?? '').replace(/:\d+$/, ''), dest.port);
  if (host !== undefined && hostHeader?.host !== dest.host)
    return refuseRecorded(403, `Host header ${host.slice(0, 200)} is not the request's host ${dest.host}`);
  if (header(req, 'transfer-encoding') !== undefined)
    return refuseRecorded(411, 'a chunked request body is not proxied as plain HTTP; send a Content-Length, or use HTTPS');
  const length = header(req, 'content-length') ?? '0';
  if (!/^\d{1,15}$/.test(length)) return refuseRecorded(400, 'a Content-Length that is not a number');

  const decision = await decideConnection(ctx, conn, 'http', dest);
  conn.decided('http', decision);
  if (decision.action === 'deny') {
    const { status, body } = refusal(what, decision);
    return refuse(status, body);
  }
  const headers: MessageHead = { ...req, headers: host === undefined ? [['host', url.host], ...req.headers] : req.headers };
  const upstream = await dialDecided(
    ctx.dial,
    decision.address!,
    dest.port,
    client,
    (why) => conn.close(why),
    (why) => refuse(502, `warden egress: ${what} failed: ${why}\n`),
  );
  if (!upstream) return;
  // Until the answer's head: the body goes up by hand, and either side going ends both.
  let left = Number(length);
  const up = (chunk: Buffer) => {
    if (left <= 0) return;
    const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
    left -= part.length;
    if (!conn.count('out', part.length)) return early(conn.overBudget);
    if (!upstream.write(part)) {
      client.pause();
      upstream.once('drain', () => client.resume());
    }
  };
  let answered = false;
  const early = (why: string | null) => {
    if (answered) return;
    answered = true;
    client.off('data', up);
    if (why && !client.destroyed && !client.writableEnded && !conn.overBudget) refuse(502, `warden egress: ${what} failed: ${why}\n`);
    else client.destroy();
    upstream.destroy();
    conn.close(why ?? 'the client went away');
  };
  const onUpstreamError = (err: NodeJS.ErrnoException) => early(`${err.code ?? 'error'}: ${err.message}`);
  const onUpstreamClose = () => early('the destination closed before answering');
  const onClientClose = () => early(null);
  upstream.once('error', onUpstreamError);
  upstream.once('close', onUpstreamClose);
  client.once('close', onClientClose);
  boundDestination(upstream);
  // A head is bytes to the destination as a body is, and counted as one (stop 25's red team sent
  // 23 MB of heads, 58 KiB a request, in a run whose budget was 10 MiB).
  const requestHead = forwardHead(`${method} ${url.pathname}${url.search} HTTP/1.1`, headers);
  if (!conn.count('out', Buffer.byteLength(requestHead, 'latin1'))) return early(conn.overBudget);
  upstream.write(requestHead);
  if (rest.length) up(rest);
  client.on('data', up);
  client.resume();
  const answer = async () => {
    const head = await readHead(upstream);
    const parsed = head.ok ? parseHead(head.text) : null;
    if (answered) return;
    if (!head.ok || !parsed || !/^HTTP\/1\.[01]$/.test(parsed.start[0]))
      return early(`its answer is not HTTP/1 (${head.ok ? 'a bad head' : head.why})`);
    answered = true;
    client.off('data', up);
    upstream.off('error', onUpstreamError).off('close', onUpstreamClose);
    client.off('close', onClientClose);
    const length = Number(header(parsed, 'content-length') ?? NaN);
    const chunked = /chunked/i.test(header(parsed, 'transfer-encoding') ?? '');
    let body = 0;
    let tail = '';
    // Whether the body came whole (its length, or a chunked body's last chunk): a client that then closes first is no error.
    const whole = () => (Number.isFinite(length) ? body >= length : chunked && tail.endsWith('0\r\n\r\n'));
    const count = (way: 'in' | 'out', bytes: number, chunk?: Buffer) => {
      if (way === 'in') {
        body += bytes;
        if (chunk) tail = (tail + chunk.subarray(-5).toString('latin1')).slice(-5);
      }
      return conn.count(way, bytes);
    };
    const answerHead = Buffer.from(forwardHead(parsed.start.join(' '), parsed), 'latin1');
    if (!conn.count('in', answerHead.length) || (head.rest.length && !count('in', head.rest.length, head.rest))) {
      upstream.destroy();
      client.destroy();
      return conn.close(conn.overBudget);
    }
    // One write: a small answer reaches the relay as one message.
    client.write(Buffer.concat([answerHead, head.rest]));
    carry({
      client,
      upstream,
      outLimit: left,
      count,
      cutWhy: () => conn.overBudget,
      clientGone: () => (whole() ? null : 'the client went away'),
      pump: ctx.pump,
      done: (error) => conn.close(error),
    });
    upstream.resume();
  };
  void answer();
}
