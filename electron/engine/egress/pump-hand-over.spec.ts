// The pump's side of the hand-over (resources/runner/pump.c, "go LIMIT 1"), against the real runner
// binary and real sockets: a helper compiled here with gcc plays the relay on the other end of the
// pump's Unix connection. It sends some of the program's bytes and then what a relay sends (its
// TCP connection, with 'F') or what an attacker could (a pipe, a Unix socket, a listening or an
// unconnected TCP socket, two descriptors, the wrong byte, or its side's end instead). Only a
// relay's connected TCP socket is carried; anything else ends the connection with the reason, and
// nothing that came with it reaches the destination.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESTINATION_BUFFER, DESTINATION_STALL_MS } from './hand-over.js';
import { userTimeoutOf } from '../../test-support/user-timeout.js';

const RUNNER = join(process.cwd(), 'out', 'runner', 'warden-runner');

const RELAY = String.raw`
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static int tcp_to(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  /* A congestion control other than the one the pump gives the program's socket (root may pick any). */
  setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? s : -1;
}
int main(int argc, char **argv) {
  const char *mode = argv[1];
  int port = atoi(argv[3]);
  int u = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un ua = {.sun_family = AF_UNIX};
  strcpy(ua.sun_path, argv[2]);
  if (connect(u, (struct sockaddr *)&ua, sizeof ua) != 0) return 3;
  if (write(u, "hello ", 6) != 6) return 4;
  if (!strcmp(mode, "eof")) {
    /* Its program had ended its side: the relay ends its own and carries the answer itself. */
    shutdown(u, SHUT_WR);
    printf("sent\n");
    fflush(stdout);
    char buf[256];
    ssize_t n;
    while ((n = read(u, buf, sizeof buf)) > 0) fwrite(buf, 1, n, stdout);
    return 0;
  }
  int fds[2] = {-1, -1}, n = 1, p[2];
  char byte = 'F';
  if (!strcmp(mode, "tcp") || !strcmp(mode, "wrongbyte")) fds[0] = tcp_to(port);
  if (!strcmp(mode, "wrongbyte")) byte = 'G';
  if (!strcmp(mode, "pipe")) pipe(p), fds[0] = p[0];
  if (!strcmp(mode, "unix")) socketpair(AF_UNIX, SOCK_STREAM, 0, p), fds[0] = p[0];
  if (!strcmp(mode, "itself")) fds[0] = u;
  if (!strcmp(mode, "listen")) {
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    listen(fds[0], 1);
  }
  if (!strcmp(mode, "unconnected")) fds[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (!strcmp(mode, "two")) fds[0] = tcp_to(port), fds[1] = tcp_to(port), n = 2;
  char buf[CMSG_SPACE(2 * sizeof(int))] = {0};
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = CMSG_SPACE(n * sizeof(int))};
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(n * sizeof(int));
  memcpy(CMSG_DATA(c), fds, n * sizeof(int));
  if (sendmsg(u, &m, 0) != 1) return 5;
  printf("sent\n");
  return 0;
}
`;

let dir: string;
let relay: string;
/** Where the fake relay connects: its accepted end goes to the pump as fd 3. */
let intake: Server;
const relayEnds: Socket[] = [];
/** The program: its accepted end is what the relay hands over. */
let program: Server;
const programEnds: Socket[] = [];
/** The destination the pump carries to (fd 4). */
let destination: Server;
const destinationEnds: Socket[] = [];

const accepted = (list: Socket[]) => (s: Socket) => void list.push(s);
async function next(list: Socket[], from: number): Promise<Socket> {
  while (list.length <= from) await new Promise((r) => setImmediate(r));
  return list[from]!;
}
const portOf = (s: Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warden-pump-hand-over-'));
  writeFileSync(join(dir, 'relay.c'), RELAY);
  relay = join(dir, 'relay');
  execFileSync('gcc', ['-O0', '-w', '-o', relay, join(dir, 'relay.c')]);
  intake = createServer({ allowHalfOpen: true, pauseOnConnect: true }, accepted(relayEnds));
  program = createServer({ allowHalfOpen: true }, accepted(programEnds));
  destination = createServer({ allowHalfOpen: true }, accepted(destinationEnds));
  await Promise.all([
    new Promise<void>((r) => intake.listen(join(dir, 'intake.sock'), r)),
    new Promise<void>((r) => program.listen(0, '127.0.0.1', r)),
    new Promise<void>((r) => destination.listen(0, '127.0.0.1', r)),
  ]);
});

