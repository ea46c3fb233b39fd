// One canvas of the timeline drawn wider than what shows: a plot width of margin either side of the
// window, in a view that clips it. A pan that keeps the same scale and stays inside what was drawn
// only moves the canvas (a CSS transform the compositor applies: no drawing, no paint on the main
// thread); leaving the margin, new data or a new size draws it again around the window. A zoom (a new
// scale, every wheel step) draws only the window itself, a third of the pixels; the margins are drawn
// when the view settles (fill()) or a pan needs them.

/** Plot widths drawn either side of the window. */
export const MARGIN = 1;

/**
 * What a strip holds: the canvas spans [from, to] (ms) across (1 + 2·MARGIN) plot widths of plotW
 * px; what is drawn on it is [lo, hi] (all of it, or the window only).
 */
export interface Drawn {
  from: number;
  to: number;
  plotW: number;
  lo: number;
  hi: number;
}

/**
 * Where the drawn strip's left edge sits (px from the view's) for the window [min, max] shown
 * over plotW px, or null when the strip does not cover that window at that scale (draw it again).
 */
export function placement(drawn: Drawn | null, min: number, max: number, plotW: number): number | null {
  if (!drawn || drawn.plotW !== plotW || !(max > min)) return null;
  const span = max - min;
  const drawnSpan = (drawn.to - drawn.from) / (1 + 2 * MARGIN);
  if (Math.abs(span - drawnSpan) > drawnSpan * 1e-7) return null;
  if (min < drawn.lo || max > drawn.hi) return null;
  return ((drawn.from - min) / span) * plotW;
}

/** The window a strip draws around [min, max]. */
export function around(min: number, max: number, plotW: number): Drawn {
  const span = max - min;
  const [from, to] = [min - MARGIN * span, max + MARGIN * span];
  return { from, to, plotW, lo: from, hi: to };
}

/** Whether [min, max] is at another scale than what was drawn (a zoom). */
export function rescaled(drawn: Drawn | null, min: number, max: number): boolean {
  if (!drawn) return false;
  const drawnSpan = (drawn.to - drawn.from) / (1 + 2 * MARGIN);
  return Math.abs(max - min - drawnSpan) > drawnSpan * 1e-7;
}

export interface StripFrame {
  /** ms at the left and right edges of what is drawn */
  from: number;
  to: number;
  /** the window shown (ms) */
  min: number;
  max: number;
  /** CSS px */
  width: number;
  height: number;
}

export class Strip {
  readonly canvas: HTMLCanvasElement;
  private drawn: Drawn | null = null;
  private dpr = 0;
  private left = NaN;

  constructor(
    view: HTMLElement,
    private readonly height: number,
    private readonly paint: (ctx: CanvasRenderingContext2D, f: StripFrame) => void,
  ) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'tl-strip';
    view.appendChild(this.canvas);
  }

  /** The next show draws it again (the data, the selection or the size changed). */
  invalidate(): void {
    this.drawn = null;
  }

  /** Whether only the window was drawn (after a zoom): fill() draws the margins. */
  get partial(): boolean {
    return this.drawn !== null && (this.drawn.lo > this.drawn.from || this.drawn.hi < this.drawn.to);
  }

  /** Shows [min, max] over plotW px: moves the drawn strip when it covers it, else draws it again. Returns whether it drew. */
  show(min: number, max: number, plotW: number): boolean {
    const dpr = window.devicePixelRatio || 1;
    let left = dpr === this.dpr ? placement(this.drawn, min, max, plotW) : null;
    const drew = left === null;
    if (left === null) {
      const d = around(min, max, plotW);
      const only = rescaled(this.drawn, min, max);
      const width = plotW * (1 + 2 * MARGIN);
      const c = this.canvas;
      const [w, h] = [Math.round(width * dpr), Math.round(this.height * dpr)];
      if (c.width !== w || c.height !== h) {
        c.width = w;
        c.height = h;
        c.style.width = `${width}px`;
        c.style.height = `${this.height}px`;
      }
      const ctx = c.getContext('2d');
      if (!ctx) return false;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, this.height);
      if (only) {
        // The window alone, where it sits on the strip.
        ctx.translate(MARGIN * plotW, 0);
        this.paint(ctx, { from: min, to: max, min, max, width: plotW, height: this.height });
        [d.lo, d.hi] = [min, max];
      } else this.paint(ctx, { from: d.from, to: d.to, min, max, width, height: this.height });
      this.drawn = d;
      this.dpr = dpr;
      left = -MARGIN * plotW;
    }
    // Whole device pixels: a fractional shift would be resampled (blurred) by the compositor.
    const px = Math.round(left * dpr) / dpr;
    if (px !== this.left) {
      this.left = px;
      this.canvas.style.transform = `translateX(${px}px)`;
    }
    return drew;
  }

  destroy(): void {
    this.canvas.remove();
  }
}
