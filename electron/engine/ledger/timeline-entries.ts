// A sandbox's ledger entries in a time window, as the timeline draws them: seq, time, kind, actor,
// one line of text and a tone. Payloads come from sandboxes and agents (untrusted text): the label
// is plain text, cut to a line, and the page renders it as text only.
import type { LedgerEntry } from '../../../shared/types/ledger.js';
import type { TimelineEntriesPage, TimelineEntry } from '../../../shared/types/timeline.js';
import type { Ledger } from './ledger.js';

const LABEL_CHARS = 160;
const PAGE = 1000;

type Payload = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

function argvText(p: Payload): string | null {
  const argv = p.argv;
  if (Array.isArray(argv)) return argv.map((a) => String(a)).join(' ');
  return str(p.cmd) ?? str(p.command);
}

function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > LABEL_CHARS ? `${flat.slice(0, LABEL_CHARS - 1)}…` : flat;
}

/** The label (one line, cut) and tone of one entry, from the fields its kind is known to carry. */
export function describeEntry(kind: string, payload: unknown): Pick<TimelineEntry, 'label' | 'tone' | 'connId'> {
  const d = describeRaw(kind, payload);
  return { ...d, label: oneLine(d.label) };
}

function describeRaw(kind: string, payload: unknown): Pick<TimelineEntry, 'label' | 'tone' | 'connId'> {
  const p: Payload = payload && typeof payload === 'object' ? (payload as Payload) : {};
  const tag = str(p.tag);
  switch (kind) {
    case 'exec.started':
      return { label: argvText(p) ?? 'exec', tone: 'info' };
    case 'exec.finished': {
      const code = typeof p.exitCode === 'number' ? p.exitCode : null;
      const oom = p.oomKilled === true ? ' (OOM-killed)' : p.timedOut === true ? ' (timed out)' : '';
      return { label: `${argvText(p) ?? 'exec'} → exit ${code ?? '?'}${oom}`, tone: code === 0 && !oom ? 'ok' : 'bad' };
    }
    case 'exec.failed':
      return { label: `${argvText(p) ?? 'exec'} failed: ${str(p.message) ?? str(p.error) ?? ''}`, tone: 'bad' };
    case 'net.connect': {
      const allowed = p.decision === 'allow';
      return {
        label: `${allowed ? 'connect' : 'refused'} ${str(p.host) ?? '?'}:${str(p.port) ?? '?'} (${str(p.rule) ?? ''})`,
        tone: allowed ? 'ok' : 'bad',
        ...(str(p.connId) ? { connId: str(p.connId)! } : {}),
      };
    }
    case 'net.closed': {
      const bytes = `${str(p.bytesOut) ?? 0} B out, ${str(p.bytesIn) ?? 0} B in`;
      return {
        label: `closed ${str(p.host) ?? '?'}:${str(p.port) ?? '?'}, ${bytes}${p.error ? `: ${str(p.error)}` : ''}`,
        tone: p.error ? 'bad' : 'info',
        ...(str(p.connId) ? { connId: str(p.connId)! } : {}),
      };
    }
    case 'sandbox.attested':
      return {
        label: `attested${p.deep === true ? ' (deep)' : ''}: ${p.ok === true ? 'every promise holds' : 'a check failed'}`,
        tone: p.ok === true ? 'ok' : 'bad',
      };
    case 'sandbox.limit-ended':
      return { label: `ended by a limit: ${str(p.reason) ?? str(p.limit) ?? ''}`, tone: 'bad' };
    case 'policy.denied':
      return { label: `denied: ${str(p.reason) ?? argvText(p) ?? ''}`, tone: 'bad' };
    case 'snapshot.taken':
    case 'snapshot.removed':
    case 'sandbox.reset':
    case 'sandbox.forked':
      return { label: `${kind.replace('.', ' ')}${tag ? ` ${tag}` : ''}`, tone: 'info' };
    default: {
      const path = str(p.path);
      const name = str(p.name);
      return { label: `${kind}${path ? ` ${path}` : name ? ` ${name}` : ''}`, tone: 'info' };
    }
  }
}

export function toTimelineEntry(e: LedgerEntry): TimelineEntry {
  return { seq: e.seq, time: Date.parse(e.time), kind: e.kind, actor: e.actor, ...describeEntry(e.kind, e.payload) };
}

/**
 * The entries of one sandbox (its full id) from `since` to `until`, oldest first, at most `limit`
 * (the oldest ones when more match). The start is found through the sandbox index (the newest entry
 * before `since`), then read forward in pages until `until`: bounded work for a ledger of any size.
 */
export function timelineEntries(
  ledger: Ledger,
  sandboxId: string,
  since: number | undefined,
  until: number | undefined,
  limit: number,
): TimelineEntriesPage {
  let fromSeq = 1;
  if (since !== undefined && since > 0) {
    const before = ledger.browse({ sandboxId, until: new Date(since - 1).toISOString(), limit: 1 }).entries[0];
    if (before) fromSeq = before.seq + 1;
  }
  const entries: TimelineEntry[] = [];
  for (;;) {
    const page = ledger.entries({ sandboxId, fromSeq, limit: PAGE });
    for (const e of page) {
      const time = Date.parse(e.time);
      if (since !== undefined && time < since) continue;
      if (until !== undefined && time > until) return { entries, truncated: false };
      if (entries.length === limit) return { entries, truncated: true };
      entries.push(toTimelineEntry(e));
    }
    if (page.length < PAGE) return { entries, truncated: false };
    fromSeq = page.at(-1)!.seq + 1;
  }
}
