// Every tamper scenario of the spec, done the way an attacker with file access would: on a copy of
// the database, with the sqlite3 command line, after dropping the append-only triggers.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, entryCanonical, entryHash } from './canonical.js';
import { formatCheckpoint, openNote, signNote, signerFromGoKey, type SignerKey } from './note.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';
import { verifyLedgerFile, verifyLedgerFileAsync } from './verify-file.js';

const N = 60;
let t: TempLedger;
let olderCopy: string;
let copies = 0;

beforeAll(() => {
  execFileSync('sqlite3', ['-version']); // the suite needs the real CLI (Debian package sqlite3)
  t = tempLedger();
  const l = t.open({ checkpointOnClose: false });
  for (let i = 1; i <= N; i++) {
    l.append(sampleEntry(i));
    if (i % 20 === 0) l.checkpoint(); // history at 20, 40, 60; the file holds 60
    if (i === 40) {
      // A backup taken at 40 entries, to be "restored" later.
      olderCopy = join(t.dir, 'older.db');
      l.checkpoint();
      execFileSync('sqlite3', [t.file, `VACUUM INTO '${olderCopy}'`]);
    }
  }
  l.close();
});
afterAll(() => t.cleanup());

interface Copy {
  file: string;
  checkpointFile: string;
}

/** A fresh copy of the ledger and its checkpoint file, triggers dropped, as the attacker's starting point. */
function copy(): Copy {
  copies += 1;
  const file = join(t.dir, `copy-${copies}.db`);
  copyFileSync(t.file, file);
  const checkpointFile = `${file}.checkpoint`;
  copyFileSync(`${t.file}.checkpoint`, checkpointFile);
  const db = new Database(file, { readonly: true });
  const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[];
  db.close();
  sqlite(file, triggers.map((n) => `DROP TRIGGER ${n};`).join('\n'));
  return { file, checkpointFile };
}

function sqlite(file: string, script: string): void {
  execFileSync('sqlite3', ['-bail', file], { input: script });
}

/**
 * Every case is verified three ways, which must agree: the blocking verify(), the async one the UI
 * uses (ranges interleaved with the event loop), and the async one on worker threads.
 */
async function verify(c: Copy) {
  const opts = { keyDir: t.keyDir, checkpointFile: c.checkpointFile };
  const sync = verifyLedgerFile(c.file, opts);
  expect(await verifyLedgerFileAsync(c.file, { ...opts, rangeSize: 4 }), 'async, in this thread').toEqual(sync);
  expect(await verifyLedgerFileAsync(c.file, { ...opts, workers: 2, parallelThreshold: 0, rangeSize: 8 }), 'async, on workers').toEqual(
    sync,
  );
  return sync;
}

type Row = {
  seq: number;
  time: string;
  actor: string;
  sandbox_id: string | null;
  kind: string;
  payload: string;
  prev_hash: Buffer;
  hash: Buffer;
};
function rows(file: string): Row[] {
  const db = new Database(file, { readonly: true });
  const all = db.prepare('SELECT * FROM entries ORDER BY seq').all() as Row[];
  db.close();
  return all;
}

const lit = (v: string | null) => (v === null ? 'NULL' : `'${v.replace(/'/g, "''")}'`);
const blob = (b: Buffer) => `X'${b.toString('hex')}'`;
/** Changes exactly one byte (character) of a string, at `at`. */
const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'a' ? 'b' : 'a') + s.slice(at + 1);
const flipByte = (b: Buffer, at: number) => {
  const c = Buffer.from(b);
  c[at]! ^= 0x01;
  return c;
};
const hashOf = (r: Omit<Row, 'hash'>) =>
  entryHash(
    entryCanonical({
      seq: r.seq,
      time: r.time,
      actor: r.actor,
      sandboxId: r.sandbox_id,
      kind: r.kind,
      payloadJson: r.payload,
      prevHash: r.prev_hash.toString('hex'),
    }),
  );

describe('the untouched ledger', () => {
  it('verifies, against the checkpoint file and the history', async () => {
    expect(await verify(copy())).toMatchObject({ ok: true, entries: N, firstBad: null, checkpoint: { size: N, source: 'file' } });
  });
});

