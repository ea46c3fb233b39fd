// Pointer, wheel and keys on a timeline: drag to pan, wheel to zoom around the pointer (sideways
// or with Shift to pan), hover for what ran then and what it cost, click an item to open its ledger
// entry; with the keyboard, ← → step through the items, Enter opens one, + − 0 zoom, Shift+← → pan.
import type { TimelineController } from './timeline-controller.js';
import type { TimelineElements } from './timeline-types.js';

const CLICK_SLOP = 4;

export function bindTimelineInput(c: TimelineController, el: TimelineElements): () => void {
  const { body, lanes: lanesRow } = el;
  let drag: { x: number; min: number; max: number; moved: boolean; id: number } | null = null;

  const local = (e: { clientX: number; clientY: number }) => {
    const b = body.getBoundingClientRect();
    const lanes = lanesRow.getBoundingClientRect();
    const y = e.clientY - lanes.top;
    return { x: e.clientX - b.left, laneY: y >= 0 && y <= lanes.height ? y : null };
  };

  const down = (e: PointerEvent) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, min: c.min, max: c.max, moved: false, id: e.pointerId };
    body.setPointerCapture(e.pointerId);
  };
  const move = (e: PointerEvent) => {
    const p = local(e);
    if (drag) {
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > CLICK_SLOP) drag.moved = true;
      if (drag.moved) {
        // While dragging, the axis moves under the pointer: no hover line or tooltip to redo each frame.
        c.panPixels(dx, drag);
        c.setHover(null);
        return;
      }
    }
    c.setHover({ x: p.x, y: p.laneY });
  };
  const up = (e: PointerEvent) => {
    if (!drag) return;
    const wasClick = !drag.moved;
    if (body.hasPointerCapture(drag.id)) body.releasePointerCapture(drag.id);
    drag = null;
    if (!wasClick) return;
    const p = local(e);
    const hit = c.hitAt(p.x, p.laneY);
    if (hit) {
      c.select(hit);
      c.open(hit);
    }
  };
  const leave = () => {
    if (!drag) c.setHover(null);
  };
  const wheel = (e: WheelEvent) => {
    e.preventDefault();
    const p = local(e);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) c.panBy((e.shiftKey ? e.deltaY : e.deltaX) / 1000);
    else c.zoom(Math.exp(Math.max(-300, Math.min(300, e.deltaY)) * 0.002), p.x);
  };
  const key = (e: KeyboardEvent) => {
    const order = c.order;
    const at = c.selected ? order.indexOf(c.selected) : -1;
    let handled = true;
    if (e.key === 'ArrowRight' && e.shiftKey) c.panBy(0.1);
    else if (e.key === 'ArrowLeft' && e.shiftKey) c.panBy(-0.1);
    else if (e.key === 'ArrowRight') c.select(order[at < 0 ? firstVisible(c) : Math.min(order.length - 1, at + 1)] ?? null);
    else if (e.key === 'ArrowLeft') c.select(order[at < 0 ? firstVisible(c) : Math.max(0, at - 1)] ?? null);
    else if (e.key === 'Home') c.select(order[0] ?? null);
    else if (e.key === 'End') c.select(order[order.length - 1] ?? null);
    else if (e.key === 'Enter') c.open(c.selected);
    else if (e.key === '+' || e.key === '=') c.zoom(0.5);
    else if (e.key === '-' || e.key === '_') c.zoom(2);
    else if (e.key === '0') c.fit();
    else if (e.key === 'Escape' && c.selected) c.select(null);
    else handled = false;
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  };
  const blur = () => c.setHover(null);

  body.addEventListener('pointerdown', down);
  body.addEventListener('pointermove', move);
  body.addEventListener('pointerup', up);
  body.addEventListener('pointercancel', up);
  body.addEventListener('pointerleave', leave);
  body.addEventListener('wheel', wheel, { passive: false });
  body.addEventListener('keydown', key);
  body.addEventListener('blur', blur);
  return () => {
    body.removeEventListener('pointerdown', down);
    body.removeEventListener('pointermove', move);
    body.removeEventListener('pointerup', up);
    body.removeEventListener('pointercancel', up);
    body.removeEventListener('pointerleave', leave);
    body.removeEventListener('wheel', wheel);
    body.removeEventListener('keydown', key);
    body.removeEventListener('blur', blur);
  };
}

function firstVisible(c: TimelineController): number {
  const i = c.order.findIndex((it) => it.end >= c.min);
  return i < 0 ? 0 : i;
}
