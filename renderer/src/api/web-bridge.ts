// The web shell's side of the contract: one WebSocket to the same origin that served the page,
// authenticated by a session cookie obtained once from a login code (never kept in the URL).
// Reconnects with backoff; the app takes a fresh snapshot on every (re)connect.
import type { EventMessage } from '../../../shared/contracts/events.js';
import type { Envelope, ErrorInfo } from '../../../shared/errors.js';
import type { UiMethodRequest } from '../../../shared/contracts/methods.js';
import type { LinkState, WardenBridge } from '../../../shared/contracts/bridge.js';
import {
  LOGIN_PATH,
  WS_PATH,
  WS_UNAUTHORIZED,
  readTerminalFrame,
  type ShellMessage,
  type ShellRequest,
} from '../../../shared/contracts/web-shell.js';

const lost: ErrorInfo = {
  code: 'E_ENGINE_UNREACHABLE',
  message: 'the connection to Warden was lost',
  hint: 'it reconnects by itself; try again in a moment',
};

/** Exchanges a login code (or the UI token) for a session cookie. */
export async function login(code: string): Promise<ErrorInfo | null> {
  const res = await fetch(LOGIN_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
    credentials: 'same-origin',
  });
  if (res.ok) return null;
  try {
    const body = (await res.json()) as { error?: ErrorInfo };
    return body.error ?? { code: 'E_UNAUTHORIZED', message: `login failed (${res.status})` };
  } catch {
    return { code: 'E_UNAUTHORIZED', message: `login failed (${res.status})` };
  }
}

/** Takes a one-time login code out of the address (#login=…) before anything else can read it. */
export function takeLoginCode(): string | null {
  const match = /(?:^#|&)login=([A-Za-z0-9_-]{16,128})/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return match[1]!;
}

export class WebBridge implements WardenBridge {
  readonly kind = 'web' as const;
  private socket: WebSocket | null = null;
  private state: LinkState = 'connecting';
  private nextId = 1;
  private readonly pending = new Map<number, (envelope: Envelope<unknown>) => void>();
  private readonly eventListeners = new Set<(message: EventMessage) => void>();
  private readonly linkListeners = new Set<(state: LinkState) => void>();
  private retryMs = 250;
  private retryTimer: number | null = null;
  private wantReady = false;
  /** One streaming UTF-8 decoder per terminal: a character split across frames is held until whole. */
  private readonly decoders = new Map<string, TextDecoder>();

  /** Opens the socket unless one is open or opening. */
  connect(): void {
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) return;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.setState('connecting');
    const url = new URL(WS_PATH, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.decoders.clear();
    socket.onopen = () => {
      this.retryMs = 250;
      this.setState('open');
      if (this.wantReady) socket.send(JSON.stringify({ t: 'ready' } satisfies ShellRequest));
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data === 'string') this.receive(ev.data);
      else if (ev.data instanceof ArrayBuffer) this.receiveFrame(ev.data);
    };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      this.socket = null;
      for (const resolve of this.pending.values()) resolve({ error: lost });
      this.pending.clear();
      if (ev.code === WS_UNAUTHORIZED) {
        this.setState('unauthorized');
        return;
      }
      this.setState('closed');
      this.retryTimer = window.setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(5000, this.retryMs * 2);
    };
  }

  private receive(text: string): void {
    let msg: ShellMessage;
    try {
      msg = JSON.parse(text) as ShellMessage;
    } catch {
      return;
    }
    if (msg.t === 'result') {
      const resolve = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      resolve?.(msg.envelope);
    } else if (msg.t === 'event') {
      if (msg.message.event === 'terminal.exit') this.endDecoder(msg.message.payload.id);
      this.emit(msg.message);
    }
  }

  /** Terminal output: the same `terminal.data` event as over IPC, its text decoded here. */
  private receiveFrame(buffer: ArrayBuffer): void {
    const frame = readTerminalFrame(new Uint8Array(buffer));
    if (!frame) return;
    const { id } = frame;
    let decoder = this.decoders.get(id);
    if (!decoder) this.decoders.set(id, (decoder = new TextDecoder()));
    const data = decoder.decode(frame.data, { stream: true });
    if (data) this.emit({ event: 'terminal.data', payload: { id, data } });
  }

  /** Whatever a terminal's decoder holds back goes out before its exit. */
  private endDecoder(id: string): void {
    const decoder = this.decoders.get(id);
    if (!decoder) return;
    this.decoders.delete(id);
    const rest = decoder.decode();
    if (rest) this.emit({ event: 'terminal.data', payload: { id, data: rest } });
  }

  private emit(message: EventMessage): void {
    for (const fn of this.eventListeners) fn(message);
  }

  private setState(state: LinkState): void {
    this.state = state;
    for (const fn of this.linkListeners) fn(state);
  }

  invoke: WardenBridge['invoke'] = (method, params) => {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.resolve({ error: lost });
    if (method === 'terminal.close') this.decoders.delete((params as UiMethodRequest<'terminal.close'>).id);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (envelope: Envelope<unknown>) => void);
      socket.send(JSON.stringify({ t: 'call', id, method, params } satisfies ShellRequest));
    });
  };

  subscribe(fn: (message: EventMessage) => void): () => void {
    this.eventListeners.add(fn);
    return () => void this.eventListeners.delete(fn);
  }

  onLink(fn: (state: LinkState) => void): () => void {
    this.linkListeners.add(fn);
    fn(this.state);
    return () => void this.linkListeners.delete(fn);
  }

  ready(): void {
    this.wantReady = true;
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ t: 'ready' } satisfies ShellRequest));
  }
}
