// The browser UI served by `warden serve`: the built renderer over HTTP and the same typed
// contract as Electron's IPC over a WebSocket (one UiSession per socket). The server calls
// registerWebShell once, after its own auth and Host/Origin checks are installed; the web shell
// checks Host and Origin again itself and authenticates with its own session cookie.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AddressInfo } from 'node:net';
import fastifyWebsocket from '@fastify/websocket';
import type { ServerDeps } from '../server-deps.js';
import type { EventMessage } from '../../../shared/contracts/events.js';
import {
  FRAME_TERMINAL_OUTPUT,
  LOGIN_PATH,
  LOGOUT_PATH,
  TERMINAL_FRAME_HEAD,
  WS_PATH,
  WS_UNAUTHORIZED,
  type ShellMessage,
} from '../../../shared/contracts/web-shell.js';
import { RENDERER_SECURITY_HEADERS } from '../../ui-door/csp.js';
import { fixedEngine } from '../../ui-door/engine-source.js';
import { hostsOfAddress, hostAllowed, originAllowed } from './origin-check.js';
import { WebShellLogin, sessionCookie, uiToken } from './login.js';
import { findRendererDir, loadRendererFiles, type RendererFile } from './renderer-files.js';
import { StatsHub } from '../../ui-door/stats-hub.js';
import { statsHistoryFile } from '../../engine/stats-history/history-store.js';
import { UiSession, type FlowControl } from '../../ui-door/ui-session.js';

const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
/** A browser that stops reading (a frozen tab) is cut off rather than buffered without end. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Terminal output pauses above this backlog on the socket and resumes below the low mark. */
const CONGESTED_BYTES = 4 * 1024 * 1024;
const DRAINED_BYTES = 512 * 1024;
const DRAIN_POLL_MS = 10;
const MAX_QUEUED_EVENTS = 5000;
/** A terminal output frame (the layout is shared/contracts/web-shell.ts). */
export function terminalOutputFrame(id: string, data: Buffer): Buffer {
  const head = TERMINAL_FRAME_HEAD + id.length;
  const frame = Buffer.allocUnsafe(head + data.length);
  frame[0] = FRAME_TERMINAL_OUTPUT;
  frame[1] = id.length;
  frame.write(id, TERMINAL_FRAME_HEAD, 'latin1');
  data.copy(frame, head);
  return frame;
}

/** Routes the server's own token auth must let through: the web shell authenticates them itself. */
export const WEB_SHELL_ROUTE_CONFIG = { webShell: true } as const;

/** What the handler uses of ws's WebSocket (its types are not installed). */
interface ShellSocket {
  readonly OPEN: number;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | Buffer): void;
  close(code: number, reason: string): void;
  on(event: 'message', fn: (raw: Buffer, isBinary: boolean) => void): void;
  on(event: 'close', fn: () => void): void;
}

/** Backpressure from ws's send buffer (ws has no drain event of its own, so it is polled). */
function socketFlow(socket: ShellSocket): FlowControl {
  return {
    congested: () => socket.bufferedAmount > CONGESTED_BYTES,
    whenDrained: (fn) => {
      const timer = setInterval(() => {
        if (socket.readyState === socket.OPEN && socket.bufferedAmount > DRAINED_BYTES) return;
        clearInterval(timer);
        fn();
      }, DRAIN_POLL_MS);
    },
  };
}

export interface WebShellHandle {
  /** A one-time login link for this server's address (valid 15 minutes, once). */
  loginUrl(): string | null;
}

const handles = new WeakMap<FastifyInstance, WebShellHandle>();

/** The handle of a registered web shell, for `warden serve` / `npm start` to print the link. */
export function webShellOf(app: FastifyInstance): WebShellHandle | undefined {
  return handles.get(app);
}

