// CONNECT through the egress proxy: decided on the CONNECT host; once allowed, the client's first
// bytes are held until its TLS ClientHello is whole, and the tunnel opens only if the server name
// it asks for is that host (a literal IP may send none). Anything else ends with a TLS alert: the
// 200 is already sent by then, so a 403 could not be read by the client.
import { connect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { answerAndClose, ConnectionRecord, rawResponse, refusal, type EgressMeter, type EgressRecorder } from './connection-record.js';
import { parseAuthority } from './destination.js';
import { decideConnection, type ConnectionContext } from './egress-ask.js';
import { carry } from './egress-carry.js';
import { boundDestination } from './hand-over.js';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello, UNRECOGNIZED_NAME_ALERT } from './tls-sni.js';

/** How long a tunnel may wait for its ClientHello, and for the destination to answer its connect. */
const HELLO_WAIT_MS = 15_000;
export const CONNECT_WAIT_MS = 30_000;

export interface TunnelContext extends ConnectionContext {
  record: EgressRecorder;
  meter: EgressMeter | null;
  /** Host path of the runner binary, which carries large transfers (egress-carry.ts); null: Node carries all. */
  pump: string | null;
}

export async function openTunnel(ctx: TunnelContext, authority: string, client: Duplex, head: Buffer): Promise<void> {
  const target = parseAuthority(authority);
  if (!target) {
    answerAndClose(client, rawResponse(400, `warden egress: CONNECT needs host:port, not "${authority.slice(0, 200)}"\n`));
    return;
  }
  const what = `CONNECT ${target.host}:${target.port}`;
  const conn = new ConnectionRecord(ctx.record, ctx.sandboxId, target, ctx.meter);
  const decision = await decideConnection(ctx, conn, 'connect', target);
  if (decision.action === 'deny') {
    conn.decided('connect', decision);
    const { status, body } = refusal(what, decision);
    answerAndClose(client, rawResponse(status, body));
    return;
  }
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  const hello = await readHello(client, head);
  const expected = isIP(target.host) ? null : target.host;
  const sniOk = hello.ok && (hello.serverName === expected || (expected === null && hello.serverName === null));
  if (!hello.ok || !sniOk) {
    const why = hello.ok ? `the TLS server name is ${hello.serverName ?? 'absent'}, not ${target.host}` : hello.why;
    conn.decided('connect', { action: 'deny', rule: `tls: ${why}`, address: decision.address });
    answerAndClose(client, UNRECOGNIZED_NAME_ALERT);
    return;
  }
  conn.decided('connect', decision);
  const upstream: Socket = connect({ host: decision.address!, port: target.port });
  upstream.setTimeout(CONNECT_WAIT_MS, () =>
    upstream.destroy(new Error(`no answer from ${decision.address} in ${CONNECT_WAIT_MS / 1000} s`)),
  );
  // Until the destination answers: either side going ends both.
  const early = (err?: NodeJS.ErrnoException) => {
    client.destroy();
    conn.close(err ? `${err.code ?? 'error'}: ${err.message}` : 'the destination closed');
  };
  const clientGone = () => upstream.destroy();
  upstream.once('error', early);
  upstream.once('close', early);
  client.once('close', clientGone);
  if (client.destroyed) upstream.destroy();
  upstream.once('connect', () => {
    boundDestination(upstream);
    upstream.off('error', early).off('close', early);
    client.off('close', clientGone);
    upstream.setTimeout(0);
    upstream.write(hello.bytes);
    if (!conn.count('out', hello.bytes.length)) {
      upstream.destroy();
      client.destroy();
      return conn.close(conn.overBudget);
    }
    carry({
      client,
      upstream,
      outLimit: null,
      count: (way, bytes) => conn.count(way, bytes),
      cutWhy: () => conn.overBudget,
      clientGone: () => null,
      pump: ctx.pump,
      done: (error) => conn.close(error),
    });
    client.resume();
  });
}

type Hello = { ok: true; serverName: string | null; bytes: Buffer } | { ok: false; why: string };

/** Reads until the ClientHello is whole (then pauses the client) or is not one. */
function readHello(client: Duplex, head: Buffer): Promise<Hello> {
  return new Promise((resolve) => {
    let bytes = head;
    let done = false;
    const timer = setTimeout(() => finish({ ok: false, why: 'no ClientHello in time' }), HELLO_WAIT_MS);
    timer.unref();
    const finish = (h: Hello) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      client.off('data', onData);
      client.off('end', onEnd);
      client.pause();
      resolve(h);
    };
    const check = () => {
      const r = parseClientHello(bytes);
      if (r.state === 'ok') finish({ ok: true, serverName: r.serverName, bytes });
      else if (r.state === 'bad') finish({ ok: false, why: r.why });
      else if (bytes.length > MAX_CLIENT_HELLO_BYTES) finish({ ok: false, why: 'the ClientHello is too large' });
    };
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      check();
    };
    const onEnd = () => finish({ ok: false, why: 'the client closed before its ClientHello' });
    client.on('data', onData);
    client.once('end', onEnd);
    if (bytes.length) check();
    if (!done) client.resume();
  });
}
