// What the report's timeline makes of entries and samples: which lane an entry belongs on (tool calls,
// engine events, network, snapshots), how it is marked (done, denied, asked, failed — by shape, not
// colour alone), a one-line summary, and the "moments" a hover over the axis describes. Kept apart
// from the drawing (report-timeline.ts) so the rules are easy to read and to test.
import type { LedgerEntry } from '../../../shared/types/ledger.js';
import type { ReportSample } from '../../../shared/types/ledger-report.js';

export type Lane = 'calls' | 'engine' | 'network' | 'snapshots' | 'other';

export const LANES: Array<{ id: Lane; label: string; always: boolean }> = [
  { id: 'calls', label: 'Tool calls', always: true },
  { id: 'engine', label: 'Engine', always: true },
  { id: 'network', label: 'Network', always: false },
  { id: 'snapshots', label: 'Snapshots', always: false },
  { id: 'other', label: 'Other', always: false },
];

const SNAPSHOT_KINDS = new Set(['sandbox.reset', 'sandbox.forked']);

export function laneOf(e: LedgerEntry): Lane {
  const [family] = e.kind.split('.');
  if (family === 'snapshot' || SNAPSHOT_KINDS.has(e.kind)) return 'snapshots';
  if (family === 'net' || family === 'egress') return 'network';
  if (family === 'policy' || family === 'exec' || family === 'file' || family === 'approval') return 'calls';
  if (family === 'sandbox' || family === 'engine' || family === 'runner' || family === 'pool') return 'engine';
  return 'other';
}

const field = (e: LedgerEntry, key: string): unknown =>
  e.payload !== null && typeof e.payload === 'object' && !Array.isArray(e.payload)
    ? (e.payload as Record<string, unknown>)[key]
    : undefined;

export type Mark = 'ok' | 'deny' | 'ask' | 'fail';

export function markOf(e: LedgerEntry): Mark {
  const decision = field(e, 'decision');
  const action =
    typeof decision === 'string'
      ? decision
      : decision && typeof decision === 'object'
        ? (decision as { action?: unknown }).action
        : undefined;
  if (e.kind === 'policy.denied' || action === 'deny') return 'deny';
  if (e.kind.startsWith('approval.')) return 'ask';
  const exit = field(e, 'exitCode');
  if (field(e, 'oomKilled') === true || field(e, 'timedOut') === true || (typeof exit === 'number' && exit !== 0)) return 'fail';
  if (/\.(lost|down|oom|died|expired|failed)$/.test(e.kind)) return 'fail';
  return 'ok';
}

/** A short, plain-text line about the entry (escaped by the caller). */
export function summaryOf(e: LedgerEntry): string {
  const parts: string[] = [];
  const argv = field(e, 'argv') ?? field(e, 'cmd');
  if (Array.isArray(argv)) parts.push(argv.map(String).join(' ').slice(0, 120));
  for (const key of ['tool', 'path', 'host', 'port', 'tag', 'name', 'image', 'exitCode', 'durationMs', 'bytesIn', 'bytesOut']) {
    const v = field(e, key);
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(`${key} ${String(v).slice(0, 80)}`);
  }
  const decision = field(e, 'decision');
  if (typeof decision === 'string') parts.push(`decision ${decision}`);
  else if (decision && typeof decision === 'object') parts.push(`decision ${String((decision as { action?: unknown }).action ?? '?')}`);
  const run = field(e, 'runId');
  if (typeof run === 'string') parts.push(`run ${run}`);
  return parts.join(' · ') || e.actor;
}

/** At most `max` samples: the busiest (highest CPU) of each slice, so spikes survive. */
export function downsample(samples: ReportSample[], max: number): ReportSample[] {
  if (samples.length <= max) return samples;
  const out: ReportSample[] = [];
  const step = samples.length / max;
  for (let i = 0; i < max; i++) {
    const slice = samples.slice(Math.floor(i * step), Math.floor((i + 1) * step));
    out.push(slice.reduce((a, b) => (b.cpuPct > a.cpuPct ? b : a)));
  }
  return out;
}

export interface Moment {
  from: number;
  to: number;
  text(bytes: (n: number) => string): string;
}

/** The axis cut into `count` moments, each with what ran in it and what the sandbox used meanwhile. */
export function moments(
  timed: Array<{ e: LedgerEntry; t: number }>,
  samples: ReportSample[],
  from: number,
  to: number,
  count: number,
): Moment[] {
  const span = (to - from) / count;
  const out: Moment[] = [];
  let ei = 0;
  let si = 0;
  const byTime = [...timed].sort((a, b) => a.t - b.t);
  for (let i = 0; i < count; i++) {
    const a = from + i * span;
    const b = i === count - 1 ? to + 1 : a + span;
    const es: LedgerEntry[] = [];
    while (ei < byTime.length && byTime[ei]!.t < b) es.push(byTime[ei++]!.e);
    const ss: ReportSample[] = [];
    while (si < samples.length && samples[si]!.t < b) ss.push(samples[si++]!);
    if (es.length === 0 && ss.length === 0) continue;
    out.push({
      from: a,
      to: Math.min(b, to),
      text: (bytes) => {
        const when = `${new Date(a).toISOString().slice(11, 19)}–${new Date(Math.min(b, to)).toISOString().slice(11, 19)} UTC`;
        const cost = ss.length
          ? `CPU up to ${Math.max(...ss.map((s) => s.cpuPct)).toFixed(0)} %, memory up to ${bytes(Math.max(...ss.map((s) => s.memBytes)))}, ${Math.max(...ss.map((s) => s.pids))} processes`
          : 'no resource samples';
        const ran = es.length ? es.slice(0, 6).map((e) => `#${e.seq} ${e.kind} ${summaryOf(e)}`.slice(0, 100)) : ['no entries'];
        return [when, cost, ...ran, ...(es.length > 6 ? [`… and ${es.length - 6} more`] : [])].join('\n');
      },
    });
  }
  return out;
}
