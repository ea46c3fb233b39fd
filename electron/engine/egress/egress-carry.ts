// The bytes of a decided connection, both ways, each counted against its run's budget (the caller's
// `count`; false cuts the connection). The first HANDOFF_BYTES go through Node, so a small request
// never waits for a process to start; past them, where Warden's runner binary is at hand, the two
// sockets are handed to `warden-runner egress-pump` on the host (resources/runner/pump.c), which
// splices them with no copy through JavaScript and reports what it moved (a run with an egressBytes
// budget never gets here: egress-proxy.ts). Where the sandbox's relay can hand the program's
// connection over (hand-over.ts), it is asked to at that moment, and the pump takes the program's
// socket from it: the bytes then cross no relay and no Unix socket. The pump is killed if its reports
// say cut (its sockets close with it), and ends when Warden does (its stdin closes).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { carriedPastStream } from './egress-intake.js';
import { askHandOver } from './hand-over.js';

/** Moved through Node before a connection goes to the pump. */
export const HANDOFF_BYTES = 1024 * 1024;

export interface Pump {
  path: string;
  /** Asked when the pump starts (after the connection was dialled, so a dialer that followed a restart has the new pid). */
  sandboxPid: () => number | null;
}

export interface Carry {
  client: Duplex;
  upstream: Socket;
  /** Bytes the sandbox may still send (a plain request's body: no EOF passed on), or null (a tunnel: all, and its EOF). */
  outLimit: number | null;
  /** Counts bytes one way (with them, while they pass through Node); false: cut. */
  count(way: 'in' | 'out', bytes: number, chunk?: Buffer): boolean;
  /** Why it was cut (the budget), once count() said so. */
  cutWhy(): string | null;
  /** The error to record when the sandbox side closes first (null: not an error). */
  clientGone(): string | null;
  /** The pump (the runner binary's host path, and the sandbox's first process when known, which it ends with), or null: everything goes through Node. */
  pump: Pump | null;
  /** Once, when both sides are closed. */
  done(error: string | null): void;
}

type Handle = { fd?: number; reading?: boolean; readStop?: () => void };
const handleOf = (s: Duplex) => (s as unknown as { _handle?: Handle })._handle;
const hasFd = (s: Duplex) => typeof handleOf(s)?.fd === 'number';

/** Stops Node reading the socket from the kernel (its buffer can then be emptied without it reading more), or lets it read again. */
function holdReads(s: Duplex, hold: boolean): void {
  const own = s as unknown as { _read?: unknown };
  if (!hold) return void delete own._read;
  const handle = handleOf(s);
  if (handle?.reading) {
    handle.reading = false;
    handle.readStop?.();
  }
  own._read = () => undefined;
}

