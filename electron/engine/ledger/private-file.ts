// Who may read the ledger's file on this host.
import { chmodSync, closeSync, openSync, statSync } from 'node:fs';

/**
 * The ledger holds every agent's commands and output previews: its owner's alone (SQLite gives its
 * -wal and -shm files the same mode). The home may be traversable by others (a sandbox's disk lives
 * in it), so the file's own mode is what keeps other local users out.
 */
export function keepPrivate(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  if (statSync(file).mode & 0o077) chmodSync(file, 0o600);
}