describe('one byte changed in one field of a middle entry', () => {
  const middle = 30;
  const row = () => rows(t.file)[middle - 1]!;
  it.each([
    ['time', () => `UPDATE entries SET time = ${lit(flip(row().time, 3))} WHERE seq = ${middle};`],
    ['actor', () => `UPDATE entries SET actor = ${lit(flip(row().actor, 0))} WHERE seq = ${middle};`],
    ['sandbox_id', () => `UPDATE entries SET sandbox_id = ${lit(flip(row().sandbox_id ?? 'x', 3))} WHERE seq = ${middle};`],
    ['kind', () => `UPDATE entries SET kind = ${lit(flip(row().kind, 1))} WHERE seq = ${middle};`],
    [
      'payload',
      () =>
        `UPDATE entries SET payload = ${lit(row().payload.replace('"exit":0', '"exit":1').replace('"exit":1', '"exit":7'))} WHERE seq = ${middle};`,
    ],
    ['prev_hash', () => `UPDATE entries SET prev_hash = ${blob(flipByte(row().prev_hash, 9))} WHERE seq = ${middle};`],
    ['hash', () => `UPDATE entries SET hash = ${blob(flipByte(row().hash, 31))} WHERE seq = ${middle};`],
  ])('%s: hash mismatch at that entry', async (_field, sql) => {
    const c = copy();
    sqlite(c.file, sql());
    expect(await verify(c)).toMatchObject({ ok: false, entries: N, firstBad: { seq: middle, reason: 'hash mismatch' } });
  });

  it('seq (30 → 90): the entry is missing from its place, a gap at 30', async () => {
    const c = copy();
    sqlite(c.file, `UPDATE entries SET seq = 90 WHERE seq = ${middle};`);
    expect((await verify(c)).firstBad).toEqual({ seq: middle, reason: 'gap' });
  });

  it('an entry changed and its own hash recomputed: the next one no longer links to it', async () => {
    const c = copy();
    const r = row();
    const forged = { ...r, actor: 'someone-else' };
    sqlite(c.file, `UPDATE entries SET actor = 'someone-else', hash = ${blob(Buffer.from(hashOf(forged), 'hex'))} WHERE seq = ${middle};`);
    expect((await verify(c)).firstBad).toEqual({ seq: middle, reason: 'broken link' });
  });
});

describe('entries removed, moved or added', () => {
  it('delete a middle entry: gap', async () => {
    const c = copy();
    sqlite(c.file, 'DELETE FROM entries WHERE seq = 30;');
    expect(await verify(c)).toMatchObject({ ok: false, entries: N - 1, firstBad: { seq: 30, reason: 'gap' } });
  });

  it('delete a middle entry and renumber the rest to hide the hole: gap', async () => {
    const c = copy();
    sqlite(
      c.file,
      'DELETE FROM entries WHERE seq = 30; UPDATE entries SET seq = -seq WHERE seq > 30; UPDATE entries SET seq = -seq - 1 WHERE seq < 0;',
    );
    expect((await verify(c)).firstBad).toEqual({ seq: 30, reason: 'gap' });
  });

  it('swap two entries: reordered, at the first of them', async () => {
    const c = copy();
    sqlite(
      c.file,
      'UPDATE entries SET seq = -1 WHERE seq = 20; UPDATE entries SET seq = 20 WHERE seq = 40; UPDATE entries SET seq = 40 WHERE seq = -1;',
    );
    expect((await verify(c)).firstBad).toEqual({ seq: 20, reason: 'reordered' });
  });

  it('swap two neighbours: reordered', async () => {
    const c = copy();
    sqlite(
      c.file,
      'UPDATE entries SET seq = -1 WHERE seq = 30; UPDATE entries SET seq = 30 WHERE seq = 31; UPDATE entries SET seq = 31 WHERE seq = -1;',
    );
    expect((await verify(c)).firstBad).toEqual({ seq: 30, reason: 'reordered' });
  });

  it('duplicate an entry in place (shifting the rest): duplicate, at the copy', async () => {
    const c = copy();
    sqlite(
      c.file,
      'UPDATE entries SET seq = -seq WHERE seq > 30; UPDATE entries SET seq = -seq + 1 WHERE seq < 0; INSERT INTO entries SELECT 31, time, actor, sandbox_id, kind, payload, prev_hash, hash FROM entries WHERE seq = 30;',
    );
    expect((await verify(c)).firstBad).toEqual({ seq: 31, reason: 'duplicate' });
  });

  it('duplicate an entry at the end: duplicate', async () => {
    const c = copy();
    sqlite(
      c.file,
      `INSERT INTO entries SELECT ${N + 1}, time, actor, sandbox_id, kind, payload, prev_hash, hash FROM entries WHERE seq = 30;`,
    );
    expect(await verify(c)).toMatchObject({ entries: N + 1, firstBad: { seq: N + 1, reason: 'duplicate' } });
  });

  it('duplicate a seq after dropping the primary key: duplicate', async () => {
    const c = copy();
    sqlite(
      c.file,
      'CREATE TABLE e2 AS SELECT * FROM entries; DROP TABLE entries; ALTER TABLE e2 RENAME TO entries; INSERT INTO entries SELECT * FROM entries WHERE seq = 30;',
    );
    expect((await verify(c)).firstBad).toEqual({ seq: 30, reason: 'duplicate' });
  });

  it('insert a forged entry with a valid hash of its own (renumbering the rest): inserted, at the forgery', async () => {
    const c = copy();
    const before = rows(t.file)[28]!; // entry 29
    const forged = {
      seq: 30,
      time: before.time,
      actor: 'user',
      sandbox_id: 'sb-alpha',
      kind: 'approval.granted',
      payload: canonicalize({ approved: 'rm -rf /' }),
      prev_hash: before.hash,
    };
    const hash = Buffer.from(hashOf(forged), 'hex');
    sqlite(
      c.file,
      'UPDATE entries SET seq = -seq WHERE seq >= 30; UPDATE entries SET seq = -seq + 1 WHERE seq < 0;' +
        `INSERT INTO entries VALUES (30, ${lit(forged.time)}, 'user', 'sb-alpha', 'approval.granted', ${lit(forged.payload)}, ${blob(forged.prev_hash)}, ${blob(hash)});`,
    );
    expect(await verify(c)).toMatchObject({ entries: N + 1, firstBad: { seq: 30, reason: 'inserted' } });
  });

  it('drop the last 5 entries: checkpoint mismatch at the first one missing', async () => {
    const c = copy();
    sqlite(c.file, `DELETE FROM entries WHERE seq > ${N - 5};`);
    expect(await verify(c)).toMatchObject({ ok: false, entries: N - 5, firstBad: { seq: N - 4, reason: 'checkpoint mismatch' } });
  });
});

