import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventMap } from '../../../shared/contracts/events.js';
import { EventBus } from '../event-bus.js';
import { CallOutputStream, utf8Cut } from './call-output-stream.js';

type Output = EventMap['run.output'];

function follow(): { bus: EventBus; seen: Output[] } {
  const bus = new EventBus();
  const seen: Output[] = [];
  bus.on('run.output', (o) => seen.push(o));
  return { bus, seen };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a call’s live output', () => {
  it('is batched for 16 ms and names its run, call and stream', () => {
    vi.useFakeTimers();
    const { bus, seen } = follow();
    const out = new CallOutputStream(bus, 'run_1', 'call_1');
    out.push('stdout', Buffer.from('one\n'));
    out.push('stdout', Buffer.from('two\n'));
    vi.advanceTimersByTime(10);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(seen).toEqual([{ runId: 'run_1', callId: 'call_1', stream: 'stdout', data: 'one\ntwo\n' }]);
  });

  it('goes out at once when 64 KiB are waiting', () => {
    vi.useFakeTimers();
    const { bus, seen } = follow();
    const out = new CallOutputStream(bus, 'r', 'c');
    out.push('stdout', Buffer.alloc(64 * 1024, 'x'));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.data).toHaveLength(64 * 1024);
  });

  it('keeps stdout and stderr in the order they came', () => {
    vi.useFakeTimers();
    const { bus, seen } = follow();
    const out = new CallOutputStream(bus, 'r', 'c');
    out.push('stdout', Buffer.from('a'));
    out.push('stderr', Buffer.from('b'));
    out.push('stderr', Buffer.from('c'));
    out.push('stdout', Buffer.from('d'));
    out.end();
    expect(seen.map((o) => [o.stream, o.data])).toEqual([
      ['stdout', 'a'],
      ['stderr', 'bc'],
      ['stdout', 'd'],
    ]);
  });

  it('never splits a character across events', () => {
    const { bus, seen } = follow();
    const out = new CallOutputStream(bus, 'r', 'c');
    const text = Buffer.from('héllo wörld €');
    for (let i = 0; i < text.length; i++) out.push('stdout', text.subarray(i, i + 1));
    out.end();
    expect(seen.map((o) => o.data).join('')).toBe('héllo wörld €');
    expect(seen.every((o) => !o.data.includes('\ufffd'))).toBe(true);
  });

  it('stops after its bound, cutting between characters, and drops what comes later', () => {
    const { bus, seen } = follow();
    const out = new CallOutputStream(bus, 'r', 'c', 10);
    out.push('stdout', Buffer.from('12345678'));
    out.push('stdout', Buffer.from('€€')); // 6 bytes: only room for 2, which would split the euro
    out.push('stderr', Buffer.from('later'));
    out.end();
    expect(seen.map((o) => o.data).join('')).toBe('12345678');
    expect(out.bytes).toBe(10);
  });

  it('sends nothing after end()', () => {
    vi.useFakeTimers();
    const { bus, seen } = follow();
    const out = new CallOutputStream(bus, 'r', 'c');
    out.push('stdout', Buffer.from('x'));
    out.end();
    out.push('stdout', Buffer.from('y'));
    vi.advanceTimersByTime(100);
    expect(seen.map((o) => o.data)).toEqual(['x']);
  });
});

describe('utf8Cut', () => {
  it('backs up to the start of a character', () => {
    const b = Buffer.from('a€b'); // 61 e2 82 ac 62
    expect(utf8Cut(b, 1)).toBe(1);
    expect(utf8Cut(b, 2)).toBe(1);
    expect(utf8Cut(b, 3)).toBe(1);
    expect(utf8Cut(b, 4)).toBe(4);
    expect(utf8Cut(b, 9)).toBe(5);
  });
});
