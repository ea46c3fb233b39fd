// The resource history a timeline holds: the door's answer (StatsHistory, ms) kept as chart columns,
// live samples appended as they come, and a finer answer for a zoomed-in stretch spliced in place
// of the coarse points it covers. Plain arrays, changed in place: no React state per sample.
import type { ResourcePoint, StatsHistory } from '../../../../shared/types/timeline.js';
import type { ChartColumns } from './timeline-charts.js';

export interface HistoryData extends ChartColumns {
  /** seconds per point */
  step: number[];
  memoryMin: number[];
  memoryMax: number[];
  pidsMax: number[];
}

const KEYS = ['time', 'step', 'cpu', 'cpuMax', 'memory', 'memoryMin', 'memoryMax', 'memoryLimit', 'rx', 'tx', 'pids', 'pidsMax'] as const;

export function emptyData(): HistoryData {
  return Object.fromEntries(KEYS.map((k) => [k, [] as number[]])) as unknown as HistoryData;
}

export function fromHistory(h: StatsHistory): HistoryData {
  return {
    time: h.time.slice(),
    step: h.step.slice(),
    cpu: h.cpu.slice(),
    cpuMax: h.cpuMax.slice(),
    memory: h.memory.slice(),
    memoryMin: h.memoryMin.slice(),
    memoryMax: h.memoryMax.slice(),
    memoryLimit: h.memoryLimit.slice(),
    rx: h.rx.slice(),
    tx: h.tx.slice(),
    pids: h.pids.slice(),
    pidsMax: h.pidsMax.slice(),
  };
}

/** Appends a live sample if it is newer than the last point; returns whether it did. */
export function appendPoint(d: HistoryData, p: ResourcePoint): boolean {
  const last = d.time[d.time.length - 1];
  if (last !== undefined && p.time <= last) return false;
  d.time.push(p.time);
  d.step.push(1);
  d.cpu.push(p.cpu);
  d.cpuMax.push(p.cpu);
  d.memory.push(p.memory);
  d.memoryMin.push(p.memory);
  d.memoryMax.push(p.memory);
  d.memoryLimit.push(p.memoryLimit);
  d.rx.push(p.rx);
  d.tx.push(p.tx);
  d.pids.push(p.pids);
  d.pidsMax.push(p.pids);
  return true;
}

/** The coarsest step among the points in [from, to] (0 when there are none). */
export function coarsestIn(d: HistoryData, from: number, to: number): number {
  let step = 0;
  for (let i = 0; i < d.time.length; i++) if (d.time[i]! >= from && d.time[i]! <= to && d.step[i]! > step) step = d.step[i]!;
  return step;
}

/** A new data set: the points of `d` outside [fresh's first, fresh's last], with fresh's in between. */
export function splice(d: HistoryData, fresh: HistoryData): HistoryData {
  if (!fresh.time.length) return d;
  const from = fresh.time[0]!;
  const to = fresh.time[fresh.time.length - 1]!;
  const out = emptyData();
  const copy = (src: HistoryData, i: number) => {
    for (const k of KEYS) out[k].push(src[k][i]!);
  };
  let i = 0;
  for (; i < d.time.length && d.time[i]! < from; i++) copy(d, i);
  for (let j = 0; j < fresh.time.length; j++) copy(fresh, j);
  while (i < d.time.length && d.time[i]! <= to) i++;
  for (; i < d.time.length; i++) copy(d, i);
  return out;
}

/** `d` with the points of `later` that are newer than its last appended (live samples that came during a load). */
export function appendAll(d: HistoryData, later: HistoryData): HistoryData {
  for (let i = 0; i < later.time.length; i++)
    appendPoint(d, {
      time: later.time[i]!,
      cpu: later.cpu[i]!,
      memory: later.memory[i]!,
      memoryLimit: later.memoryLimit[i]!,
      rx: later.rx[i]!,
      tx: later.tx[i]!,
      pids: later.pids[i]!,
    });
  return d;
}
