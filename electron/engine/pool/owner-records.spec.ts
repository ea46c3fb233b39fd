// The owner of a claimed pool sandbox lives in WARDEN_HOME, read by every process of the home.
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { OwnerRecords } from './owner-records.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
const home = () => {
  const h = mkdtempSync(join(tmpdir(), 'warden-owners-'));
  homes.push(h);
  return h;
};
const id = (c: string) => c.repeat(64);
const record = { name: 'mine', labels: { team: 'a' }, expiresAt: '2030-01-01T00:00:00.000Z', claimedAt: '2026-01-01T00:00:00.000Z' };

describe('OwnerRecords', () => {
  it('is read back by another process of the home, and pruned with its container', () => {
    const h = home();
    new OwnerRecords(h).put(id('a'), record);
    const other = new OwnerRecords(h);
    expect(other.get(id('a'))).toEqual(record);
    expect(other.get(id('b'))).toBeNull();
    other.prune(new Set([id('b')]));
    expect(new OwnerRecords(h).get(id('a'))).toBeNull();
    expect(readdirSync(other.dir)).toEqual([]);
  });

  it('hides a pool sandbox until claimed, then shows it with its owner labels and TTL', () => {
    const owners = new OwnerRecords(home());
    const info = { id: id('c'), labels: { 'warden-test.run': 'x' }, expiresAt: null } as unknown as SandboxInfo;
    const labels = { 'warden.pool': 'k', 'warden-test.run': 'x' };
    expect(owners.waiting(info.id, labels)).toBe(true);
    expect(owners.waiting(info.id, { 'warden.managed': 'true' })).toBe(false);
    owners.put(info.id, record);
    expect(owners.waiting(info.id, labels)).toBe(false);
    expect(owners.view(info, labels)).toMatchObject({ labels: { team: 'a' }, expiresAt: record.expiresAt });
    // A sandbox not made by the pool keeps its own labels even if a record had its id.
    expect(owners.view(info, { 'warden.managed': 'true' })).toBe(info);
  });

  it('refuses what is not a container id', () => {
    const owners = new OwnerRecords(home());
    expect(() => owners.put('../x', record)).toThrow();
    expect(owners.get('../x')).toBeNull();
  });
});
