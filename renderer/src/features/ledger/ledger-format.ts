// Text for the ledger view. Payloads come from sandboxes and agents (untrusted): they are only ever
// turned into plain strings here and rendered as React text, never as HTML.
import type { VerifyReason } from '../../../../shared/types/ledger.js';

const SUMMARY_MAX = 180;
/** Keys shown first, in this order, when a payload has them. */
const LEAD = ['tool', 'argv', 'name', 'path', 'image', 'status', 'exitCode', 'exit', 'durationMs', 'error', 'summary'] as const;
/** Keys that identify rather than describe (shown in the details, not the one-line summary). */
const QUIET = new Set(['runId', 'callId', 'execId', 'index', 'stdoutDigest', 'stderrDigest', 'sha256', 'approvalId']);

function scalar(v: unknown): string | null {
  if (v === null) return 'null';
  if (typeof v === 'string') return v.length > 60 ? `${v.slice(0, 59)}…` : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

function oneLine(s: string): string {
  // Control characters (newlines in output previews, escapes) would break the row: show them as spaces.
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

function nested(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** One line of text about a payload: the telling fields first, then other scalars as key=value. */
export function summarizePayload(payload: unknown): string {
  if (payload === null || typeof payload !== 'object') return oneLine(scalar(payload) ?? '');
  if (Array.isArray(payload)) return `[${payload.length} items]`;
  const p = payload as Record<string, unknown>;
  const parts: string[] = [];
  // A tool call's arguments and decision (policy.*): the command or path asked for, and the verdict.
  const args = nested(p.args);
  const decision = nested(p.decision);
  for (const key of LEAD) {
    const v = key === 'argv' ? (p.argv ?? args?.argv ?? args?.cmd) : key === 'path' ? (p.path ?? args?.path) : p[key];
    if (v === undefined) continue;
    if (key === 'argv' && Array.isArray(v)) parts.push(v.map((a) => String(a)).join(' '));
    else if (key === 'exitCode' || key === 'exit') parts.push(`exit ${String(v)}`);
    else if (key === 'durationMs' && typeof v === 'number') parts.push(v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`);
    else {
      const s = scalar(v);
      if (s !== null) parts.push(key === 'tool' || key === 'name' || key === 'path' || key === 'image' ? s : `${key}=${s}`);
    }
  }
  if (typeof decision?.action === 'string') parts.push(decision.action);
  for (const [key, v] of Object.entries(p)) {
    if ((LEAD as readonly string[]).includes(key) || QUIET.has(key) || (key === 'args' && args) || (key === 'decision' && decision))
      continue;
    const s = scalar(v);
    parts.push(s === null ? `${key}={…}` : `${key}=${s}`);
    if (parts.join(' · ').length > SUMMARY_MAX) break;
  }
  const line = oneLine(parts.join(' · '));
  return line.length > SUMMARY_MAX ? `${line.slice(0, SUMMARY_MAX - 1)}…` : line;
}

/** The payload as indented JSON for the details (text, shown in a <pre>). */
export function payloadJson(payload: unknown): string {
  return JSON.stringify(payload, null, 2) ?? 'null';
}

/** 2025-11-22 07:44:31 in local time (the ISO instant goes in the title). */
export function formatTime(iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
}

export function shortHash(hex: string, n = 12): string {
  return hex.length > n ? `${hex.slice(0, n)}…` : hex;
}

/** A fingerprint in groups of four, as people read them out: 3f2a 91c0 … */
export function groupHex(hex: string, groups = 8): string {
  return (hex.match(/.{1,4}/g) ?? []).slice(0, groups).join(' ') + (hex.length > groups * 4 ? ' …' : '');
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** What each failure means, for a person. */
export const REASON_TEXT: Record<VerifyReason, string> = {
  'hash mismatch': 'its contents no longer match the hash it was written with: it was changed afterwards',
  'broken link': 'it does not link to the entry before it: an entry was replaced',
  gap: 'entries are missing here: deleted, or moved away',
  duplicate: 'it is a copy of another entry',
  reordered: 'entries were moved out of their order',
  inserted: 'an entry was added that Warden never wrote',
  'checkpoint mismatch': 'the entries no longer match a signed checkpoint: history was rewritten or cut short',
  'bad signature': "a checkpoint's signature does not verify with this ledger's key",
};
