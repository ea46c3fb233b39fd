// A Podman socket that passes every request on to the real one, except those a spec wedges: they are
// held open and never answered, as Podman did for a gVisor sandbox flooded with connections (and for
// its whole list, which waits on every container). The HTTP level is where the hang was seen, so
// Warden's own code runs unchanged against it.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WedgeProxy {
  socketPath: string;
  /** Requests naming this container (id or name, in the path or a filter) are never answered. */
  wedge(ref: string): void;
  /** The list over every container (no id filter) is never answered. */
  wedgeWholeList(): void;
  /** Everything passes again (held requests stay held until their clients give up). */
  unwedge(): void;
  /** Requests held so far. */
  held(): number;
  close(): Promise<void>;
}

/** The socket behind CONTAINER_HOST (the integration suite's Podman service). */
export function suiteSocket(): string {
  const host = process.env.CONTAINER_HOST ?? '';
  if (!host.startsWith('unix://')) throw new Error('CONTAINER_HOST is not a unix socket: run this under the integration project');
  return host.slice('unix://'.length);
}

function isWholeList(url: string): boolean {
  return /\/containers\/json(\?|$)/.test(url) && !/"id"\s*:/.test(url);
}

export async function startWedgeProxy(upstream = suiteSocket()): Promise<WedgeProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-wedge-'));
  const socketPath = join(dir, 'podman.sock');
  const wedged = new Set<string>();
  let wholeList = false;
  const held = new Set<ServerResponse>();
  let heldCount = 0;

  const hangs = (req: IncomingMessage): boolean => {
    const url = decodeURIComponent(req.url ?? '');
    if (wholeList && isWholeList(url)) return true;
    return [...wedged].some((ref) => url.includes(ref));
  };

  const server = createServer((req, res) => {
    if (hangs(req)) {
      held.add(res);
      heldCount++;
      res.once('close', () => held.delete(res));
      req.resume();
      return;
    }
    const out = request({ socketPath: upstream, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      // Now, not with the first byte of the body: a stream that has nothing yet (Podman's events on a
      // quiet host) must still answer, or its client waits for ever (serve's start-up did).
      res.flushHeaders();
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.once('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    wedge: (ref) => wedged.add(ref),
    wedgeWholeList: () => (wholeList = true),
    unwedge: () => {
      wedged.clear();
      wholeList = false;
    },
    held: () => heldCount,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
