// Instruments the control panel from the outside, before its own scripts run: the app's WebSocket
// is wrapped to timestamp terminal input sent and terminal output received, key presses are
// timestamped, and the terminal's rendered rows (xterm's DOM renderer) are watched for text.
// All times are the page's performance.now(). Nothing in the product is changed.
import type { BrowserPage } from './cdp.js';

export interface KeyTiming {
  /** keydown dispatched in the page */
  keyAt: number;
  /** the app sent terminal.input on its WebSocket */
  sentAt: number;
  /** the first terminal output message after it arrived */
  dataAt: number;
  /** the character was in xterm's rendered rows */
  seenAt: number;
}

export interface TextTiming {
  keyAt: number;
  /** when the text was on screen, or when the socket closed before it was (closedCode set) */
  seenAt: number;
  closedCode?: number;
  /** the last terminal output message before the text was seen */
  dataAt: number;
  /** characters of terminal output messages (frame headers or JSON included) since the key press */
  chars: number;
}

export interface FrameSample {
  /** rAF timestamp deltas, ms */
  deltas: number[];
  /** long animation frames (> 50 ms): duration and blocking duration */
  loaf: Array<{ duration: number; blocking: number }>;
  statsSamples: number;
}

/** What the probe puts on window.__bench (typed by hand: bench/ has no DOM library). */
export interface Probe {
  statsSamples: number;
  closes: number[];
  /** the app's WebSocket is open */
  linkOpen: boolean;
  waitText(text: string, timeoutMs: number): Promise<TextTiming | null>;
  count(ch: string): number;
  armKey(ch: string, timeoutMs: number): void;
  keyResult: Promise<KeyTiming | null>;
  ping(id: number): Promise<number>;
  frames(ms: number): Promise<FrameSample>;
}

type El = { textContent: string | null };
type PageGlobals = {
  __bench: Probe;
  WebSocket: new (
    url: string | URL,
    protocols?: string | string[],
  ) => { send(data: string): void; addEventListener(type: string, fn: (e: { data: unknown; code?: number }) => void): void };
  document: { querySelector(sel: string): El | null };
  addEventListener(type: string, fn: () => void, capture: boolean): void;
  MutationObserver: new (fn: () => void) => { observe(el: unknown, opts: object): void; disconnect(): void };
  PerformanceObserver: new (fn: (list: { getEntries(): Array<{ duration: number; blockingDuration?: number }> }) => void) => {
    observe(opts: object): void;
    disconnect(): void;
  };
  requestAnimationFrame(fn: (t: number) => void): number;
  setTimeout(fn: () => void, ms: number): number;
  clearTimeout(id: number): void;
};

