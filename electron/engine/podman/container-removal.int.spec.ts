// Podman 4.3's removal race, forced rather than waited for: a host process whose working directory
// is the sandbox's shm mount keeps it busy, so Podman's removal fails with EBUSY exactly as when its
// own cleanup holds the mount. The sandbox is initialised, not started: with no process to exit,
// Podman's own cleanup never runs first to detach the mount, so the busy answer always comes. The
// holder lets go when Warden reports it; the removal must then finish, leaving nothing behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { openTestEngine, type TestEngine } from '../../test-support/podman-fixture.js';
import { removeContainer } from './container-removal.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';

let t: TestEngine;
beforeAll(async () => {
  t = await openTestEngine();
});
afterAll(async () => {
  await t?.cleanup();
});

describe('container removal', () => {
  it('waits out a busy shm mount and leaves neither container nor storage', async () => {
    const sb = await t.engine.sandboxes.create({ name: `t-${t.runId}-busy`, labels: { [TEST_LABEL_KEY]: t.runId } }, { start: false });
    await t.engine.connection.libpod('POST', `/containers/${sb.id}/init`, undefined, 'init', [204, 304]);
    const shm = `/var/lib/containers/storage/overlay-containers/${sb.id}/userdata/shm`;
    const holder = spawn('sleep', ['600'], { cwd: shm, stdio: 'ignore' });
    const exited = new Promise((r) => holder.once('exit', r));
    await once(holder, 'spawn'); // its working directory is inside the mount from here on
    let busyAnswers = 0;
    try {
      await removeContainer(t.engine.connection, sb.id, () => {
        busyAnswers += 1;
        holder.kill('SIGKILL');
      });
    } finally {
      holder.kill('SIGKILL');
      await exited;
    }
    expect(busyAnswers).toBeGreaterThan(0);
    const external = spawnSync('podman', ['ps', '-a', '--external', '--no-trunc', '--format', '{{.ID}}'], { encoding: 'utf8' }).stdout;
    expect(external).not.toContain(sb.id);
    expect((await t.engine.sandboxes.list()).some((s) => s.id === sb.id)).toBe(false);
  });
});
