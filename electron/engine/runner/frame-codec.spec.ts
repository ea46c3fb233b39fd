// The host reads the runner's frames as hostile input: oversized, unknown, short, trailing or
// out-of-range frames are refused before anything is buffered or believed, and a channel that
// receives one declares its runner lost and fails the calls in flight.
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RUNNER_MAX_PAYLOAD, RUNNER_PROTOCOL_VERSION, RunnerFrame } from '../../../shared/contracts/runner.js';
import { encodeFrame, FrameDecoder, parseExit, parseFail, parseListEntries, RunnerProtocolError, type Frame } from './frame-codec.js';
import { RunnerChannel } from './runner-channel.js';
import { execThroughRunner } from './runner-exec.js';

function decodeAll(bytes: Buffer, split = 1): Frame[] {
  const d = new FrameDecoder();
  const out: Frame[] = [];
  for (let i = 0; i < bytes.length; i += split) d.push(bytes.subarray(i, i + split), (f) => out.push(f));
  return out;
}

/** Podman's multiplexed exec framing around the runner's bytes (as stdout). */
function podmanStdout(bytes: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h[0] = 1;
  h.writeUInt32BE(bytes.length, 4);
  return Buffer.concat([h, bytes]);
}

const READY = encodeFrame(RunnerFrame.ready, 0, Buffer.from([0, 0, 0, RUNNER_PROTOCOL_VERSION, 0, 0, 0, 42]));

describe('frame decoder', () => {
  it('reassembles frames split anywhere', () => {
    const bytes = Buffer.concat([READY, encodeFrame(RunnerFrame.stdout, 7, Buffer.from('héllo'))]);
    const frames = decodeAll(bytes, 1);
    expect(frames.map((f) => [f.type, f.id, f.payload.toString()])).toEqual([
      [RunnerFrame.ready, 0, READY.subarray(9).toString()],
      [RunnerFrame.stdout, 7, 'héllo'],
    ]);
  });

  it('refuses an oversized frame from its header alone, before buffering its payload', () => {
    const head = Buffer.alloc(9);
    head.writeUInt32BE(RUNNER_MAX_PAYLOAD + 1, 0);
    head[4] = RunnerFrame.stdout;
    expect(() => decodeAll(head, 9)).toThrow(RunnerProtocolError);
    head.writeUInt32BE(0xffffffff, 0);
    expect(() => decodeAll(head, 9)).toThrow(/over the/);
  });

  it('refuses unknown frame types, including host-bound ones', () => {
    for (const type of [0x00, 0x01, 0x7f, 0x8b, 0xff]) {
      expect(() => decodeAll(encodeFrame(type, 1, Buffer.alloc(0)), 9)).toThrow(/unknown frame type/);
    }
  });

  it('refuses short, trailing and out-of-range fields', () => {
    expect(() => parseExit(Buffer.alloc(15))).toThrow(RunnerProtocolError);
    expect(() => parseExit(Buffer.concat([Buffer.alloc(16), Buffer.from('x')]))).toThrow(/trailing/);
    const bad = Buffer.alloc(16);
    bad[0] = 9;
    expect(() => parseExit(bad)).toThrow(/unknown fields/);
    const huge = Buffer.alloc(16);
    huge.writeBigUInt64BE(2n ** 63n, 4);
    expect(() => parseExit(huge)).toThrow(/out-of-range/);
    const liar = Buffer.concat([Buffer.from([0, 0, 0, 10]), Buffer.from('E_INTERNAL'), Buffer.from([0, 0, 0, 1]), Buffer.from('x')]);
    expect(() => parseFail(liar)).toThrow(/never gives/);
    const entry = Buffer.alloc(29 + 2);
    entry.writeUInt32BE(2, 25);
    entry.write('..', 29);
    expect(() => parseListEntries(entry, 10)).toThrow(/out of range/);
    expect(() => parseListEntries(Buffer.alloc(10), 10)).toThrow(/short/);
  });
});

describe('a channel given garbage', () => {
  async function openFake() {
    // What the host writes goes nowhere; what the "runner" says is pushed to the host's side.
    const duplex = new Duplex({ read: () => undefined, write: (_c, _e, cb) => cb() });
    const stream = { write: (b: Buffer) => duplex.push(b), end: () => duplex.push(null) };
    const lost: string[] = [];
    const opening = RunnerChannel.attach(duplex, 'fake', (reason) => lost.push(reason));
    stream.write(podmanStdout(READY));
    const channel = await opening;
    return { stream, channel, lost };
  }

  it('declares the runner lost and fails the call in flight with a clear error', async () => {
    const { stream, channel, lost } = await openFake();
    expect(channel.pid).toBe(42);
    const call = execThroughRunner(channel, { cmd: ['true'] }, {}, { argv: ['true'], isNewOomKill: () => false });
    stream.write(podmanStdout(Buffer.from('this is not a frame at all, just text from an agent')));
    await expect(call).rejects.toMatchObject({ code: 'E_ENGINE', message: expect.stringContaining('runner was lost') });
    expect(lost).toHaveLength(1);
    expect(channel.lost).toBe(true);
  });

  it('declares it lost for output past the credit it was granted, or for a call nobody made', async () => {
    const a = await openFake();
    // A consumer that never catches up: no credit goes back, so the window is all the runner may send.
    const stalled = { onStdout: () => false, drain: () => new Promise<void>(() => undefined) };
    const call = execThroughRunner(a.channel, { cmd: ['true'] }, stalled, { argv: ['true'], isNewOomKill: () => false });
    a.stream.write(podmanStdout(encodeFrame(RunnerFrame.stdout, 1, Buffer.alloc(RUNNER_MAX_PAYLOAD))));
    a.stream.write(podmanStdout(encodeFrame(RunnerFrame.stdout, 1, Buffer.alloc(1))));
    await expect(call).rejects.toThrow(/credit/);
    const b = await openFake();
    b.stream.write(podmanStdout(encodeFrame(RunnerFrame.done, 99)));
    await new Promise((resolve) => setImmediate(resolve)); // the pushed bytes are delivered on the next turn
    expect(b.lost).toEqual([expect.stringContaining('not in flight')]);
  });

  it('fails only the call whose consumer threw, and keeps the runner', async () => {
    const { stream, channel, lost } = await openFake();
    const throwing = {
      onStdout: () => {
        throw new Error('the consumer broke');
      },
    };
    const call = execThroughRunner(channel, { cmd: ['true'] }, throwing, { argv: ['true'], isNewOomKill: () => false });
    stream.write(podmanStdout(encodeFrame(RunnerFrame.stdout, 1, Buffer.from('out'))));
    await expect(call).rejects.toThrow('the consumer broke');
    // Its command is killed; its last frames still arrive and end it quietly.
    stream.write(podmanStdout(encodeFrame(RunnerFrame.stdout, 1, Buffer.from('more'))));
    stream.write(podmanStdout(encodeFrame(RunnerFrame.exit, 1, Buffer.from([1, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lost).toEqual([]);
    expect(channel.inFlight).toBe(0);
  });

  it('declares it lost when its channel closes', async () => {
    const { stream, channel, lost } = await openFake();
    const call = execThroughRunner(channel, { cmd: ['true'] }, {}, { argv: ['true'], isNewOomKill: () => false });
    stream.end();
    await expect(call).rejects.toThrow(/runner was lost/);
    expect(lost[0]).toMatch(/closed/);
  });
});
