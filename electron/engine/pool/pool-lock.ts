// One warm pool per Warden home: two processes (the app and `warden serve`) adopting each other's
// pooled sandboxes could hand one sandbox to two owners. The lock is a file holding the pid; a
// holder that is gone (kill -9) leaves a stale file, which the next opener takes over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Takes the home's pool lock; returns its release, or null while a live process holds it. */
export function takePoolLock(home: string): (() => void) | null {
  const dir = join(home, 'pool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        if (holder(path) === process.pid) rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = holder(path);
      if (pid !== null && pid !== process.pid && alive(pid)) return null;
      rmSync(path, { force: true });
    }
  }
  return null;
}

function holder(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
