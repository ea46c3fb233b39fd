// A Podman service of this home that another Warden process started (the CLI, with an idle
// timeout) and serve adopted is serve's to keep alive (issue 12): when it dies, serve starts it
// again, and creates (which go through the runtime-specific service) work again without a restart.
// And it stops them when it closes (red team: after one kill -9 of serve, every later serve adopted the
// home's services and left them running for ever on a clean exit).
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pingSocket } from './socket-discovery.js';
import { SandboxSpecSchema } from '../../../shared/types/sandbox.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { PodmanEngine } from './podman-engine.js';

const home = mkdtempSync(join(tmpdir(), 'warden-adopt-'));
const runId = randomBytes(4).toString('hex');
// No CONTAINER_HOST: only this home's own service is a candidate, as on a machine with no other Podman socket.
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
const engines: PodmanEngine[] = [];

/** Pids of the podman services serving sockets in this spec's home (started by this spec). */
function servicePids(): number[] {
  const out = spawnSync('pgrep', ['-f', `unix://${join(home, 'run')}/`], { encoding: 'utf8' }).stdout ?? '';
  return out.split(/\s+/).filter(Boolean).map(Number);
}

afterAll(async () => {
  for (const e of engines) {
    const mine = (await e.sandboxes.list().catch(() => [])).filter((s) => s.labels[TEST_LABEL_KEY] === runId);
    await Promise.all(mine.map((s) => e.sandboxes.destroy(s.id).catch(() => undefined)));
    e.close();
  }
  const left = spawnSync('podman', ['ps', '-aq', '--filter', `label=${TEST_LABEL_KEY}=${runId}`], { encoding: 'utf8' }).stdout?.trim();
  if (left) spawnSync('podman', ['rm', '-f', '-t', '0', ...left.split(/\s+/)], { stdio: 'ignore' });
  for (const pid of servicePids()) process.kill(pid, 'SIGTERM');
  rmSync(home, { recursive: true, force: true });
});

const spec = (n: string) => SandboxSpecSchema.parse({ name: `t-${runId}-${n}`, labels: { [TEST_LABEL_KEY]: runId } });

describe('a service of this home started by another Warden process', () => {
  it('is restarted by the process that adopted it when it dies, and creates work again', async () => {
    // The CLI's way: services left running with an idle timeout for the next command.
    const cli = await PodmanEngine.open({ home, env, discover: false, detachedService: true, serviceIdleSeconds: 300 });
    engines.push(cli);
    const first = await cli.sandboxes.create(spec('cli'));
    await cli.sandboxes.destroy(first.id);
    cli.close();
    engines.splice(engines.indexOf(cli), 1);

    // serve's way: it finds the service and adopts it (starts nothing of its own).
    const serve = await PodmanEngine.open({ home, env, discover: false });
    engines.push(serve);
    expect(serve.connection.source).toBe('owned-service');
    expect(serve.connection.ownedServicePid).toBeUndefined();
    const before = await serve.sandboxes.create(spec('before'));
    await serve.sandboxes.destroy(before.id);

    // Every service of this home dies (as on an idle exit, or a crash).
    const pids = servicePids();
    expect(pids.length).toBeGreaterThan(1); // the main service and the runtime-specific one creates go through
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    const reconnected = new Promise<void>((resolve) => serve.connection.on('status', (s) => s === 'connected' && resolve()));
    await serve.sandboxes.list().catch(() => undefined); // the next call finds it gone
    // A hang guard only: the old behaviour was never to reconnect.
    let guard: NodeJS.Timeout | undefined;
    await Promise.race([
      reconnected,
      new Promise((_, reject) => (guard = setTimeout(() => reject(new Error('never reconnected to the adopted service')), 30_000))),
    ]);
    clearTimeout(guard);

    const after = await serve.sandboxes.create(spec('after'));
    expect(after.state).toBe('running');
    await serve.sandboxes.destroy(after.id);
    expect(serve.connection.ownedServicePid).toBeDefined(); // serve owns what it adopted
  });
});

/** True while a process with this pid exists (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('services of this home left by a process that was killed', () => {
  it('are stopped when the process that adopted them closes', async () => {
    // Nothing of the previous test left: its engines closed, its services gone.
    for (const e of engines.splice(0)) e.close();
    for (const pid of servicePids()) process.kill(pid, 'SIGTERM');
    while (servicePids().length > 0) await new Promise((r) => setTimeout(r, 50));
    // Services running with nobody left to stop them, as after a kill -9 of the serve that started them
    // (started detached here, so that closing this engine leaves them exactly so).
    const killed = await PodmanEngine.open({ home, env, discover: false, detachedService: true, serviceIdleSeconds: 0 });
    engines.push(killed);
    const left = await killed.sandboxes.create(spec('left'));
    await killed.sandboxes.destroy(left.id);
    killed.close();
    engines.splice(engines.indexOf(killed), 1);
    const pids = servicePids();
    expect(pids.length).toBeGreaterThan(1); // the main service and the runtime-specific one

    // The next serve adopts them all (starts none) and works through them, then exits cleanly.
    const serve = await PodmanEngine.open({ home, env, discover: false });
    engines.push(serve);
    expect(serve.connection.ownedServicePid).toBeUndefined();
    const made = await serve.sandboxes.create(spec('adopter'));
    await serve.sandboxes.destroy(made.id);
    expect(servicePids().sort()).toEqual([...pids].sort()); // nothing of its own started
    const sockets = [serve.connection.socketPath, ...['runc', 'runsc'].map((r) => join(home, 'run', `podman-${r}.sock`))];
    serve.close();
    engines.splice(engines.indexOf(serve), 1);

    // Every one of them ends (the vitest timeout is the hang guard: the old close left them all running).
    while (pids.some(alive)) await new Promise((r) => setTimeout(r, 50));
    for (const socket of sockets) expect(await pingSocket(socket, 500)).toBe(false);
  });
});
