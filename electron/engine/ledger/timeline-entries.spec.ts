// The timeline's entries of a sandbox: only that sandbox's, in the window asked, oldest first,
// bounded, each with a one-line label a page can show as text (control characters from a sandbox's
// output or an agent's argv flattened, long text cut). Real ledger files in a temp dir.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';
import type { Ledger } from './ledger.js';
import { LedgerReader } from './ledger-reader.js';
import { describeEntry } from '../../../shared/types/timeline-label.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
let t: TempLedger;
let l: Ledger;
let reader: LedgerReader;

beforeAll(() => {
  t = tempLedger();
  l = t.open();
  l.append({ actor: 'user', sandboxId: A, kind: 'sandbox.created', payload: { name: 'tl-a' } });
  for (let i = 0; i < 30; i++) {
    l.append({ actor: 'bot', sandboxId: i % 3 === 0 ? B : A, kind: 'exec.started', payload: { argv: ['echo', String(i)] } });
    l.append({
      actor: 'bot',
      sandboxId: i % 3 === 0 ? B : A,
      kind: 'exec.finished',
      payload: { argv: ['echo', String(i)], exitCode: i % 2 },
    });
  }
  l.append({
    actor: 'system',
    sandboxId: A,
    kind: 'net.connect',
    payload: { connId: 'c1', via: 'connect', host: 'example.com', port: 443, address: null, decision: 'deny', rule: 'default' },
  });
  l.append({ actor: 'system', sandboxId: A, kind: 'sandbox.attested', payload: { ok: true, deep: false } });
  reader = new LedgerReader(l);
});
afterAll(() => {
  l.close();
  t.cleanup();
});

describe('timeline.entries', () => {
  it('gives one sandbox its entries oldest first, by name or id, labelled', async () => {
    const page = await reader['timeline.entries']({ sandboxId: 'tl-a' });
    expect(page.truncated).toBe(false);
    expect(page.entries.every((e, i, all) => i === 0 || e.seq > all[i - 1]!.seq)).toBe(true);
    expect(page.entries).toHaveLength(1 + 40 + 2);
    expect(page.entries[0]).toMatchObject({ kind: 'sandbox.created', label: 'sandbox.created tl-a', tone: 'info' });
    const finished = page.entries.filter((e) => e.kind === 'exec.finished');
    expect(finished[0]).toMatchObject({ label: 'echo 1 → exit 1', tone: 'bad' });
    expect(finished[1]).toMatchObject({ label: 'echo 2 → exit 0', tone: 'ok' });
    expect(page.entries.at(-2)).toMatchObject({
      kind: 'net.connect',
      label: 'refused example.com:443 (default)',
      tone: 'bad',
      connId: 'c1',
    });
    expect(page.entries.at(-1)).toMatchObject({ label: 'attested: every promise holds', tone: 'ok' });
    expect((await reader['timeline.entries']({ sandboxId: A })).entries).toHaveLength(43);
  });

  it('a window: nothing before since or after until; limit keeps the oldest and says so', async () => {
    const all = (await reader['timeline.entries']({ sandboxId: A })).entries;
    const mid = all[10]!;
    const after = await reader['timeline.entries']({ sandboxId: A, since: mid.time });
    expect(after.entries.every((e) => e.time >= mid.time)).toBe(true);
    expect(after.entries.map((e) => e.seq)).toEqual(all.filter((e) => e.time >= mid.time).map((e) => e.seq));
    const before = await reader['timeline.entries']({ sandboxId: A, until: mid.time });
    expect(before.entries.every((e) => e.time <= mid.time)).toBe(true);
    const some = await reader['timeline.entries']({ sandboxId: A, limit: 5 });
    expect(some).toMatchObject({ truncated: true });
    expect(some.entries.map((e) => e.seq)).toEqual(all.slice(0, 5).map((e) => e.seq));
    expect((await reader['timeline.entries']({ sandboxId: A, since: Date.now() + 3600_000 })).entries).toEqual([]);
  });

  it('labels are one line of plain text, cut, whatever the payload holds', () => {
    const hostile = describeEntry('exec.started', {
      argv: ['sh', '-c', `printf '\x1b[2J\r\n<img src=x onerror=alert(1)>'`, 'x'.repeat(500)],
    });
    expect([...hostile.label].some((c) => c.charCodeAt(0) < 0x20)).toBe(false);
    expect(hostile.label.length).toBeLessThanOrEqual(160);
    expect(describeEntry('exec.finished', null)).toEqual({ label: 'exec → exit ?', tone: 'bad' });
    expect(describeEntry('net.closed', { host: 'h', port: 1, bytesOut: 3, bytesIn: 4, error: null }).label).toBe(
      'closed h:1, 3 B out, 4 B in',
    );
    expect(describeEntry('snapshot.taken', { tag: 'before' }).label).toBe('snapshot taken before');
    expect(describeEntry('net.throttled', { refused: 120, perSecond: 50, burst: 400 })).toEqual({
      label: '120 connections refused: opened faster than 50 a second',
      tone: 'bad',
    });
    expect(describeEntry('no.such-kind', 'text')).toEqual({ label: 'no.such-kind', tone: 'info' });
  });
});
