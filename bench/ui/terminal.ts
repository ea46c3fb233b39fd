// Terminal figures: output throughput from Enter to the end marker rendered by xterm, and
// keystroke-to-echo latency, each with a baseline below the web shell in the same run.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanConnection } from '../../electron/engine/podman/connection.js';
import { openTerminal, type TerminalSession } from '../../electron/engine/podman/terminal-session.js';
import { probeOf, type KeyTiming } from './page-probe.js';
import type { BrowserPage } from './cdp.js';
import { localPodmanEnv } from './stack.js';

const PROMPT = /[#$] $/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes `base64` writes for `head -c {mib}M`: 76-character lines, each with its newline. */
export function base64Bytes(mib: number): number {
  const chars = 4 * Math.ceil((mib * 1024 * 1024) / 3);
  return chars + Math.ceil(chars / 76);
}

export const producer = (mib: number) => `head -c ${mib}M /dev/urandom | base64`;

const ROWS = '[data-testid="terminal"] .xterm-rows';
const INPUT = '[data-testid="terminal"] .xterm-helper-textarea';

/** Opens a sandbox's detail view and waits for its shell prompt (after a reconnect, a new shell). */
export async function openDetail(page: BrowserPage, name: string): Promise<void> {
  const probe = probeOf(page);
  for (let attempt = 1; ; attempt++) {
    await page.waitFor('the control panel connected', () => probe.linkOpen());
    await page.click('[data-testid="nav-sandboxes"]');
    await page.waitFor(
      `the row of ${name}`,
      async () => (await page.texts(`[data-testid="sandbox-row"][data-name="${name}"]`)).length === 1,
    );
    await page.click(`[data-testid="sandbox-row"][data-name="${name}"] .name-text`);
    let status = '';
    const connected = await page
      .waitFor('the terminal', async () => (status = await page.text('[data-testid="terminal-status"]')) === 'connected', 20_000)
      .then(
        () => true,
        () => false,
      );
    if (connected) break;
    // A terminal opened while the socket was still coming back fails: go back and open another.
    if (attempt === 3) throw new Error(`the terminal of ${name} did not connect: "${status}"`);
    console.log(`  terminal of ${name} said "${status}"; opening it again`);
  }
  await waitRows(page, (text) => PROMPT.test(text.trimEnd() + ' '), 15_000);
}

async function waitRows(page: BrowserPage, check: (text: string) => boolean, timeoutMs: number): Promise<void> {
  let text = '';
  await page
    .waitFor('the terminal', async () => check((text = await page.text(ROWS))), timeoutMs)
    .catch(() => Promise.reject(new Error(`terminal never showed what was expected; it shows:\n${text.slice(-400)}`)));
}

async function typeLine(page: BrowserPage, text: string): Promise<void> {
  await page.focus(INPUT);
  await page.insertText(text);
}

export interface PageThroughput {
  ms: number;
  /** bytes of terminal output frames the page received during the run (headers included) */
  wsChars: number;
  /** ms from the last terminal output frame to the marker on screen: xterm catching up */
  renderTailMs: number;
  discarded: boolean;
  /** the WebSocket closed before the marker came (1013: the server found the page not keeping up); ms is then the time until the close */
  closedCode?: number;
}

/** Runs the producer in the page's terminal; timed from the Enter keydown to the marker rendered. */
export async function pageThroughput(page: BrowserPage, mib: number, run: number, timeoutMs: number): Promise<PageThroughput | null> {
  const probe = probeOf(page);
  let discarded = false;
  const off = page.onConsole((text) => {
    if (/discarded|flow control/i.test(text)) discarded = true;
  });
  try {
    await typeLine(page, 'clear');
    await page.press('Enter');
    await waitRows(page, (t) => t.trim().split('\n').length === 1, 10_000);
    await typeLine(page, `${producer(mib)}; echo T${run}_$((6*7))_END`);
    const done = probe.waitText(`T${run}_42_END`, timeoutMs);
    await page.press('Enter');
    const t = await done;
    if (!t) return null;
    return {
      ms: t.seenAt - t.keyAt,
      wsChars: t.chars,
      renderTailMs: t.seenAt - t.dataAt,
      discarded,
      ...(t.closedCode !== undefined ? { closedCode: t.closedCode } : {}),
    };
  } finally {
    off();
  }
}

/** The same producer through `podman exec NAME sh -c … > /dev/null`: the raw engine speed. */
export function podmanExecMs(name: string, mib: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('podman', ['exec', name, 'sh', '-c', producer(mib)], {
      env: localPodmanEnv(),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`podman exec exited ${code}`))));
  });
}

