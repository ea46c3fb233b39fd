// The UI's side of the ledger: pages newest first with filters, a summary, one shared verification
// whose progress reaches every caller, and an export a browser can save.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle } from './bundle-verify.js';
import type { Ledger } from './ledger.js';
import { LedgerView } from './ledger-view.js';
import { sampleEntry, tempLedger, type TempLedger } from './test-support.js';

const N = 45;
let t: TempLedger;
let l: Ledger;
let view: LedgerView;

beforeAll(() => {
  t = tempLedger();
  l = t.open();
  for (let i = 1; i <= N; i++) l.append({ ...sampleEntry(i), payload: { ...(sampleEntry(i).payload as object), runId: `run-${i % 2}` } });
  l.checkpoint();
  view = new LedgerView(l);
});
afterAll(() => {
  l.close();
  t.cleanup();
});

describe('LedgerView', () => {
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

  it('one verification at a time: a second caller shares it, and both hear progress', async () => {
    const a: number[] = [];
    const b: number[] = [];
    const [one, two] = await Promise.all([view['ledger.verify']({ jobId: 'a' }, (d) => a.push(d)), view['ledger.verify']({ jobId: 'b' }, (d) => b.push(d))]);
    expect(two).toBe(one);
    expect(one).toMatchObject({ ok: true, entries: N, firstBad: null, checkpoint: { size: N } });
    expect(one.key.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(a.at(-1)).toBe(N);
    expect(b.at(-1)).toBe(N);
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
});
