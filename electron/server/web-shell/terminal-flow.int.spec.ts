// A browser tab that stops reading (frozen, throttled in the background) while a terminal pours
// out megabytes: the server pauses the shell instead of buffering without end, keeps the
// connection open, and delivers every byte once the tab reads again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openTestServer, type TestServer } from '../../test-support/test-server.js';
import { uiToken } from './login.js';
import { FRAME_TERMINAL_OUTPUT } from '../../../shared/contracts/web-shell.js';

let ts: TestServer;
let sandbox: string;

beforeAll(async () => {
  ts = await openTestServer();
  const info = await ts.user().request('sandbox.create', { body: { name: `t-${ts.t.runId}-flow`, labels: ts.labels } });
  sandbox = info.id;
});

afterAll(async () => {
  await ts?.close();
});

async function uiSocket(): Promise<WebSocket> {
  const origin = ts.server.url;
  const login = await fetch(`${origin}/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ code: uiToken(ts.server.home) }),
  });
  expect(login.status).toBe(204);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const ws = new WebSocket(`${origin.replace('http', 'ws')}/ui/ws`, { headers: { origin, cookie } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ t: 'ready' }));
  return ws;
}

describe('terminal output to a page that stops reading', () => {
  it('pauses the shell rather than cutting the page off, then delivers every byte', async () => {
    const ws = await uiSocket();
    let closed: number | null = null;
    ws.on('close', (code) => (closed = code));
    let terminal = '';
    let output = '';
    const results = new Map<number, (envelope: { result?: { id: string }; error?: { message: string } }) => void>();
    let frames = 0;
    let outputBegan!: () => void;
    const began = new Promise<void>((resolve) => (outputBegan = resolve));
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (isBinary) {
        outputBegan();
        // Terminal output: [1][id length][id][bytes]; base64 of zeros is ASCII, so no character is split.
        expect(raw[0]).toBe(FRAME_TERMINAL_OUTPUT);
        const head = 2 + raw[1]!;
        if (raw.subarray(2, head).toString('latin1') === terminal) output += raw.subarray(head).toString('latin1');
        frames += 1;
        return;
      }
      const msg = JSON.parse(raw.toString()) as { t: string; id?: number; envelope?: never; message?: { event: string } };
      if (msg.t === 'result') results.get(msg.id!)?.(msg.envelope!);
      else expect(msg.message?.event).not.toBe('terminal.data');
    });
    let next = 0;
    const call = (method: string, params: unknown) =>
      new Promise<{ result?: { id: string }; error?: { message: string } }>((resolve) => {
        const id = ++next;
        results.set(id, resolve);
        ws.send(JSON.stringify({ t: 'call', id, method, params }));
      });

    const opened = await call('terminal.open', { ref: sandbox, size: { cols: 200, rows: 50 } });
    expect(opened.error).toBeUndefined();
    terminal = opened.result!.id;
    // 96 MiB of zeros, base64: 128 MiB of 'A' — twice the backlog at which a page used to be cut off.
    await call('terminal.input', {
      id: terminal,
      data: 'head -c 100663296 /dev/zero | base64 -w 0 | tr -d "\\n"; echo; echo FLOW-$((40+2))\r',
    });
    // The page stops reading once the flood has begun (an event, not a guess at when it starts), and
    // stays away for 4 s: that pause is the stimulus; every assertion below holds for any length of it.
    await began;
    ws.pause();
    await new Promise((r) => setTimeout(r, 4000));
    ws.resume();

    const deadline = Date.now() + 90_000;
    while (!output.includes('FLOW-42') && closed === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBeNull();
    expect(output).toContain('FLOW-42');
    const letters = output.match(/A+/g)?.reduce((n, run) => n + run.length, 0) ?? 0;
    expect(letters).toBe(134217728);
    expect(frames).toBeGreaterThan(0);
    ws.close();
  }, 120_000);
});
