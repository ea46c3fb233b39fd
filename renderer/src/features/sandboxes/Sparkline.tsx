// A tiny live chart drawn on a canvas from the stats buffer: each sample redraws it in the next
// frame, without a React render. The text beside it is set the same way. The canvas size comes
// from a ResizeObserver, never read while drawing: with a hundred sparklines drawing in one frame,
// reading clientWidth after another one's text changed would force a layout each time.
import { useEffect, useRef } from 'react';
import { useServices } from '../../services.js';
import type { Series } from '../../live/stats-buffer.js';
import type { StatsSample } from '../../../../shared/types/stats.js';

const POINTS = 60;

interface Props {
  sandboxId: string;
  metric: 'cpu' | 'memory';
  label: (latest: StatsSample) => string;
  testId?: string;
}

export function Sparkline({ sandboxId, metric, label, testId }: Props) {
  const { stats } = useServices();
  const canvas = useRef<HTMLCanvasElement>(null);
  const text = useRef<HTMLSpanElement>(null);
  const labelRef = useRef(label);
  labelRef.current = label;

  useEffect(() => {
    let frame = 0;
    let latest: { series: Series; sample: StatsSample } | null = null;
    let w = 0;
    let h = 0;
    const draw = () => {
      frame = 0;
      const el = canvas.current;
      if (!el || !latest) return;
      const { series, sample } = latest;
      if (text.current) {
        // A narrow column cuts the figure: its title keeps it whole.
        const value = labelRef.current(sample);
        text.current.textContent = value;
        text.current.title = value;
      }
      if (w === 0 || h === 0) return;
      const values = metric === 'cpu' ? series.cpu : series.memory;
      const max = metric === 'cpu' ? Math.max(100, ...values.slice(-POINTS)) : Math.max(1, sample.memoryLimitBytes);
      const dpr = window.devicePixelRatio || 1;
      if (el.width !== w * dpr) el.width = w * dpr;
      if (el.height !== h * dpr) el.height = h * dpr;
      const ctx = el.getContext('2d');
      if (!ctx) return;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, w, h);
      const recent = values.slice(-POINTS);
      // One sample is a flat line until the next arrives.
      const pts = recent.length === 1 ? [recent[0]!, recent[0]!] : recent;
      const step = w / (POINTS - 1);
      const x0 = w - (pts.length - 1) * step;
      const y = (v: number) => h - 1 - (Math.min(v, max) / max) * (h - 2);
      ctx.beginPath();
      pts.forEach((v, i) => (i === 0 ? ctx.moveTo(x0, y(v)) : ctx.lineTo(x0 + i * step, y(v))));
      ctx.strokeStyle = metric === 'cpu' ? '#5aa9ff' : '#b18cff';
      ctx.lineWidth = 1.25;
      ctx.stroke();
      ctx.lineTo(x0 + (pts.length - 1) * step, h);
      ctx.lineTo(x0, h);
      ctx.closePath();
      ctx.fillStyle = metric === 'cpu' ? 'rgba(90,169,255,0.15)' : 'rgba(177,140,255,0.15)';
      ctx.fill();
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(draw);
    };
    const observer = new ResizeObserver(([entry]) => {
      if (!entry) return;
      w = entry.contentRect.width;
      h = entry.contentRect.height;
      schedule();
    });
    if (canvas.current) observer.observe(canvas.current);
    const off = stats.listen(sandboxId, (series, sample) => {
      latest = { series, sample };
      schedule();
    });
    return () => {
      off();
      observer.disconnect();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [stats, sandboxId, metric]);

  return (
    <span className="spark" data-testid={testId}>
      <canvas ref={canvas} className="spark-canvas" aria-hidden="true" />
      <span ref={text} className="spark-value">
        –
      </span>
    </span>
  );
}
