// A Podman service of this home that another Warden process started (the CLI, with an idle
// timeout) and serve adopted is serve's to keep alive (issue 12): when it dies, serve starts it
// again, and creates (which go through the runtime-specific service) work again without a restart.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
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
    await Promise.race([reconnected, new Promise((_, reject) => (guard = setTimeout(() => reject(new Error('never reconnected to the adopted service')), 30_000)))]);
    clearTimeout(guard);

    const after = await serve.sandboxes.create(spec('after'));
    expect(after.state).toBe('running');
    await serve.sandboxes.destroy(after.id);
    expect(serve.connection.ownedServicePid).toBeDefined(); // serve owns what it adopted
  });
});
