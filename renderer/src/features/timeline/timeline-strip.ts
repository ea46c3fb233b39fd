// One canvas of the timeline drawn wider than what shows: a plot width of margin either side of the
// window, in a view that clips it. A pan that keeps the same scale and stays inside what was drawn
// only moves the canvas (a CSS transform the compositor applies: no drawing, no paint on the main
// thread); leaving the margin, new data or a new size draws it again around the window. A zoom (a new
// scale, every wheel step) draws the window alone on a canvas its own size, a third of the pixels;
// the margins come back when the view settles or a pan needs them.

/** Plot widths drawn either side of the window. */
export const MARGIN = 1;

/** What a strip holds: the canvas spans [from, to] (ms), `span` ms to each plotW px. */
export interface Drawn {
  from: number;
  to: number;
  span: number;
  plotW: number;
}

/**
 * Where the drawn strip's left edge sits (px from the view's) for the window [min, max] shown
 * over plotW px, or null when the strip does not cover that window at that scale (draw it again).
 */
export function placement(drawn: Drawn | null, min: number, max: number, plotW: number): number | null {
  if (!drawn || drawn.plotW !== plotW || !(max > min) || rescaled(drawn, min, max)) return null;
  if (min < drawn.from || max > drawn.to) return null;
  return ((drawn.from - min) / (max - min)) * plotW;
}

/** The strip drawn around [min, max]: the window and MARGIN plot widths either side, or (`only`) the window alone. */
export function around(min: number, max: number, plotW: number, only = false): Drawn {
  const span = max - min;
  const m = only ? 0 : MARGIN * span;
  return { from: min - m, to: max + m, span, plotW };
}

/** Whether [min, max] is at another scale than what was drawn (a zoom). */
export function rescaled(drawn: Drawn | null, min: number, max: number): boolean {
  return drawn !== null && Math.abs(max - min - drawn.span) > drawn.span * 1e-7;
}

/** Whether the strip holds the window alone (no margins: drawn during a zoom). */
export function bare(drawn: Drawn | null): boolean {
  return drawn !== null && drawn.to - drawn.from < (1 + 2 * MARGIN) * drawn.span * (1 - 1e-7);
}

export interface StripFrame {
  /** ms at the canvas's left and right edges */
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

  /** Whether only the window was drawn (after a zoom): settling draws the margins. */
  get partial(): boolean {
    return bare(this.drawn);
  }

  /** Shows [min, max] over plotW px: moves the drawn strip when it covers it, else draws it again. Returns whether it drew. */
  show(min: number, max: number, plotW: number): boolean {
    const dpr = window.devicePixelRatio || 1;
    let left = dpr === this.dpr ? placement(this.drawn, min, max, plotW) : null;
    if (left !== null) {
      this.move(left, dpr);
      return false;
    }
    const d = around(min, max, plotW, rescaled(this.drawn, min, max));
    const width = ((d.to - d.from) / d.span) * plotW;
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
    this.paint(ctx, { from: d.from, to: d.to, min, max, width, height: this.height });
    this.drawn = d;
    this.dpr = dpr;
    left = ((d.from - min) / d.span) * plotW;
    this.move(left, dpr);
    return true;
  }

  private move(left: number, dpr: number): void {
    // Whole device pixels: a fractional shift would be resampled (blurred) by the compositor.
    const px = Math.round(left * dpr) / dpr;
    if (px === this.left) return;
    this.left = px;
    this.canvas.style.transform = `translateX(${px}px)`;
  }

  destroy(): void {
    this.canvas.remove();
  }
}
