// What a timeline frame draws on its canvases: the four graphs and the lanes, each on a strip
// (timeline-strip.ts) that a pan only moves. A strip is drawn again only when what it shows changed
// (new points, new items, another selection), the scale or size changed, or the window left what was
// drawn; when the view settles, a strip that holds the window only (after a zoom) is drawn whole, and
// a graph whose y range is not what the window shows is drawn again.
import { paintLanes, LANES_HEIGHT, type LanesFrame } from './lanes-canvas.js';
import { TimelineCharts, type ChartColumns } from './timeline-charts.js';
import { Strip } from './timeline-strip.js';

export class TimelinePainter {
  private readonly charts: TimelineCharts;
  private readonly lanes: Strip;
  private frame: LanesFrame | null = null;

  constructor(holders: HTMLElement[], chartHeight: number, lanesView: HTMLElement) {
    this.charts = new TimelineCharts(holders, chartHeight);
    this.lanes = new Strip(lanesView, LANES_HEIGHT, (ctx, f) => this.frame && paintLanes(ctx, f, this.frame));
  }

  setData(d: ChartColumns): void {
    this.charts.setData(d);
  }

  /** New items or another selection: the lanes are drawn again (only if they changed). */
  setLanes(frame: LanesFrame): void {
    const last = this.frame;
    if (last && last.lanes === frame.lanes && last.selected === frame.selected) return;
    this.frame = frame;
    this.lanes.invalidate();
  }

  /** The window stopped moving: graphs whose y range is not what it shows are drawn again at the next paint. */
  settle(min: number, max: number): void {
    this.charts.settle(min, max);
    if (this.lanes.partial) this.lanes.invalidate();
  }

  paint(min: number, max: number, plotW: number): void {
    this.charts.show(min, max, plotW);
    this.lanes.show(min, max, plotW);
  }

  destroy(): void {
    this.charts.destroy();
    this.lanes.destroy();
  }
}
