// Paints the timeline's lanes and its time axis on one strip (timeline-strip.ts): each lane's items
// in the strip's window only (found by binary search), a bar for what lasted, a tick for a moment,
// coloured by how it went; the selected item outlined. One canvas, no DOM per item, so thousands of
// calls pan at frame rate; the lane titles are in the gutter beside it.
import { eachInWindow, LANES, type Lane, type LaneIndex, type Tone, type TimelineItem } from './timeline-model.js';
import type { StripFrame } from './timeline-strip.js';

export const LANE_HEIGHT = 22;
export const AXIS_HEIGHT = 20;
export const LANES_HEIGHT = LANES.length * LANE_HEIGHT + AXIS_HEIGHT;

const TONE_COLOR: Record<Tone, string> = { ok: '#4cc38a', bad: '#e0646a', ask: '#f0a44b', info: '#5aa9ff', running: '#8cc4ff' };
const MUTED = '#8b93a1';
const LINE = '#262b36';

/** Tick steps for the time axis, in ms. */
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400].map((s) => s * 1000);

const pad = (n: number) => String(n).padStart(2, '0');
function tickText(t: number, step: number): string {
  const d = new Date(t);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (step >= 86400_000) return `${d.getMonth() + 1}/${d.getDate()}`;
  return step < 60_000 ? `${hm}:${pad(d.getSeconds())}` : hm;
}

export interface LanesFrame {
  lanes: Record<Lane, LaneIndex>;
  selected: TimelineItem | null;
}

export function laneAtY(y: number): Lane | null {
  const i = Math.floor(y / LANE_HEIGHT);
  return i >= 0 && i < LANES.length ? LANES[i]! : null;
}

/** Paints the lanes and the axis for the strip's window (its titles are in the gutter, beside it). */
export function paintLanes(ctx: CanvasRenderingContext2D, f: StripFrame, frame: LanesFrame): void {
  const { width } = f;
  const span = Math.max(1, f.to - f.from);
  const xOf = (t: number) => ((t - f.from) / span) * width;
  ctx.font = '11px system-ui, sans-serif';

  LANES.forEach((lane, i) => {
    const top = i * LANE_HEIGHT;
    ctx.fillStyle = LINE;
    ctx.fillRect(0, top + LANE_HEIGHT - 1, width, 1);
    let lastX = -1;
    let lastTone: Tone | null = null;
    eachInWindow(frame.lanes[lane], f.from, f.to, (it) => {
      const x0 = Math.max(-4, xOf(it.start));
      const x1 = Math.min(width + 4, Math.max(x0 + 2, xOf(it.end)));
      // Many items in one pixel column of one colour: draw the first only.
      if (Math.floor(x0) === lastX && it.tone === lastTone && x1 - x0 <= 2) return;
      lastX = Math.floor(x0);
      lastTone = it.tone;
      ctx.fillStyle = TONE_COLOR[it.tone];
      ctx.fillRect(x0, top + 4, x1 - x0, LANE_HEIGHT - 9);
    });
    const sel = frame.selected;
    if (sel && sel.lane === lane) {
      const x0 = xOf(sel.start);
      const x1 = Math.max(x0 + 2, xOf(sel.end));
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 - 2, top + 2, x1 - x0 + 4, LANE_HEIGHT - 5);
    }
  });

  // The time axis: about one label per 110 px.
  const axisTop = LANES.length * LANE_HEIGHT;
  const step = STEPS.find((s) => (s / span) * width >= 110) ?? STEPS[STEPS.length - 1]!;
  const offset = new Date(f.from).getTimezoneOffset() * 60_000;
  ctx.fillStyle = MUTED;
  ctx.textBaseline = 'top';
  for (let t = Math.ceil((f.from - offset) / step) * step + offset; t <= f.to; t += step) {
    const x = xOf(t);
    ctx.fillRect(x, axisTop, 1, 4);
    const text = tickText(t, step);
    ctx.fillText(text, x - ctx.measureText(text).width / 2, axisTop + 6);
  }
}
