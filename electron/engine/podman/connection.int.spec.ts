// The engine going away: clear errors, no crash, fail fast while down, recovery on its own.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxSpecSchema } from '../../../shared/types/sandbox.js';
import type { ConnectionStatus } from '../../../shared/types/engine.js';
import { PodmanEngine } from './podman-engine.js';
import { PodmanConnection } from './connection.js';
import { OwnedService } from './owned-service.js';
import { collectExec, runExec } from './exec-session.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'warden-conn-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

async function until(what: string, probe: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('engine connection', () => {
  it('starts and owns a Podman service when none answers, and stops it on close', async () => {
    const home = tempHome();
    const conn = await PodmanConnection.open({ home, discover: false });
    expect(conn.info()).toMatchObject({ source: 'owned-service', status: 'connected', kind: 'podman' });
    expect(conn.info().version).toMatch(/^\d+\.\d+/);
    expect(conn.info().cgroupVersion).toMatch(/^v[12]$/);
    const pid = conn.ownedServicePid!;
    expect(pid).toBeGreaterThan(0);
    conn.close();
    await until('service exit', () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
  });

  it('fails an exec clearly when the engine dies mid-command, then recovers by itself', async () => {
    const home = tempHome();
    const engine = await PodmanEngine.open({ home, discover: false });
    const statuses: ConnectionStatus[] = [];
    engine.connection.on('status', (s) => statuses.push(s));
    const sb = await engine.sandboxes.create(SandboxSpecSchema.parse({ labels: { [TEST_LABEL_KEY]: 'conn' } }));
    cleanups.push(async () => {
      await engine.sandboxes.destroy(sb.id).catch(() => undefined);
      engine.close();
    });

    // Killed once the command has said it is running: mid-command however slow the machine is.
    let said = '';
    const running = runExec(engine.connection, sb.id, { cmd: 'echo started; sleep 5; echo done' }, { onStdout: (c) => (said += c) });
    await until('the command running', () => said.includes('started'));
    process.kill(engine.connection.ownedServicePid!, 'SIGKILL');
    await expect(running).rejects.toMatchObject({ code: 'E_ENGINE_UNREACHABLE' });
    expect(statuses[0]).toBe('connecting');

    // Warden restarts the service it owns; the sandbox (kept by conmon) is still there.
    await until('reconnected', () => engine.connection.status === 'connected');
    const after = await collectExec(engine.connection, sb.id, { cmd: 'echo back' });
    expect(after.stdout.toString()).toBe('back\n');
  });

  it('fails fast while someone else’s engine is down and reconnects when it returns', async () => {
    const home = tempHome();
    const service = await OwnedService.start({ home, idleSeconds: 0, detached: false });
    cleanups.push(() => service.stop());
    const conn = await PodmanConnection.open({ home, socketPath: service.socketPath });
    cleanups.push(() => conn.close());

    process.kill(service.pid!, 'SIGKILL');
    await until('service gone', () => {
      try {
        process.kill(service.pid!, 0);
        return false;
      } catch {
        return true;
      }
    });
    await expect(conn.refreshInfo()).rejects.toMatchObject({
      code: 'E_ENGINE_UNREACHABLE',
      hint: expect.stringMatching(/podman system service/),
    });
    await expect(conn.refreshInfo()).rejects.toMatchObject({ code: 'E_ENGINE_UNREACHABLE' });
    await until('unreachable', () => conn.status === 'unreachable');

    const again = await OwnedService.start({ home, idleSeconds: 0, detached: false });
    cleanups.push(() => again.stop());
    await until('reconnected', () => conn.status === 'connected');
    await expect(conn.refreshInfo()).resolves.toBeUndefined();
  });

  it('lets a call made while one blip is being checked wait for the check, and go through when the engine answers', async () => {
    const home = tempHome();
    const service = await OwnedService.start({ home, idleSeconds: 0, detached: false });
    cleanups.push(() => service.stop());
    const conn = await PodmanConnection.open({ home, socketPath: service.socketPath });
    cleanups.push(() => conn.close());
    const statuses: ConnectionStatus[] = [];
    conn.on('status', (s) => statuses.push(s));
    // As a runner channel lost on a busy host reports it: the engine is thought gone, and is not.
    conn.markUnreachable();
    expect(conn.status).toBe('connecting');
    await expect(conn.refreshInfo()).resolves.toBeUndefined();
    expect(statuses).toEqual(['connecting', 'connected']);
  });
});
