// CONNECT through the egress proxy: decided on the CONNECT host; once allowed, the client's first
// bytes are held until its TLS ClientHello is whole, and the tunnel opens only if the server name
// it asks for is that host (a literal IP may send none). Anything else ends with a TLS alert: the
// 200 is already sent by then, so a 403 could not be read by the client.
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { answerAndClose, ConnectionRecord, rawResponse, refusal, type EgressMeter, type EgressRecorder } from './connection-record.js';
import { parseAuthority } from './destination.js';
import { decideConnection, type ConnectionContext } from './egress-ask.js';
import { carry, type Pump } from './egress-carry.js';
import { boundDestination } from './hand-over.js';
import { dialDecided, type Dial } from './sandbox-dialer.js';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello, UNRECOGNIZED_NAME_ALERT } from './tls-sni.js';
import { GatheredBytes } from './gathered-bytes.js';

/** How long a tunnel may wait for its ClientHello (its connect: sandbox-dialer.ts). */
const HELLO_WAIT_MS = 15_000;

export interface TunnelContext extends ConnectionContext {
  record: EgressRecorder;
  meter: EgressMeter | null;
  /** The runner binary's pump, which carries large transfers (egress-carry.ts); null: Node carries all. */
  pump: Pump | null;
  /** Connects to the destination, with the sandbox's dialer where it has one (sandbox-dialer.ts). */
  dial: Dial;
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
  const upstream = await dialDecided(
    ctx.dial,
    decision.address!,
    target.port,
    client,
    (why) => conn.close(why),
    () => client.destroy(),
  );
  if (!upstream) return;
  boundDestination(upstream);
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
}

type Hello = { ok: true; serverName: string | null; bytes: Buffer } | { ok: false; why: string };

/** Reads until the ClientHello is whole (then pauses the client) or is not one. */
function readHello(client: Duplex, head: Buffer): Promise<Hello> {
  return new Promise((resolve) => {
    const gathered = new GatheredBytes(head);
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
      const bytes = gathered.bytes;
      const r = parseClientHello(bytes);
      if (r.state === 'ok') finish({ ok: true, serverName: r.serverName, bytes: Buffer.from(bytes) });
      else if (r.state === 'bad') finish({ ok: false, why: r.why });
      else if (bytes.length > MAX_CLIENT_HELLO_BYTES) finish({ ok: false, why: 'the ClientHello is too large' });
    };
    const onData = (chunk: Buffer) => {
      gathered.push(chunk);
      check();
    };
    const onEnd = () => finish({ ok: false, why: 'the client closed before its ClientHello' });
    client.on('data', onData);
    client.once('end', onEnd);
    if (gathered.length) check();
    if (!done) client.resume();
  });
}
