// An interactive shell in a sandbox. Output goes from the event bridge straight into xterm (never
// through React), paced and with lines that would scroll by unseen left out (paced-writer.ts,
// unseen-output.ts); the size follows the pane. Clipboard writes and links from the sandbox need a
// person: OSC 52 is not wired at all, links open only on a Ctrl/Cmd-click and only for http(s).
import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { toErrorInfo, type ErrorInfo } from '../../../../shared/errors.js';
import { useServices } from '../../services.js';
import { PacedWriter } from './paced-writer.js';
import { leaveOutUnseen } from './unseen-output.js';

/** Characters per input message: the web shell's frames are small, and JSON may escape each 6-fold. */
const INPUT_CHUNK = 8 * 1024;
/**
 * A stream of output goes into xterm at most every 33 ms (one parse and one render each), once a
 * write was 16K characters or more; small output is written at once. Measured in the UI bench
 * (bench/RESULTS.md): at 16 ms the page's CPU barely fell, at 50 ms the pipeline idled between writes.
 */
const PACE_MS = 33;
const PACE_AFTER_CHARS = 16 * 1024;

type Status = { kind: 'opening' } | { kind: 'open' } | { kind: 'exited'; code: number | null } | { kind: 'failed'; error: ErrorInfo };

/**
 * The shell takes Tab, so Ctrl+Shift+↑ is the keyboard's way out: focus goes to the control before
 * the terminal (in the detail view, the sandbox's buttons).
 */
function leaveTerminal(inside: HTMLElement): void {
  const stops = [...document.querySelectorAll<HTMLElement>('button:not([disabled]), input, select, textarea, a[href], [tabindex="0"]')];
  const before = stops.filter((el) => !inside.contains(el) && el.compareDocumentPosition(inside) & Node.DOCUMENT_POSITION_FOLLOWING);
  before.at(-1)?.focus();
}

function openLink(event: MouseEvent, uri: string): void {
  if (!(event.ctrlKey || event.metaKey)) return;
  try {
    const url = new URL(uri);
    if (url.protocol === 'http:' || url.protocol === 'https:') window.open(url.href, '_blank', 'noopener,noreferrer');
  } catch {
    // not a URL: nothing to open
  }
}

export function TerminalView({ sandboxId }: { sandboxId: string }) {
  const { client, terminals } = useServices();
  const host = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState<Status>({ kind: 'opening' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const el = host.current!;
    const term = new Terminal({
      fontFamily: '"DejaVu Sans Mono", "Liberation Mono", monospace',
      fontSize: 13,
      cursorBlink: true,
      scrollback: 5000,
      allowProposedApi: false,
      theme: { background: '#0b0d11', foreground: '#d8dee9', cursor: '#5aa9ff', selectionBackground: '#33415c' },
      linkHandler: { activate: openLink, allowNonHttpProtocols: false },
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();

    let id: string | null = null;
    let closed = false;
    const offs: Array<() => void> = [];

    // Copy with Ctrl+Shift+C (a person's key press); paste comes through the browser's paste event.
    term.attachCustomKeyEventHandler((e) => {
      if (e.type === 'keydown' && e.ctrlKey && e.shiftKey && e.code === 'KeyC') {
        const text = term.getSelection();
        if (text) void navigator.clipboard?.writeText(text).catch(() => undefined);
        return false;
      }
      if (e.type === 'keydown' && e.ctrlKey && e.shiftKey && e.key === 'ArrowUp') {
        if (host.current) leaveTerminal(host.current);
        return false;
      }
      return true;
    });

    const send = (method: 'terminal.input' | 'terminal.resize', make: (id: string) => object) => {
      if (!id) return;
      client.call(method, make(id) as never).catch((err: unknown) => {
        if (!closed) setStatus({ kind: 'failed', error: toErrorInfo(err) });
      });
    };
    // A big paste goes in pieces that fit the door's message size, in order.
    const input = (data: string) => {
      for (let at = 0; at < data.length; at += INPUT_CHUNK) {
        const piece = data.slice(at, at + INPUT_CHUNK);
        send('terminal.input', (tid) => ({ id: tid, data: piece }));
      }
    };
    offs.push(term.onData(input).dispose);
    offs.push(term.onBinary(input).dispose);
    offs.push(term.onResize(({ cols, rows }) => send('terminal.resize', (tid) => ({ id: tid, size: { cols, rows } }))).dispose);

    let frame = 0;
    const observer = new ResizeObserver(() => {
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        if (el.clientWidth > 0 && el.clientHeight > 0) fit.fit();
      });
    });
    observer.observe(el);

    client.call('terminal.open', { ref: sandboxId, size: { cols: term.cols, rows: term.rows } }).then(
      (opened) => {
        if (closed) {
          void client.call('terminal.close', { id: opened.id }).catch(() => undefined);
          return;
        }
        id = opened.id;
        const writer = new PacedWriter(term, PACE_MS, PACE_AFTER_CHARS, leaveOutUnseen(term, offs));
        offs.push(() => writer.dispose());
        offs.push(
          terminals.attach(opened.id, {
            write: (data) => writer.write(data),
            exit: (code) => {
              id = null;
              setStatus({ kind: 'exited', code });
            },
          }),
        );
        setStatus({ kind: 'open' });
        // Ready to type in, unless the person has meanwhile put focus somewhere (a keyboard user
        // tabbing to the sandbox's buttons must not have it pulled away).
        const at = document.activeElement;
        if (!at || at === document.body) term.focus();
      },
      (err: unknown) => setStatus({ kind: 'failed', error: toErrorInfo(err) }),
    );

    return () => {
      closed = true;
      observer.disconnect();
      if (frame) cancelAnimationFrame(frame);
      for (const off of offs) off();
      if (id) void client.call('terminal.close', { id }).catch(() => undefined);
      term.dispose();
    };
  }, [client, terminals, sandboxId, attempt]);

  return (
    <div className="terminal-pane">
      <div className="terminal-bar">
        <span className={`dot ${status.kind}`} />
        <span data-testid="terminal-status">
          {status.kind === 'opening'
            ? 'connecting…'
            : status.kind === 'open'
              ? 'connected'
              : status.kind === 'exited'
                ? `shell exited${status.code === null ? '' : ` with code ${status.code}`}`
                : status.error.message}
        </span>
        {status.kind === 'failed' && status.error.hint ? <span className="muted"> — {status.error.hint}</span> : null}
        <span className="grow" />
        <span className="muted small terminal-keys" title="Ctrl+Shift+C copy · Ctrl+Shift+V paste · Ctrl+Shift+↑ leaves the terminal">
          Ctrl+Shift+C copy · Ctrl+Shift+V paste · Ctrl+Shift+↑ leaves
        </span>
        {status.kind === 'exited' || status.kind === 'failed' ? (
          <button
            type="button"
            className="btn small"
            onClick={() => {
              setStatus({ kind: 'opening' });
              setAttempt((n) => n + 1);
            }}
          >
            New shell
          </button>
        ) : null}
      </div>
      <div ref={host} className="terminal-host" data-testid="terminal" />
    </div>
  );
}
