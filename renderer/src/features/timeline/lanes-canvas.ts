// Draws the timeline's lanes and its time axis on one canvas: each lane's items in the visible
// window only (found by binary search), a bar for what lasted, a tick for a moment, coloured by how
// it went; the selected item outlined. One canvas, no DOM per item, so thousands of calls pan at
// frame rate.
import { GUTTER, RIGHT_PAD } from './timeline-charts.js';
import { eachInWindow, LANE_TITLES, LANES, type Lane, type LaneIndex, type Tone, type TimelineItem } from './timeline-model.js';

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
  min: number;
  max: number;
  selected: TimelineItem | null;
}

export function laneAtY(y: number): Lane | null {
  const i = Math.floor(y / LANE_HEIGHT);
  return i >= 0 && i < LANES.length ? LANES[i]! : null;
}

export function drawLanes(canvas: HTMLCanvasElement, frame: LanesFrame): void {
  const dpr = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = LANES_HEIGHT;
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
  }
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const plotW = Math.max(1, width - GUTTER - RIGHT_PAD);
  const span = Math.max(1, frame.max - frame.min);
  const xOf = (t: number) => GUTTER + ((t - frame.min) / span) * plotW;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';

  LANES.forEach((lane, i) => {
    const top = i * LANE_HEIGHT;
    ctx.fillStyle = MUTED;
    ctx.fillText(LANE_TITLES[lane], 6, top + LANE_HEIGHT / 2);
    ctx.fillStyle = LINE;
    ctx.fillRect(GUTTER, top + LANE_HEIGHT - 1, plotW, 1);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, top, plotW, LANE_HEIGHT);
    ctx.clip();
    let lastX = -1;
    let lastTone: Tone | null = null;
    eachInWindow(frame.lanes[lane], frame.min, frame.max, (it) => {
      const x0 = xOf(it.start);
      const x1 = Math.max(x0 + 2, xOf(it.end));
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
    ctx.restore();
  });

  // The time axis: about one label per 110 px.
  const axisTop = LANES.length * LANE_HEIGHT;
  const step = STEPS.find((s) => (s / span) * plotW >= 110) ?? STEPS[STEPS.length - 1]!;
  const offset = new Date(frame.min).getTimezoneOffset() * 60_000;
  ctx.fillStyle = MUTED;
  ctx.textBaseline = 'top';
  for (let t = Math.ceil((frame.min - offset) / step) * step + offset; t <= frame.max; t += step) {
    const x = xOf(t);
    ctx.fillRect(x, axisTop, 1, 4);
    const text = tickText(t, step);
    const w = ctx.measureText(text).width;
    if (x - w / 2 >= GUTTER && x + w / 2 <= width) ctx.fillText(text, x - w / 2, axisTop + 6);
  }
}
