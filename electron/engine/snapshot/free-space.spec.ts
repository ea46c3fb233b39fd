import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WardenError } from '../../../shared/errors.js';
import { ensureRoomFor, reserveOf } from './free-space.js';

describe('room on the disk before a snapshot', () => {
  it('keeps 2 GiB or 5% of the filesystem free, whichever is more', () => {
    expect(reserveOf(10 * 1024 ** 3)).toBe(2 * 1024 ** 3);
    expect(reserveOf(1000 * 1024 ** 3)).toBe(50 * 1024 ** 3);
  });

  it('refuses, saying what is free and what to do, when the archive could eat into the reserve; makes its folder', () => {
    const home = mkdtempSync(join(tmpdir(), 'warden-free-space-'));
    try {
      const dir = join(home, 'snapshots');
      const fs = statfsSync(home);
      const free = fs.bavail * fs.bsize;
      let err: unknown;
      try {
        ensureRoomFor(dir, free, 'a snapshot of box'); // all that is free: nothing would be left for the host
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(WardenError);
      expect((err as WardenError).code).toBe('E_TOO_LARGE');
      expect((err as WardenError).message).toMatch(/^not enough free disk for a snapshot of box: .* is free and .* stays free/);
      expect((err as WardenError).hint).toMatch(/snapshot-rm/);
      if (free - reserveOf(fs.blocks * fs.bsize) > 1024 ** 2) expect(() => ensureRoomFor(dir, 1024, 'a small one')).not.toThrow();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
