// The first byte of each connection on an egress socket says what it carries. A relay started with
// --pass-fd (resources/runner/relay.c, under runc) sends one byte 'F' and, with it, the program's own
// TCP connection as a descriptor: the proxy then serves that socket and the Unix connection is done
// with, so past the proxy's decision the pump splices the program's socket to the destination with
// no relay in between. Any other first byte, with no descriptor, is the start of the bytes a relay
// carries itself (gVisor, an older relay). Node cannot receive descriptors, so the addon built from
// resources/native/fd-intake.c reads that byte; without the addon relays are not asked to pass them.
// A descriptor is never trusted: the addon keeps only a connected TCP socket, which can only be the
// sandbox's own (its network namespace has nothing else), and anything else drops the connection.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type First =
  | { kind: 'again' }
  | { kind: 'eof' }
  | { kind: 'data'; byte: number }
  | { kind: 'fd'; byte: number; fd: number }
  | { kind: 'bad'; why: string };

interface Addon {
  recvFirst(fd: number): First;
}

/** The byte that comes with a handed-over connection. */
const HANDED_OVER = 'F'.charCodeAt(0);
/** A connection that says nothing for this long is dropped (the relay sends its first byte as it connects). */
const FIRST_BYTE_WAIT_MS = 10_000;
/** Waits between tries while the first byte has not come: from the next turn of the loop up to 20 ms. */
const RETRY_MS = [0, 0, 1, 2, 5, 10, 20];

let addon: Addon | null | undefined;

function loadAddon(): Addon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (process.env.WARDEN_FD_PASSING === 'off') return addon;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    const candidate = join(dir, 'out', 'native', 'fd-intake.node');
    if (!existsSync(candidate)) continue;
    try {
      addon = createRequire(import.meta.url)(candidate) as Addon;
    } catch (err) {
      process.stderr.write(`warden: egress fd-intake addon not loaded (${(err as Error).message}); relays will carry bytes themselves\n`);
    }
    break;
  }
  return addon;
}

/** Whether this process can take connections as descriptors (the addon is built). */
export function canTakeDescriptors(): boolean {
  return loadAddon() !== null;
}

/**
 * Whether relays are asked to hand connections over (--pass-fd): only on request, WARDEN_EGRESS_PASS_FD=1.
 * Off by default because a handed-over socket shares its open file description with the sandbox: a
 * program that keeps a copy can clear O_NONBLOCK on it, and the next read or write this process
 * makes on it blocks its whole event loop (found by attacking it; the fix is to touch such a socket
 * only from a process or thread of its own, which is not built yet).
 */
export function handOverConnections(): boolean {
  return process.env.WARDEN_EGRESS_PASS_FD === '1' && canTakeDescriptors();
}

type Handle = { fd?: number };
const fdOf = (s: Socket) => (s as unknown as { _handle?: Handle })._handle?.fd;

/**
 * Reads the first byte of a connection accepted with pauseOnConnect and gives the stream to serve (left paused):
 * the handed-over TCP socket, or the connection itself with its first byte put back; null when it
 * ended, sent something that is not a connection, or said nothing in time (it is destroyed then).
 */
export function takeConnection(unix: Socket, onBad: (why: string) => void = () => undefined): Promise<Socket | null> {
  const intake = loadAddon();
  const fd = fdOf(unix);
  if (!intake || typeof fd !== 'number') return Promise.resolve(unix);
  const deadline = Date.now() + FIRST_BYTE_WAIT_MS;
  return new Promise((resolve) => {
    const drop = (why: string | null) => {
      if (why) onBad(why);
      unix.destroy();
      resolve(null);
    };
    const attempt = (tries: number) => {
      if (unix.destroyed) return resolve(null);
      const first = intake.recvFirst(fd);
      switch (first.kind) {
        case 'again':
          if (Date.now() > deadline) return drop('nothing was sent on the connection');
          return void setTimeout(() => attempt(tries + 1), RETRY_MS[Math.min(tries, RETRY_MS.length - 1)]);
        case 'eof':
          return drop(null);
        case 'bad':
          return drop(first.why);
        case 'data':
          unix.unshift(Buffer.of(first.byte)); // read on by whoever serves it (readHead resumes it)
          return resolve(unix);
        case 'fd': {
          unix.destroy();
          if (first.byte !== HANDED_OVER) {
            new Socket({ fd: first.fd }).destroy();
            onBad(`a descriptor came with the byte ${first.byte}, not 'F'`);
            return resolve(null);
          }
          return resolve(new Socket({ fd: first.fd, readable: true, writable: true, allowHalfOpen: true }));
        }
      }
    };
    attempt(0);
  });
}
