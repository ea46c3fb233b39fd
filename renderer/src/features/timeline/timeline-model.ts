// What the timeline draws, worked out without the DOM: items in lanes (tool calls, engine events,
// network connections, snapshots) from a run's calls and a sandbox's ledger entries, found again by
// time with binary searches (thousands of items, looked up on every pointer move), and the resource
// figures at a moment. Everything from a sandbox or an agent stays text.
import type { ToolCallInfo } from '../../../../shared/types/run.js';
import type { TimelineEntry } from '../../../../shared/types/timeline.js';
import { approvalText, callTarget } from '../runs/run-format.js';
import { partitionPoint } from './timeline-columns.js';

export const LANES = ['calls', 'engine', 'network', 'snapshots'] as const;
export type Lane = (typeof LANES)[number];
export const LANE_TITLES: Record<Lane, string> = { calls: 'Calls', engine: 'Engine', network: 'Network', snapshots: 'Snapshots' };

export type Tone = 'ok' | 'bad' | 'ask' | 'info' | 'running';

export interface TimelineItem {
  key: string;
  lane: Lane;
  /** ms since epoch */
  start: number;
  /** ms since epoch; equal to start for a moment (an event). */
  end: number;
  label: string;
  /** More lines for the tooltip. */
  detail: string[];
  tone: Tone;
  /** The ledger entry it links to, if any. */
  seq: number | null;
}

export interface LaneIndex {
  /** By start, then seq. */
  items: TimelineItem[];
  /** The longest item in the lane: how far before a window an item that reaches into it can start. */
  longest: number;
}

const SNAPSHOT_KINDS = new Set(['snapshot.taken', 'snapshot.removed', 'sandbox.reset', 'sandbox.forked']);
const CALL_KINDS = /^(exec|file|policy|approval)\./;

export function laneOfKind(kind: string): Lane {
  if (kind.startsWith('net.')) return 'network';
  if (SNAPSHOT_KINDS.has(kind)) return 'snapshots';
  if (CALL_KINDS.test(kind)) return 'calls';
  return 'engine';
}

function callTone(c: ToolCallInfo): Tone {
  if (c.status === 'denied' || c.status === 'failed') return 'bad';
  if (c.status === 'awaiting-approval' || c.decision?.approval) return c.status === 'ok' || c.status === 'running' ? 'ok' : 'ask';
  if (c.status === 'ok') return 'ok';
  return 'running';
}

/** A run's tool calls as items; a call still going reaches `now`. */
export function callItems(calls: readonly ToolCallInfo[], now: number): TimelineItem[] {
  return calls.map((c) => {
    const start = Date.parse(c.startedAt);
    const end = c.endedAt ? Date.parse(c.endedAt) : c.status === 'running' || c.status === 'awaiting-approval' ? now : start;
    const d = c.decision;
    const detail = [
      `${c.status}${c.exitCode !== null ? `, exit ${c.exitCode}` : ''}${c.durationMs !== null ? `, ${c.durationMs} ms` : ''}`,
      d ? `policy: ${d.action} (${d.source})${d.reason ? ` — ${d.reason}` : ''}` : 'no decision yet',
    ];
    if (d?.approval) detail.push(approvalText(d.approval));
    if (c.ledgerSeqs.length) detail.push(`ledger ${c.ledgerSeqs.map((s) => `#${s}`).join(' ')}`);
    return {
      key: `call:${c.id}`,
      lane: 'calls',
      start,
      end: Math.max(start, end),
      label: `#${c.index} ${c.tool} ${callTarget(c)}`.trim(),
      detail,
      tone: callTone(c),
      seq: c.ledgerSeqs[0] ?? null,
    };
  });
}

/**
 * Ledger entries as items, leaving out those a call item already stands for (`skip`). A connection's
 * net.connect and net.closed make one bar; an allowed one not closed yet reaches `now`. An exec's
 * started entry is left out when its finished entry is there (the finished one carries the result).
 */
export function entryItems(entries: readonly TimelineEntry[], skip: ReadonlySet<number>, now: number): TimelineItem[] {
  const out: TimelineItem[] = [];
  const open = new Map<string, TimelineItem>();
  for (const e of entries) {
    if (skip.has(e.seq) || e.kind === 'exec.started') continue;
    const lane = laneOfKind(e.kind);
    const detail = [`${e.kind} by ${e.actor}`, `ledger #${e.seq}`];
    if (e.kind === 'net.closed' && e.connId && open.has(e.connId)) {
      const bar = open.get(e.connId)!;
      open.delete(e.connId);
      bar.end = Math.max(bar.start, e.time);
      bar.detail.push(e.label);
      if (e.tone === 'bad') bar.tone = 'bad';
      continue;
    }
    const item: TimelineItem = { key: `seq:${e.seq}`, lane, start: e.time, end: e.time, label: e.label, detail, tone: e.tone, seq: e.seq };
    if (e.kind === 'net.connect' && e.connId && e.tone === 'ok') {
      item.end = Math.max(e.time, now);
      item.tone = 'running';
      open.set(e.connId, item);
    }
    out.push(item);
  }
  for (const bar of open.values()) if (bar.tone === 'running') bar.tone = 'ok';
  return out;
}

/** Items per lane, sorted, with what a window search needs. */
export function indexLanes(items: readonly TimelineItem[]): Record<Lane, LaneIndex> {
  const lanes = Object.fromEntries(LANES.map((l) => [l, { items: [] as TimelineItem[], longest: 0 }])) as Record<Lane, LaneIndex>;
  for (const it of items) {
    const lane = lanes[it.lane];
    lane.items.push(it);
    lane.longest = Math.max(lane.longest, it.end - it.start);
  }
  for (const l of LANES) lanes[l].items.sort((a, b) => a.start - b.start || (a.seq ?? 0) - (b.seq ?? 0));
  return lanes;
}

/** First index whose start is ≥ t. */
export function lowerBound(items: readonly TimelineItem[], t: number): number {
  return partitionPoint(items.length, (i) => items[i]!.start < t);
}

/** Calls fn for each item of the lane that overlaps [t0, t1]; stops early if fn returns false. */
export function eachInWindow(lane: LaneIndex, t0: number, t1: number, fn: (item: TimelineItem) => boolean | void): void {
  const items = lane.items;
  for (let i = lowerBound(items, t0 - lane.longest); i < items.length; i++) {
    const it = items[i]!;
    if (it.start > t1) return;
    if (it.end >= t0 && fn(it) === false) return;
  }
}

/** The item of a lane nearest to t within `slack` ms (a moment is hard to hit exactly). */
export function itemAt(lane: LaneIndex, t: number, slack: number): TimelineItem | null {
  let best: TimelineItem | null = null;
  let bestDist = Infinity;
  eachInWindow(lane, t - slack, t + slack, (it) => {
    const dist = t < it.start ? it.start - t : t > it.end ? t - it.end : 0;
    if (dist < bestDist || (dist === bestDist && best && it.end - it.start < best.end - best.start)) {
      best = it;
      bestDist = dist;
    }
  });
  return best;
}

/** Index of the sample nearest to t in increasing times (ms), or -1 for none. */
export function nearestIndex(times: readonly number[], t: number): number {
  if (!times.length) return -1;
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && t - times[lo - 1]! < times[lo]! - t ? lo - 1 : lo;
}

/** Every item of every lane in time order (keyboard stepping). */
export function inTimeOrder(lanes: Record<Lane, LaneIndex>): TimelineItem[] {
  return LANES.flatMap((l) => lanes[l].items).sort((a, b) => a.start - b.start || (a.seq ?? 0) - (b.seq ?? 0));
}
