// The hand-read HTTP heads of the egress proxy: what a program sends is hostile, so a head is
// bounded and anything malformed is refused; hop-by-hop headers never pass on.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { forwardHead, MAX_HEAD_BYTES, parseHead, readHead } from './http-head.js';

describe('readHead', () => {
  it('reads a head that comes in pieces, and leaves what follows it', async () => {
    const s = new PassThrough();
    const head = readHead(s);
    s.write('GET http://a.test/ HTTP/1.1\r\nHo');
    s.write('st: a.test\r\n\r\nbody');
    expect(await head).toEqual({ ok: true, text: 'GET http://a.test/ HTTP/1.1\r\nHost: a.test', rest: Buffer.from('body') });
  });

  it('reads a head trickled a byte at a time, its end split across chunks, and keeps every byte after it', async () => {
    const s = new PassThrough();
    const head = readHead(s);
    const sent = 'GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\nafter';
    for (const byte of sent) s.write(byte);
    expect(await head).toEqual({ ok: true, text: 'GET http://a.test/ HTTP/1.1\r\nHost: a.test', rest: Buffer.from('') });
    // The rest comes with the chunk that ends the head: the bytes after it are in `rest`, once, whole.
    const t = new PassThrough();
    const second = readHead(t, Buffer.from('GET / HTTP/1.1\r\nA: b\r'));
    t.write('\n\r');
    t.write('\nbody and more');
    expect(await second).toEqual({ ok: true, text: 'GET / HTTP/1.1\r\nA: b', rest: Buffer.from('body and more') });
  });

  it('refuses a head past its bound, and a stream that ends first', async () => {
    const big = new PassThrough();
    const head = readHead(big);
    big.write(Buffer.alloc(MAX_HEAD_BYTES + 2, 'a'));
    expect(await head).toEqual({ ok: false, why: 'the head is too large' });
    const short = new PassThrough();
    const cut = readHead(short);
    short.end('GET / HTTP/1.1\r\n');
    expect(await cut).toEqual({ ok: false, why: 'the stream ended before a whole head' });
  });
});

describe('parseHead and forwardHead', () => {
  it('drops hop-by-hop headers and those Connection names, and closes after one message', () => {
    const head = parseHead(
      'GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nProxy-Authorization: b\r\nTransfer-Encoding: chunked\r\nAccept: */*',
    )!;
    expect(head.start).toEqual(['GET', 'http://a.test/x', 'HTTP/1.1']);
    expect(forwardHead('GET /x HTTP/1.1', head)).toBe(
      'GET /x HTTP/1.1\r\nhost: a.test\r\ntransfer-encoding: chunked\r\naccept: */*\r\nconnection: close\r\n\r\n',
    );
  });

  it('refuses a malformed start line or header', () => {
    expect(parseHead('GET\r\nHost: a')).toBeNull();
    expect(parseHead('GET / HTTP/1.1\r\nno colon here')).toBeNull();
    expect(parseHead('GET / HTTP/1.1\r\nBad Name: x')).toBeNull();
    expect(parseHead('GET / HTTP/1.1\r\n: empty name')).toBeNull();
  });
});
