// The hand-over (under runc): past the proxy's decision, the program's own TCP connection goes from
// the sandbox's relay straight to the egress pump, so a large transfer crosses no relay and no Unix
// socket (resources/runner/relay.c, pump.c say how). Warden's part is small and touches nothing the
// sandbox holds: it reads the relay's first byte (HANDS_OVER: this relay can give its connections
// away), and when it hands a connection to the pump it sends the relay a marker on its own end of
// their Unix connection. Node cannot send a descriptor, and the marker is one byte with a
// descriptor, so a small Node-API addon sends it (resources/native/hand-over.c). The program's socket
// itself only ever reaches the pump, a process of the connection's own: the sandbox may keep a copy
// of it and make any process that reads or writes it block (clear O_NONBLOCK, a long SO_LINGER), and
// that must never be the one serving the API, the panel and every other sandbox.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface Addon {
  sendMarker(fd: number): string;
  passDescriptors(fd: number, allow: boolean): boolean;
  boundDestination(fd: number, bytes: number, stallMs: number): boolean;
  /** For an egress dialer (sandbox-dialer.ts). */
  descriptorPair(): [number, number];
  takeDescriptor(fd: number): { id: string; fd: number } | null;
}

/** A destination connection's buffers each way, fixed (the pump's SOCKET_BUFFER too: resources/runner/pump.c). */
export const DESTINATION_BUFFER = 1024 * 1024;
/** How long a destination connection may hold bytes it cannot deliver before the kernel drops it (the pump's STALL_MS too). */
export const DESTINATION_STALL_MS = 60_000;

/** The first byte a relay started with --hand-over sends on each connection (never an HTTP request's first). */
export const HANDS_OVER = 0x01;
/** Tries at sending the marker while the relay's connection is full: from the next turn of the loop up to 20 ms apart. */
const RETRY_MS = [0, 0, 1, 2, 5, 10, 20, 20, 20, 20];

let addon: Addon | null | undefined;

/** The addon (out/native/hand-over.node), or null where it was not built. */
export function loadAddon(): Addon | null {
  if (addon !== undefined) return addon;
  addon = null;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    const candidate = join(dir, 'out', 'native', 'hand-over.node');
    if (!existsSync(candidate)) continue;
    try {
      addon = createRequire(import.meta.url)(candidate) as Addon;
    } catch (err) {
      process.stderr.write(`warden: egress hand-over addon not loaded (${(err as Error).message}); relays will carry bytes themselves\n`);
    }
    break;
  }
  return addon;
}

/** Whether relays are started with --hand-over (the addon is built, and WARDEN_EGRESS_HAND_OVER is not `off`). */
export function canHandOver(): boolean {
  return loadAddon() !== null && process.env.WARDEN_EGRESS_HAND_OVER !== 'off';
}

/**
 * Refuses descriptors on a sandbox's egress socket (SO_PASSRIGHTS, Linux 6.16; accepted connections
 * inherit it): a sandbox's sendmsg with one attached then fails in the sandbox, and none ever reaches
 * this process, where Node's plain read() would close it, and closing the last reference to a TCP
 * socket the sandbox made linger blocks the closer, here the whole event loop. Only the pump takes
 * one, on a connection Warden has stopped reading (askHandOver). False where the kernel or the addon
 * cannot: then a program under runc can freeze this process that way (README, `warden doctor`).
 */
export function refuseDescriptors(server: Server): boolean {
  const intake = loadAddon();
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return !!intake && typeof fd === 'number' && intake.passDescriptors(fd, false);
}

let refusable: boolean | undefined;

/** Whether this kernel and build refuse descriptors on egress sockets (asked once, on a socketpair of its own). */
export function descriptorsRefusable(): boolean {
  if (refusable !== undefined) return refusable;
  const intake = loadAddon();
  if (!intake) return (refusable = false);
  const dir = mkdtempSync(join(tmpdir(), 'warden-passrights-'));
  const probe = createServer();
  try {
    probe.listen({ path: join(dir, 'probe.sock') }); // the handle exists once listen() returns
    refusable = refuseDescriptors(probe);
  } catch {
    refusable = false;
  } finally {
    probe.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return refusable;
}

/** Streams whose relay said HANDS_OVER first (egress-intake.ts). */
const relaysThatHandOver = new WeakSet<Duplex>();

export function markHandsOver(stream: Duplex): void {
  relaysThatHandOver.add(stream);
}

const fdOf = (s: Duplex) => (s as unknown as { _handle?: { fd?: number } })._handle?.fd;

/**
 * Asks the relay behind this stream to hand the program's connection over: true once the marker is
 * sent (the pump must then be started with --hand-over), false where it cannot be (a relay that
 * carries bytes itself, no addon, or the marker would not go), and the connection stays as it was.
 * Call it only once nothing more is to be written to the stream.
 */
export async function askHandOver(stream: Socket | Duplex): Promise<boolean> {
  const intake = canHandOver() ? loadAddon() : null;
  const fd = fdOf(stream);
  if (!intake || !relaysThatHandOver.has(stream) || typeof fd !== 'number') return false;
  // The relay's answer brings the program's socket: let descriptors through on this connection
  // now, once this process has stopped reading it for good (the pump reads it from here on).
  if (!intake.passDescriptors(fd, true)) return false;
  for (const wait of RETRY_MS) {
    if (stream.destroyed) return false;
    const r = intake.sendMarker(fd);
    if (r === 'sent') return true;
    if (r !== 'again') return false;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return false;
}

/**
 * Bounds a destination connection once it is connected: fixed buffers each way (autotuning would let
 * those of a connection whose program, or destination, stops reading grow to tens of MiB of host
 * memory: 37 stalled connections of one sandbox took the host's TCP memory to its pressure level),
 * and bytes it cannot deliver for DESTINATION_STALL_MS end it, so closed with bytes unsent it does
 * not linger for minutes as an orphan of no one's.
 */
export function boundDestination(upstream: Socket): void {
  const fd = fdOf(upstream);
  if (typeof fd === 'number') loadAddon()?.boundDestination(fd, DESTINATION_BUFFER, DESTINATION_STALL_MS);
}
