// The head of an HTTP/1 message read by hand from a raw stream: the request a program sends the
// egress proxy, and the head of the destination's answer. Only heads are parsed; bodies pass as
// bytes (egress-http.ts, egress-tunnel.ts), so a download never goes through an HTTP parser here.
// Everything read is hostile input: bounded in size and time, and anything malformed is refused.
import type { Duplex } from 'node:stream';
import { GatheredBytes } from './gathered-bytes.js';

/** Largest head taken (request line or status line and all headers). */
export const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_WAIT_MS = 60_000;

export type Head = { ok: true; text: string; rest: Buffer } | { ok: false; why: string };

/** Reads until the blank line that ends a head; the stream is left paused, the bytes after the head in `rest`. */
export function readHead(stream: Duplex, first: Buffer = Buffer.alloc(0)): Promise<Head> {
  return new Promise((resolve) => {
    const gathered = new GatheredBytes(first);
    let done = false;
    const timer = setTimeout(() => finish({ ok: false, why: 'no whole head in time' }), HEAD_WAIT_MS);
    timer.unref();
    const finish = (h: Head) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('close', onEnd);
      stream.pause();
      resolve(h);
    };
    /** Looks for the head's end from `from` on: what was looked at before holds none (3 bytes back may start one). */
    const check = (from: number) => {
      const bytes = gathered.bytes;
      const end = bytes.indexOf('\r\n\r\n', Math.max(0, from - 3));
      if (end >= 0) finish({ ok: true, text: bytes.subarray(0, end).toString('latin1'), rest: Buffer.from(bytes.subarray(end + 4)) });
      else if (bytes.length > MAX_HEAD_BYTES) finish({ ok: false, why: 'the head is too large' });
    };
    const onData = (chunk: Buffer) => {
      const from = gathered.length;
      gathered.push(chunk);
      check(from);
    };
    const onEnd = () => finish({ ok: false, why: 'the stream ended before a whole head' });
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('close', onEnd);
    check(0);
    if (!done) stream.resume();
  });
}

export interface MessageHead {
  /** Request: method, target, version; response: version, status code, reason. */
  start: [string, string, string];
  /** In order, names lower-cased. */
  headers: Array<[string, string]>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Splits a head into its start line and headers; null when it is not one. */
export function parseHead(text: string): MessageHead | null {
  const lines = text.split('\r\n');
  const m = /^(\S+) (\S+) (.*)$/.exec(lines[0] ?? '');
  if (!m) return null;
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    if (colon <= 0 || !TOKEN.test(name) || /[\0\r\n]/.test(line)) return null;
    headers.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { start: [m[1]!, m[2]!, m[3]!], headers };
}

export function header(head: MessageHead, name: string): string | undefined {
  return head.headers.find(([n]) => n === name)?.[1];
}

const FRAMING = [
  ['host', 'Host'],
  ['content-length', 'Content-Length'],
  ['transfer-encoding', 'Transfer-Encoding'],
] as const;

/**
 * Why a request's target or body length could be read two ways, else null: a repeated Host,
 * Content-Length or Transfer-Encoding, or a Content-Length beside a Transfer-Encoding. The proxy
 * checks the first Host and cuts the body at the first length, while the origin may take another,
 * and so read the rest of the body as a second request never decided (RFC 9112 §6.3 makes such a
 * request an error). It is refused, never forwarded.
 */
export function ambiguity(head: MessageHead): string | null {
  for (const [name, shown] of FRAMING)
    if (head.headers.filter(([n]) => n === name).length > 1) return `the ${shown} header is repeated (send it once)`;
  if (header(head, 'content-length') !== undefined && header(head, 'transfer-encoding') !== undefined)
    return 'Content-Length and Transfer-Encoding conflict (send one)';
  return null;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own: not passed on either way. Transfer-Encoding
// is kept: bodies pass as they came, framing included.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

/** The head as it goes on: hop-by-hop headers (and those the Connection header names) dropped, `Connection: close` added. */
export function forwardHead(start: string, head: MessageHead): string {
  const named = new Set((header(head, 'connection') ?? '').split(',').map((s) => s.trim().toLowerCase()));
  const kept = head.headers.filter(([n]) => !HOP_BY_HOP.has(n) && !named.has(n));
  return `${start}\r\n${kept.map(([n, v]) => `${n}: ${v}\r\n`).join('')}connection: close\r\n\r\n`;
}