afterAll(() => {
  for (const s of [intake, program, destination]) s?.close();
  for (const s of [...relayEnds, ...programEnds, ...destinationEnds]) s.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Everything a socket sends until it ends. */
const readAll = (s: Socket) =>
  new Promise<string>((resolve) => {
    let all = '';
    s.on('data', (d: Buffer) => (all += d.toString()))
      .once('end', () => resolve(all))
      .once('close', () => resolve(all));
  });

/** Runs the fake relay in a mode and a pump on its connection; gives the pump's end, its lines, and the destination's end. */
async function pumpWith(mode: string) {
  const [r, d] = [relayEnds.length, destinationEnds.length];
  const fake = spawn(relay, [mode, join(dir, 'intake.sock'), String(portOf(program))]);
  let relayOut = '';
  fake.stdout.on('data', (c: Buffer) => (relayOut += c.toString()));
  const relayDone = new Promise<number | null>((res) => fake.once('close', res));
  // Started once the relay has sent all it sends first: what the pump reads first is then fixed.
  while (!relayOut.startsWith('sent\n') && fake.exitCode === null) await new Promise((res) => setTimeout(res, 5));
  relayOut = relayOut.slice('sent\n'.length);
  const relaySide = await next(relayEnds, r);
  const toDestination = connect(portOf(destination), '127.0.0.1');
  await new Promise((res) => toDestination.once('connect', res));
  const atDestination = await next(destinationEnds, d);
  const destinationPort = toDestination.localPort!;
  const pump = spawn(RUNNER, ['egress-pump'], { stdio: ['pipe', 'pipe', 'ignore', relaySide, toDestination] });
  relaySide.destroy();
  toDestination.destroy();
  pump.stdin!.write('go -1 1\n');
  let lines = '';
  pump.stdout!.on('data', (c: Buffer) => (lines += c.toString()));
  const ended = new Promise<string>((res) => pump.once('close', () => res(lines)));
  return { atDestination, ended, relayDone, relayOut: () => relayOut, pump, destinationPort };
}

describe.runIf(existsSync(RUNNER))('the egress pump takes a handed-over connection', () => {
  it("carries the relay's bytes, then the program's own socket both ways", async () => {
    const p = Promise.resolve(programEnds.length);
    const { atDestination, ended, relayDone, pump, destinationPort } = await pumpWith('tcp');
    expect(await relayDone).toBe(0);
    const programSide = await next(programEnds, await p);
    const heard = readAll(atDestination);
    programSide.end('world');
    const back = readAll(programSide);
    expect(await heard).toBe('hello world');
    // The destination's socket is bounded by the pump itself (where Warden's addon is missing): fixed
    // buffers each way, as the kernel counts them, and the stall time, read on a copy of its fd 4.
    const ss = execFileSync('ss', ['-tmnH', 'src', `127.0.0.1:${destinationPort}`]).toString();
    expect(ss).toContain(`rb${2 * DESTINATION_BUFFER},`);
    expect(ss).toContain(`tb${2 * DESTINATION_BUFFER},`);
    expect(userTimeoutOf(pump.pid!, 4)).toBe(DESTINATION_STALL_MS);
    // The program's socket, a loopback hop, is not paced: the pump made it Reno (runner.h).
    const programHop = execFileSync('ss', ['-tinH', 'dst', `127.0.0.1:${portOf(program)}`, 'src', `127.0.0.1:${programSide.remotePort}`]);
    expect(programHop.toString()).toMatch(/^\s+reno /m);
    atDestination.end('answer');
    expect(await back).toBe('answer');
    expect(await ended).toMatch(/^(out|in) \d+\n(out|in) \d+\nend \n$/);
  });

  it.each([
    ['pipe', 'the relay handed over something that is not a socket'],
    ['unix', 'the relay handed over a socket that is not an IP socket'],
    ['itself', 'the relay handed over a socket that is not an IP socket'],
    ['listen', 'the relay handed over a listening socket'],
    ['unconnected', 'the relay handed over a socket that is not connected'],
    ['two', 'the relay handed over more than one descriptor'],
    ['wrongbyte', "the relay handed over a descriptor with a byte other than 'F'"],
  ])('ends a connection whose relay hands over %s, and passes nothing of it on', async (mode, why) => {
    const { atDestination, ended, relayDone } = await pumpWith(mode);
    const heard = readAll(atDestination);
    expect(await relayDone).toBe(0);
    expect(await ended).toBe(`end ${why}\n`);
    expect(await heard).toBe('');
  });

  it('carries a relay that ends its side instead of handing over, as a relay that carries its bytes', async () => {
    const { atDestination, ended, relayDone, relayOut } = await pumpWith('eof');
    expect(await readAll(atDestination)).toBe('hello ');
    atDestination.end('back');
    expect(await relayDone).toBe(0);
    expect(relayOut()).toBe('back');
    expect(await ended).toMatch(/end \n$/);
  });
});

it.runIf(existsSync(RUNNER))('a pump started ahead touches neither socket until its word, and goes quietly without it', async () => {
  const relaySide = new Promise<Socket>((r) => intake.once('connection', r));
  const sandbox = connect(join(dir, 'intake.sock'));
  const idle = spawn(RUNNER, ['egress-pump'], { stdio: ['pipe', 'pipe', 'ignore', await relaySide, 'ignore'] });
  let said = '';
  idle.stdout!.on('data', (c: Buffer) => (said += c.toString()));
  await new Promise((r) => idle.once('spawn', r));
  sandbox.write('still mine');
  idle.stdin!.end(); // Warden carried it on and let the pump go
  expect(await new Promise((r) => idle.once('close', r))).toBe(0);
  expect(said).toBe('');
  const side = relayEnds.at(-1)!;
  expect(await new Promise<string>((r) => side.once('data', (d: Buffer) => r(d.toString())).resume())).toBe('still mine');
  sandbox.destroy();
});

it('the runner is built (without it egress has no pump, and every byte goes through Node)', () => {
  expect(existsSync(RUNNER)).toBe(true);
});
