// One timeline, driven outside React: it loads the sandbox's resource history and ledger entries
// for a window, joins them with the run's calls, and shows graphs and lanes on one time axis. Pans
// and zooms change two numbers and paint in the next animation frame (timeline-painter.ts: a pan
// only moves what was drawn); live samples, calls and ledger appends change the data in place.
// timeline-input.ts turns pointer, wheel and keys into calls here.
import type { StatsSample } from '../../../../shared/types/stats.js';
import type { TimelineEntry } from '../../../../shared/types/timeline.js';
import { toTimelineEntry } from '../../../../shared/types/timeline-label.js';
import type { Series } from '../../live/stats-buffer.js';
import { laneAtY } from './lanes-canvas.js';
import { GUTTER, RIGHT_PAD } from './timeline-charts.js';
import { appendAll, appendPoint, emptyData, type HistoryData } from './timeline-data.js';
import { finerHistory, loadWindow } from './timeline-loader.js';
import { TimelinePainter } from './timeline-painter.js';
import { callItems, entryItems, indexLanes, inTimeOrder, itemAt, type Lane, type LaneIndex, type TimelineItem } from './timeline-model.js';
import type { TimelineElements, TimelineOptions } from './timeline-types.js';
import { clockText, costAt, hideMoment, runningAt, showMoment, writeFigures } from './timeline-tip.js';

export const CHART_HEIGHT = 64;

const MIN_SPAN = 2000;

export class TimelineController {
  min = 0;
  max = 1;
  follow: boolean;
  data: HistoryData = emptyData();
  private entries: TimelineEntry[] = [];
  lanes: Record<Lane, LaneIndex> = indexLanes([]);
  order: TimelineItem[] = [];
  selected: TimelineItem | null = null;
  private readonly painter: TimelinePainter;
  private frame = 0;
  private dataDirty = true;
  private hover: { x: number; y: number | null } | null = null;
  private settleTimer = 0;
  private readonly offs: Array<() => void> = [];
  private loading = true;
  private error: string | null = null;
  private disposed = false;

  constructor(
    private readonly o: TimelineOptions,
    private readonly el: TimelineElements,
  ) {
    this.follow = o.to === null;
    this.painter = new TimelinePainter(el.holders, CHART_HEIGHT, el.lanesView);
    // A new width is a new plot width: the strips are drawn again for it. The width is read here, after
    // layout, and kept: reading it on every pointer move or frame would force a layout each time.
    this.bodyWidth = el.body.clientWidth;
    const resize = new ResizeObserver(() => {
      this.bodyWidth = el.body.clientWidth;
      this.schedule();
    });
    resize.observe(el.body);
    this.offs.push(() => resize.disconnect());
    this.offs.push(o.onCallsChanged(() => this.rebuild()));
    this.offs.push(o.stats.listen(o.sandboxId, (series, sample) => this.live(series, sample)));
    this.offs.push(
      o.client.on('ledger.appended', (e) => {
        if (e.sandboxId !== o.sandboxId || this.loading) return;
        this.entries.push(toTimelineEntry(e));
        this.rebuild();
      }),
    );
    const now = Date.now();
    this.setRange(o.from ?? now - 60_000, o.to ?? now);
    void this.load();
  }

  private bodyWidth = 0;
  private width = () => Math.max(200, this.bodyWidth);
  private plotWidth = () => Math.max(1, this.width() - GUTTER - RIGHT_PAD);

  private status(): void {
    const { loading, error, follow } = this;
    this.o.onStatus({ loading, error, items: this.order.length, follow });
  }

  private async load(): Promise<void> {
    try {
      const { data, entries } = await loadWindow(this.o.client, this.o.sandboxId, this.o.from, this.o.to);
      if (this.disposed) return;
      // Live samples that came while loading are newer than the answer: they go after it.
      this.data = appendAll(data, this.data);
      this.dataDirty = true;
      this.entries = entries;
      this.loading = false;
      this.rebuild(false);
      this.fit();
    } catch (err) {
      this.loading = false;
      this.error = (err as Error).message;
      this.status();
      this.schedule();
    }
  }

  /** Items again from the calls and entries (a call changed, an entry was appended). */
  rebuild(draw = true): void {
    const now = Date.now();
    const calls = callItems(this.o.calls(), now);
    const skip = new Set<number>();
    for (const c of this.o.calls()) for (const s of c.ledgerSeqs) skip.add(s);
    this.lanes = indexLanes([...calls, ...entryItems(this.entries, skip, now)]);
    this.order = inTimeOrder(this.lanes);
    if (this.selected) this.selected = this.order.find((it) => it.key === this.selected!.key) ?? null;
    this.status();
    if (draw) this.schedule();
  }

  private live(series: Series, sample: StatsSample): void {
    const i = series.time.length - 1;
    const added = appendPoint(this.data, {
      time: sample.time,
      cpu: sample.cpuPercent,
      memory: sample.memoryBytes,
      memoryLimit: sample.memoryLimitBytes,
      rx: series.rx[i] ?? 0,
      tx: series.tx[i] ?? 0,
      pids: sample.pids,
    });
    if (!added) return;
    this.dataDirty = true;
    if (this.follow) {
      const span = this.max - this.min;
      this.setRange(sample.time + span * 0.02 - span, sample.time + span * 0.02);
    } else this.schedule();
  }

