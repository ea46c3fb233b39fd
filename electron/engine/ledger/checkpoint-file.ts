// The newest signed checkpoint, kept in a plain file beside (not inside) the database. A database
// restored from an old copy, cut short or rewritten no longer matches it, and the file is a standard
// C2SP signed note that any tool can read.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncDir } from './fsync-dir.js';

export function checkpointFileFor(ledgerFile: string): string {
  return `${ledgerFile}.checkpoint`;
}

export function readCheckpointFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Replaces the file whole: a reader sees the old note or the new one, never a mix. */
export function writeCheckpointFile(path: string, note: string): void {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, note);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}
