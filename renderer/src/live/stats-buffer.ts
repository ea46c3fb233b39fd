// Resource samples per sandbox, kept outside React: the last minutes in fixed ring buffers, with
// transient listeners (sparklines, uPlot charts) that draw without re-rendering any component.
import type { StatsSample } from '../../../shared/types/stats.js';

export const WINDOW_SECONDS = 300;

export interface Series {
  /** seconds since epoch, as uPlot wants */
  time: number[];
  cpu: number[];
  memory: number[];
  memoryLimit: number[];
  /** bytes per second, from the counters of consecutive samples */
  rx: number[];
  tx: number[];
  pids: number[];
}

type Listener = (series: Series, latest: StatsSample) => void;

function emptySeries(): Series {
  return { time: [], cpu: [], memory: [], memoryLimit: [], rx: [], tx: [], pids: [] };
}

export class StatsBuffer {
  private readonly series = new Map<string, Series>();
  private readonly last = new Map<string, StatsSample>();
  private readonly listeners = new Map<string, Set<Listener>>();

  push(sample: StatsSample): void {
    const id = sample.sandboxId;
    let s = this.series.get(id);
    if (!s) this.series.set(id, (s = emptySeries()));
    const prev = this.last.get(id);
    const dt = prev ? (sample.time - prev.time) / 1000 : 0;
    const rate = (now: number, before: number | undefined) =>
      prev && dt > 0 && before !== undefined ? Math.max(0, (now - before) / dt) : 0;
    s.time.push(sample.time / 1000);
    s.cpu.push(sample.cpuPercent);
    s.memory.push(sample.memoryBytes);
    s.memoryLimit.push(sample.memoryLimitBytes);
    s.rx.push(rate(sample.netRxBytes, prev?.netRxBytes));
    s.tx.push(rate(sample.netTxBytes, prev?.netTxBytes));
    s.pids.push(sample.pids);
    if (s.time.length > WINDOW_SECONDS) for (const arr of Object.values(s) as number[][]) arr.splice(0, arr.length - WINDOW_SECONDS);
    this.last.set(id, sample);
    for (const fn of this.listeners.get(id) ?? []) fn(s, sample);
  }

  get(id: string): Series | undefined {
    return this.series.get(id);
  }

  latest(id: string): StatsSample | undefined {
    return this.last.get(id);
  }

  /** Calls fn on every sample of the sandbox (and once now, if there is data); returns the stop. */
  listen(id: string, fn: Listener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(fn);
    const s = this.series.get(id);
    const l = this.last.get(id);
    if (s && l) fn(s, l);
    return () => void set.delete(fn);
  }

  forget(id: string): void {
    this.series.delete(id);
    this.last.delete(id);
  }
}
