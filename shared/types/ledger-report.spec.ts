import { describe, expect, it } from 'vitest';
import { reportSamplesFromHistory, ReportSamplesSchema } from './ledger-report.js';
import type { StatsHistory } from './timeline.js';

function history(points: Array<{ time: number; step: number; cpu: number; rx: number; tx: number }>): StatsHistory {
  const col = (f: (p: (typeof points)[number]) => number) => points.map(f);
  return {
    sandboxId: 'a'.repeat(64),
    time: col((p) => p.time),
    step: col((p) => p.step),
    cpu: col((p) => p.cpu),
    cpuMin: col((p) => p.cpu),
    cpuMax: col((p) => p.cpu),
    memory: col(() => 1000),
    memoryMin: col(() => 1000),
    memoryMax: col(() => 1000),
    memoryLimit: col(() => 4096),
    rx: col((p) => p.rx),
    tx: col((p) => p.tx),
    pids: col(() => 3),
    pidsMax: col(() => 3),
    first: points[0]?.time ?? null,
    last: points.at(-1)?.time ?? null,
  };
}

describe('a kept history as report samples', () => {
  it('sums each bucket’s rates over its length into counters, so a one-minute bucket counts sixty seconds', () => {
    const s = reportSamplesFromHistory(
      history([
        { time: 0, step: 60, cpu: 50, rx: 10, tx: 1 },
        { time: 60_000, step: 1, cpu: 150, rx: 100, tx: 0 },
      ]),
    );
    expect(s.map((x) => [x.t, x.cpuPct, x.netRx, x.netTx])).toEqual([
      [0, 50, 600, 60],
      [60_000, 150, 700, 60],
    ]);
    expect(ReportSamplesSchema.safeParse(s).success).toBe(true);
  });

  it('gives nothing for a sandbox without history, and never a negative value the report would refuse', () => {
    expect(reportSamplesFromHistory(history([]))).toEqual([]);
    const s = reportSamplesFromHistory(history([{ time: 5, step: 1, cpu: -0.001, rx: 0, tx: 0 }]));
    expect(ReportSamplesSchema.safeParse(s).success).toBe(true);
  });
});
