// A streamed stdin through the runner stays within its window: a command that never reads holds
// its writer back (nothing is sent past the window, the write stays pending), the runner's
// acknowledgements let the rest through in order, a runner acknowledging more than it was sent is
// lying (a protocol error, which loses it), and a call that ends fails what is still queued.
import { describe, expect, it } from 'vitest';
import { HostFrame, RUNNER_HEADER_BYTES, RUNNER_STDIN_WINDOW } from '../../../shared/contracts/runner.js';
import { RunnerProtocolError } from './frame-codec.js';
import type { RunnerChannel } from './runner-channel.js';
import { RunnerStdin } from './runner-stdin.js';

function fakeChannel() {
  const frames: Array<{ type: number; id: number; payload: Buffer }> = [];
  const channel = {
    send: (f: Buffer) => frames.push({ type: f[4]!, id: f.readUInt32BE(5), payload: f.subarray(RUNNER_HEADER_BYTES) }),
  } as unknown as RunnerChannel;
  const sentBytes = () => frames.filter((f) => f.type === HostFrame.stdin).reduce((n, f) => n + f.payload.length, 0);
  return { channel, frames, sentBytes };
}

const credit = (n: number, closed = 0) => {
  const p = Buffer.alloc(5);
  p.writeUInt32BE(n);
  p[4] = closed;
  return p;
};

/** Lets queued promise callbacks run (no timers). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('streamed stdin through the runner', () => {
  it('sends no more than its window until the runner acknowledges, then the rest in order', async () => {
    const { channel, frames, sentBytes } = fakeChannel();
    const input = new RunnerStdin(channel, 7, false);
    const data = Buffer.alloc(RUNNER_STDIN_WINDOW * 3, 1);
    let done = false;
    const write = input.write(data).then(() => (done = true));
    const second = input.write(Buffer.from('after'));
    await settle();
    expect(sentBytes()).toBe(RUNNER_STDIN_WINDOW);
    expect(done).toBe(false);
    input.onCredit(credit(RUNNER_STDIN_WINDOW));
    await settle();
    expect(sentBytes()).toBe(RUNNER_STDIN_WINDOW * 2);
    input.onCredit(credit(RUNNER_STDIN_WINDOW));
    await write;
    expect(sentBytes()).toBe(RUNNER_STDIN_WINDOW * 3);
    input.onCredit(credit(RUNNER_STDIN_WINDOW));
    await second;
    expect(done).toBe(true);
    const stdin = frames.filter((f) => f.type === HostFrame.stdin);
    expect(stdin.every((f) => f.id === 7)).toBe(true);
    expect(
      Buffer.concat(stdin.map((f) => f.payload))
        .subarray(-5)
        .toString(),
    ).toBe('after');
    input.end();
    await settle();
    expect(frames.at(-1)).toMatchObject({ type: HostFrame.stdin, payload: Buffer.alloc(0) });
  });

  it('treats an acknowledgement of bytes never sent as a lie', () => {
    const { channel } = fakeChannel();
    const input = new RunnerStdin(channel, 1, false);
    expect(() => input.onCredit(credit(1))).toThrow(RunnerProtocolError);
    expect(() => input.onCredit(Buffer.alloc(4))).toThrow(RunnerProtocolError);
    expect(() => input.onCredit(credit(0, 2))).toThrow(RunnerProtocolError);
  });

  it('fails what waits, and what comes later, once the runner says the command closed its stdin', async () => {
    const { channel, sentBytes } = fakeChannel();
    const input = new RunnerStdin(channel, 1, false);
    const pending = input.write(Buffer.alloc(RUNNER_STDIN_WINDOW + 10));
    await settle();
    input.onCredit(credit(RUNNER_STDIN_WINDOW, 1));
    await expect(pending).rejects.toThrow('closed its stdin');
    await expect(input.write(Buffer.from('x'))).rejects.toThrow('closed its stdin');
    expect(sentBytes()).toBe(RUNNER_STDIN_WINDOW);
  });

  it('fails queued and later writes once the call is over, and sends nothing more', async () => {
    const { channel, sentBytes } = fakeChannel();
    const input = new RunnerStdin(channel, 1, false);
    const pending = input.write(Buffer.alloc(RUNNER_STDIN_WINDOW + 10));
    await settle();
    input.close('the command has ended');
    await expect(pending).rejects.toThrow('the command has ended');
    await expect(input.write(Buffer.from('x'))).rejects.toThrow('the command has ended');
    expect(sentBytes()).toBe(RUNNER_STDIN_WINDOW);
  });

  it('refuses writes after end()', async () => {
    const { channel } = fakeChannel();
    const input = new RunnerStdin(channel, 1, false);
    input.end();
    await expect(input.write(Buffer.from('x'))).rejects.toThrow('stdin is closed');
  });
});
