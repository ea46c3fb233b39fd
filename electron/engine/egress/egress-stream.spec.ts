// An egress stream's credit both ways: it never sends the runner more than the runner made room
// for, and it grants the runner more only as its own reader takes bytes, so neither side of a
// stalled connection buffers more than a window. Frames past the end are a protocol error, except
// for a stream this side already cut (the runner had not seen the KILL yet).
import { describe, expect, it } from 'vitest';
import { EGRESS_STREAM_WINDOW, HostFrame } from '../../../shared/contracts/runner.js';
import { RunnerProtocolError } from '../runner/frame-codec.js';
import { EgressStream } from './egress-stream.js';

function harness() {
  const frames: Array<{ type: number; id: number; payload: Buffer }> = [];
  const stream = new EgressStream(7, (f, p) => frames.push({ type: f[4]!, id: f.readUInt32BE(5), payload: p ?? f.subarray(9) }));
  const sent = (type: number) => frames.filter((f) => f.type === type);
  const bytes = (type: number) => sent(type).reduce((n, f) => n + f.payload.length, 0);
  const credit = () => sent(HostFrame.credit).reduce((n, f) => n + f.payload.readUInt32BE(0), 0);
  return { stream, frames, sent, bytes, credit };
}

describe('egress stream', () => {
  it('sends the runner only what it has room for, and the rest as credit comes', async () => {
    const h = harness();
    let written = false;
    h.stream.write(Buffer.alloc(EGRESS_STREAM_WINDOW * 3, 1), () => (written = true));
    expect(h.bytes(HostFrame.stdin)).toBe(EGRESS_STREAM_WINDOW);
    expect(written).toBe(false);
    h.stream.onCredit(EGRESS_STREAM_WINDOW);
    h.stream.onCredit(EGRESS_STREAM_WINDOW);
    expect(h.bytes(HostFrame.stdin)).toBe(EGRESS_STREAM_WINDOW * 3);
    await new Promise((r) => setImmediate(r));
    expect(written).toBe(true);
    h.stream.onCredit(EGRESS_STREAM_WINDOW); // all of it back: the runner's buffer is empty
    expect(() => h.stream.onCredit(1)).toThrow(RunnerProtocolError); // more than it could ever have taken
  });

  it('credits the runner only for what its reader took', async () => {
    const h = harness();
    const chunk = Buffer.alloc(64 * 1024, 2);
    for (let i = 0; i < 4; i++) h.stream.onData(chunk); // nobody reads: past the reader's buffer, no credit
    const early = h.credit();
    expect(early).toBeLessThan(4 * chunk.length);
    let read = 0;
    h.stream.on('data', (c: Buffer) => (read += c.length));
    await new Promise((r) => setImmediate(r));
    expect(read).toBe(4 * chunk.length);
    expect(h.credit()).toBe(4 * chunk.length);
  });

  it('ends on EOF and DONE, refuses data after EOF, and drops frames once cut here', async () => {
    const h = harness();
    const ended = new Promise((r) => h.stream.once('end', r));
    h.stream.resume();
    h.stream.onData(Buffer.alloc(0));
    await ended;
    expect(() => h.stream.onData(Buffer.from('x'))).toThrow(RunnerProtocolError);

    const cut = harness();
    cut.stream.destroy();
    expect(cut.sent(HostFrame.kill).map((f) => f.id)).toEqual([7]);
    expect(() => cut.stream.onData(Buffer.from('late'))).not.toThrow();
    expect(() => cut.stream.onDone()).not.toThrow();
  });
});
