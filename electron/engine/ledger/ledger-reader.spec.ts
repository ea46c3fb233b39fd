// The UI's side of the ledger: pages newest first with filters, a summary, one shared verification
// whose progress reaches every caller, and an export a browser can save.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle } from './bundle-verify.js';
import { Ledger } from './ledger.js';
import { LedgerReader } from './ledger-reader.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

const N = 45;
let t: TempLedger;
let l: Ledger;
let view: LedgerReader;

beforeAll(() => {
  t = tempLedger();
  l = t.open();
  for (let i = 1; i <= N; i++) l.append({ ...sampleEntry(i), payload: { ...(sampleEntry(i).payload as object), runId: `run-${i % 2}` } });
  l.checkpoint();
  view = new LedgerReader(l);
});
afterAll(() => {
  l.close();
  t.cleanup();
});

describe('LedgerReader', () => {
  it('summary: size, head, key fingerprint, latest checkpoint, filter values', async () => {
    const s = await view['ledger.summary']();
    expect(s).toMatchObject({ size: N, headHash: l.head().hash, latestCheckpoint: { size: N, reason: 'manual' } });
    expect(s.key.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(s.kinds).toEqual(['approval.granted', 'exec.finished', 'exec.started', 'file.written', 'policy.denied']);
    expect(s.actors).toContain('user');
  });

  it('pages newest first, older pages by beforeSeq, filters combine', async () => {
    const first = await view['ledger.entries']({ limit: 20 });
    expect(first.entries.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => N - i));
    expect(first.nextBeforeSeq).toBe(N - 19);
    const last = await view['ledger.entries']({ limit: 20, beforeSeq: 6 });
    expect(last.entries.map((e) => e.seq)).toEqual([5, 4, 3, 2, 1]);
    expect(last.nextBeforeSeq).toBeNull();
    const filtered = await view['ledger.entries']({ sandboxId: 'sb-beta', runId: 'run-1', kind: 'exec.finished' });
    expect(filtered.entries.length).toBeGreaterThan(0);
    for (const e of filtered.entries) expect(e).toMatchObject({ sandboxId: 'sb-beta', kind: 'exec.finished', payload: { runId: 'run-1' } });
    const none = await view['ledger.entries']({ until: '2000-01-01T00:00:00Z' });
    expect(none.entries).toEqual([]);
  });

  it('pages read in windows (for a live server) are the pages read in one query', async () => {
    const queries = [
      {},
      { limit: 7 },
      { kind: 'exec.finished', limit: 3 },
      { kind: 'exec.finished', limit: 3, beforeSeq: 30 },
      { actor: 'user' },
      { runId: 'run-1', sandboxId: 'sb-beta', limit: 2, beforeSeq: 40 },
      { kind: 'no.such-kind' },
      { since: '2000-01-01T00:00:00Z', actor: 'agent-1', limit: 5 },
    ];
    for (const q of queries) {
      for (const window of [1, 4, 64])
        expect(await l.browseAsync(q, window), `${JSON.stringify(q)} in windows of ${window}`).toEqual(l.browse(q));
    }
  });

  it('filter menus follow new kinds and actors', async () => {
    const before = await view['ledger.summary']();
    expect(before.kinds).not.toContain('note.added');
    l.append({ actor: 'auditor', kind: 'note.added', payload: {} });
    const after = await view['ledger.summary']();
    expect(after.kinds).toContain('note.added');
    expect(after.actors).toContain('auditor');
    expect(after.size).toBe(before.size + 1);
  });

  it('one verification at a time: a second caller shares it, and both hear progress', async () => {
    const a: number[] = [];
    const b: number[] = [];
    const [one, two] = await Promise.all([
      view['ledger.verify']({ jobId: 'a' }, (d) => a.push(d)),
      view['ledger.verify']({ jobId: 'b' }, (d) => b.push(d)),
    ]);
    expect(two).toBe(one);
    expect(one).toMatchObject({ ok: true, firstBad: null, checkpoint: { size: N } });
    expect(one.key.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(a.at(-1)).toBe(one.entries);
    expect(b.at(-1)).toBe(one.entries);
  });

  it('export: a bundle that verifies offline and an HTML report, named for a download', async () => {
    const r = await view['ledger.export']({ sandboxId: 'sb-beta', fromSeq: 2, toSeq: 30 });
    expect(r.jsonName).toMatch(/^warden-audit-sb-beta-.*\.json$/);
    expect(r.htmlName).toMatch(/\.html$/);
    const bundle = JSON.parse(r.json) as unknown;
    expect(verifyBundle(bundle)).toMatchObject({ ok: true });
    expect(r.entries).toBeGreaterThan(0);
    expect(r.html).toContain('<html');
    await expect(view['ledger.export']({ fromSeq: 9, toSeq: 3 })).rejects.toMatchObject({ code: 'E_BAD_INPUT' });
  });

  it('a payload tampered into something that is not JSON: the view still pages, and verify names it', async () => {
    l.checkpoint();
    const file = join(t.dir, 'garbled.db');
    const live = new Database(t.file, { readonly: true });
    live.exec(`VACUUM INTO '${file}'`); // a consistent copy of a database in WAL mode
    live.close();
    copyFileSync(`${t.file}.checkpoint`, `${file}.checkpoint`);
    const db = new Database(file);
    for (const name of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[])
      db.exec(`DROP TRIGGER ${name}`);
    db.prepare("UPDATE entries SET payload = '{not json' WHERE seq = 5").run();
    db.close();
    const garbled = Ledger.open(file, { keyDir: t.keyDir, checkpointEveryMs: 0, checkpointOnClose: false });
    try {
      const v = new LedgerReader(garbled);
      const page = await v['ledger.entries']({ beforeSeq: 7, limit: 3 });
      expect(page.entries.map((e) => e.seq)).toEqual([6, 5, 4]);
      expect(page.entries[1]!.payload).toEqual({ unreadablePayload: '{not json' });
      expect((await v['ledger.verify']({ jobId: 'g' })).firstBad).toEqual({ seq: 5, reason: 'hash mismatch' });
    } finally {
      garbled.close();
    }
  });
});
