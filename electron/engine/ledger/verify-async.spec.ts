// verifyAsync() is what `warden serve` and the app run when someone presses Verify: it must reach the
// verdict verify() reaches (tamper.spec.ts holds the two together on every tamper case) without
// holding the event loop, so the HTTP API and every UI socket keep answering meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from './ledger.js';
import { sampleEntry, tempLedger, type TempLedger } from './test-support.js';

const N = 250_000;
let t: TempLedger;
let l: Ledger;

beforeAll(() => {
  t = tempLedger();
  l = t.open({ checkpointOnClose: false });
  for (let i = 0; i < N; i += 10_000) {
    l.appendBatch(Array.from({ length: 10_000 }, (_, k) => sampleEntry(i + k + 1)));
    if (i === 100_000) l.checkpoint();
  }
  l.checkpoint();
}, 180_000);
afterAll(() => {
  l.close();
  t.cleanup();
});

/** Runs `work` while a 5 ms interval ticks: how often it got to run, and its longest wait. */
async function whileTicking<T>(work: () => Promise<T> | T): Promise<{ value: T; ticks: number; maxGapMs: number; ms: number }> {
  let ticks = 0;
  let maxGapMs = 0;
  const started = performance.now();
  let last = started;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks += 1;
  }, 5);
  try {
    const value = await work();
    const ms = performance.now() - started;
    return { value, ticks, maxGapMs: Math.max(maxGapMs, performance.now() - last), ms };
  } finally {
    clearInterval(timer);
  }
}

describe(`verifyAsync over ${N.toLocaleString('en-US')} entries`, () => {
  it('the blocking verify() starves a timer for its whole run (what the async path is for)', async () => {
    const run = await whileTicking(() => l.verify({ workers: 1 }));
    expect(run.value).toMatchObject({ ok: true, entries: N });
    expect(run.ticks).toBe(0);
  }, 120_000);

  it.each([
    ['in this thread, in slices', { workers: 1 }],
    ['on worker threads', { workers: 2, parallelThreshold: 0 }],
  ])('%s: same verdict, progress to the end, and a 5 ms timer keeps ticking', async (_how, opts) => {
    const progress: Array<[number, number]> = [];
    const run = await whileTicking(() => l.verifyAsync({ ...opts, onProgress: (done, total) => progress.push([done, total]) }));
    expect(run.value).toEqual(l.verify({ workers: 1 }));
    expect(run.value).toMatchObject({ ok: true, entries: N, firstBad: null, checkpoint: { size: N } });

    // Progress: many reports, never backwards, ending at the total.
    expect(progress.length).toBeGreaterThan(10);
    expect(progress.every(([, total]) => total === N)).toBe(true);
    expect(progress.every(([done], i) => i === 0 || done >= progress[i - 1]![0])).toBe(true);
    expect(progress.at(-1)).toEqual([N, N]);

    // The loop kept running: the timer fired throughout (a blocked loop fires it at most once), and
    // no single wait took a sizeable part of the run. Bounds are loose: this machine is shared.
    expect(run.ticks).toBeGreaterThan(Math.max(10, run.ms / 5 / 10));
    expect(run.maxGapMs).toBeLessThan(Math.max(250, run.ms / 4));
  }, 120_000);

  it('an entry appended while it runs does not change the verdict (it is past the verified size)', async () => {
    const pending = l.verifyAsync({ workers: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const added = l.append({ actor: 'user', kind: 'note.added', payload: { during: 'verify' } });
    const result = await pending;
    expect(added.seq).toBe(N + 1);
    expect(result).toMatchObject({ ok: true, firstBad: null });
    expect((await l.verifyAsync()).entries).toBe(N + 1);
  }, 120_000);
});
