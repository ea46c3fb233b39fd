// A Warden home's id is made once and then always the same; two homes differ; a file that does not
// hold an id is refused with what to do, never silently replaced (that would orphan the sandboxes).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOME_ID_FILE, homeId } from './home-id.js';

describe('homeId', () => {
  it('is made once, kept owner-only, and differs between homes', () => {
    const a = mkdtempSync(join(tmpdir(), 'warden-home-a-'));
    const b = mkdtempSync(join(tmpdir(), 'warden-home-b-'));
    try {
      const id = homeId(a);
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(homeId(a)).toBe(id);
      expect(statSync(join(a, HOME_ID_FILE)).mode & 0o777).toBe(0o600);
      expect(homeId(b)).not.toBe(id);
      writeFileSync(join(b, HOME_ID_FILE), 'garbage\n');
      expect(() => homeId(b)).toThrow(expect.objectContaining({ code: 'E_INTERNAL' }));
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });
});
