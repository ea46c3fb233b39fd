// appendBatchAsync while another connection holds the write lock (issue 12): the event loop keeps
// turning, the batch goes in whole and in order once the lock is released, and a lock held past the
// deadline refuses the append (fail closed) instead of waiting on the loop.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

let t: TempLedger;
afterEach(() => t?.cleanup());

describe('Ledger.appendBatchAsync under another process’s lock', () => {
  it('leaves the event loop free and commits in order once the lock is gone', async () => {
    t = tempLedger();
    const l = t.open({ busyTimeoutMs: 10_000 });
    l.append(sampleEntry(0));
    const other = new Database(t.file);
    other.exec('BEGIN IMMEDIATE');
    const first = l.appendBatchAsync([sampleEntry(1), sampleEntry(2)]);
    const second = l.appendBatchAsync([sampleEntry(3)]);
    let settled = false;
    void Promise.all([first, second]).finally(() => (settled = true));
    // The loop turns (timers fire) while the appends wait for the lock: nothing blocks on it.
    let turns = 0;
    while (turns < 20) {
      await new Promise((r) => setTimeout(r, 5));
      turns++;
    }
    expect(settled).toBe(false);
    other.exec('ROLLBACK');
    other.close();
    const [a, b] = await Promise.all([first, second]);
    expect(a.map((e) => e.seq)).toEqual([2, 3]);
    expect(b.map((e) => e.seq)).toEqual([4]);
    expect(l.verify().ok).toBe(true);
    l.close();
  });

  it('refuses with E_LEDGER when the lock is held past the deadline, and writes nothing', async () => {
    t = tempLedger();
    const l = t.open({ busyTimeoutMs: 200 });
    const other = new Database(t.file);
    other.exec('BEGIN IMMEDIATE');
    const err = await l.appendBatchAsync([sampleEntry(1)]).catch((e: Error & { code?: string }) => e);
    other.exec('ROLLBACK');
    other.close();
    expect(err).toMatchObject({ code: 'E_LEDGER' });
    expect((err as Error).message).toMatch(/locked by another process/);
    expect(l.head().size).toBe(0);
    l.close();
  });
});
