// A client that stops reading must not grow serve's memory, and one that hangs up ends its command
// (issue 12, "a client that stops reading kills the server"). The command writes NULs, which JSON
// escapes to six bytes each: the bound is on bytes queued to the socket, after escaping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { STREAM_MAX_QUEUED } from './stream-meter.js';

let ts: TestServer;
let sandbox: string;
let token: string;
/** The server's side of each exec answer, to read what it has queued. */
const answers: ServerResponse[] = [];

beforeAll(async () => {
  ts = await openTestServer();
  sandbox = (await ts.agent('slow').request('sandbox.create', { body: { name: `t-${ts.t.runId}-slow`, labels: ts.labels } })).id;
  token = ts.server.tokens.create('slow').token;
  ts.server.app.server.on('request', (req, res: ServerResponse) => {
    if (req.url?.endsWith('/exec')) answers.push(res);
  });
});

afterAll(async () => {
  await ts?.close();
});

/** POSTs an exec on a raw socket and hands back the socket once the first bytes of the answer came. */
function rawExec(cmd: string, run: string): Promise<{ socket: Socket; first: Buffer }> {
  const body = JSON.stringify({ cmd });
  return new Promise((resolve, reject) => {
    const socket = connect(ts.server.port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/sandboxes/${sandbox}/exec HTTP/1.1\r\nHost: 127.0.0.1:${ts.server.port}\r\nAuthorization: Bearer ${token}\r\n` +
          `X-Warden-Run: ${run}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    socket.once('data', (first: Buffer) => resolve({ socket, first }));
    socket.once('error', reject);
  });
}

/** Waits (a hang guard, not a measure) until the condition holds, checking after each turn of I/O. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

describe('exec output to a client that stops reading', () => {
  it('pauses the command instead of queueing: bytes queued for the socket stay bounded (NULs escaped six-fold)', async () => {
    const { socket, first } = await rawExec('head -c 300M /dev/zero', 'stops-reading');
    socket.pause();
    expect(first.toString('latin1')).toMatch(/^HTTP\/1.1 200/);
    const answer = answers.at(-1)!;
    // Either the server pauses the command (fixed), or its queue runs past the bound (the bug).
    await until(() => ts.server.streams?.paused > 0 || answer.writableLength > STREAM_MAX_QUEUED);
    expect(answer.writableLength).toBeLessThanOrEqual(STREAM_MAX_QUEUED);
    expect(ts.server.streams.peakQueuedBytes).toBeLessThanOrEqual(STREAM_MAX_QUEUED);

    // Hanging up ends the command (its whole tree) and the ledger says why.
    const finished = ts.audit.nextEntry((e) => e.kind === 'exec.finished' && e.actor === 'slow');
    socket.destroy();
    const entry = (await finished).payload as { cancelled?: string; stdoutBytes: number; exitCode: number };
    expect(entry.cancelled).toBe('clientGone');
    expect(entry.stdoutBytes).toBeLessThan(300 * 1024 * 1024); // held back, not run to the end
    expect(ts.server.streams.peakQueuedBytes).toBeLessThanOrEqual(STREAM_MAX_QUEUED);
    // nothing of that command is left running in the sandbox
    const ps = await ts
      .agent('slow', 'check')
      .exec(sandbox, { cmd: ['sh', '-c', 'cat /proc/[0-9]*/comm 2>/dev/null | grep -c "^head$" || true'] });
    expect(ps.stdout.toString().trim()).toBe('0');
  });

  it('loses nothing when a paused reader catches up', async () => {
    const size = 6 * 1024 * 1024;
    const { socket, first } = await rawExec(`head -c ${size} /dev/zero`, 'catches-up');
    socket.pause();
    const pausedBefore = ts.server.streams.paused;
    await until(() => ts.server.streams.paused > pausedBefore);
    const chunks: Buffer[] = [first];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.resume();
    await new Promise((r) => socket.once('end', r).once('close', r));
    // Undo the chunked encoding and count the NULs that came through.
    const text = Buffer.concat(chunks).toString('latin1');
    const lines = text
      .slice(text.indexOf('\r\n\r\n') + 4)
      .replace(/\r\n[0-9a-f]+\r\n/g, '')
      .split('\n')
      .filter((l) => l.startsWith('{'));
    const events = lines.map((l) => JSON.parse(l) as { type: string; data?: string; stdoutBytes?: number });
    const got = events.filter((e) => e.type === 'stdout').reduce((n, e) => n + Buffer.from(e.data!, 'utf8').length, 0);
    expect(events.at(-1)).toMatchObject({ type: 'exit', stdoutBytes: size });
    expect(got).toBe(size);
  });
});
