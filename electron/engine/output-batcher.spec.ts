import { afterEach, describe, expect, it, vi } from 'vitest';
import { OutputBatcher } from './output-batcher.js';

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

  it('sends a dangling partial character at the end', () => {
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d));
    b.push(Buffer.from('€').subarray(0, 2));
    b.end();
    expect(out).toEqual(['\ufffd']);
  });
});
