// What Warden's process does to the sockets of egress with the hand-over addon (out/native), on
// real sockets: a destination connection's buffers are fixed and its stall time set (autotuning let stalled ones
// grow to tens of MiB of host memory), read back with `ss`; and an egress socket refuses a
// descriptor sent to it (SO_PASSRIGHTS), so none can reach this process to be closed here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { userTimeoutOf } from '../../test-support/user-timeout.js';
import {
  DESTINATION_BUFFER,
  DESTINATION_STALL_MS,
  boundDestination,
  canHandOver,
  descriptorsRefusable,
  refuseDescriptors,
} from './hand-over.js';

it('the addon is built (without it egress has no hand-over, and no socket refuses descriptors)', () => {
  expect(canHandOver()).toBe(true);
});

it.runIf(canHandOver())("fixes a destination connection's buffers each way (the kernel counts them twice) and its stall time", async () => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client: Socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  boundDestination(client);
  const ss = execFileSync('ss', ['-tmnH', 'src', `127.0.0.1:${client.localPort}`]).toString();
  expect(ss).toContain(`rb${2 * DESTINATION_BUFFER},`);
  expect(ss).toContain(`tb${2 * DESTINATION_BUFFER},`);
  const fd = (client as unknown as { _handle: { fd: number } })._handle.fd;
  expect(userTimeoutOf(process.pid, fd)).toBe(DESTINATION_STALL_MS);
  client.destroy();
  server.close();
});

it.runIf(descriptorsRefusable())('refuses a descriptor sent to an egress socket: the sender gets EPERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-refuse-fd-'));
  const path = join(dir, 'proxy.sock');
  const got: Buffer[] = [];
  const server = createServer((s) => s.on('data', (d: Buffer) => got.push(d)));
  await new Promise<void>((r) => server.listen(path, r));
  expect(refuseDescriptors(server)).toBe(true);
  const sender = spawnSync('python3', [
    '-c',
    `import errno, socket
u = socket.socket(socket.AF_UNIX); u.connect(${JSON.stringify(path)})
a, b = socket.socketpair()
try:
    socket.send_fds(u, [b'\\x01'], [a.fileno()]); print('sent')
except OSError as e:
    print('refused', errno.errorcode[e.errno])
u.sendall(b'plain')`,
  ]);
  expect(sender.stdout.toString()).toBe('refused EPERM\n');
  while (Buffer.concat(got).toString() !== 'plain') await new Promise((r) => setImmediate(r));
  server.close();
  rmSync(dir, { recursive: true, force: true });
});
