// Debian's Chromium driven over the DevTools protocol directly, with only the domains the bench
// needs. Not Playwright: it enables the Network domain on every page, so Chromium copies each
// WebSocket frame's payload to the driver. Measured once here, alternating 3 × 50 MiB: 9.9–11.3 MB/s
// of terminal output with Playwright against 12.6–15.7 MB/s with this driver, the browser's CPU
// 91–93 % against 75–86 % of a core: a cost of the instrument, not of the product.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../e2e/fixtures/chromium.js';

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
};

export interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string };
}

/** The little of the DOM the bench touches (bench/ has no DOM library). */
interface DomElement {
  innerText: string;
  getAttribute(name: string): string | null;
  click(): void;
  focus(): void;
}
/** Functions sent to the page are serialized: they name the document through this cast, not a helper. */
type G = { document: { querySelector(s: string): DomElement | null; querySelectorAll(s: string): ArrayLike<DomElement> } };

const KEYS: Record<string, { key: string; code: string; keyCode: number; text?: string; modifiers?: number }> = {
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  'Control+U': { key: 'u', code: 'KeyU', keyCode: 85, modifiers: 2 },
  q: { key: 'q', code: 'KeyQ', keyCode: 81, text: 'q' },
};

export class BrowserPage {
  private nextId = 1;
  private readonly pending = new Map<number, (m: Message) => void>();
  private readonly listeners = new Set<(m: Message) => void>();
  private sessionId = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const out = child.stdio[4] as Readable;
    let buffered = '';
    out.on('data', (chunk: Buffer) => {
      const parts = (buffered + chunk.toString('utf8')).split('\0');
      buffered = parts.pop()!;
      for (const part of parts) this.receive(JSON.parse(part) as Message);
    });
    child.once('exit', (code) => {
      for (const fn of this.pending.values()) fn({ error: { message: `chromium exited (${code})` } });
      this.pending.clear();
    });
  }

  /** Launches headless Chromium with one 1280×800 page. */
  static async launch(): Promise<BrowserPage> {
    const profile = mkdtempSync(join(tmpdir(), 'warden-bench-ui-chromium-'));
    const args = [
      ...CHROMIUM_ARGS,
      '--headless',
      '--remote-debugging-pipe',
      `--user-data-dir=${profile}`,
      '--window-size=1280,800',
      '--hide-scrollbars',
      '--mute-audio',
      '--disable-dev-shm-usage',
      '--disable-background-timer-throttling',
      '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows',
      '--no-default-browser-check',
      'about:blank',
    ];
    const child = spawn(CHROMIUM_PATH, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
    const browser = new BrowserPage(child, profile);
    const { targetId } = (await browser.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    browser.sessionId = ((await browser.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string }).sessionId;
    await browser.send('Page.enable', {}, true);
    await browser.send('Runtime.enable', {}, true);
    await browser.send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 800, deviceScaleFactor: 1, mobile: false }, true);
    // Headless has no window focus of its own; the page must believe it has it, as a person's would.
    await browser.send('Emulation.setFocusEmulationEnabled', { enabled: true }, true);
    return browser;
  }

  private receive(m: Message): void {
    if (m.id !== undefined) {
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    } else for (const fn of this.listeners) fn(m);
  }

  send(method: string, params: object = {}, onPage = false): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const message = { id, method, params, ...(onPage ? { sessionId: this.sessionId } : {}) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result ?? {})));
      (this.child.stdio[3] as Writable).write(`${JSON.stringify(message)}\0`);
    });
  }

  on(fn: (m: Message) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** Console messages of the page, as text. */
  onConsole(fn: (text: string) => void): () => void {
    return this.on((m) => {
      if (m.method !== 'Runtime.consoleAPICalled') return;
      const args = (m.params?.args ?? []) as Array<{ value?: unknown }>;
      fn(args.map((a) => String(a.value ?? '')).join(' '));
    });
  }

  /** A script run in every document before the page's own. */
  async addInitScript(source: string): Promise<void> {
    await this.send('Page.addScriptToEvaluateOnNewDocument', { source }, true);
  }

  async goto(url: string): Promise<void> {
    await this.send('Page.navigate', { url }, true);
  }

  /** Runs fn(arg) in the page (outside its CSP, as DevTools does) and returns its JSON result. */
  async evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
    const r = (await this.send(
      'Runtime.evaluate',
      { expression: `(${fn.toString()})(${JSON.stringify(arg)})`, awaitPromise: true, returnByValue: true },
      true,
    )) as {
      result: { value?: R };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value as R;
  }

  /** Polls check() until it holds. */
  async waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** innerText of every element matching the selector. */
  texts(selector: string): Promise<string[]> {
    return this.evaluate((sel) => Array.from((globalThis as unknown as G).document.querySelectorAll(sel), (el) => el.innerText), selector);
  }

  async text(selector: string): Promise<string> {
    return (await this.texts(selector))[0] ?? '';
  }

  attribute(selector: string, name: string): Promise<string | null> {
    return this.evaluate(([sel, n]) => (globalThis as unknown as G).document.querySelector(sel)?.getAttribute(n) ?? null, [
      selector,
      name,
    ] as const);
  }

  async click(selector: string): Promise<void> {
    const found = await this.evaluate((sel) => {
      const el = (globalThis as unknown as G).document.querySelector(sel);
      el?.click();
      return !!el;
    }, selector);
    if (!found) throw new Error(`nothing to click at ${selector}`);
  }

  async focus(selector: string): Promise<void> {
    await this.evaluate((sel) => (globalThis as unknown as G).document.querySelector(sel)?.focus(), selector);
  }

  /** A key press as a person's: keydown (with its text) and keyup, to the focused element. */
  async press(name: keyof typeof KEYS): Promise<void> {
    const k = KEYS[name]!;
    const base = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, modifiers: k.modifiers ?? 0 };
    await this.send(
      'Input.dispatchKeyEvent',
      { type: k.text ? 'keyDown' : 'rawKeyDown', ...base, ...(k.text ? { text: k.text, unmodifiedText: k.text } : {}) },
      true,
    );
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...base }, true);
  }

  /** Text as typed by an input method: one input event, no key events. */
  async insertText(text: string): Promise<void> {
    await this.send('Input.insertText', { text }, true);
  }

  /** Chromium trace of the given categories between start and the returned stop. */
  async trace(categories: string[]): Promise<() => Promise<TraceEvent[]>> {
    const events: TraceEvent[] = [];
    let complete: () => void = () => undefined;
    const done = new Promise<void>((r) => (complete = r));
    const off = this.on((m) => {
      if (m.method === 'Tracing.dataCollected') events.push(...(m.params!.value as TraceEvent[]));
      else if (m.method === 'Tracing.tracingComplete') complete();
    });
    await this.send('Tracing.start', { traceConfig: { includedCategories: categories }, transferMode: 'ReportEvents' });
    return async () => {
      await this.send('Tracing.end');
      await done;
      off();
      return events;
    };
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      await this.send('Browser.close').catch(() => undefined);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}
