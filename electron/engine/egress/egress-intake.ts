// What happens to a connection on a sandbox's egress socket before the proxy sees it: its first byte
// may say that its relay can hand the program's connection over (hand-over.ts), and a sandbox may
// hold at most MAX_OPEN_PER_SANDBOX connections at once, counted until the connection ends (past its
// Unix stream, while the egress pump carries it). Without this bound one agent opening connections in
// a loop would fill this process's descriptor table, or the host with pumps, and starve every other
// sandbox (and the gate itself). Past it, a connection gets a one-line 503 that says so, like every
// other refusal on this path.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { rawResponse } from './connection-record.js';
import { HANDS_OVER, markHandsOver } from './hand-over.js';

/** Connections one sandbox may have open through Warden at once (the relay of a gVisor sandbox carries at most 512 itself). */
export const MAX_OPEN_PER_SANDBOX = 256;
/** A connection that says nothing for this long is dropped (a relay's own first byte comes as it connects). */
const FIRST_BYTE_WAIT_MS = 10_000;

export interface IntakeOptions {
  max?: number;
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

export function intakeFor(serve: (stream: Socket) => void, o: IntakeOptions = {}): (unix: Socket) => void {
  const max = o.max ?? MAX_OPEN_PER_SANDBOX;
  // Counted from accept until the connection ends, the wait for a first byte included: silent connections are bounded too.
  let open = 0;
  const refuse = (stream: Socket) => {
    stream.on('error', () => undefined);
    // Closed once said, whatever the sandbox does next: a refused connection must not hold a descriptor here.
    stream.end(
      rawResponse(503, `warden egress: this sandbox has ${max} connections open, the most it may; close some and try again\n`),
      () => stream.destroy(),
    );
  };
  return (unix: Socket) => {
    const full = open >= max;
    open++;
    unix.on('error', () => undefined);
    unix.once('close', () => {
      const carried = carriedOn.get(unix);
      if (carried && !carried.ended) carried.onEnd = () => open--;
      else open--;
    });
    // Refused at once, whatever it says first (a silent connection included).
    if (full) return refuse(unix);
    void readFirstByte(unix).then((ok) => (ok ? serve(unix) : unix.destroy()));
  };
}
