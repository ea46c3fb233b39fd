// The resource history on disk: every sample in 1 s, 1 min and 1 h buckets with min/avg/max, the
// finest resolution that fits a range's point budget, the coarse buckets filling in where the fine
// ones were pruned, and the file surviving a reopen (a restart). Real SQLite files in a temp dir.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UiMethods } from '../../../shared/contracts/methods.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import { RAW_KEEP_MS, StatsHistoryStore, stepFor, type HistorySample } from './history-store.js';

const ID = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
/** A whole hour, so minute and hour buckets line up with the samples. */
const T0 = Date.UTC(2026, 10, 27, 10, 0, 0);

const sample = (time: number, cpu: number, over: Partial<HistorySample> = {}): HistorySample => ({
  sandboxId: ID,
  time,
  cpu,
  memory: cpu * 1000,
  memoryLimit: 512 * 1024 * 1024,
  rx: 0,
  tx: 0,
  pids: 3,
  ...over,
});

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-history-'));
  file = join(dir, 'stats.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('StatsHistoryStore', () => {
  it('keeps 1 s points, and minute buckets with their average, minimum and maximum', () => {
    const store = StatsHistoryStore.open(file);
    // 120 s: cpu rises 0..59 in the first minute, then stays at 10.
    store.write(
      Array.from({ length: 120 }, (_, i) => sample(T0 + i * 1000, i < 60 ? i : 10)),
      T0,
    );
    const fine = store.history(ID, { from: T0, to: T0 + 119_000 }, T0 + 120_000);
    expect(fine.time).toHaveLength(120);
    expect(new Set(fine.step)).toEqual(new Set([1]));
    expect(fine.cpu.slice(0, 3)).toEqual([0, 1, 2]);
    expect(fine.first).toBe(T0);

    const coarse = store.history(ID, { from: T0, to: T0 + 119_000, maxPoints: 10 }, T0 + 120_000);
    expect(coarse.step).toEqual([60, 60]);
    expect(coarse.cpu[0]).toBeCloseTo(29.5);
    expect(coarse.cpuMin[0]).toBe(0);
    expect(coarse.cpuMax[0]).toBe(59);
    expect(coarse.cpu[1]).toBe(10);
    store.close();
  });

  it('picks the finest step that fits the budget', () => {
    expect(stepFor(0, 3600_000, 4000)).toBe(1);
    expect(stepFor(0, 3600_000, 1000)).toBe(60);
    expect(stepFor(0, 400 * 24 * 3600_000, 100)).toBe(3600);
  });

  it('fills from minute buckets where the 1 s points were pruned, without overlap', () => {
    const store = StatsHistoryStore.open(file);
    // Three hours of 1 Hz: once written "now" at the end, the first hour's 1 s points are past RAW_KEEP_MS.
    const n = 3 * 3600;
    const all = Array.from({ length: n }, (_, i) => sample(T0 + i * 1000, i % 7));
    const now = T0 + n * 1000;
    store.write(all, now);
    // 2.5 h fit 10,000 1 s points: the first half hour of them is gone, minute buckets stand in.
    const from = T0 + 1800_000;
    const h = store.history(ID, { from, to: now, maxPoints: 10_000 }, now);
    const rawFrom = now - RAW_KEEP_MS;
    // Minute buckets before the raw part, 1 s points after: times strictly increasing, the whole range covered.
    expect(h.time[0]).toBe(from);
    expect(h.step[0]).toBe(60);
    expect(h.step.at(-1)).toBe(1);
    for (let i = 1; i < h.time.length; i++) expect(h.time[i]!).toBeGreaterThan(h.time[i - 1]!);
    const firstRaw = h.step.indexOf(1);
    expect(h.time[firstRaw]).toBeGreaterThanOrEqual(rawFrom);
    expect(h.time[firstRaw]! - (h.time[firstRaw - 1]! + 60_000)).toBeLessThan(60_000);
    expect(h.time.length).toBeLessThanOrEqual(10_000);
    store.close();
  });

  it('a range of a year at most answers with the budget it was given', () => {
    const store = StatsHistoryStore.open(file);
    store.write(
      Array.from({ length: 600 }, (_, i) => sample(T0 + i * 1000, 1)),
      T0,
    );
    const h = store.history(ID, { from: 0, to: T0 + 365 * 24 * 3600_000, maxPoints: 10 }, T0);
    expect(h.time.length).toBeLessThanOrEqual(10);
    expect(h.step.every((s) => s === 3600)).toBe(true);
    store.close();
  });

  it('keeps sandboxes apart, and knows nothing of one it never saw', () => {
    const store = StatsHistoryStore.open(file);
    store.write([sample(T0, 5), sample(T0, 90, { sandboxId: OTHER })], T0);
    expect(store.history(ID, {}, T0).cpu).toEqual([5]);
    expect(store.history(OTHER, {}, T0).cpu).toEqual([90]);
    const none = store.history('c'.repeat(64), {}, T0);
    expect(none).toMatchObject({ time: [], first: null, last: null });
    store.close();
  });

  it('survives a restart (reopened file), and is its owner\u2019s alone', () => {
    const store = StatsHistoryStore.open(file);
    store.write(
      Array.from({ length: 30 }, (_, i) => sample(T0 + i * 1000, i)),
      T0,
    );
    store.close();
    const again = StatsHistoryStore.open(file);
    expect(again.history(ID, {}, T0 + 30_000).time).toHaveLength(30);
    again.close();
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  const parseUiRequest = (m: 'stats.history', params: unknown) => ({ params: parseWith(UiMethods[m].params, params, m) });

  it('the door refuses a short id, a reversed range and a budget out of bounds, naming the field', () => {
    expect(() => parseUiRequest('stats.history', { sandboxId: 'abc' })).toThrow(/sandboxId.*64 hex/);
    expect(() => parseUiRequest('stats.history', { sandboxId: ID, from: 10, to: 5 })).toThrow(/from is after to/);
    expect(() => parseUiRequest('stats.history', { sandboxId: ID, maxPoints: 10_000_000 })).toThrow(/maxPoints/);
    expect(() => parseUiRequest('stats.history', { sandboxId: ID, extra: 1 })).toThrow(/extra/);
    expect(parseUiRequest('stats.history', { sandboxId: ID, from: 1, to: 2 }).params).toEqual({ sandboxId: ID, from: 1, to: 2 });
  });
});
