// The timeline's four resource graphs (CPU, memory against its limit, network in/out, processes),
// stacked on one time axis and drawn on strips (timeline-strip.ts): a pan moves them, a redraw
// costs O(pixels), not O(points) (timeline-columns.ts). Their plot areas start at the same x (a fixed
// gutter for the y label) so the lanes under them line up. A graph's y range is what the window
// shows when it is drawn; while a pan only moves it, it keeps that range until the view settles.
import { formatByteSize } from '../../../../shared/types/units.js';
import { formatPercent, formatRate } from '../../lib/format.js';
import { columnsOf, firstAfter, firstAtOrAfter, greatestIn, polyline, visibleSlice } from './timeline-columns.js';
import { Strip, type StripFrame } from './timeline-strip.js';

/** Width of the y axes' gutter, and so the left edge of every plot and of the lanes. */
export const GUTTER = 72;
export const RIGHT_PAD = 10;
const PAD_TOP = 9;
const PAD_BOTTOM = 3;
const GRID = '#232833';

/** The history the charts draw: times (ms, increasing) and a column per measure. */
export interface ChartColumns {
  time: number[];
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

/** The top of a graph's y range for the window [min, max]: its greatest value shown, with room above. */
export function yTop(spec: ChartSpec, d: ChartColumns, min: number, max: number): number {
  let lo = firstAtOrAfter(d.time, min);
  let hi = firstAfter(d.time, max);
  // No sample inside: the ones either side (the line crossing the window).
  if (lo >= hi) [lo, hi] = visibleSlice(d.time, min, max);
  const m = greatestIn(
    spec.series.map((s) => s.pick(d)),
    lo,
    hi,
  );
  return Math.max(spec.floor, Number.isFinite(m) ? m * 1.15 : 0);
}

function paintChart(ctx: CanvasRenderingContext2D, f: StripFrame, spec: ChartSpec, d: ChartColumns, top: number): void {
  const plotH = f.height - PAD_TOP - PAD_BOTTOM;
  const yOf = (v: number) => PAD_TOP + (1 - Math.min(v, top * 1.5) / top) * plotH;
  ctx.fillStyle = GRID;
  ctx.fillRect(0, Math.round(yOf(top)), f.width, 1);
  ctx.fillRect(0, Math.round(yOf(0)), f.width, 1);
  const [lo, hi] = visibleSlice(d.time, f.from, f.to);
  if (hi - lo === 0) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, PAD_TOP - 1, f.width, plotH + 2);
  ctx.clip();
  ctx.lineWidth = 1.25;
  ctx.lineJoin = 'bevel';
  for (const s of spec.series) {
    const pts = polyline(columnsOf(d.time, s.pick(d), lo, hi, f.from, f.to, f.width));
    const path = new Path2D();
    for (let i = 0; i < pts.length; i += 2) path[i ? 'lineTo' : 'moveTo'](pts[i]!, yOf(pts[i + 1]!));
    if (s.fill && pts.length >= 4) {
      const area = new Path2D(path);
      area.lineTo(pts[pts.length - 2]!, yOf(0));
      area.lineTo(pts[0]!, yOf(0));
      area.closePath();
      ctx.fillStyle = `${s.color}22`;
      ctx.fill(area);
    }
    ctx.setLineDash(s.dash ?? []);
    ctx.strokeStyle = s.color;
    ctx.stroke(path);
  }
  ctx.restore();
}

export class TimelineCharts {
  private readonly strips: Strip[];
  private readonly tops: number[];
  private readonly labels: HTMLElement[];
  private data: ChartColumns | null = null;

  /** @param holders one element per graph (CHART_SPECS order), `height` px tall, positioned. */
  constructor(holders: HTMLElement[], height: number) {
    this.tops = CHART_SPECS.map((s) => s.floor);
    this.labels = holders.map((h) => {
      const label = document.createElement('span');
      label.className = 'tl-chart-top';
      h.appendChild(label);
      return label;
    });
    this.strips = CHART_SPECS.map((spec, i) => {
      const view = document.createElement('div');
      view.className = 'tl-view';
      holders[i]!.appendChild(view);
      return new Strip(view, height, (ctx, f) => {
        if (!this.data) return;
        this.setTop(i, yTop(spec, this.data, f.min, f.max));
        paintChart(ctx, f, spec, this.data, this.tops[i]!);
      });
    });
  }

  private setTop(i: number, top: number): void {
    this.tops[i] = top;
    const text = CHART_SPECS[i]!.format(top);
    if (this.labels[i]!.textContent !== text) this.labels[i]!.textContent = text;
  }

  /** New points (or a new size): every graph is drawn again at the next show. */
  setData(d: ChartColumns): void {
    this.data = d;
    for (const s of this.strips) s.invalidate();
  }

  /** Shows the window [min, max] (ms) over plotW px; a graph drawn again takes the y range of what it shows. */
  show(min: number, max: number, plotW: number): void {
    for (const s of this.strips) s.show(min, max, plotW);
  }

  /**
   * The view stopped moving: the graphs whose y range is not what [min, max] shows, or that hold the
   * window only (after a zoom), are drawn again, whole.
   */
  settle(min: number, max: number): void {
    const d = this.data;
    CHART_SPECS.forEach((spec, i) => {
      const strip = this.strips[i]!;
      if (strip.partial || (d && yTop(spec, d, min, max) !== this.tops[i])) strip.invalidate();
    });
  }

  destroy(): void {
    for (const s of this.strips) s.destroy();
    for (const l of this.labels) l.remove();
  }
}