function probe(): void {
  const g = globalThis as unknown as PageGlobals;
  let keyAt = 0;
  let sentAt = 0;
  let dataAt = 0;
  let dataChars = 0;
  let socket: { send(data: string): void } | null = null;
  const pongs = new Map<number, (at: number) => void>();
  const onClose = new Set<(code: number) => void>();
  const Native = g.WebSocket;
  const track = (s: { send(data: string): void }) => (socket = s);

  class Probed extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      track(this);
      // Added before the app sets onmessage, so it runs first: the arrival time is before any parsing.
      this.addEventListener('message', (e) => {
        // Terminal output comes as binary frames (first byte 1), older builds sent JSON events.
        if (e.data instanceof ArrayBuffer) {
          if (new Uint8Array(e.data, 0, 1)[0] === 1) {
            dataAt = performance.now();
            dataChars += e.data.byteLength;
          }
          return;
        }
        const text = typeof e.data === 'string' ? e.data : '';
        if (text.includes('"terminal.data"')) {
          dataAt = performance.now();
          dataChars += text.length;
        } else if (text.includes('"stats.sample"')) b.statsSamples += 1;
        else if (text.startsWith('{"t":"result","id":')) {
          const id = Number(text.slice(19, text.indexOf(',', 19)));
          pongs.get(id)?.(performance.now());
        }
      });
      this.addEventListener('open', () => (b.linkOpen = true));
      this.addEventListener('close', (e) => {
        b.linkOpen = false;
        b.closes.push(e.code ?? 0);
        for (const fn of onClose) fn(e.code ?? 0);
      });
    }
    override send(data: string): void {
      if (data.includes('"terminal.input"')) sentAt = performance.now();
      super.send(data);
    }
  }
  g.WebSocket = Probed;
  g.addEventListener('keydown', () => (keyAt = performance.now()), true);

  const rowsText = () => g.document.querySelector('[data-testid="terminal"] .xterm-rows')?.textContent ?? '';
  const host = () => g.document.querySelector('[data-testid="terminal"]');
  const count = (ch: string) => rowsText().split(ch).length - 1;

  /** Resolves when check() holds, tested on every change of the terminal's DOM. */
  const whenRows = <T>(check: () => T | null, timeoutMs: number, ifClosed: (code: number) => T | null = () => null) =>
    new Promise<T | null>((resolve) => {
      const observer = new g.MutationObserver(() => {
        const value = check();
        if (value !== null) finish(value);
      });
      const timer = g.setTimeout(() => finish(null), timeoutMs);
      // The socket going away ends the wait at once: what was waited for cannot come any more.
      const closed = (code: number) => finish(ifClosed(code));
      onClose.add(closed);
      const finish = (value: T | null) => {
        onClose.delete(closed);
        observer.disconnect();
        g.clearTimeout(timer);
        resolve(value);
      };
      observer.observe(host(), { childList: true, subtree: true, characterData: true });
    });

  const b: Probe = {
    statsSamples: 0,
    closes: [],
    linkOpen: false,
    count,
    waitText: (text, timeoutMs) => {
      dataChars = 0;
      return whenRows(
        () => (rowsText().includes(text) ? { keyAt, seenAt: performance.now(), dataAt, chars: dataChars } : null),
        timeoutMs,
        (code) => ({ keyAt, seenAt: performance.now(), dataAt, chars: dataChars, closedCode: code }),
      );
    },
    keyResult: Promise.resolve(null),
    armKey: (ch, timeoutMs) => {
      const before = count(ch);
      const armedAt = performance.now();
      b.keyResult = whenRows(
        () => (count(ch) > before && keyAt > armedAt ? { keyAt, sentAt, dataAt, seenAt: performance.now() } : null),
        timeoutMs,
      );
    },
    // An unknown method: the server answers E_BAD_INPUT at once, so this is the socket's own round trip.
    ping: (id) =>
      new Promise((resolve) => {
        const started = performance.now();
        pongs.set(id, (at) => {
          pongs.delete(id);
          resolve(at - started);
        });
        socket?.send(JSON.stringify({ t: 'call', id, method: 'bench.ping', params: {} }));
      }),
    frames: (ms) =>
      new Promise((resolve) => {
        const deltas: number[] = [];
        const loaf: FrameSample['loaf'] = [];
        const statsBefore = b.statsSamples;
        const observer = new g.PerformanceObserver((list) => {
          for (const e of list.getEntries()) loaf.push({ duration: e.duration, blocking: e.blockingDuration ?? 0 });
        });
        observer.observe({ type: 'long-animation-frame' });
        let last = -1;
        let end = -1;
        const tick = (t: number) => {
          if (last >= 0) deltas.push(t - last);
          last = t;
          if (end < 0) end = t + ms;
          if (t < end) g.requestAnimationFrame(tick);
          else {
            observer.disconnect();
            resolve({ deltas, loaf, statsSamples: b.statsSamples - statsBefore });
          }
        };
        g.requestAnimationFrame(tick);
      }),
  };
  g.__bench = b;
}

export async function installProbe(page: BrowserPage): Promise<void> {
  // tsx keeps function names with a __name helper the page does not have (evaluated functions too).
  await page.addInitScript(`globalThis.__name ??= (f) => f;\n(${probe.toString()})();`);
}

/** The probe's calls from Node. */
export function probeOf(page: BrowserPage) {
  type W = { __bench: Probe };
  return {
    waitText: (text: string, timeoutMs: number) =>
      page.evaluate(([t, ms]) => (globalThis as unknown as W).__bench.waitText(t, ms), [text, timeoutMs] as const),
    count: (ch: string) => page.evaluate((c) => (globalThis as unknown as W).__bench.count(c), ch),
    armKey: (ch: string, timeoutMs: number) =>
      page.evaluate(([c, ms]) => (globalThis as unknown as W).__bench.armKey(c, ms), [ch, timeoutMs] as const),
    keyResult: () => page.evaluate(() => (globalThis as unknown as W).__bench.keyResult, null),
    ping: (id: number) => page.evaluate((i) => (globalThis as unknown as W).__bench.ping(i), id),
    frames: (ms: number) => page.evaluate((m) => (globalThis as unknown as W).__bench.frames(m), ms),
    closes: () => page.evaluate(() => (globalThis as unknown as W).__bench.closes, null),
    linkOpen: () => page.evaluate(() => (globalThis as unknown as W).__bench.linkOpen, null),
  };
}
