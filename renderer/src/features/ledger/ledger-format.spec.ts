import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../../shared/types/ledger.js';
import { ledgerBrowseParams, ledgerEntryMatches, ledgerRequest, NO_LEDGER_FILTERS } from '../../store/ledger-slice.js';
import { groupHex, summarizePayload } from './ledger-format.js';

const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({
  seq: 7,
  time: '2025-01-02T03:04:05.678Z',
  actor: 'agent-1',
  sandboxId: 'a'.repeat(64),
  kind: 'exec.finished',
  payload: {},
  prevHash: '0'.repeat(64),
  hash: '1'.repeat(64),
  ...over,
});

describe('summarizePayload', () => {
  it('leads with what tells the entry apart, then other scalars', () => {
    expect(summarizePayload({ argv: ['sh', '-c', 'make'], exitCode: 2, durationMs: 1500, runId: 'r1', stdoutPreview: 'ok' })).toBe(
      'sh -c make · exit 2 · 1.5 s · stdoutPreview=ok',
    );
    expect(summarizePayload({ name: 'web', image: 'x/y', limits: { memoryBytes: 1 } })).toBe('web · x/y · limits={…}');
    expect(
      summarizePayload({ runId: 'r', tool: 'exec', args: { argv: ['ls', '-l'], cwd: null }, decision: { action: 'allow', reason: 'x' } }),
    ).toBe('exec · ls -l · allow');
    expect(summarizePayload({ tool: 'file.read', args: { path: 'src/a.py' }, decision: { action: 'deny' } })).toBe(
      'file.read · src/a.py · deny',
    );
  });

  it('is one line of bounded text, whatever the payload holds', () => {
    expect(summarizePayload({ stdoutPreview: '<img src=x onerror=alert(1)>\nline2' })).toBe(
      'stdoutPreview=<img src=x onerror=alert(1)> line2',
    );
    expect(summarizePayload({ big: 'x'.repeat(5000), more: 1 }).length).toBeLessThanOrEqual(180);
    expect(summarizePayload(null)).toBe('null');
    expect(summarizePayload([1, 2])).toBe('[2 items]');
  });
});

describe('filters', () => {
  it('become a request; a sandbox name or short id becomes the full id', () => {
    const id = 'b'.repeat(64);
    const sandboxes = { [id]: { id, name: 'web' } } as never;
    expect(ledgerRequest({ ledgerFilters: { ...NO_LEDGER_FILTERS, sandbox: 'web', kind: 'exec.finished' }, sandboxes })).toEqual({
      sandboxId: id,
      kind: 'exec.finished',
    });
    expect(ledgerRequest({ ledgerFilters: { ...NO_LEDGER_FILTERS, sandbox: 'bbbbbbbb' }, sandboxes })).toEqual({ sandboxId: id });
    expect(ledgerRequest({ ledgerFilters: { ...NO_LEDGER_FILTERS, sandbox: 'gone-one' }, sandboxes })).toEqual({ sandboxId: 'gone-one' });
  });

  it('match pushed entries as the server would', () => {
    const p = ledgerBrowseParams({ ...NO_LEDGER_FILTERS, runId: 'r1', actor: 'agent-1', since: '2025-01-02T03:00' }, undefined);
    const since = new Date('2025-01-02T03:00').toISOString();
    expect(p).toEqual({ runId: 'r1', actor: 'agent-1', since });
    const time = new Date(Date.parse(since) + 60_000).toISOString();
    expect(ledgerEntryMatches(entry({ time, payload: { runId: 'r1' } }), p)).toBe(true);
    expect(ledgerEntryMatches(entry({ time, payload: { runId: 'r2' } }), p)).toBe(false);
    expect(ledgerEntryMatches(entry({ time: '2000-01-01T00:00:00.000Z', payload: { runId: 'r1' } }), p)).toBe(false);
    expect(ledgerEntryMatches(entry({ time, actor: 'user', payload: { runId: 'r1' } }), p)).toBe(false);
  });
});

it('groupHex reads a fingerprint in fours', () => {
  expect(groupHex('0123456789abcdef0123456789abcdef', 4)).toBe('0123 4567 89ab cdef …');
});