describe('whole-file attacks only a signed checkpoint can catch', () => {
  /** Rewrites entries from `from` on with `change`, recomputing every hash and link after it. */
  function rewrite(c: Copy, from: number, change: (r: Row) => Row): void {
    let prev: Buffer | null = null;
    const sql: string[] = [];
    for (const r of rows(c.file)) {
      if (r.seq < from) {
        prev = r.hash;
        continue;
      }
      const next: Row = { ...change(r), prev_hash: prev ?? r.prev_hash };
      next.hash = Buffer.from(hashOf(next), 'hex');
      sql.push(
        `UPDATE entries SET actor = ${lit(next.actor)}, payload = ${lit(next.payload)}, prev_hash = ${blob(next.prev_hash)}, hash = ${blob(next.hash)} WHERE seq = ${r.seq};`,
      );
      prev = next.hash;
    }
    sqlite(c.file, sql.join('\n'));
  }

  it('rewrite every entry with hashes recomputed: the chain holds, the signed root does not', async () => {
    const c = copy();
    rewrite(c, 1, (r) => ({ ...r, actor: 'nobody' }));
    expect(await verify(c)).toMatchObject({ ok: false, entries: N, firstBad: { seq: 1, reason: 'checkpoint mismatch' } });
  });

  it('rewrite the history too (clear the checkpoints table): the file outside still catches it', async () => {
    const c = copy();
    rewrite(c, 1, (r) => ({ ...r, actor: 'nobody' }));
    sqlite(c.file, 'DELETE FROM checkpoints;');
    expect((await verify(c)).firstBad).toEqual({ seq: 1, reason: 'checkpoint mismatch' });
  });

  it('rewrite from entry 45 on: located after the last checkpoint that still matches (40)', async () => {
    const c = copy();
    rewrite(c, 45, (r) => ({ ...r, payload: canonicalize({ innocent: true }) }));
    expect((await verify(c)).firstBad).toEqual({ seq: 41, reason: 'checkpoint mismatch' });
  });

  it('restore an older copy: the checkpoint file vouches for entries it lacks', async () => {
    const c = copy();
    copyFileSync(olderCopy, c.file);
    expect(await verify(c)).toMatchObject({ ok: false, entries: 40, firstBad: { seq: 41, reason: 'checkpoint mismatch' } });
  });

  it('re-sign the checkpoint file with another key: bad signature', async () => {
    const c = copy();
    const other: SignerKey = signerFromGoKey('PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz');
    const note = readFileSync(c.checkpointFile, 'utf8');
    writeFileSync(c.checkpointFile, signNote(note.slice(0, note.lastIndexOf('\n\n') + 1), other));
    expect((await verify(c)).firstBad).toEqual({ seq: N, reason: 'bad signature' });
  });

  it('alter the checkpoint file (a bigger size, same signature): bad signature', async () => {
    const c = copy();
    const note = readFileSync(c.checkpointFile, 'utf8');
    writeFileSync(c.checkpointFile, note.replace(`\n${N}\n`, `\n${N - 10}\n`));
    expect((await verify(c)).firstBad).toEqual({ seq: N - 10, reason: 'bad signature' });
  });

  it('a forged checkpoint in the history table: bad signature', async () => {
    const c = copy();
    const forged = signNote(
      formatCheckpoint({ origin: 'x', size: 10, root: Buffer.alloc(32) }),
      signerFromGoKey('PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz'),
    );
    sqlite(c.file, `INSERT INTO checkpoints (size, time, reason, note) VALUES (10, 'now', 'manual', ${lit(forged)});`);
    expect((await verify(c)).firstBad).toEqual({ seq: 10, reason: 'bad signature' });
    expect(() =>
      openNote(forged, signerFromGoKey('PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz')),
    ).not.toThrow();
  });
});
