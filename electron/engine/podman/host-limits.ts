// The host's own ulimits: a container asking for more than its parent has fails to start,
// which is why sandboxes set explicit, clamped ulimits rather than the engine's defaults.
import { readFileSync } from 'node:fs';

export interface HostLimits {
  nofileHard: number;
  nprocHard: number;
}

function parseLimit(text: string, label: string): number {
  const line = text.split('\n').find((l) => l.startsWith(label));
  const hard = line?.slice(label.length).trim().split(/\s+/)[1];
  if (!hard || hard === 'unlimited') return Number.MAX_SAFE_INTEGER;
  const value = Number(hard);
  return Number.isFinite(value) ? value : Number.MAX_SAFE_INTEGER;
}

export function parseProcLimits(text: string): HostLimits {
  return { nofileHard: parseLimit(text, 'Max open files'), nprocHard: parseLimit(text, 'Max processes') };
}

let cached: HostLimits | null = null;

export function hostLimits(): HostLimits {
  if (!cached) {
    try {
      cached = parseProcLimits(readFileSync('/proc/self/limits', 'utf8'));
    } catch {
      cached = { nofileHard: 4096, nprocHard: 4096 };
    }
  }
  return cached;
}
