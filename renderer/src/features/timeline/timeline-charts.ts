// The timeline's four resource graphs (CPU, memory against its limit, network in/out, processes):
// uPlot charts stacked on one time axis, made and driven outside React. Their plot areas start at
// the same x (a fixed y-axis width) so the lanes under them line up; their x scale is set together
// on every pan or zoom, and their own cursors are off (the timeline draws one line across all).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatByteSize } from '../../../../shared/types/units.js';
import { formatPercent, formatRate } from '../../lib/format.js';

/** Width of the y axes, and so the left edge of every plot and of the lanes. */
export const GUTTER = 72;
export const RIGHT_PAD = 10;

/** The history the charts draw, in uPlot's columns (x in seconds). */
export interface ChartColumns {
  x: number[];
  cpu: number[];
  cpuMax: number[];
  memory: number[];
  memoryLimit: number[];
  rx: number[];
  tx: number[];
  pids: number[];
}

interface ChartSpec {
  key: string;
  title: string;
  series: Array<{ label: string; color: string; pick: (c: ChartColumns) => number[]; dash?: number[]; fill?: boolean }>;
  format: (v: number) => string;
  floor: number;
}

export const CHART_SPECS: ChartSpec[] = [
  {
    key: 'cpu',
    title: 'CPU',
    series: [
      { label: 'cpu max', color: '#5aa9ff55', pick: (c) => c.cpuMax },
      { label: 'cpu', color: '#5aa9ff', pick: (c) => c.cpu, fill: true },
    ],
    format: formatPercent,
    floor: 100,
  },
  {
    key: 'memory',
    title: 'Memory',
    series: [
      { label: 'used', color: '#b18cff', pick: (c) => c.memory, fill: true },
      { label: 'limit', color: '#e0646a', pick: (c) => c.memoryLimit, dash: [6, 4] },
    ],
    format: (v) => formatByteSize(v),
    floor: 1024 * 1024,
  },
  {
    key: 'network',
    title: 'Network',
    series: [
      { label: 'in', color: '#4cc38a', pick: (c) => c.rx },
      { label: 'out', color: '#f0a44b', pick: (c) => c.tx },
    ],
    format: formatRate,
    floor: 1024,
  },
  {
    key: 'pids',
    title: 'Processes',
    series: [{ label: 'pids', color: '#d7c35a', pick: (c) => c.pids }],
    format: (v) => String(Math.round(v)),
    floor: 10,
  },
];

const AXIS = {
  stroke: '#8b93a1',
  grid: { stroke: '#232833', width: 1 },
  ticks: { stroke: '#232833', width: 1 },
  font: '10px system-ui, sans-serif',
};

export class TimelineCharts {
  private readonly plots: uPlot[] = [];

  /** @param window the visible window now, ms since epoch (read on every redraw). */
  constructor(holders: HTMLElement[], width: number, height: number, window: () => [number, number]) {
    CHART_SPECS.forEach((spec, i) => {
      const opts: uPlot.Options = {
        width,
        height,
        padding: [9, RIGHT_PAD, 3, 0],
        legend: { show: false },
        cursor: { show: false, drag: { x: false, y: false } },
        scales: {
          x: { time: true, range: () => window().map((t) => t / 1000) as [number, number] },
          y: { range: (_u, _min, max) => [0, Math.max(spec.floor, max * 1.15)] },
        },
        axes: [
          { show: false },
          // Two grid lines (0 and the top) and one figure, the top's: the chart's title sits under it.
          {
            ...AXIS,
            size: GUTTER,
            splits: (_u, _i, _min, max) => [0, max],
            values: (_u, ticks) => ticks.map((t) => (t > 0 ? spec.format(t) : '')),
          },
        ],
        series: [
          {},
          ...spec.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 1.25,
            ...(s.dash ? { dash: s.dash } : {}),
            ...(s.fill ? { fill: `${s.color}22` } : {}),
            points: { show: false },
          })),
        ],
      };
      this.plots.push(new uPlot(opts, [[], ...spec.series.map(() => [])], holders[i]!));
    });
  }

  /** New points: the x window comes from the window getter, the y ranges from what is shown. */
  setData(c: ChartColumns): void {
    CHART_SPECS.forEach((spec, i) => this.plots[i]!.setData([c.x, ...spec.series.map((s) => s.pick(c))]));
  }

  /** The visible window, ms since epoch. */
  setRange(min: number, max: number): void {
    for (const u of this.plots) u.setScale('x', { min: min / 1000, max: max / 1000 });
  }

  setSize(width: number, height: number): void {
    for (const u of this.plots) u.setSize({ width, height });
  }

  destroy(): void {
    for (const u of this.plots) u.destroy();
  }
}
