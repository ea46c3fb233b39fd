import { afterEach, describe, expect, it, vi } from 'vitest';
import { ByteBatcher, OutputBatcher } from './output-batcher.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('output batching', () => {
  it('joins chunks within a few ms and never splits a UTF-8 character', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d));
    const euro = Buffer.from('€');
    b.push(Buffer.from('a'));
    b.push(euro.subarray(0, 1));
    b.push(euro.subarray(1));
    expect(out).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(out).toEqual(['a€']);
  });

  it('takes its own interval and size', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d), { flushMs: 16, flushChars: 4 });
    b.push(Buffer.from('ab'));
    vi.advanceTimersByTime(10);
    expect(out).toEqual([]);
    expect(b.pending).toBe(true);
    vi.advanceTimersByTime(10);
    expect(out).toEqual(['ab']);
    b.push(Buffer.from('cdef'));
    expect(out).toEqual(['ab', 'cdef']);
    expect(b.pending).toBe(false);
  });

  it('with leading, sends a chunk after a quiet spell at once and batches the burst behind it', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d), { leading: true, flushMs: 5 });
    b.push(Buffer.from('h'));
    expect(out).toEqual(['h']);
    b.push(Buffer.from('i'));
    b.push(Buffer.from('!'));
    expect(out).toEqual(['h']);
    vi.advanceTimersByTime(5);
    expect(out).toEqual(['h', 'i!']);
    vi.advanceTimersByTime(20);
    b.push(Buffer.from('x'));
    expect(out).toEqual(['h', 'i!', 'x']);
  });

  it('sends a dangling partial character at the end', () => {
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d));
    b.push(Buffer.from('€').subarray(0, 2));
    b.end();
    expect(out).toEqual(['\ufffd']);
  });

  it('bytes: joined the same way, passed through untouched (a split character stays split)', () => {
    vi.useFakeTimers();
    const out: Buffer[] = [];
    const b = new ByteBatcher((d) => out.push(d), { leading: true, flushMs: 5, flushChars: 8 });
    const euro = Buffer.from('€');
    b.push(Buffer.from('h'));
    expect(out.map(String)).toEqual(['h']);
    b.push(Buffer.from('i'));
    b.push(euro.subarray(0, 1));
    vi.advanceTimersByTime(5);
    expect(out.at(-1)).toEqual(Buffer.from([0x69, euro[0]!]));
    b.push(euro.subarray(1));
    b.push(Buffer.from('12345678'));
    expect(Buffer.concat(out.slice(2)).equals(Buffer.concat([euro.subarray(1), Buffer.from('12345678')]))).toBe(true);
    expect(b.pending).toBe(false);
    b.push(Buffer.from('z'));
    b.end();
    expect(String(out.at(-1))).toBe('z');
  });
});