  /** The whole window: the run (or the sandbox's life so far). */
  fit(): void {
    const now = Date.now();
    const first = Math.min(this.o.from ?? Infinity, this.data.time[0] ?? Infinity, this.order[0]?.start ?? Infinity);
    const lo = Number.isFinite(first) ? first : now - 60_000;
    const hi = this.o.to ?? Math.max(now, this.data.time[this.data.time.length - 1] ?? now);
    const margin = Math.max(1000, (hi - lo) * 0.02);
    this.follow = this.o.to === null;
    this.setRange(lo - margin, hi + margin);
    this.status();
  }

  /** The view was moved by hand: it stops following new samples (the Live button says so). */
  private unfollow(): void {
    if (!this.follow) return;
    this.follow = false;
    this.status();
  }

  setRange(min: number, max: number): void {
    const span = Math.max(MIN_SPAN, max - min);
    this.min = min;
    this.max = min + span;
    this.schedule();
    this.settleSoon();
  }

  /** Zooms by `factor` (< 1 in) around the time at plot x (default the middle). */
  zoom(factor: number, atX?: number): void {
    const span = this.max - this.min;
    const frac = atX === undefined ? 0.5 : Math.min(1, Math.max(0, (atX - GUTTER) / this.plotWidth()));
    const at = this.min + span * frac;
    const next = Math.max(MIN_SPAN, span * factor);
    if (factor < 1) this.unfollow();
    this.setRange(at - next * frac, at - next * frac + next);
  }

  /** Pans by a share of the visible span (negative: back in time). */
  panBy(share: number): void {
    this.unfollow();
    const d = (this.max - this.min) * share;
    this.setRange(this.min + d, this.max + d);
  }

  panPixels(dx: number, from: { min: number; max: number }): void {
    this.unfollow();
    const d = (-dx / this.plotWidth()) * (from.max - from.min);
    this.setRange(from.min + d, from.max + d);
  }

  timeAtX(x: number): number {
    return this.min + ((x - GUTTER) / this.plotWidth()) * (this.max - this.min);
  }

  xOfTime(t: number): number {
    return GUTTER + ((t - this.min) / (this.max - this.min)) * this.plotWidth();
  }

  /** The item under a point of the lanes canvas (y relative to it), or null. */
  hitAt(x: number, laneY: number | null): TimelineItem | null {
    if (laneY === null) return null;
    const lane = laneAtY(laneY);
    if (!lane) return null;
    const slack = (6 / this.plotWidth()) * (this.max - this.min);
    return itemAt(this.lanes[lane], this.timeAtX(x), slack);
  }

  setHover(h: { x: number; y: number | null } | null): void {
    this.hover = h;
    this.schedule();
  }

  /** Selects an item (keyboard, click): keeps it in view and says what it is. */
  select(item: TimelineItem | null): void {
    this.selected = item;
    if (item && (item.start < this.min || item.start > this.max)) {
      const span = this.max - this.min;
      this.unfollow();
      this.setRange(item.start - span / 2, item.start + span / 2);
    }
    this.el.announce.textContent = item ? `${item.label}. ${item.detail.join('. ')}` : '';
    this.schedule();
  }

  open(item: TimelineItem | null): void {
    if (item?.seq != null) this.o.openEntry(item.seq);
  }

  /**
   * Once the window stops moving: the graphs take the y range of what it shows, and finer points are
   * asked for if what it shows is coarser than it could be.
   */
  private settleSoon(): void {
    window.clearTimeout(this.settleTimer);
    this.settleTimer = window.setTimeout(() => {
      this.painter.settle(this.min, this.max);
      this.schedule();
      if (!this.loading) void this.refine();
    }, 250);
  }

  private async refine(): Promise<void> {
    try {
      const finer = await finerHistory(this.o.client, this.o.sandboxId, this.data, this.min, this.max);
      if (!finer || this.disposed) return;
      this.data = finer;
      this.dataDirty = true;
      this.schedule();
    } catch {
      // The coarse points stay; the next settle asks again.
    }
  }

  schedule(): void {
    if (!this.frame && !this.disposed) this.frame = requestAnimationFrame(() => this.draw());
  }

  private draw(): void {
    this.frame = 0;
    const { el } = this;
    if (this.dataDirty) {
      this.painter.setData(this.data);
      this.dataDirty = false;
    }
    this.painter.setLanes({ lanes: this.lanes, selected: this.selected });
    this.painter.paint(this.min, this.max, this.plotWidth());
    const sel = this.selected;
    writeFigures(el, {
      range: `${clockText(this.min)} – ${clockText(this.max)}`,
      points: this.loading ? null : this.data.time.length,
      body: {
        selectedSeq: sel?.seq != null ? String(sel.seq) : '',
        selectedX: sel ? this.xOfTime(sel.start).toFixed(1) : '',
        min: String(Math.round(this.min)),
        max: String(Math.round(this.max)),
      },
    });
    const h = this.hover ?? (sel ? { x: this.xOfTime(sel.start), y: null } : null);
    if (!h || h.x < GUTTER) return hideMoment(el.cursor, el.tip);
    const t = this.timeAtX(h.x);
    const hit = this.hover ? this.hitAt(h.x, h.y) : sel;
    showMoment(el.cursor, el.tip, h.x, this.width(), { time: t, cost: costAt(this.data, t), running: runningAt(this.lanes.calls, t), hit });
  }

  dispose(): void {
    this.disposed = true;
    if (this.frame) cancelAnimationFrame(this.frame);
    window.clearTimeout(this.settleTimer);
    for (const off of this.offs) off();
    this.painter.destroy();
  }
}
