// The hand-written ClientHello reader against real ClientHellos (Node's TLS client's first bytes),
// split anywhere, and against bytes that are not one.
import { describe, expect, it } from 'vitest';
import { createServer, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { MAX_CLIENT_HELLO_RECORDS, parseClientHello } from './tls-sni.js';

/** The first bytes a TLS client sends when it asks for `servername`. */
async function clientHello(servername?: string): Promise<Buffer> {
  const server = createServer();
  const first = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) => {
      let bytes = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        if (bytes.length >= 5 && bytes.length >= 5 + bytes.readUInt16BE(3)) {
          resolve(bytes);
          socket.destroy();
        }
      });
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = tlsConnect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, rejectUnauthorized: false });
  client.on('error', () => undefined);
  const bytes = await first;
  client.destroy();
  server.close();
  return bytes;
}

describe('ClientHello server name', () => {
  it('reads the name a real client asks for, whole or split anywhere', async () => {
    const hello = await clientHello('Allowed.Test');
    expect(parseClientHello(hello)).toEqual({ state: 'ok', serverName: 'allowed.test' });
    for (const cut of [0, 1, 4, 5, 40, hello.length - 1]) expect(parseClientHello(hello.subarray(0, cut)).state).toBe('more');
  });

  it(`reads a ClientHello in up to ${MAX_CLIENT_HELLO_RECORDS} TLS records, and refuses one cut into more`, async () => {
    const hello = await clientHello('allowed.test');
    const body = hello.subarray(5, 5 + hello.readUInt16BE(3));
    /** The same handshake message in `n` records. */
    const inRecords = (n: number) => {
      const size = Math.ceil(body.length / n);
      const records: Buffer[] = [];
      for (let off = 0; off < body.length; off += size) {
        const part = body.subarray(off, off + size);
        const header = Buffer.from([0x16, 0x03, 0x01, 0, 0]);
        header.writeUInt16BE(part.length, 3);
        records.push(header, part);
      }
      return Buffer.concat(records);
    };
    expect(parseClientHello(inRecords(MAX_CLIENT_HELLO_RECORDS))).toEqual({ state: 'ok', serverName: 'allowed.test' });
    expect(parseClientHello(inRecords(body.length))).toEqual({
      state: 'bad',
      why: `a ClientHello in more than ${MAX_CLIENT_HELLO_RECORDS} TLS records`,
    });
  });

  it('reports no name when the client sends none', async () => {
    expect(parseClientHello(await clientHello(''))).toEqual({ state: 'ok', serverName: null });
  });

  it('refuses what is not a TLS handshake, and a truncated extension', async () => {
    expect(parseClientHello(Buffer.from('GET / HTTP/1.1\r\n\r\n')).state).toBe('bad');
    const hello = Buffer.from(await clientHello('allowed.test'));
    hello.writeUInt16BE(0xffff, 5 + 4 + 2 + 32 + 1 + hello[5 + 4 + 2 + 32]!); // cipher suites running past the end
    expect(parseClientHello(hello).state).toBe('bad');
  });
});