export function carry(o: Carry): void {
  const { client, upstream } = o;
  let error: string | null = null;
  let finished = false;
  let handedOff = false;
  let moved = 0;
  let outLeft = o.outLimit ?? Infinity;
  const finish = () => {
    if (finished || handedOff) return;
    if (client.destroyed && upstream.destroyed) {
      finished = true;
      o.done(error);
    }
  };
  const cut = () => {
    error ??= o.cutWhy();
    upstream.destroy();
    client.destroy();
  };
  const toUpstream = (c: Buffer) => {
    if (outLeft <= 0) return;
    const part = c.length > outLeft ? c.subarray(0, outLeft) : c;
    outLeft -= part.length;
    moved += part.length;
    if (!o.count('out', part.length, part)) return cut();
    if (!upstream.write(part)) {
      client.pause();
      upstream.once('drain', () => handedOff || client.resume());
    }
    handOffWhenLarge();
  };
  const toClient = (c: Buffer) => {
    moved += c.length;
    if (!o.count('in', c.length, c)) return cut();
    if (!client.write(c)) {
      upstream.pause();
      client.once('drain', () => handedOff || upstream.resume());
    }
    handOffWhenLarge();
  };
  const onClientEnd = () => {
    if (o.outLimit === null) upstream.end();
  };
  const onUpstreamEnd = () => void client.end();
  const onUpstreamError = (err: NodeJS.ErrnoException) => {
    error ??= `${err.code ?? 'error'}: ${err.message}`;
    client.destroy();
  };
  const onClientError = (err: Error) => {
    error ??= `sandbox side: ${err.message}`;
    upstream.destroy();
  };
  const onClientClose = () => {
    if (!upstream.readableEnded) error ??= o.clientGone();
    upstream.destroy();
    finish();
  };
  const onUpstreamClose = () => {
    if (!client.writableEnded) client.end();
    finish();
  };
  type Listener = (...args: unknown[]) => void;
  const hooks = (
    [
      [client, 'data', toUpstream],
      [upstream, 'data', toClient],
      [client, 'end', onClientEnd],
      [upstream, 'end', onUpstreamEnd],
      [client, 'error', onClientError],
      [upstream, 'error', onUpstreamError],
      [client, 'close', onClientClose],
      [upstream, 'close', onUpstreamClose],
    ] as const
  ).map(([s, ev, fn]) => [s, ev, fn as unknown as Listener] as const);
  for (const [s, ev, fn] of hooks) s.on(ev, fn);

  /** The pump, started ahead once the connection is large and idle until its word; null: none (yet). */
  let standby: ChildProcess | null = null;
  let standbyRunning = false;
  /** The pump could not be started: Node carries it all. */
  let noPump = false;
  // A standby pump holds copies of both sockets: once Node lets go of either, it must go too, or the
  // peer would not see the close.
  const dropStandby = () => {
    if (!handedOff && standby) standby.kill('SIGKILL');
  };
  client.once('close', dropStandby);
  upstream.once('close', dropStandby);

  function handOffWhenLarge(): void {
    if (handedOff || !o.pump || noPump || moved < HANDOFF_BYTES || error !== null) return;
    if (client.readableEnded || upstream.readableEnded || client.destroyed || upstream.destroyed || !hasFd(client) || !hasFd(upstream))
      return;
    if (!standby) return startPump(o.pump);
    if (!standbyRunning) return;
    handedOff = true;
    for (const [s, ev, fn] of hooks) s.off(ev, fn);
    for (const s of [client, upstream]) {
      s.pause();
      holdReads(s, true);
      s.on('error', () => undefined);
    }
    void handOff(standby);
  }

  /** Starts the pump while Node goes on carrying: a transfer never waits for a process to start. */
  function startPump(pump: Pump): void {
    const pid = pump.sandboxPid();
    const args = ['egress-pump', ...(pid === null ? [] : [String(pid)])];
    const child = spawn(pump.path, args, { stdio: ['pipe', 'pipe', 'ignore', client as Socket, upstream] });
    standby = child;
    child.stdin!.on('error', () => undefined);
    child.once('spawn', () => {
      standbyRunning = true;
      handOffWhenLarge();
    });
    child.once('error', () => {
      noPump = true;
      standby = null;
    });
  }

  async function handOff(child: ChildProcess): Promise<void> {
    // What Node already read goes on first, and everything Node still has to write is written.
    for (let c: Buffer | null; (c = client.read() as Buffer | null) !== null;) {
      const part = c.length > outLeft ? c.subarray(0, outLeft) : c;
      outLeft -= part.length;
      if (part.length && (!o.count('out', part.length, part) || !upstream.write(part))) break;
    }
    for (let c: Buffer | null; (c = upstream.read() as Buffer | null) !== null;) if (!o.count('in', c.length, c) || !client.write(c)) break;
    await Promise.all([client, upstream].map((s) => (s.writableLength ? new Promise((r) => s.once('drain', r).once('close', r)) : null)));
    if (client.readableLength || upstream.readableLength || client.destroyed || upstream.destroyed || o.cutWhy()) {
      // Not at a clean point (more came, or it was cut): Node carries it on, and tries again later.
      handedOff = false;
      for (const s of [client, upstream]) holdReads(s, false);
      for (const [s, ev, fn] of hooks) s.on(ev, fn);
      if (o.cutWhy()) cut();
      else for (const s of [client, upstream]) s.resume();
      if (client.destroyed || upstream.destroyed) dropStandby();
      return finish();
    }
    // Past this point nothing more is written to the relay's connection: the marker, if sent, is the last of it.
    const handOver = await askHandOver(client);
    if (client.destroyed || upstream.destroyed) {
      // Ended while the marker waited for room: nothing is left to carry. This process lets go of
      // the relay's connection before the pump goes, so the pump's exit is its last reference: a
      // descriptor the sandbox queued on it once passing was let through is then closed there, never here.
      client.destroy();
      upstream.destroy();
      child.kill('SIGKILL');
      finished = true;
      return o.done(error);
    }
    child.stdin!.write(`go ${o.outLimit === null ? -1 : outLeft} ${handOver ? 1 : 0}\n`);
    const release = carriedPastStream(client);
    client.destroy();
    upstream.destroy();
    let ending: string | null = null;
    let lines = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      lines += text;
      let nl: number;
      while ((nl = lines.indexOf('\n')) >= 0) {
        const line = lines.slice(0, nl);
        lines = lines.slice(nl + 1);
        const m = /^(in|out) (\d+)$/.exec(line);
        if (m && !o.count(m[1] as 'in' | 'out', Number(m[2]))) {
          error ??= o.cutWhy();
          child.kill('SIGKILL');
        } else if (line.startsWith('end ')) ending = line === 'end gone' ? o.clientGone() : line.slice(4) || null;
      }
    });
    const ended = (code: number | null, signal: NodeJS.Signals | null) => {
      finished = true;
      release();
      o.done(error ?? ending ?? (code === 0 ? null : `the egress pump ended (${signal ?? code})`));
    };
    if (child.exitCode !== null || child.signalCode !== null) ended(child.exitCode, child.signalCode);
    else child.once('close', ended);
  }
}
