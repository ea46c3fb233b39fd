// The server name a TLS ClientHello asks for (RFC 8446 §4.1.2, RFC 6066 §3), read by hand from the
// first bytes a client sends through a CONNECT tunnel. The proxy holds them until the name is known:
// a tunnel opened to an allowed name must not carry a handshake for another (domain fronting).
// Everything here is bytes from inside a sandbox: every length is checked before it is used.

/** The most a ClientHello may take before the proxy gives up on it. */
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;
/** The most TLS records a ClientHello may be split into (clients send one, two for the largest): each
 * chunk that arrives is parsed from the first record, so a hello cut into thousands of tiny records
 * would cost the proxy the square of their number. */
export const MAX_CLIENT_HELLO_RECORDS = 16;

export type HelloResult = { state: 'more' } | { state: 'bad'; why: string } | { state: 'ok'; serverName: string | null };

/** Joins the handshake fragments of the records in `bytes`; `more` until the whole ClientHello is there. */
function handshakeBytes(bytes: Buffer): Buffer | HelloResult {
  const fragments: Buffer[] = [];
  let have = 0;
  let off = 0;
  for (;;) {
    if (have >= 4) {
      const joined = Buffer.concat(fragments);
      const need = 4 + joined.readUIntBE(1, 3);
      if (joined[0] !== 1) return { state: 'bad', why: 'the first handshake message is not a ClientHello' };
      if (need > MAX_CLIENT_HELLO_BYTES) return { state: 'bad', why: 'the ClientHello is too large' };
      if (have >= need) return joined.subarray(0, need);
    }
    if (bytes.length - off < 5) return { state: 'more' };
    if (bytes[off] !== 0x16) return { state: 'bad', why: 'the tunnel did not start with a TLS handshake' };
    const len = bytes.readUInt16BE(off + 3);
    if (len === 0 || len > 16384 + 256) return { state: 'bad', why: 'a TLS record of a length no client sends' };
    if (bytes.length - off < 5 + len) return { state: 'more' };
    if (fragments.length === MAX_CLIENT_HELLO_RECORDS)
      return { state: 'bad', why: `a ClientHello in more than ${MAX_CLIENT_HELLO_RECORDS} TLS records` };
    fragments.push(bytes.subarray(off + 5, off + 5 + len));
    have += len;
    off += 5 + len;
  }
}

export function parseClientHello(bytes: Buffer): HelloResult {
  if (bytes.length > 0 && bytes[0] !== 0x16) return { state: 'bad', why: 'the tunnel did not start with a TLS handshake' };
  const hs = handshakeBytes(bytes);
  if (!Buffer.isBuffer(hs)) return hs;
  const bad = (why: string): HelloResult => ({ state: 'bad', why: `a malformed ClientHello (${why})` });
  let p = 4 + 2 + 32; // header, legacy version, random
  const need = (n: number) => p + n <= hs.length;
  if (!need(1)) return bad('session id');
  p += 1 + hs[p]!;
  if (!need(2)) return bad('cipher suites');
  p += 2 + hs.readUInt16BE(p);
  if (!need(1)) return bad('compression');
  p += 1 + hs[p]!;
  if (p === hs.length) return { state: 'ok', serverName: null }; // no extensions at all
  if (!need(2)) return bad('extensions');
  const end = p + 2 + hs.readUInt16BE(p);
  p += 2;
  if (end > hs.length) return bad('extensions length');
  while (p + 4 <= end) {
    const type = hs.readUInt16BE(p);
    const len = hs.readUInt16BE(p + 2);
    p += 4;
    if (p + len > end) return bad('an extension length');
    if (type === 0) return serverNameOf(hs.subarray(p, p + len));
    p += len;
  }
  return { state: 'ok', serverName: null };
}

function serverNameOf(ext: Buffer): HelloResult {
  const bad: HelloResult = { state: 'bad', why: 'a malformed server_name extension' };
  if (ext.length < 2 || ext.readUInt16BE(0) !== ext.length - 2) return bad;
  let p = 2;
  while (p + 3 <= ext.length) {
    const type = ext[p]!;
    const len = ext.readUInt16BE(p + 1);
    p += 3;
    if (p + len > ext.length) return bad;
    if (type === 0) {
      const name = ext.toString('latin1', p, p + len);
      if (!/^[A-Za-z0-9_.-]{1,253}$/.test(name)) return { state: 'bad', why: 'a server name that is not a host name' };
      return { state: 'ok', serverName: name.toLowerCase().replace(/\.$/, '') };
    }
    p += len;
  }
  return bad;
}

/** A fatal `unrecognized_name` alert: what the client sees when its SNI is not the name it asked the proxy for. */
export const UNRECOGNIZED_NAME_ALERT = Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x70]);
