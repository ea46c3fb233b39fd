import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { FrameDemuxer } from './frame-demuxer.js';

function frame(type: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

function demux(chunks: Buffer[]) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const d = new FrameDemuxer(
    (c) => out.push(Buffer.from(c)),
    (c) => err.push(Buffer.from(c)),
  );
  for (const c of chunks) d.push(c);
  return { out: Buffer.concat(out), err: Buffer.concat(err), complete: d.complete };
}

function splitEverywhere(buf: Buffer, rng: () => number): Buffer[] {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    const size = Math.max(1, Math.floor(rng() * 40));
    parts.push(buf.subarray(at, at + size));
    at += size;
  }
  return parts;
}

describe('frame demuxer', () => {
  it('splits stdout from stderr byte-exact however the chunks fall, header bytes included', () => {
    let seed = 1;
    const rng = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const payloads: Array<{ type: number; data: Buffer }> = Array.from({ length: 200 }, (_, i) => ({
      type: i % 3 === 0 ? 2 : 1,
      data: randomBytes(Math.floor(rng() * 300)),
    }));
    // Payloads that look like headers must stay payload.
    payloads.push({ type: 1, data: frame(2, Buffer.from('not a real frame')) });
    const stream = Buffer.concat(payloads.map((p) => frame(p.type, p.data)));
    const expectedOut = Buffer.concat(payloads.filter((p) => p.type === 1).map((p) => p.data));
    const expectedErr = Buffer.concat(payloads.filter((p) => p.type === 2).map((p) => p.data));
    const variants: Buffer[][] = [[stream], splitEverywhere(stream, rng), [...stream].map((b) => Buffer.from([b]))];
    for (const chunks of variants) {
      const r = demux(chunks);
      expect(r.out.equals(expectedOut)).toBe(true);
      expect(r.err.equals(expectedErr)).toBe(true);
      expect(r.complete).toBe(true);
    }
  });

  it('keeps a multibyte character split across frames intact when joined', () => {
    const euro = Buffer.from('€');
    const r = demux([frame(1, euro.subarray(0, 1)), frame(1, euro.subarray(1))]);
    expect(r.out.toString('utf8')).toBe('€');
  });

  it('reports a torn last frame and refuses a corrupt header instead of guessing', () => {
    const whole = frame(1, Buffer.from('hello'));
    expect(demux([whole.subarray(0, 10)]).complete).toBe(false);
    expect(() => demux([Buffer.from('plain text, no frames')])).toThrow(/corrupt/);
  });
});
