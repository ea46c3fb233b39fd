// How the UI writes numbers, rates and times; byte sizes are shared with the CLI (formatByteSize).
import { formatByteSize } from '../../../shared/types/units.js';

export function formatRate(bytesPerSecond: number): string {
  return `${formatByteSize(bytesPerSecond)}/s`;
}

export function formatPercent(value: number): string {
  return `${value < 10 ? value.toFixed(1) : value.toFixed(0)}%`;
}

/** 45s, 12m 3s, 3h 2m, 4d 1h */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

export function shortId(id: string): string {
  return id.slice(0, 12);
}
