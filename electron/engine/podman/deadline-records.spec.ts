// The TTL record after create: it wins over the create's label where there is one, a damaged one is
// ignored (the label's deadline holds), and only container ids name a record.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { DeadlineRecords } from './deadline-records.js';

const id = 'a'.repeat(64);
const homes: string[] = [];
const records = () => {
  const home = mkdtempSync(join(tmpdir(), 'warden-deadlines-'));
  homes.push(home);
  return new DeadlineRecords(home);
};
const info = (expiresAt: string | null) => ({ id, expiresAt }) as SandboxInfo;

afterEach(() => homes.splice(0).forEach((h) => rmSync(h, { recursive: true, force: true })));

describe('DeadlineRecords', () => {
  it('overrides the label deadline, later or earlier, or takes it away; a removed record leaves the label', () => {
    const r = records();
    expect(r.view(info('2030-01-01T00:00:00.000Z')).expiresAt).toBe('2030-01-01T00:00:00.000Z');
    r.put(id, { expiresAt: '2031-01-01T00:00:00.000Z', setAt: 'now' });
    expect(r.view(info('2030-01-01T00:00:00.000Z')).expiresAt).toBe('2031-01-01T00:00:00.000Z');
    r.put(id, { expiresAt: null, setAt: 'now' });
    expect(r.view(info('2030-01-01T00:00:00.000Z')).expiresAt).toBeNull();
    expect(r.ids()).toEqual(new Set([id]));
    r.remove(id);
    expect(r.view(info('2030-01-01T00:00:00.000Z')).expiresAt).toBe('2030-01-01T00:00:00.000Z');
  });

  it('ignores a damaged record and refuses a name that is not a container id', () => {
    const r = records();
    r.put(id, { expiresAt: '2031-01-01T00:00:00.000Z', setAt: 'now' });
    writeFileSync(join(r.dir, `${id}.json`), '{"expiresAt":"not a time","setAt":"x"}');
    expect(r.view(info('2030-01-01T00:00:00.000Z')).expiresAt).toBe('2030-01-01T00:00:00.000Z');
    expect(() => r.put('../escape', { expiresAt: null, setAt: 'now' })).toThrow(/not a container id/);
    expect(r.get('../escape')).toBeNull();
  });
});
