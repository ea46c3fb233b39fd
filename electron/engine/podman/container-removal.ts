// Removing a container on Podman 4.3, which races its own cleanup (containers/podman#11594, fixed in
// 4.4): a forced DELETE can fail with `unlinkat …/userdata/shm: device or resource busy` while the
// conmon cleanup still holds the container's shm mount. Podman answers that in one of two ways:
// the container is intact (a later DELETE works), or it is already out of Podman's database with
// its storage left behind ("… root filesystem"), so its name stays taken. A busy mount is waited
// on and the DELETE retried; storage left behind is removed with the local CLI (`podman rm`). A removal that
// still cannot free the storage is reported, not thrown: the sandbox itself is gone.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from './connection.js';

const run = promisify(execFile);
const TRIES = 5;
const FIRST_WAIT_MS = 250;

export function isBusyRemoval(err: unknown): boolean {
  return err instanceof WardenError && /device or resource busy/i.test(err.message);
}

/** The shm mount named in Podman's error, to detach lazily before the storage is removed. */
export function busyMountOf(message: string): string | null {
  return /(?:unlinkat|SHM mount) (\/\S+\/userdata\/shm)/.exec(message)?.[1] ?? null;
}

async function removeLeftStorage(id: string, busyMount: string | null): Promise<void> {
  if (busyMount) await run('umount', ['-l', busyMount]).catch(() => undefined);
  try {
    // For a container only storage still knows, `podman rm` removes the storage (4.3 has no --storage).
    await run('podman', ['rm', '--force', id]);
  } catch (err) {
    const text = `${(err as { stderr?: string }).stderr ?? ''}${(err as Error).message}`;
    // Nothing left to remove is the good case.
    if (/no such container|not known|no container with/i.test(text)) return;
    process.emitWarning(
      `sandbox ${id} is removed but Podman kept its storage (${text.split('\n')[0]}); free it with \`podman rm --force ${id}\``,
      'WardenWarning',
    );
  }
}

export async function removeContainer(conn: PodmanConnection, id: string, onBusy?: () => void): Promise<void> {
  let busy: string | null = null;
  for (let attempt = 1, wait = FIRST_WAIT_MS; ; attempt++, wait *= 2) {
    try {
      await conn.libpod('DELETE', `/containers/${id}?force=true&v=true&timeout=2`, undefined, `sandbox ${id}`, [200, 204, 404]);
      break;
    } catch (err) {
      if (!isBusyRemoval(err) || attempt >= TRIES) throw err;
      busy = busyMountOf((err as Error).message) ?? busy;
      onBusy?.();
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  if (busy !== null) await removeLeftStorage(id, busy);
}
