// verifyAsync() is what `warden serve` and the app run when someone presses Verify: it must reach the
// verdict verify() reaches (tamper.spec.ts holds the two together on every tamper case) without
// holding the event loop, so the HTTP API and every UI socket keep answering meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from './ledger.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

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

/**
 * Runs `work` while a chain of setImmediate callbacks counts the event loop's turns: a loop held by
 * `work` turns zero times, one that `work` yields to turns between its slices. Turns are counted,
 * not timed, so a busy machine changes how long it takes, never the verdict.
 */
async function whileTurning<T>(work: (turns: () => number) => Promise<T> | T): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const turn = () => {
    if (!running) return;
    turns += 1;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const value = await work(() => turns);
    return { value, turns };
  } finally {
    running = false;
  }
}

describe(`verifyAsync over ${N.toLocaleString('en-US')} entries`, () => {
  it('the blocking verify() holds the event loop for its whole run (what the async path is for)', async () => {
    let turnsWhenDone = -1;
    const run = await whileTurning((turns) => {
      const verdict = l.verify({ workers: 1 });
      turnsWhenDone = turns();
      return verdict;
    });
    expect(run.value).toMatchObject({ ok: true, entries: N });
    expect(turnsWhenDone).toBe(0);
  }, 120_000);

  it.each([
    ['in this thread, in slices', { workers: 1 }],
    ['on worker threads', { workers: 2, parallelThreshold: 0 }],
  ])(
    '%s: same verdict, progress to the end, and the event loop turns between slices',
    async (_how, opts) => {
      const progress: Array<[number, number]> = [];
      const turnsAtProgress: number[] = [];
      const run = await whileTurning((turns) =>
        l.verifyAsync({
          ...opts,
          onProgress: (done, total) => {
            progress.push([done, total]);
            turnsAtProgress.push(turns());
          },
        }),
      );
      expect(run.value).toEqual(l.verify({ workers: 1 }));
      expect(run.value).toMatchObject({ ok: true, entries: N, firstBad: null, checkpoint: { size: N } });

      // Progress: many reports, never backwards, ending at the total.
      expect(progress.length).toBeGreaterThan(10);
      expect(progress.every(([, total]) => total === N)).toBe(true);
      expect(progress.every(([done], i) => i === 0 || done >= progress[i - 1]![0])).toBe(true);
      expect(progress.at(-1)).toEqual([N, N]);

      // The loop kept turning (a verify that held it would report everything at turn 0). In this
      // thread the verify yields between every two slices, so the loop turns between every two
      // reports, by construction. Worker results are messages: a busy machine may hand several over
      // in one turn, so there the claim is only that the loop went on turning while they worked.
      const advanced = turnsAtProgress.filter((n, i) => i > 0 && n > turnsAtProgress[i - 1]!).length;
      if (opts.workers === 1) expect(advanced).toBe(progress.length - 1);
      expect(run.turns).toBeGreaterThan(10);
    },
    120_000,
  );

  it('an entry appended while it runs does not change the verdict (it is past the verified size)', async () => {
    // The append is made on the loop turn after the first progress report, so it lands mid-verify
    // (a verify that has reported progress but not settled), whatever the machine's speed.
    let settled = false;
    let added: { seq: number; doneBefore: number; settledBefore: boolean } | undefined;
    const pending = l.verifyAsync({
      workers: 1,
      onProgress: (done) => {
        if (added || done >= N) return;
        added = { seq: 0, doneBefore: done, settledBefore: settled };
        const record = added;
        setImmediate(() => {
          record.settledBefore = settled;
          record.seq = l.append({ actor: 'user', kind: 'note.added', payload: { during: 'verify' } }).seq;
        });
      },
    });
    const result = await pending.finally(() => (settled = true));
    expect(added).toMatchObject({ seq: N + 1, settledBefore: false });
    expect(added!.doneBefore).toBeLessThan(N);
    expect(result).toMatchObject({ ok: true, firstBad: null, entries: N });
    expect((await l.verifyAsync()).entries).toBe(N + 1);
  }, 120_000);
});
