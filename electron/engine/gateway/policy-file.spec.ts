import { mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadPolicy } from './policy-load.js';
import { PolicyFile } from './policy-file.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'warden-policy-file-'));
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(home, { recursive: true, force: true });
});

/** The shipped default policy (read from a home without a file), with this egress default. */
const withDefault = (egressDefault: 'allow' | 'deny' | 'ask') => {
  const empty = mkdtempSync(join(tmpdir(), 'warden-policy-default-'));
  const base = loadPolicy(empty).policy;
  rmSync(empty, { recursive: true });
  return JSON.stringify({ ...base, egress: { ...base.egress, default: egressDefault } });
};

describe("the gateway's policy follows the home's file", () => {
  it('applies an edit at the next read, with no restart', () => {
    writeFileSync(join(home, 'policy.json'), withDefault('deny'));
    const loaded = loadPolicy(home);
    const f = new PolicyFile(home, loaded.policy, loaded.source);
    expect(f.policy.egress.default).toBe('deny');
    writeFileSync(join(home, 'policy.json'), `${withDefault('ask')}\n`); // another size: a new version
    expect(f.policy.egress.default).toBe('ask');
    expect(f.source).toBe(join(home, 'policy.json'));
  });

  it('keeps the last good policy while the file does not parse, and says why; a fixed file applies', () => {
    writeFileSync(join(home, 'policy.json'), withDefault('ask'));
    const loaded = loadPolicy(home);
    const f = new PolicyFile(home, loaded.policy, loaded.source);
    writeFileSync(join(home, 'policy.json'), '{"egress": {"default": "sometimes"}}');
    expect(f.policy.egress.default).toBe('ask');
    expect(f.error).toMatch(/policy .*policy\.json/);
    writeFileSync(join(home, 'policy.json'), withDefault('deny'));
    expect(f.policy.egress.default).toBe('deny');
    expect(f.error).toBeNull();
  });

  it('goes back to the shipped default when the file is removed, and never follows a policy a caller gave', () => {
    writeFileSync(join(home, 'policy.json'), withDefault('allow'));
    const loaded = loadPolicy(home);
    const f = new PolicyFile(home, loaded.policy, loaded.source);
    unlinkSync(join(home, 'policy.json'));
    expect(f.policy.egress.default).toBe('deny');
    const given = new PolicyFile(null, loaded.policy, null);
    writeFileSync(join(home, 'policy.json'), withDefault('deny'));
    expect(given.policy.egress.default).toBe('allow');
  });
});
