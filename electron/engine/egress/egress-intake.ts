// What happens to a connection on a sandbox's egress socket before the proxy sees it: its first byte
// may say that its relay can hand the program's connection over (hand-over.ts), and two bounds hold
// per sandbox. At most MAX_OPEN_PER_SANDBOX connections at once, counted until the connection ends
// (past its Unix stream, while the egress pump carries it): without it one agent opening connections
// in a loop would fill this process's descriptor table, or the host with pumps, and starve every
// other sandbox (and the gate itself). And new connections at most RATE.perSecond a second, in
// bursts up to RATE.burst: every connection decided is a ledger entry, so without it one tool call
// could write entries as fast as this process can decide. Past either, a connection gets a one-line
// answer that says so (503, 429) and is closed at once, undecided; refusals for the rate are
// recorded together, one count a second (`net.throttled`), not one entry each.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { answerAndClose, rawResponse } from './connection-record.js';
import { HANDS_OVER, markHandsOver } from './hand-over.js';

/** Connections one sandbox may have open through Warden at once (the relay of a gVisor sandbox carries at most 512 itself). */
export const MAX_OPEN_PER_SANDBOX = 256;
/** A connection that says nothing for this long is dropped (a relay's own first byte comes as it connects). */
const FIRST_BYTE_WAIT_MS = 10_000;

/** New connections a sandbox may open: a bucket of `burst` that refills at `perSecond`. */
export const RATE = { perSecond: 50, burst: 400 };
/** How often the refusals for the rate are reported (summed). */
const THROTTLE_REPORT_MS = 1000;

export interface IntakeOptions {
  max?: number;
  rate?: { perSecond: number; burst: number };
  /** Refusals for the rate since the last report (at most one report per THROTTLE_REPORT_MS). */
  onThrottled?: (refused: number) => void;
}

/** Connections carried on past their stream (the pump), each with what to do when it ends. */
const carriedOn = new WeakMap<Duplex, { ended: boolean; onEnd: (() => void) | null }>();

/**
 * For whoever carries a connection on past its stream (egress-carry.ts, handing it to the pump): the
 * connection stays counted against its sandbox until the function returned is called.
 */
export function carriedPastStream(stream: Duplex): () => void {
  const entry = { ended: false, onEnd: null as (() => void) | null };
  carriedOn.set(stream, entry);
  return () => {
    if (entry.ended) return;
    entry.ended = true;
    entry.onEnd?.();
  };
}

/** Reads the first byte of a connection accepted paused: the relay's HANDS_OVER is taken, anything else put back. */
function readFirstByte(unix: Socket): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => unix.destroy(), FIRST_BYTE_WAIT_MS);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      unix.off('readable', onReadable).off('end', onClose).off('close', onClose);
      resolve(ok);
    };
    const onClose = () => done(false);
    const onReadable = () => {
      const first = unix.read(1) as Buffer | null;
      if (first === null) return; // its end, if that is what came, is 'end'
      if (first[0] === HANDS_OVER) markHandsOver(unix);
      else unix.unshift(first);
      done(true);
    };
    unix.on('readable', onReadable).once('end', onClose).once('close', onClose);
  });
}

/** A token bucket: take() is false once `burst` have gone faster than `perSecond` refills them. */
function bucket(rate: { perSecond: number; burst: number }): { take(): boolean } {
  let tokens = rate.burst;
  let at = performance.now();
  return {
    take() {
      const now = performance.now();
      tokens = Math.min(rate.burst, tokens + ((now - at) / 1000) * rate.perSecond);
      at = now;
      if (tokens < 1) return false;
      tokens--;
      return true;
    },
  };
}

export function intakeFor(serve: (stream: Socket) => void, o: IntakeOptions = {}): (unix: Socket) => void {
  const max = o.max ?? MAX_OPEN_PER_SANDBOX;
  const rate = o.rate ?? RATE;
  const starts = bucket(rate);
  let throttled = 0;
  const reportThrottled = () => {
    const n = throttled;
    throttled = 0;
    if (n) o.onThrottled?.(n);
  };
  // Counted from accept until the connection ends, the wait for a first byte included: silent connections are bounded too.
  let open = 0;
  // Closed once said, whatever the sandbox does next: a refused connection must not hold a descriptor here.
  const refuse = (stream: Socket, status: number, body: string) => answerAndClose(stream, rawResponse(status, body));
  return (unix: Socket) => {
    unix.on('error', () => undefined);
    if (!starts.take()) {
      if (throttled++ === 0) setTimeout(reportThrottled, THROTTLE_REPORT_MS).unref();
      return refuse(
        unix,
        429,
        `warden egress: this sandbox opens connections faster than ${rate.perSecond} a second (in bursts of ${rate.burst}), the most it may; slow down and try again\n`,
      );
    }
    const full = open >= max;
    open++;
    unix.once('close', () => {
      const carried = carriedOn.get(unix);
      if (carried && !carried.ended) carried.onEnd = () => open--;
      else open--;
    });
    // Refused at once, whatever it says first (a silent connection included).
    if (full)
      return refuse(unix, 503, `warden egress: this sandbox has ${max} connections open, the most it may; close some and try again\n`);
    void readFirstByte(unix).then((ok) => (ok ? serve(unix) : unix.destroy()));
  };
}
