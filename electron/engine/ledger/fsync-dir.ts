// After a rename or link, the directory's entry is made durable too: fsync on the directory itself.
// Best effort: some filesystems refuse fsync on directories, and the rename or link is atomic anyway.
import { closeSync, fsyncSync, openSync } from 'node:fs';

export function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // refused by this filesystem: the rename or link is still atomic
  }
}
