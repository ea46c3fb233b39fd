// The egress dialer (resources/runner/dialer.c through sandbox-dialer.ts), with the real runner
// binary and addon, real sockets and a real cgroup v1 memory cgroup standing in for a sandbox's
// (a `sleep` in it is the sandbox's first process): the sockets it makes work both ways, their
// buffers are charged to that cgroup and not to Warden's, refusals come back as Node's connect
// would say them, and it ends with the process it watches.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxDialer } from './sandbox-dialer.js';
import { canHandOver } from './hand-over.js';

const RUNNER = join(process.cwd(), 'out', 'runner', 'warden-runner');
const V1 = '/sys/fs/cgroup/memory';
const usable = existsSync(RUNNER) && canHandOver() && existsSync(`${V1}/memory.kmem.tcp.limit_in_bytes`) && process.getuid?.() === 0;

describe.runIf(usable)('an egress dialer in a sandbox memory cgroup', () => {
  const cgroup = join(V1, `warden-dialer-spec-${process.pid}`);
  let sandbox: ChildProcess;
  let server: Server;
  const accepted: Socket[] = [];
  const usage = () => Number(readFileSync(join(cgroup, 'memory.kmem.tcp.usage_in_bytes'), 'utf8'));

  beforeAll(async () => {
    mkdirSync(cgroup);
    writeFileSync(join(cgroup, 'memory.kmem.tcp.limit_in_bytes'), String(64 << 20));
    sandbox = spawn('sleep', ['600'], { stdio: 'ignore' });
    writeFileSync(join(cgroup, 'cgroup.procs'), String(sandbox.pid));
    server = createServer((s) => void accepted.push(s.on('error', () => undefined)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });

  afterAll(() => {
    sandbox.kill('SIGKILL');
    server.close();
    for (const s of accepted) s.destroy();
    for (let i = 0; i < 50 && existsSync(cgroup); i++) {
      try {
        rmdirSync(cgroup);
      } catch {
        /* its last process is still leaving */
      }
    }
  });

  it('connects both ways, with the socket charged to the sandbox, and says a refusal as connect does', async () => {
    const opened = SandboxDialer.open(RUNNER, sandbox.pid!);
    if (!('dialer' in opened)) throw new Error(opened.why);
    const { dialer } = opened;
    const members = readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').trim().split('\n').map(Number);
    expect(members).toHaveLength(2); // the "sandbox" and the dialer, nothing of this process
    expect(members).not.toContain(process.pid);

    const port = (server.address() as AddressInfo).port;
    const socket = await dialer.dial('127.0.0.1', port);
    const far = accepted.at(-1)!;
    far.write('hello');
    expect(await new Promise((r) => socket.once('data', (d: Buffer) => r(d.toString())))).toBe('hello');
    socket.write('back');
    expect(await new Promise((r) => far.once('data', (d: Buffer) => r(d.toString())))).toBe('back');

    // 4 MiB this side does not read: once its receive queue holds them, the sandbox's cgroup has paid.
    socket.pause();
    const before = usage();
    far.write(Buffer.alloc(4 << 20));
    let queued = 0;
    while (queued < 1 << 20) {
      await new Promise((r) => setTimeout(r, 20));
      queued = receiveQueue(socket.localPort!);
    }
    expect(usage() - before).toBeGreaterThanOrEqual(queued);
    socket.destroy();

    await expect(dialer.dial('127.0.0.1', 1)).rejects.toMatchObject({
      code: 'ECONNREFUSED',
      message: expect.stringContaining('127.0.0.1:1'),
    });
    await expect(dialer.dial('not-an-address', 80)).rejects.toMatchObject({ code: 'EINVAL' });
    dialer.close();
    expect(dialer.alive).toBe(false);
  });

  it('ends with the process it watches, so it never keeps a stopped sandbox cgroup busy', async () => {
    const watched = spawn('sleep', ['600'], { stdio: 'ignore' });
    const opened = SandboxDialer.open(RUNNER, watched.pid!);
    if (!('dialer' in opened)) throw new Error(opened.why);
    watched.kill('SIGKILL');
    while (opened.dialer.alive) await new Promise((r) => setTimeout(r, 10));
    await expect(opened.dialer.dial('127.0.0.1', 1)).rejects.toThrow('the egress dialer ended');
  });
});

/** The bytes waiting in the receive queue of this host's socket with that local port (`ss` Recv-Q). */
function receiveQueue(localPort: number): number {
  const out = execFileSync('ss', ['-tnH', 'src', `127.0.0.1:${localPort}`]).toString();
  return Number(out.trim().split(/\s+/)[1] ?? 0);
}
