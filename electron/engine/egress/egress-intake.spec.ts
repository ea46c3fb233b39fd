// The intake of a sandbox's egress socket, on real Unix sockets: a relay's first byte HANDS_OVER is
// taken (and remembered), any other first byte is put back for the proxy; and the bound on open
// connections counts a connection until it ends, past its stream while the pump carries it, so a
// sandbox cannot get around it with transfers large enough to be pumped; and the rate bound refuses
// what comes faster than it allows with a 429, undecided, reported as one sum.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { carriedPastStream, intakeFor } from './egress-intake.js';
import { askHandOver } from './hand-over.js';

let dir: string;
let server: Server;
let served: Socket[];
let throttled: (refused: number) => void;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warden-egress-intake-'));
  served = [];
  throttled = () => undefined;
  // A rate that never refills: the burst is all there is, whatever the clock does.
  const intake = intakeFor((s) => void served.push(s), { max: 1, rate: { perSecond: 0, burst: 5 }, onThrottled: (n) => throttled(n) });
  server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, intake);
  await new Promise<void>((r) => server.listen(join(dir, 'proxy.sock'), r));
});

afterEach(() => {
  server.close();
  for (const s of served) s.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const open = (first: Buffer | null) => {
  const s = connect(join(dir, 'proxy.sock'));
  if (first) s.write(first);
  return s;
};
async function servedAt(n: number): Promise<Socket> {
  while (served.length <= n) await new Promise((r) => setImmediate(r));
  return served[n]!;
}
/** Until the intake has let every connection go on its side. */
async function settled(): Promise<void> {
  while ((await new Promise<number>((r) => server.getConnections((_e, n) => r(n)))) > 0) await new Promise((r) => setImmediate(r));
}
/** The first `length` bytes the proxy reads from a served stream. */
const readOf = (s: Socket, length: number) =>
  new Promise<string>((resolve) => {
    let all = '';
    s.on('data', (d: Buffer) => (all += d.toString()) && all.length >= length && resolve(all)).resume();
  });
const answerOf = (s: Socket) =>
  new Promise<string>((resolve) => {
    let all = '';
    s.on('data', (d: Buffer) => (all += d.toString())).once('close', () => resolve(all));
  });

it("takes a relay's HANDS_OVER byte and hands the proxy what follows; puts any other first byte back", async () => {
  const relay = open(Buffer.from('\x01GET / HTTP/1.1\r\n'));
  const stream = await servedAt(0);
  expect(await readOf(stream, 16)).toBe('GET / HTTP/1.1\r\n');
  // Remembered: the marker can be asked for on it (it is sent, since the addon is built).
  await expect(askHandOver(stream)).resolves.toBe(true);
  relay.destroy();
  stream.destroy();
  await settled();

  const plain = open(Buffer.from('CONNECT a:443 HTTP/1.1\r\n'));
  const second = await servedAt(1);
  expect(await readOf(second, 24)).toBe('CONNECT a:443 HTTP/1.1\r\n');
  await expect(askHandOver(second)).resolves.toBe(false); // a relay that carries bytes itself is never asked
  plain.destroy();
});

it('keeps a connection counted while it is carried past its stream, and lets the next in once it ends', async () => {
  const first = open(Buffer.from('\x01'));
  const stream = await servedAt(0);
  const release = carriedPastStream(stream);
  stream.destroy(); // as when the pump takes it over
  await new Promise((r) => stream.once('close', r));
  const refused = open(Buffer.from('\x01'));
  expect(await answerOf(refused)).toMatch(/^HTTP\/1\.1 503 [^]*this sandbox has 1 connections open, the most it may/);
  release();
  await settled();
  open(Buffer.from('\x01'));
  await servedAt(1);
  first.destroy();
});

it('lets a connection that ends before its first byte go, unserved and uncounted', async () => {
  const silent = open(null);
  silent.end();
  await new Promise((r) => silent.once('close', r));
  await settled();
  open(Buffer.from('GET'));
  await servedAt(0);
  expect(served).toHaveLength(1);
});

it('refuses connections past its rate with a 429, undecided, and reports them as one sum', async () => {
  const reported = new Promise<number>((r) => (throttled = r));
  const first = open(Buffer.from('GET'));
  await servedAt(0);
  // The bucket of 5: this one was the 1st; 4 more are taken (refused for the open bound, but counted), then none.
  const answers: string[] = [];
  for (let i = 0; i < 7; i++) answers.push(await answerOf(open(Buffer.from('GET'))));
  expect(answers.slice(0, 4).every((a) => a.startsWith('HTTP/1.1 503 '))).toBe(true);
  expect(answers.slice(4)).toEqual(
    Array(3).fill(
      expect.stringMatching(
        /^HTTP\/1\.1 429 Too Many Requests\r\n[^]*\r\n\r\nwarden egress: this sandbox opens connections faster than 0 a second \(in bursts of 5\), the most it may; slow down and try again\n$/,
      ),
    ),
  );
  expect(await reported).toBe(3);
  expect(served).toHaveLength(1);
  first.destroy();
});
