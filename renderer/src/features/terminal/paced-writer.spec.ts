import { afterEach, describe, expect, it, vi } from 'vitest';
import { PacedWriter } from './paced-writer.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A stand-in for xterm: records writes; parse() runs the oldest write's callback. */
function fakeTerm() {
  const writes: string[] = [];
  const callbacks: Array<() => void> = [];
  return {
    writes,
    target: { write: (data: string, parsed: () => void) => void (writes.push(data), callbacks.push(parsed)) },
    parse: () => callbacks.shift()?.(),
  };
}

describe('paced terminal writes', () => {
  it('writes small output at once, one piece after another', () => {
    vi.useFakeTimers();
    const t = fakeTerm();
    const w = new PacedWriter(t.target, 50, 100, undefined, () => Date.now());
    w.write('a');
    expect(t.writes).toEqual(['a']);
    // While xterm parses, what comes waits and is joined.
    w.write('b');
    w.write('c');
    expect(t.writes).toEqual(['a']);
    t.parse();
    expect(t.writes).toEqual(['a', 'bc']);
    t.parse();
    w.write('d');
    expect(t.writes).toEqual(['a', 'bc', 'd']);
  });

  it('after a big write, joins what follows and writes it once per interval, after the parse', () => {
    vi.useFakeTimers();
    const t = fakeTerm();
    const w = new PacedWriter(t.target, 50, 100, undefined, () => Date.now());
    const big = 'x'.repeat(100);
    w.write(big);
    t.parse();
    for (let i = 0; i < 10; i++) {
      w.write('y'.repeat(20));
      vi.advanceTimersByTime(4);
    }
    expect(t.writes).toEqual([big]);
    vi.advanceTimersByTime(10);
    expect(t.writes).toEqual([big, 'y'.repeat(200)]);
    // Not parsed yet: the next interval passes and nothing more is written.
    w.write('z');
    vi.advanceTimersByTime(100);
    expect(t.writes.length).toBe(2);
    t.parse();
    expect(t.writes).toEqual([big, 'y'.repeat(200), 'z']);
  });

  it('writes nothing more once disposed', () => {
    vi.useFakeTimers();
    const t = fakeTerm();
    const w = new PacedWriter(t.target, 50, 1, undefined, () => Date.now());
    w.write('a');
    t.parse();
    w.write('b');
    w.dispose();
    vi.advanceTimersByTime(100);
    w.write('c');
    expect(t.writes).toEqual(['a']);
  });
});
