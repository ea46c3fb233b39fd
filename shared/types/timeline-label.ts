// How the timeline labels a ledger entry: one line of plain text and a tone, from the fields its kind
// is known to carry. Shared so the door's range answer and the page's live appends read the same.
// Payloads come from sandboxes and agents (untrusted): the label is flattened to one line and cut,
// and pages render it as text only.
import type { LedgerEntry } from './ledger.js';
import type { TimelineEntry } from './timeline.js';

const LABEL_CHARS = 160;
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
    case 'net.throttled':
      return { label: `${str(p.refused) ?? '?'} connections refused: opened faster than ${str(p.perSecond) ?? '?'} a second`, tone: 'bad' };
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

/** An entry as the timeline draws it. */
export function toTimelineEntry(e: LedgerEntry): TimelineEntry {
  return { seq: e.seq, time: Date.parse(e.time), kind: e.kind, actor: e.actor, ...describeEntry(e.kind, e.payload) };
}