export async function registerWebShell(app: FastifyInstance, deps: ServerDeps): Promise<void> {
  const dir = findRendererDir();
  const files: Map<string, RendererFile> = dir ? loadRendererFiles(dir) : new Map();
  const login = new WebShellLogin(uiToken(deps.home));
  const source = fixedEngine(deps.engine, deps.gateway, deps.ledgerReader);
  const hub = new StatsHub(source, statsHistoryFile(deps.home));
  let hosts = new Set<string>();

  const handle: WebShellHandle = {
    loginUrl: () => {
      const first = [...hosts][0];
      return first ? `http://${first}/#login=${login.issueCode()}` : null;
    },
  };
  handles.set(app, handle);

  if (!app.hasDecorator('websocketServer')) await app.register(fastifyWebsocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });

  app.addHook('onListen', async () => {
    hosts = hostsOfAddress(app.server.address() as AddressInfo | null);
    const url = handle.loginUrl();
    if (url && process.env.WARDEN_WEB_SHELL_QUIET !== '1') process.stdout.write(`warden: control panel at ${url}  (one-time login link)\n`);
  });
  app.addHook('onClose', async () => hub.close());

  /** Host and Origin for every web-shell route; the answer is the error, or null to go on. */
  const refuse = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const host = request.headers.host;
    if (!hostAllowed(hosts, host) || !originAllowed(host, request.headers.origin)) {
      void reply.code(403).send({ error: { code: 'E_UNAUTHORIZED', message: 'this address or origin may not use the control panel' } });
      return true;
    }
    return false;
  };

  const serve = (path: string, cache: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (refuse(request, reply)) return reply;
    const file = files.get(path);
    if (!file) {
      return reply
        .code(dir ? 404 : 503)
        .type('text/plain; charset=utf-8')
        .send(dir ? 'not found' : 'The control panel is not built: run `npm run build` in the Warden folder.');
    }
    return reply.headers(RENDERER_SECURITY_HEADERS).header('cache-control', cache).type(file.type).send(file.body);
  };

  app.get('/', { config: WEB_SHELL_ROUTE_CONFIG }, serve('/index.html', 'no-store'));
  app.get('/index.html', { config: WEB_SHELL_ROUTE_CONFIG }, serve('/index.html', 'no-store'));
  app.get<{ Params: { '*': string } }>('/assets/*', { config: WEB_SHELL_ROUTE_CONFIG }, async (request, reply) =>
    serve(`/assets/${request.params['*']}`, 'public, max-age=31536000, immutable')(request, reply),
  );

  app.post<{ Body: { code?: unknown } }>(LOGIN_PATH, { config: WEB_SHELL_ROUTE_CONFIG, bodyLimit: 4096 }, async (request, reply) => {
    if (refuse(request, reply)) return reply;
    const session = login.exchange(request.body?.code);
    if (!session)
      return reply.code(401).send({
        error: {
          code: 'E_UNAUTHORIZED',
          message: 'that login code is not valid (codes work once, for 15 minutes)',
          hint: 'run `warden serve` again for a new link, or use the token in WARDEN_HOME/ui-token',
        },
      });
    return reply.code(204).header('set-cookie', sessionCookie(session)).header('cache-control', 'no-store').send();
  });

  app.post(LOGOUT_PATH, { config: WEB_SHELL_ROUTE_CONFIG }, async (request, reply) => {
    if (refuse(request, reply)) return reply;
    login.end(request.headers.cookie);
    return reply
      .code(204)
      .header('set-cookie', sessionCookie('gone').replace(/Max-Age=\d+/, 'Max-Age=0'))
      .send();
  });

  app.get(WS_PATH, { websocket: true, config: WEB_SHELL_ROUTE_CONFIG }, (ws, request) => {
    const socket = ws as unknown as ShellSocket;
    const host = request.headers.host;
    // A browser always sends Origin on a WebSocket: it must be this page's.
    if (!hostAllowed(hosts, host) || !request.headers.origin || !originAllowed(host, request.headers.origin)) {
      socket.close(1008, 'origin not allowed');
      return;
    }
    if (!login.check(request.headers.cookie)) {
      socket.close(WS_UNAUTHORIZED, 'login required');
      return;
    }
    let ready = false;
    // Events and terminal frames wait together until the page is listening, in the order they came.
    const queue: Array<EventMessage | Buffer> = [];
    const sendRaw = (data: string | Buffer) => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
        socket.close(1013, 'the page is not keeping up');
        return;
      }
      socket.send(data);
    };
    const send = (value: ShellMessage) => sendRaw(JSON.stringify(value));
    const push = (item: EventMessage | Buffer) => {
      if (!ready) {
        if (queue.length < MAX_QUEUED_EVENTS) queue.push(item);
      } else if (Buffer.isBuffer(item)) sendRaw(item);
      else send({ t: 'event', message: item });
    };
    const session = new UiSession(
      source,
      hub,
      push,
      'user (web shell)',
      () => deps.gateway.approvals.watch(),
      socketFlow(socket),
      (id, data) => push(terminalOutputFrame(id, data)),
    );
    socket.on('message', (raw, isBinary) => {
      if (isBinary) return;
      // A ShellRequest, once its fields are checked: untrusted until then.
      let msg: { [K in 't' | 'id' | 'method' | 'params']?: unknown };
      try {
        msg = JSON.parse(raw.toString()) as typeof msg;
      } catch {
        return;
      }
      if (msg.t === 'ready' && !ready) {
        ready = true;
        for (const item of queue.splice(0)) push(item);
      } else if (msg.t === 'call' && typeof msg.id === 'number') {
        const id = msg.id;
        void session.invoke(msg.method, msg.params).then((envelope) => send({ t: 'result', id, envelope }));
      }
    });
    socket.on('close', () => session.dispose());
  });
}
