// A writer appending as fast as it can (single, batch, group commit, scheduled checkpoints) is killed
// with SIGKILL at chosen moments, 160 times over the same ledger. After each kill the file must open,
// pass PRAGMA integrity_check and full verification, and hold every append acknowledged before it.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWriter, runWriter } from '../../test-support/child-writer.js';
import { tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

const KILLS = 160;

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash safety', () => {
  it(`survives ${KILLS} SIGKILLs of a busy writer without losing an acknowledged append`, async () => {
    const acked = new Map<number, string>();
    let killedMidRun = 0;
    let checkpointsAcked = 0;
    for (let k = 0; k < KILLS; k++) {
      const run = runWriter(writer, [t.file, t.keyDir, 'forever', `k${k}`]);
      // A quarter of the kills land anywhere from process start (schema, key, WAL set-up); the rest
      // wait for the writer itself: some appends acknowledged, or a checkpoint signed and then a
      // few more appends. Events, not timers, so a busy machine changes nothing but the duration.
      if (k % 4 === 0) {
        await sleep(Math.random() * 120);
      } else if (k % 4 === 3) {
        await run.until(() => run.checkpoints.length > 0);
        const after = run.acked.size + Math.floor(Math.random() * 8);
        await run.until(() => run.acked.size >= after);
      } else {
        const target = 1 + Math.floor(Math.random() * 200);
        await run.until(() => run.acked.size >= target);
      }
      run.child.kill('SIGKILL');
      await run.exited;
      if (run.acked.size > 0) killedMidRun += 1;
      for (const [seq, hash] of run.acked) acked.set(seq, hash);
      checkpointsAcked += run.checkpoints.length;
      const lastCheckpoint = run.checkpoints.at(-1) ?? 0;

      // The file opens (as the app would reopen it), and is intact.
      const l = t.open({ checkpointOnClose: false });
      const db = new Database(t.file);
      expect(db.pragma('integrity_check', { simple: true }), `after kill ${k}`).toBe('ok');
      const rows = db
        .prepare('SELECT seq, hash FROM entries WHERE seq >= ?')
        .raw(true)
        .all(Math.max(1, acked.size - 5000)) as Array<[number, Buffer]>;
      const stored = new Map(rows.map(([s, h]) => [s, h.toString('hex')]));
      // An acknowledged checkpoint survives the kill: the newest stored one covers at least its size.
      const newest = (db.prepare('SELECT MAX(size) FROM checkpoints').pluck().get() as number | null) ?? 0;
      expect(newest, `checkpoint of size ${lastCheckpoint} lost after kill ${k}`).toBeGreaterThanOrEqual(lastCheckpoint);
      db.close();
      for (const [seq, hash] of run.acked) expect(stored.get(seq), `acknowledged entry ${seq} lost after kill ${k}`).toBe(hash);

      const v = l.verify();
      expect(v.firstBad, `after kill ${k}`).toBeNull();
      expect(v.ok).toBe(true);
      expect(v.entries).toBeGreaterThanOrEqual(acked.size);
      l.close();
    }
    // Every acknowledged entry from every run is still there at the end, with its hash.
    const l = t.open({ checkpointOnClose: false });
    const all = new Map(l.entries({ limit: 100_000 }).map((e) => [e.seq, e.hash]));
    l.close();
    for (const [seq, hash] of acked) expect(all.get(seq)).toBe(hash);
    if (process.env.WARDEN_TEST_VERBOSE)
      console.info(
        `crash: ${KILLS} kills, ${killedMidRun} mid-append, ${acked.size} acknowledged entries, ${checkpointsAcked} checkpoints`,
      );
    // By construction three kills in four land inside the append loop, one in four after a checkpoint.
    expect(killedMidRun).toBeGreaterThanOrEqual((KILLS * 3) / 4);
    expect(checkpointsAcked).toBeGreaterThanOrEqual(KILLS / 4);
  }, 600_000); // a hang guard only: on a loaded machine 160 runs take minutes
});
