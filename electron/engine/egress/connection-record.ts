// Each connection an `egress` sandbox attempts goes to the ledger as net.connect (destination,
// address, decision, rule) and, if it was allowed, net.closed once it ends (bytes each way,
// duration). Appends go through the sink's batched path, so many connections share commits.
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { NetClosedPayload, NetConnectPayload } from '../../../shared/types/ledger.js';
import type { CallConnection } from '../../../shared/types/run.js';
import type { EgressDecision, FinalDecision } from './egress-decision.js';
import type { Target } from './destination.js';

/** A connection's run (where known) and what it may still carry. */
export interface EgressMeter {
  runId: string;
  callId: string;
  /** The run has an egressBytes budget: its connections stay in Node, which cuts at the exact chunk (egress-carry.ts). */
  bounded: boolean;
  /** Counts bytes against the run's budget; a reason once it is used up, else null. */
  take(bytes: number): string | null;
  /** The connection as its call's timeline shows it: when decided, and when it ends. */
  show(connection: CallConnection): void;
}

export type EgressRecorder = (sandboxId: string, kind: 'net.connect' | 'net.closed', payload: NetConnectPayload | NetClosedPayload) => void;

export class ConnectionRecord {
  readonly connId = `net_${randomBytes(6).toString('hex')}`;
  private readonly started = performance.now();
  private closed = false;
  bytesOut = 0;
  bytesIn = 0;
  /** Why the connection must be cut (its run's budget), once it must. */
  overBudget: string | null = null;

  constructor(
    private readonly record: EgressRecorder,
    private readonly sandboxId: string,
    private readonly target: Target,
    private readonly meter: EgressMeter | null = null,
  ) {}

  /** Counts bytes one way; false once the run's egressBytes budget is used (the caller cuts the connection). */
  count(way: 'out' | 'in', bytes: number): boolean {
    if (way === 'out') this.bytesOut += bytes;
    else this.bytesIn += bytes;
    this.overBudget ??= this.meter?.take(bytes) ?? null;
    return this.overBudget === null;
  }

  /** A run already past its budget gets no new connection. */
  budgetUsed(): string | null {
    return this.meter?.take(0) ?? null;
  }

  private shown: CallConnection | null = null;

  decided(via: NetConnectPayload['via'], decision: FinalDecision): void {
    this.shown = {
      connId: this.connId,
      host: this.target.host,
      port: this.target.port,
      decision: decision.action,
      rule: decision.rule,
      bytesOut: 0,
      bytesIn: 0,
      open: decision.action === 'allow',
    };
    this.meter?.show({ ...this.shown });
    this.record(this.sandboxId, 'net.connect', {
      connId: this.connId,
      via,
      host: this.target.host,
      port: this.target.port,
      address: decision.address,
      decision: decision.action,
      rule: decision.rule,
      ...(this.meter ? { runId: this.meter.runId, callId: this.meter.callId } : {}),
    });
  }

  /** Once, however many ways the connection ends. */
  close(error: string | null): void {
    if (this.closed) return;
    this.closed = true;
    if (this.shown) this.meter?.show({ ...this.shown, bytesOut: this.bytesOut, bytesIn: this.bytesIn, open: false });
    this.record(this.sandboxId, 'net.closed', {
      connId: this.connId,
      host: this.target.host,
      port: this.target.port,
      bytesOut: this.bytesOut,
      bytesIn: this.bytesIn,
      durationMs: Math.round((performance.now() - this.started) * 1000) / 1000,
      error,
    });
  }
}

/** The one-line answer to a refused request: a fast 403 (or 502 for a name that does not resolve), never a hang. */
export function refusal(what: string, decision: EgressDecision): { status: number; body: string } {
  if (decision.unresolved) return { status: 502, body: `warden egress: ${what} failed: ${decision.rule}\n` };
  return { status: 403, body: `warden egress: ${what} denied: ${decision.rule}\n` };
}

export function rawResponse(status: number, body: string): string {
  const reason =
    (
      { 400: 'Bad Request', 403: 'Forbidden', 411: 'Length Required', 429: 'Too Many Requests', 503: 'Service Unavailable' } as Record<
        number,
        string
      >
    )[status] ?? 'Bad Gateway';
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n${body}`
  );
}

/** How long a last answer may take to leave before its connection is closed anyway. */
const LAST_ANSWER_MS = 5000;

/**
 * Writes a connection's last answer and closes it on Warden's side once the answer has left (or
 * after LAST_ANSWER_MS): a half-close alone waited for the sandbox's end, which never came while
 * bytes it had sent past a refused head sat unread, so each such connection kept a descriptor
 * here and one of its sandbox's connection slots for good (red team, stop 23). What the sandbox
 * sends meanwhile is read into nothing.
 */
export function answerAndClose(stream: Duplex, answer: string | Buffer): void {
  if (stream.destroyed) return;
  const timer = setTimeout(() => stream.destroy(), LAST_ANSWER_MS);
  timer.unref();
  stream.resume();
  stream.end(answer, () => {
    clearTimeout(timer);
    stream.destroy();
  });
}
