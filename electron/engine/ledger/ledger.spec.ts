import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LedgerEntrySchema, VerifyResultSchema } from '../../../shared/types/ledger.js';
import { GENESIS_HASH } from './canonical.js';
import { rootOf, verifyConsistency, verifyInclusion } from './merkle.js';
import { openNote, parseCheckpoint, parseVkey } from './note.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';
import { Ledger } from './ledger.js';

let t: TempLedger;
afterEach(() => t?.cleanup());

describe('Ledger store', () => {
  it('creates the file, schema, key and WAL on first open, and appends a chain from genesis', () => {
    t = tempLedger();
    const l = t.open();
    const a = l.append({ actor: 'user', kind: 'sandbox.created', sandboxId: 'sb-1', payload: { image: 'warden/base' } });
    const b = l.append({ actor: 'agent-x', kind: 'exec.finished', sandboxId: 'sb-1', payload: { exit: 0 } });
    expect(LedgerEntrySchema.parse(a)).toEqual(a);
    expect(a.seq).toBe(1);
    expect(a.prevHash).toBe(GENESIS_HASH);
    expect(b.prevHash).toBe(a.hash);
    expect(l.head()).toEqual({ size: 2, hash: b.hash });
    const db = new Database(t.file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    expect(statSync(join(t.keyDir, 'ledger-ed25519.pem')).mode & 0o777).toBe(0o600);
    l.close();
  });

  it('refuses UPDATE, DELETE and REPLACE at the SQL level', () => {
    t = tempLedger();
    const l = t.open();
    l.appendBatch([1, 2, 3].map(sampleEntry));
    l.checkpoint();
    l.close();
    const db = new Database(t.file);
    db.pragma('recursive_triggers = ON'); // as the ledger's own connections run
    expect(() => db.prepare("UPDATE entries SET actor = 'x' WHERE seq = 2").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM entries WHERE seq = 3').run()).toThrow(/append-only/);
    expect(() =>
      db
        .prepare(
          "INSERT OR REPLACE INTO entries SELECT seq, time, 'x', sandbox_id, kind, payload, prev_hash, hash FROM entries WHERE seq = 1",
        )
        .run(),
    ).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM checkpoints').run()).toThrow(/append-only/);
    expect(() => db.prepare("UPDATE meta SET value = 'x' WHERE key = 'origin'").run()).toThrow(/append-only/);
    expect(() => db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('origin', 'x')").run()).toThrow(/append-only/);
    db.close();
  });

  it('validates input and rejects what cannot be hashed faithfully', () => {
    t = tempLedger();
    const l = t.open();
    expect(() => l.append({ actor: '', kind: 'x', payload: {} })).toThrow(/actor/);
    expect(() => l.append({ actor: 'a\u0000b', kind: 'x', payload: {} })).toThrow(/actor/);
    expect(() => l.append({ actor: 'a', kind: 'Bad Kind', payload: {} })).toThrow(/kind/);
    expect(() => l.append({ actor: 'a', kind: 'x', sandboxId: '../etc', payload: {} })).toThrow(/sandboxId/);
    expect(() => l.append({ actor: 'a', kind: 'x', payload: { s: '\ud800' } })).toThrow(/surrogate/);
    expect(() => l.append({ actor: 'a', kind: 'x', payload: { big: 'x'.repeat(300_000) } })).toThrow(
      expect.objectContaining({ code: 'E_TOO_LARGE' }),
    );
    expect(l.head().size).toBe(0);
    // Strings SQLite could mangle survive byte for byte: NUL, astral, RTL, HTML.
    const e = l.append({ actor: 'agent <b>', kind: 'file.written', payload: { s: 'nul\u0000 😂 \u202e <script>' } });
    expect(l.entries({ fromSeq: e.seq })[0]!.payload).toEqual({ s: 'nul\u0000 😂 \u202e <script>' });
    // Verification rebuilds the canonical text in SQL (json_quote): it must agree on every character
    // the writer accepts in a field, quotes, backslashes, line separators and astral ones included.
    l.append({
      actor: 'a "quoted" \\ back/slash \u2028\u2029 😂 é \ufeff',
      sandboxId: 'sb.1_x-y',
      kind: 'file.written',
      payload: { k: '"\\\u2028' },
    });
    l.append({ actor: 'user', sandboxId: null, kind: 'engine.down', payload: null });
    expect(l.verify()).toMatchObject({ ok: true, entries: 3 });
    expect(l.verify({ workers: 2, parallelThreshold: 0, rangeSize: 2 })).toMatchObject({ ok: true, entries: 3 });
    l.close();
  });

  it('appendBatch is one transaction: all entries or none', () => {
    t = tempLedger();
    const l = t.open();
    expect(() => l.appendBatch([sampleEntry(1), { actor: 'a', kind: 'BAD', payload: 1 }])).toThrow();
    expect(l.head().size).toBe(0);
    const es = l.appendBatch([1, 2, 3, 4].map(sampleEntry));
    expect(es.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(new Set(es.map((e) => e.time)).size).toBe(1);
    l.close();
  });

  it('group-commits concurrent enqueues and rejects a bad one alone', async () => {
    t = tempLedger();
    const l = t.open();
    const seen: number[] = [];
    const stop = l.subscribe((e) => seen.push(e.seq));
    const good = Array.from({ length: 500 }, (_, i) => l.enqueue(sampleEntry(i)));
    const bad = l.enqueue({ actor: 'a', kind: 'NOPE', payload: 1 });
    await expect(bad).rejects.toThrow(/kind/);
    const done = await Promise.all(good);
    expect(done.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(seen).toHaveLength(500);
    stop();
    l.append(sampleEntry(0));
    expect(seen).toHaveLength(500);
    expect(l.verify().ok).toBe(true);
    l.close();
  });

  it('queries by seq range, sandbox, kind and actor', () => {
    t = tempLedger();
    const l = t.open();
    l.appendBatch(Array.from({ length: 40 }, (_, i) => sampleEntry(i)));
    expect(l.entries({ fromSeq: 5, toSeq: 9 }).map((e) => e.seq)).toEqual([5, 6, 7, 8, 9]);
    expect(l.entries({ sandboxId: 'sb-beta' }).every((e) => e.sandboxId === 'sb-beta')).toBe(true);
    expect(l.entries({ kind: 'policy.denied', limit: 3 })).toHaveLength(3);
    expect(l.entries({ actor: 'user' }).every((e) => e.actor === 'user')).toBe(true);
    l.close();
  });

  it('stores blobs by SHA-256, refuses path tricks and notices altered bytes', () => {
    t = tempLedger();
    const l = t.open();
    const bytes = Buffer.from('hello output\n');
    const { digest, size } = l.storeBlob(bytes);
    expect(digest).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(size).toBe(bytes.length);
    expect(l.readBlob(digest)?.equals(bytes)).toBe(true);
    expect(l.readBlob('0'.repeat(64))).toBeNull();
    expect(() => l.readBlob('../../etc/passwd')).toThrow(/digest/);
    const path = join(t.dir, 'blobs', digest.slice(0, 2), digest);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    writeFileSync(path, 'changed');
    expect(() => l.readBlob(digest)).toThrow(/altered/);
    const out = Buffer.from('héllo wörld, and a lot more output\n'.repeat(20));
    const ref = l.blobRef(out, 10);
    expect(ref).toMatchObject({ size: out.length, preview: 'héllo wörl', truncated: true });
    expect(l.readBlob(ref.digest)?.equals(out)).toBe(true);
    expect(l.blobRef(Buffer.from([0xff, 0x41]))).toMatchObject({ preview: '\ufffdA', truncated: false });
    l.close();
  });

  it('serves RFC 6962 roots and proofs that check against the signed checkpoint', () => {
    t = tempLedger();
    const l = t.open();
    const es = l.appendBatch(Array.from({ length: 700 }, (_, i) => sampleEntry(i)));
    const leaves = es.map((e) => Buffer.from(e.hash, 'hex'));
    const cp = l.checkpoint();
    expect(cp.size).toBe(700);
    expect(cp.root).toBe(rootOf(leaves).toString('hex'));
    for (const size of [1, 2, 255, 256, 257, 511, 512, 600, 700]) expect(l.root(size)).toBe(rootOf(leaves.slice(0, size)).toString('hex'));
    for (const seq of [1, 2, 255, 256, 257, 300, 512, 513, 699, 700]) {
      const p = l.inclusionProof(seq);
      expect(
        verifyInclusion(
          Buffer.from(p.leafHash, 'hex'),
          seq - 1,
          p.treeSize,
          p.path.map((h) => Buffer.from(h, 'hex')),
          Buffer.from(cp.root, 'hex'),
        ),
      ).toBe(true);
    }
    for (const [m, n] of [
      [0, 700],
      [1, 700],
      [256, 700],
      [300, 512],
      [511, 700],
      [700, 700],
    ] as const) {
      const c = l.consistencyProof(m, n);
      expect(
        verifyConsistency(
          m,
          n,
          Buffer.from(c.fromRoot, 'hex'),
          Buffer.from(c.toRoot, 'hex'),
          c.path.map((h) => Buffer.from(h, 'hex')),
        ),
      ).toBe(true);
    }
    expect(() => l.inclusionProof(701)).toThrow();
    l.close();
  });

  it('writes C2SP checkpoints into the history and a file outside the database, on demand and on a schedule', async () => {
    t = tempLedger();
    // The schedule's interval is faked and advanced: its turns come when the spec says, not when a
    // busy machine gets round to them. Three turns, one new size: one scheduled checkpoint.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const l = t.open({ checkpointEveryMs: 30 });
    l.appendBatch([1, 2, 3].map(sampleEntry));
    vi.advanceTimersByTime(90);
    vi.useRealTimers();
    const file = readFileSync(`${t.file}.checkpoint`, 'utf8');
    const vkey = readFileSync(join(t.keyDir, 'ledger-ed25519.vkey'), 'utf8').trim();
    const body = parseCheckpoint(openNote(file, parseVkey(vkey)).text);
    expect(body.size).toBe(3);
    expect(body.origin).toBe(l.origin);
    expect(l.checkpoints().map((c) => c.reason)).toEqual(['schedule']);
    l.append(sampleEntry(4));
    l.close(); // checkpoint on close
    const again = t.open();
    expect(again.checkpoints().map((c) => [c.reason, c.size])).toEqual([
      ['schedule', 3],
      ['close', 4],
    ]);
    const v = again.verify();
    expect(VerifyResultSchema.parse(v)).toEqual(v);
    expect(v).toMatchObject({ ok: true, entries: 4, firstBad: null, checkpoint: { size: 4, source: 'file' } });
    again.close();
  });

  it('refuses to sign over a checkpoint file the ledger no longer extends, and keeps that file', () => {
    t = tempLedger();
    const l = t.open({ checkpointOnClose: false });
    l.appendBatch([1, 2, 3, 4].map(sampleEntry));
    l.checkpoint();
    const kept = readFileSync(`${t.file}.checkpoint`, 'utf8');
    l.close();
    const db = new Database(t.file);
    db.exec('DROP TRIGGER entries_no_delete; DELETE FROM entries WHERE seq >= 3;');
    db.close();
    const l2 = t.open({ checkpointOnClose: false });
    expect(() => l2.checkpoint()).toThrow(/vouched for 4/);
    expect(readFileSync(`${t.file}.checkpoint`, 'utf8')).toBe(kept);
    expect(l2.verify().firstBad).toEqual({ seq: 3, reason: 'checkpoint mismatch' });
    l2.close();
  });

  it('never signs a checkpoint over newer entries that fail verification', () => {
    t = tempLedger();
    const l = t.open({ checkpointOnClose: false });
    l.appendBatch(Array.from({ length: 10 }, (_, i) => sampleEntry(i)));
    l.checkpoint();
    l.appendBatch(Array.from({ length: 5 }, (_, i) => sampleEntry(i)));
    l.close();
    const db = new Database(t.file);
    db.exec("DROP TRIGGER entries_no_update; UPDATE entries SET actor = 'x' WHERE seq = 13;");
    db.close();
    const l2 = t.open({ checkpointOnClose: false });
    expect(() => l2.checkpoint()).toThrow(/entry 13 fails verification/);
    expect(l2.checkpoints()).toHaveLength(1);
    l2.close();
  });

  it('verifies the same way in worker threads as in this thread', () => {
    t = tempLedger();
    const l = t.open({ checkpointOnClose: false });
    for (let i = 0; i < 5; i++) {
      l.appendBatch(Array.from({ length: 700 }, (_, j) => sampleEntry(i * 700 + j)));
      l.checkpoint();
    }
    const progress: number[] = [];
    const inThread = l.verify({ workers: 1 });
    const parallel = l.verify({ workers: 2, parallelThreshold: 0, rangeSize: 512, onProgress: (d) => progress.push(d) });
    expect(parallel).toEqual(inThread);
    expect(parallel.ok).toBe(true);
    expect(progress.at(-1)).toBe(3500);
    l.close();
    expect(existsSync(t.file)).toBe(true);
  });
});

describe('the ledger file', () => {
  it("is its owner's alone, even where the home lets others pass through", () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-ledger-mode-'));
    try {
      const file = join(dir, 'ledger.db');
      writeFileSync(file, '', { mode: 0o644 }); // an older Warden's (umask 022)
      chmodSync(file, 0o644);
      const ledger = Ledger.open(file, { keyDir: join(dir, 'keys') });
      ledger.append({ actor: 'user', sandboxId: null, kind: 'test', payload: {} });
      ledger.close();
      expect(statSync(file).mode & 0o077).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
