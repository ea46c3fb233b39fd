// The timeline's items and lookups: calls and entries in their lanes, an entry a call stands for not
// drawn twice, a connection's two entries one bar, window searches that find long items reaching in,
// the nearest sample, and finer points spliced over coarse ones.
import { describe, expect, it } from 'vitest';
import { pendingCall, type ToolCallInfo } from '../../../../shared/types/run.js';
import type { TimelineEntry } from '../../../../shared/types/timeline.js';
import { appendPoint, emptyData, splice } from './timeline-data.js';
import { callItems, eachInWindow, entryItems, indexLanes, inTimeOrder, itemAt, laneOfKind, nearestIndex } from './timeline-model.js';

const T = Date.UTC(2026, 10, 27, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function call(index: number, startMs: number, endMs: number | null, over: Partial<ToolCallInfo> = {}): ToolCallInfo {
  return {
    ...pendingCall({ id: `c${index}`, runId: 'r', index, tool: 'exec', args: { cmd: `echo ${index}` }, startedAt: iso(T + startMs) }),
    status: endMs === null ? 'running' : 'ok',
    endedAt: endMs === null ? null : iso(T + endMs),
    ledgerSeqs: [index * 10, index * 10 + 1],
    ...over,
  };
}

const entry = (seq: number, ms: number, kind: string, over: Partial<TimelineEntry> = {}): TimelineEntry => ({
  seq,
  time: T + ms,
  kind,
  actor: 'system',
  label: kind,
  tone: 'info',
  ...over,
});

describe('timeline items', () => {
  it('calls: a bar from start to end, a running one reaching now, tone from status and approval, linked to the first seq', () => {
    const items = callItems(
      [
        call(1, 0, 500),
        call(2, 1000, null),
        call(3, 2000, 2100, {
          status: 'denied',
          decision: { action: 'deny', source: 'rule', reason: 'no', approval: { id: 'a', decision: 'deny', by: 'user', at: iso(T) } },
        }),
      ],
      T + 5000,
    );
    expect(items.map((i) => [i.start - T, i.end - T, i.tone, i.seq])).toEqual([
      [0, 500, 'ok', 10],
      [1000, 5000, 'running', 20],
      [2000, 2100, 'bad', 30],
    ]);
    expect(items[0]!.label).toContain('#1 exec');
  });

  it('entries: lanes by kind, the ones calls stand for skipped, a connection one bar', () => {
    expect(['net.connect', 'snapshot.taken', 'exec.finished', 'sandbox.attested'].map(laneOfKind)).toEqual([
      'network',
      'snapshots',
      'calls',
      'engine',
    ]);
    const items = entryItems(
      [
        entry(10, 0, 'exec.started'),
        entry(11, 400, 'exec.finished'),
        entry(12, 600, 'exec.started'),
        entry(13, 700, 'exec.finished'),
        entry(14, 800, 'net.connect', { tone: 'ok', connId: 'k' }),
        entry(15, 1800, 'net.closed', { connId: 'k', label: 'closed' }),
        entry(16, 900, 'net.connect', { tone: 'bad', connId: 'd' }),
        entry(17, 950, 'net.connect', { tone: 'ok', connId: 'open' }),
      ],
      new Set([10, 11]),
      T + 9000,
    );
    expect(items.map((i) => [i.seq, i.lane, i.start - T, i.end - T])).toEqual([
      [13, 'calls', 700, 700],
      [14, 'network', 800, 1800],
      [16, 'network', 900, 900],
      [17, 'network', 950, 9000],
    ]);
    expect(items[1]!.detail).toContain('closed');
  });

  it('window search finds a long item that started before the window, and stops after it', () => {
    const lanes = indexLanes([...callItems([call(1, 0, 10_000), call(2, 20_000, 20_001), call(3, 30_000, 30_001)], T)]);
    const seen: number[] = [];
    eachInWindow(lanes.calls, T + 5000, T + 20_500, (it) => void seen.push(it.seq!));
    expect(seen).toEqual([10, 20]);
    expect(itemAt(lanes.calls, T + 20_003, 5)?.seq).toBe(20);
    expect(itemAt(lanes.calls, T + 25_000, 5)).toBeNull();
    expect(inTimeOrder(lanes).map((i) => i.seq)).toEqual([10, 20, 30]);
  });

  it('nearest sample, and finer points replace the coarse ones they cover', () => {
    expect(nearestIndex([], 5)).toBe(-1);
    expect(nearestIndex([0, 10, 20], 14)).toBe(1);
    expect(nearestIndex([0, 10, 20], 16)).toBe(2);
    const coarse = emptyData();
    for (const t of [0, 60_000, 120_000, 180_000])
      appendPoint(coarse, { time: t, cpu: 1, memory: 1, memoryLimit: 2, rx: 0, tx: 0, pids: 1 });
    coarse.step.fill(60);
    const fine = emptyData();
    for (let t = 60_000; t <= 120_000; t += 1000) appendPoint(fine, { time: t, cpu: 2, memory: 1, memoryLimit: 2, rx: 0, tx: 0, pids: 1 });
    const merged = splice(coarse, fine);
    expect(merged.time.length).toBe(2 + 61);
    expect(merged.time[0]).toBe(0);
    expect(merged.time.at(-1)).toBe(180_000);
    expect(merged.cpu.slice(1, 62).every((v) => v === 2)).toBe(true);
    for (let i = 1; i < merged.time.length; i++) expect(merged.time[i]!).toBeGreaterThan(merged.time[i - 1]!);
  });
});