/** The same with a TTY, as a terminal gets it: `podman exec -t` under script(1), which gives it a pty. */
export function podmanExecTtyMs(name: string, mib: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const cmd = `podman exec -t ${name} sh -c '${producer(mib)}'`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: localPodmanEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`script/podman exec -t exited ${code}`)),
    );
  });
}

/** A TTY shell through Warden's own engine code (the session the server opens), without server or browser. */
export class EngineShell {
  private constructor(
    private readonly conn: PodmanConnection,
    private readonly session: TerminalSession,
    private readonly home: string,
  ) {
    session.onData((c) => {
      this.bytes += c.length;
      this.tail = (this.tail + c.toString('latin1')).slice(-256);
      this.waiter?.();
    });
  }

  private bytes = 0;
  private tail = '';
  private waiter: (() => void) | null = null;

  static async open(socketPath: string, containerId: string): Promise<EngineShell> {
    const home = mkdtempSync(join(tmpdir(), 'warden-bench-ui-engine-'));
    const conn = await PodmanConnection.open({ home, socketPath, startService: false });
    const session = await openTerminal(conn, containerId, { size: { cols: 120, rows: 40 } });
    const shell = new EngineShell(conn, session, home);
    // A shell started under load may print its first prompt before the stream is read: ask again.
    const nudge = setTimeout(() => session.write('\r'), 3_000);
    try {
      await shell.until(() => PROMPT.test(shell.tail), 30_000);
    } catch (err) {
      shell.close();
      throw err;
    } finally {
      clearTimeout(nudge);
    }
    return shell;
  }

  private until(check: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (check()) return resolve();
      const timer = setTimeout(() => reject(new Error(`engine shell: timed out; last output ${JSON.stringify(this.tail)}`)), timeoutMs);
      this.waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiter = null;
        resolve();
      };
    });
  }

  /** ms from writing the command line to its end marker read back. */
  async throughputMs(mib: number, run: number): Promise<number> {
    const started = performance.now();
    this.session.write(`${producer(mib)}; echo E${run}_$((6*7))_END\r`);
    await this.until(() => this.tail.includes(`E${run}_42_END`), 300_000);
    return performance.now() - started;
  }

  /** ms from writing one character to its echo, n times; the line is cleared every 25. */
  async echoMs(n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      if (i % 25 === 0) {
        this.session.write('\x15');
        await sleep(100);
      }
      const before = this.bytes;
      const started = performance.now();
      this.session.write('q');
      await this.until(() => this.bytes > before && this.tail.endsWith('q'), 5_000);
      out.push(performance.now() - started);
      await sleep(20 + Math.random() * 40);
    }
    this.session.write('\x15');
    return out;
  }

  close(): void {
    this.session.close();
    this.conn.close();
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** Keystroke to echo in the page: keydown dispatched to the character in xterm's rendered rows. */
export async function pageKeystrokes(page: BrowserPage, n: number): Promise<KeyTiming[]> {
  const probe = probeOf(page);
  await typeLine(page, 'clear');
  await page.press('Enter');
  await waitRows(page, (t) => t.trim().split('\n').length === 1, 10_000);
  const out: KeyTiming[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 25 === 0 && i > 0) {
      await page.press('Control+U');
      await waitRows(page, (t) => !t.includes('q'), 5_000);
    }
    await probe.armKey('q', 5_000);
    await page.press('q');
    const timing = await probe.keyResult();
    if (!timing) throw new Error(`keystroke ${i}: no echo within 5 s`);
    out.push(timing);
    await sleep(20 + Math.random() * 40);
  }
  await page.press('Control+U');
  return out;
}

/** Round trips of the web shell's WebSocket alone (an unknown method, answered at once). */
export async function wsRoundTrips(page: BrowserPage, n: number): Promise<number[]> {
  const probe = probeOf(page);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await probe.ping(1_000_000 + i));
    await sleep(10);
  }
  return out;
}
