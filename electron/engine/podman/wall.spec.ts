import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLONE_NAMESPACE_FLAGS, NOT_IMPLEMENTED, REFUSED } from '../../../scripts/seccomp-profile.mjs';

interface Rule {
  names: string[];
  action: string;
  errnoRet?: number;
  args?: Array<{ index: number; value: number; op: string }>;
  includes?: { arches?: string[] };
}
const profile = JSON.parse(readFileSync(join(import.meta.dirname, '../../../resources/seccomp/warden.json'), 'utf8')) as {
  defaultAction: string;
  syscalls: Rule[];
};

describe('the committed seccomp profile', () => {
  it('allows none of the refused syscalls anywhere, and refuses each with EPERM', () => {
    for (const name of [...REFUSED, ...NOT_IMPLEMENTED]) {
      const allowing = profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && r.names.includes(name));
      expect(allowing, name).toEqual([]);
    }
    const refused = profile.syscalls.find((r) => r.names.includes('unshare') && r.action === 'SCMP_ACT_ERRNO');
    expect(refused?.errnoRet).toBe(1);
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
  });

  it('allows clone only without namespace flags', () => {
    const clones = profile.syscalls.filter((r) => r.names.includes('clone'));
    expect(clones.length).toBeGreaterThan(0);
    for (const rule of clones) {
      expect(rule.action).toBe('SCMP_ACT_ALLOW');
      expect(rule.args).toEqual([expect.objectContaining({ value: CLONE_NAMESPACE_FLAGS, op: 'SCMP_CMP_MASKED_EQ' })]);
    }
    // Every namespace flag is in the mask: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME.
    for (const flag of [0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000, 0x80]) {
      expect(CLONE_NAMESPACE_FLAGS & flag).toBe(flag);
    }
  });

  it('still allows what ordinary work needs', () => {
    const allowed = new Set(
      profile.syscalls
        .filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args?.length && !Object.keys(r.includes ?? {}).length)
        .flatMap((r) => r.names),
    );
    for (const name of [
      'read',
      'write',
      'openat',
      'execve',
      'fork',
      'vfork',
      'wait4',
      'kill',
      'connect',
      'mmap',
      'futex',
      'epoll_wait',
      'chown',
      'setuid',
    ]) {
      expect(allowed.has(name), name).toBe(true);
    }
  });
});
