// How runs and calls read for a person: times, durations, the command line or path of a call, and
// what decided it. Everything from a sandbox or an agent is text here, rendered as text.
import type { CallDecision, RunInfo, ToolCallInfo } from '../../../../shared/types/run.js';

const pad = (n: number) => String(n).padStart(2, '0');

/** 14:03:07 today, else 2024-05-02 14:03:07. */
export function formatClock(iso: string | null, now = new Date()): string {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '–';
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return d.toDateString() === now.toDateString() ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** 85 ms, 1.2 s, 1m 05s, 2h 03m. */
export function formatMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${pad(Math.floor(s / 60) % 60)}m`;
}

/** 0:42, 12:05 — a countdown. */
export function formatCountdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${pad(s % 60)}`;
}

/** An argv as a person would type it: words with spaces or shell characters single-quoted. */
export function shellLine(argv: unknown): string {
  if (!Array.isArray(argv)) return typeof argv === 'string' ? argv : '';
  return argv.map((w) => (typeof w !== 'string' ? String(w) : /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v ? v : null;
}

/** What a call acted on: its command line, file path or sandbox. */
export function callTarget(call: ToolCallInfo): string {
  const a = call.args;
  if (a.truncated === true) return str(a.preview) ?? '(arguments too large to show)';
  switch (call.tool) {
    case 'exec':
      return shellLine(a.argv);
    case 'file.read':
    case 'file.write':
    case 'file.list':
    case 'file.mkdir':
    case 'file.remove':
      return str(a.path) ?? '/workspace';
    case 'file.move':
      return `${str(a.path) ?? ''} → ${str(a.to) ?? ''}`;
    case 'sandbox.create':
      return str(a.name) ?? '';
    default:
      return str(a.ref) ?? str(a.sandboxId)?.slice(0, 12) ?? '';
  }
}

/** "approved once by user (web shell) at 14:03:07", "timed out: nobody answered" … */
export function approvalText(approval: NonNullable<CallDecision['approval']>): string {
  const at = formatClock(approval.at);
  switch (approval.decision) {
    case 'approve-once':
      return `approved once by ${approval.by ?? 'someone'} at ${at}`;
    case 'approve-run':
      return `approved for this run by ${approval.by ?? 'someone'} at ${at}`;
    case 'deny':
      return `denied by ${approval.by ?? 'someone'} at ${at}`;
    case 'timeout':
      return `nobody answered; denied at the deadline, ${at}`;
  }
}

/** The run's current wall time: from its start to its end, or to now while it is active. */
export function runElapsed(run: RunInfo, now: number): number {
  const start = Date.parse(run.startedAt);
  const end = run.endedAt ? Date.parse(run.endedAt) : now;
  return Math.max(0, end - start);
}

export function runTitle(run: RunInfo): string {
  return run.sandboxName ?? (run.sandboxId ? run.sandboxId.slice(0, 12) : 'no sandbox yet');
}
