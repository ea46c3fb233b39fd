// The wedge for real, on the real Podman: a runtime whose `exec` never returns makes Podman hold its
// lock on that container (as the stuck `runsc exec` processes of a flooded gVisor sandbox did), and
// Podman's list over every container then waits for ever — `podman ps` too. Warden's list still
// answers: the wedged sandbox marked unreachable, the other as it is. (While the wedge holds, every
// list on this Podman waits, other suites' too: it is held only for the two bounds below.)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PodmanEngine } from './podman-engine.js';
import { LABEL } from './labels.js';
import { useTestEngine } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { localPodmanEnv } from './owned-service.js';

const t = useTestEngine();
const dir = mkdtempSync(join(tmpdir(), 'warden-wedge-rt-'));
const hang = join(dir, 'hang');
const entered = join(dir, 'entered');
let stuckExec: ChildProcess | null = null;
const exited = (child: ChildProcess | null) =>
  child && child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : Promise.resolve();

/** Ends the wedge: no more hangs, the hung runtime process (ours: it is this spec's wrapper) ended. */
function unwedge(): void {
  rmSync(hang, { force: true });
  if (existsSync(entered)) {
    try {
      process.kill(Number(readFileSync(entered, 'utf8').trim()), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

afterAll(async () => {
  unwedge();
  await exited(stuckExec);
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves when the wrapper has entered its hang (it writes its pid first): an event, not a wait. */
function wedgeEntered(): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, () => {
      if (!existsSync(entered) || readFileSync(entered, 'utf8').trim() === '') return;
      watcher.close();
      resolve();
    });
    if (existsSync(entered)) {
      watcher.close();
      resolve();
    }
  });
}

describe('a sandbox whose runtime hangs (Podman holds its lock)', () => {
  it('is marked unreachable while the others are listed as they are', async () => {
    const runtime = t.engine.connection.defaultRuntime === 'crun' ? 'crun' : 'runc';
    const wrapper = join(dir, 'runtime.sh');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = exec ] && [ -e ${hang} ]; then echo $$ > ${entered}.tmp; mv ${entered}.tmp ${entered}; exec sleep 3600; fi\ndone\nexec ${runtime} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const fine = await t.create();
    // The wedged one is made with the podman CLI (Warden never takes a runtime path), labelled as this home's sandbox.
    const name = `t-${t.runId}-stuck`;
    const run = spawnSync(
      'podman',
      [
        'run', '-d', '--name', name, '--runtime', wrapper, '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024',
        '--label', `${LABEL.managed}=true`, '--label', `${LABEL.home}=${t.engine.sandboxes.homeId}`, '--label', `${TEST_LABEL_KEY}=${t.runId}`,
        t.engine.sandboxes.defaultImage, 'sleep', 'infinity',
      ],
      { encoding: 'utf8', env: localPodmanEnv() },
    ); // prettier-ignore
    expect(run.status, run.stderr).toBe(0);
    const stuckId = run.stdout.trim();

    const engine = await PodmanEngine.open({ home: t.home, startService: false, listBounds: { wholeMs: 1000, sandboxMs: 5000 } });
    try {
      // Seen by this process first (an inspect is remembered; a list would be too, but its bound here is short).
      expect((await engine.sandboxes.inspect(stuckId)).state).toBe('running');
      await engine.sandboxes.inspect(fine.id);
      writeFileSync(hang, '');
      const inPlace = wedgeEntered();
      stuckExec = spawn('podman', ['exec', stuckId, 'true'], { stdio: 'ignore', env: localPodmanEnv() });
      await inPlace;
      try {
        const rows = await engine.sandboxes.list();
        expect(rows.find((s) => s.id === stuckId)!.unreachable).toMatchObject({ code: 'E_TIMEOUT' });
        expect(rows.find((s) => s.id === fine.id)).toMatchObject({ state: 'running' });
        expect(rows.find((s) => s.id === fine.id)!.unreachable).toBeUndefined();
      } finally {
        unwedge();
      }
    } finally {
      engine.close();
      // Removed here, while its runtime wrapper is still there to stop it (the fixture's sweep comes after the folder is gone).
      await exited(stuckExec);
      spawnSync('podman', ['rm', '-f', '-t', '0', stuckId], { stdio: 'ignore', env: localPodmanEnv() });
    }
  });
});
