// One uPlot chart fed from the stats buffer outside React: a sample schedules setData in the next
// frame; the component itself renders once. Its size follows its box.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useServices } from '../../services.js';
import type { Series } from '../../live/stats-buffer.js';
import type { StatsSample } from '../../../../shared/types/stats.js';

export interface LineSpec {
  label: string;
  color: string;
  pick(series: Series): number[];
  dash?: number[];
  fill?: boolean;
}

interface Props {
  sandboxId: string;
  title: string;
  lines: LineSpec[];
  format(value: number): string;
  /** The y range, given the values shown (e.g. CPU at least 0–100 %). */
  range(max: number): [number, number];
  /** The figure above the chart, from the latest sample. */
  headline(latest: StatsSample): string;
  testId: string;
}

const AXIS = {
  stroke: '#8b93a1',
  grid: { stroke: '#232833', width: 1 },
  ticks: { stroke: '#232833', width: 1 },
  font: '11px system-ui, sans-serif',
};

export function LiveChart({ sandboxId, title, lines, format, range, headline, testId }: Props) {
  const { stats } = useServices();
  const box = useRef<HTMLDivElement>(null);
  const head = useRef<HTMLSpanElement>(null);
  const props = useRef({ lines, format, range, headline });
  props.current = { lines, format, range, headline };

  useEffect(() => {
    const el = box.current!;
    const { lines: specs } = props.current;
    const toData = (s: Series | undefined): uPlot.AlignedData =>
      s ? [s.time, ...specs.map((l) => l.pick(s))] : [[], ...specs.map(() => [])];
    const opts: uPlot.Options = {
      width: Math.max(120, el.clientWidth),
      height: Math.max(80, el.clientHeight),
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: {
        x: { time: true },
        y: { range: (_u, _min, max) => props.current.range(max) },
      },
      axes: [
        // uPlot's own time ticks: they pick seconds or minutes to suit the span shown.
        { ...AXIS },
        { ...AXIS, size: 64, values: (_u, ticks) => ticks.map((t) => props.current.format(t)) },
      ],
      series: [
        {},
        ...specs.map((l) => ({
          label: l.label,
          stroke: l.color,
          width: 1.5,
          ...(l.dash ? { dash: l.dash } : {}),
          ...(l.fill ? { fill: `${l.color}22` } : {}),
          points: { show: false },
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : props.current.format(v)),
        })),
      ],
    };
    const chart = new uPlot(opts, toData(stats.get(sandboxId)), el);
    let frame = 0;
    let pending: { series: Series; sample: StatsSample } | null = null;
    const off = stats.listen(sandboxId, (series, sample) => {
      pending = { series, sample };
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        if (!pending) return;
        chart.setData(toData(pending.series));
        if (head.current) head.current.textContent = props.current.headline(pending.sample);
      });
    });
    const resize = new ResizeObserver(() => {
      const legend = (el.querySelector('.u-legend') as HTMLElement | null)?.offsetHeight ?? 0;
      chart.setSize({ width: Math.max(120, el.clientWidth), height: Math.max(60, el.clientHeight - legend) });
    });
    resize.observe(el);
    return () => {
      off();
      resize.disconnect();
      if (frame) cancelAnimationFrame(frame);
      chart.destroy();
    };
  }, [stats, sandboxId]);

  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>
        <span>{title}</span>
        <span ref={head} className="chart-headline mono" data-testid={`${testId}-value`}>
          –
        </span>
      </figcaption>
      <div ref={box} className="chart-box" />
    </figure>
  );
}
