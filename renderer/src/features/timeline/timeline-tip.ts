// What the timeline says about a moment: the time, what the sandbox used then (CPU, memory,
// network, processes at the nearest point, with the bucket's peak when it is coarser than a second)
// and what ran then (calls going on, the item under the pointer); and the figures beside the axis.
// Built as text nodes: labels come from agents and sandboxes and are never HTML.
import { formatByteSize } from '../../../../shared/types/units.js';
import { formatPercent, formatRate } from '../../lib/format.js';
import type { HistoryData } from './timeline-data.js';
import { eachInWindow, nearestIndex, type LaneIndex, type TimelineItem } from './timeline-model.js';

const pad = (n: number) => String(n).padStart(2, '0');
export function clockText(t: number): string {
  const d = new Date(t);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The resource figures at t, or null when no point is near enough (within two of its steps). */
export function costAt(d: HistoryData, t: number): string | null {
  const i = nearestIndex(d.time, t);
  if (i < 0) return null;
  const step = d.step[i]! * 1000;
  if (Math.abs(d.time[i]! + (step > 1000 ? step / 2 : 0) - t) > Math.max(2000, step)) return null;
  const peak = step > 1000 ? ` (peak ${formatPercent(d.cpuMax[i]!)})` : '';
  return [
    `CPU ${formatPercent(d.cpu[i]!)}${peak}`,
    `memory ${formatByteSize(d.memory[i]!)} of ${formatByteSize(d.memoryLimit[i]!)}`,
    `net ${formatRate(d.rx[i]!)} in, ${formatRate(d.tx[i]!)} out`,
    `${Math.round(d.pids[i]!)} processes`,
  ].join(' · ');
}

/** Calls going on at t (at most `max`, and how many more). */
export function runningAt(calls: LaneIndex, t: number, max = 3): { items: TimelineItem[]; more: number } {
  const items: TimelineItem[] = [];
  let more = 0;
  eachInWindow(calls, t, t, (it) => {
    if (items.length < max) items.push(it);
    else more++;
  });
  return { items, more };
}

function line(parent: HTMLElement, text: string, className?: string): void {
  const div = document.createElement('div');
  div.textContent = text;
  if (className) div.className = className;
  parent.appendChild(div);
}

export interface TipContent {
  time: number;
  cost: string | null;
  running: { items: TimelineItem[]; more: number };
  hit: TimelineItem | null;
}

/** Fills the tooltip element (replacing what it held). */
export function fillTip(el: HTMLElement, c: TipContent): void {
  el.replaceChildren();
  line(el, clockText(c.time), 'tl-tip-time');
  line(el, c.cost ?? 'no resource sample here', 'tl-tip-cost');
  if (c.hit) {
    line(el, c.hit.label, `tl-tip-hit tone-${c.hit.tone}`);
    for (const d of c.hit.detail) line(el, d, 'tl-tip-detail');
    if (c.hit.seq !== null) line(el, `click to open ledger entry #${c.hit.seq}`, 'tl-tip-hint');
  }
  const others = c.running.items.filter((it) => it !== c.hit);
  if (others.length) {
    line(el, 'running then:', 'tl-tip-head');
    for (const it of others) line(el, it.label, `tl-tip-run tone-${it.tone}`);
  }
  if (c.running.more) line(el, `and ${c.running.more} more`, 'tl-tip-detail');
}

/**
 * The hover line at x and the tooltip beside it: right of the pointer in the left half, left of it
 * in the right half, never wider than the room on that side (placed by CSS, without measuring it).
 */
export function showMoment(cursor: HTMLElement, tip: HTMLElement, x: number, width: number, c: TipContent): void {
  cursor.hidden = false;
  cursor.style.transform = `translateX(${x}px)`;
  fillTip(tip, c);
  tip.hidden = false;
  const left = x < width / 2;
  const room = Math.max(120, left ? width - x - 18 : x - 18);
  tip.style.left = left ? `${x + 14}px` : 'auto';
  tip.style.right = left ? 'auto' : `${width - x + 14}px`;
  tip.style.maxWidth = `${Math.min(420, room)}px`;
}

export function hideMoment(cursor: HTMLElement, tip: HTMLElement): void {
  // Written only when it changes: a pan hides them on every frame.
  if (!cursor.hidden) cursor.hidden = true;
  if (!tip.hidden) tip.hidden = true;
}

/**
 * The window's clock range, the point count and the body's data attributes (what specs and the
 * bench read), each written only when it changes: every write costs the frame style work.
 */
export function writeFigures(
  el: { rangeLabel: HTMLElement; pointsLabel: HTMLElement; body: HTMLElement },
  f: { range: string; points: number | null; body: Record<string, string> },
): void {
  if (el.rangeLabel.textContent !== f.range) el.rangeLabel.textContent = f.range;
  const points = f.points === null ? null : String(f.points);
  if (points !== null && el.pointsLabel.dataset.points !== points) {
    el.pointsLabel.dataset.points = points;
    el.pointsLabel.textContent = `· ${points} resource points`;
  }
  for (const [k, v] of Object.entries(f.body)) if (el.body.dataset[k] !== v) el.body.dataset[k] = v;
}
