// Who keeps an E2B command alive: it lives while its starter or any attached client follows it and
// is ended (with the last one's reason) when the last is gone; attached clients are bounded in
// number; and a pid is only found by the agent that started it, in that sandbox.
import { describe, expect, it } from 'vitest';
import type { ConnectStream } from './connect-protocol.js';
import { Follower, MAX_FOLLOWERS, ProcessTable } from './process-table.js';

function fakeStream(): { stream: ConnectStream; hangUp: (reason: string) => void; sent: unknown[] } {
  const gone = new AbortController();
  const sent: unknown[] = [];
  const stream = {
    gone: gone.signal,
    send: (m: unknown) => sent.push(m),
    end: () => undefined,
    batcher: () => ({ push: () => undefined, end: () => undefined }),
  } as unknown as ConnectStream;
  return { stream, hangUp: (reason) => gone.abort(reason), sent };
}

const config = { cmd: '/bin/bash', args: ['-l', '-c', 'sleep 9'], envs: {} };

function started(table: ProcessTable) {
  const starter = fakeStream();
  const entry = table.add({ agent: 'ann', sandboxId: 'box', config, input: 'none' }, starter.stream.gone);
  entry.running = true;
  return { entry, starter };
}

describe('the E2B process table', () => {
  it('ends a command only when the last client following it is gone, with that client’s reason', () => {
    const table = new ProcessTable();
    const { entry, starter } = started(table);
    const a = fakeStream();
    const b = fakeStream();
    table.attach(entry, new Follower(a.stream, 60_000));
    table.attach(entry, new Follower(b.stream, 60_000));
    starter.hangUp('clientGone');
    a.hangUp('clientGone');
    expect(entry.kill.signal.aborted).toBe(false);
    expect(entry.followers.size).toBe(1);
    b.hangUp('tokenRevoked');
    expect(entry.kill.signal.aborted).toBe(true);
    expect(entry.kill.signal.reason).toBe('tokenRevoked');
  });

  it('ends a command whose starter hangs up with nobody attached', () => {
    const table = new ProcessTable();
    const { entry, starter } = started(table);
    starter.hangUp('clientGone');
    expect(entry.kill.signal.reason).toBe('clientGone');
  });

  it(`refuses client ${MAX_FOLLOWERS + 1} of one command`, () => {
    const table = new ProcessTable();
    const { entry } = started(table);
    for (let i = 0; i < MAX_FOLLOWERS; i++) table.attach(entry, new Follower(fakeStream().stream, 60_000));
    expect(() => table.attach(entry, new Follower(fakeStream().stream, 60_000))).toThrow(/at most/);
  });

  it('finds a pid only for the agent that started it, in that sandbox', () => {
    const table = new ProcessTable();
    const { entry } = started(table);
    expect(table.find('ann', 'box', { pid: entry.pid })).toBe(entry);
    expect(() => table.find('bob', 'box', { pid: entry.pid })).toThrow(/no running command/);
    expect(() => table.find('ann', 'other', { pid: entry.pid })).toThrow(/no running command/);
  });
});
