// Several processes appending to one ledger at the same moment must serialize, never fork the chain.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWriter, runWriter } from '../../test-support/child-writer.js';
import { tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

let writer: string;
let t: TempLedger;
beforeAll(async () => {
  writer = await buildWriter();
  t = tempLedger();
});
afterAll(() => {
  t.cleanup();
  rmSync(dirname(writer), { recursive: true, force: true });
});

describe('multi-process appends', () => {
  it('five writers released at once (append, batch, group commit, checkpoints) build one gap-free chain', async () => {
    const WRITERS = 5;
    const ITERATIONS = 90; // per writer: 30 single, 30 batches of 3, 30 groups of 4 → 240 entries
    const runs = Array.from({ length: WRITERS }, (_, w) =>
      runWriter(writer, [t.file, t.keyDir, String(ITERATIONS), `w${w}`, 'wait-for-go']),
    );
    await Promise.all(runs.map((r) => r.ready));
    for (const r of runs) r.child.stdin!.end('go\n');
    const codes = await Promise.all(runs.map((r) => r.exited));
    expect(codes).toEqual(Array(WRITERS).fill(0));

    const total = WRITERS * (ITERATIONS / 3) * (1 + 3 + 4);
    const all = new Map<number, string>();
    for (const r of runs) {
      expect(r.acked.size).toBe(total / WRITERS);
      for (const [seq, hash] of r.acked) {
        expect(all.has(seq), `seq ${seq} acknowledged to two writers`).toBe(false);
        all.set(seq, hash);
      }
    }
    expect([...all.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));

    // The writers really interleaved (otherwise this test proves nothing about contention). SQLite's
    // busy handler is not fair, so a writer holding the lock often keeps it for a while: expect
    // interleaving, not round-robin.
    const db = new Database(t.file, { readonly: true });
    const actors = db.prepare('SELECT actor FROM entries ORDER BY seq').pluck().all() as string[];
    const stored = new Map(
      (db.prepare('SELECT seq, hash FROM entries').raw(true).all() as Array<[number, Buffer]>).map(([s, h]) => [s, h.toString('hex')]),
    );
    db.close();
    const switches = actors.filter((a, i) => i > 0 && a !== actors[i - 1]).length;
    expect(switches).toBeGreaterThanOrEqual(WRITERS);
    for (const [seq, hash] of all) expect(stored.get(seq)).toBe(hash);

    const l = t.open();
    expect(l.checkpoints().length).toBe(WRITERS * (ITERATIONS / 30));
    expect(l.verify()).toMatchObject({ ok: true, entries: total, firstBad: null });
    l.close();
  }, 60_000);
});
