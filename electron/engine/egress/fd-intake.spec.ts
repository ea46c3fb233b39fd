// What a hostile sandbox can put on its egress socket, against the real addon (out/native, built by
// the build step) and real sockets: a helper compiled here with gcc sends what a relay would (its
// TCP connection, with 'F') and what an attacker could (a pipe, a Unix socket, a listening or an
// unconnected TCP socket, two descriptors, the wrong byte). Only the relay's case is served.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canTakeDescriptors, takeConnection } from './fd-intake.js';

const SENDER = String.raw`
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static int tcp_to(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
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
  int fds[2] = {-1, -1}, n = 1, p[2];
  char byte = 'F';
  if (!strcmp(mode, "tcp") || !strcmp(mode, "wrongbyte")) fds[0] = tcp_to(port);
  if (!strcmp(mode, "wrongbyte")) byte = 'G';
  if (!strcmp(mode, "pipe")) pipe(p), fds[0] = p[0];
  if (!strcmp(mode, "unix")) socketpair(AF_UNIX, SOCK_STREAM, 0, p), fds[0] = p[0];
  if (!strcmp(mode, "listen")) {
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    listen(fds[0], 1);
  }
  if (!strcmp(mode, "unconnected")) fds[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (!strcmp(mode, "two")) fds[0] = tcp_to(port), fds[1] = tcp_to(port), n = 2;
  if (!strcmp(mode, "plain")) return write(u, "GET / HTTP/1.0\r\n\r\n", 18) == 18 ? 0 : 4;
  if (!strcmp(mode, "eof")) return 0;
  char buf[CMSG_SPACE(2 * sizeof(int))] = {0};
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = CMSG_SPACE(n * sizeof(int))};
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(n * sizeof(int));
  memcpy(CMSG_DATA(c), fds, n * sizeof(int));
  return sendmsg(u, &m, 0) == 1 ? 0 : 5;
}
`;

let dir: string;
let sender: string;
let intake: Server;
let peer: Server;
const taken: Array<Promise<{ stream: Socket | null; bad: string | null }>> = [];
let peerSide: Promise<Socket>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warden-fd-intake-'));
  writeFileSync(join(dir, 'sender.c'), SENDER);
  sender = join(dir, 'sender');
  execFileSync('gcc', ['-O0', '-w', '-o', sender, join(dir, 'sender.c')]);
  intake = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (unix) => {
    let bad: string | null = null;
    taken.push(takeConnection(unix, (why) => (bad = why)).then((stream) => ({ stream, bad })));
  });
  await new Promise<void>((r) => intake.listen(join(dir, 'intake.sock'), r));
  // The sender passes its end of a connection to this server; the server's end plays the program.
  peerSide = new Promise((resolve) => {
    peer = createServer((s) => resolve(s));
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
});

afterAll(() => {
  intake?.close();
  peer?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function send(mode: string): Promise<{ stream: Socket | null; bad: string | null }> {
  const before = taken.length;
  const child = spawn(sender, [mode, join(dir, 'intake.sock'), String((peer.address() as AddressInfo).port)]);
  const code = await new Promise<number | null>((r) => child.once('close', r));
  expect(code).toBe(0);
  while (taken.length === before) await new Promise((r) => setImmediate(r));
  return taken[before]!;
}

describe.runIf(canTakeDescriptors())('egress fd intake (what comes on an egress socket)', () => {
  it("serves a relay's handed-over TCP connection as the program's own socket", async () => {
    const { stream, bad } = await send('tcp');
    expect(bad).toBeNull();
    expect(stream).not.toBeNull();
    const program = await peerSide;
    program.write('hello');
    const got = await new Promise<string>((r) => stream!.once('data', (d: Buffer) => r(d.toString())).resume());
    expect(got).toBe('hello');
    const back = new Promise<string>((r) => program.once('data', (d: Buffer) => r(d.toString())));
    stream!.write('world');
    expect(await back).toBe('world');
    stream!.destroy();
  });

  it.each([
    ['pipe', 'the descriptor is not a socket'],
    ['unix', 'the socket is not an IP socket'],
    ['listen', 'the socket listens'],
    ['unconnected', 'the socket is not connected'],
    ['two', 'more than one descriptor was sent'],
    ['wrongbyte', "a descriptor came with the byte 71, not 'F'"],
  ])('drops a connection that brings %s', async (mode, why) => {
    const { stream, bad } = await send(mode);
    expect(stream).toBeNull();
    expect(bad).toBe(why);
  });

  it('gives a relay that carries bytes itself its stream back whole, first byte included', async () => {
    const { stream, bad } = await send('plain');
    expect(bad).toBeNull();
    const text = await new Promise<string>((r) => {
      let all = '';
      stream!.on('data', (d: Buffer) => (all += d.toString())).once('end', () => r(all));
      stream!.resume();
    });
    expect(text).toBe('GET / HTTP/1.0\r\n\r\n');
  });

  it('lets a connection that closes before saying anything go', async () => {
    const { stream, bad } = await send('eof');
    expect(stream).toBeNull();
    expect(bad).toBeNull();
  });
});

it('the addon is built (without it egress under runc carries bytes through the relay, half as fast)', () => {
  expect(canTakeDescriptors()).toBe(true);
});
