import { describe, expect, it } from 'vitest';
import type { Stats } from 'node:fs';
import { userNamespaceCheck } from './doctor.js';
import { secretsCheck } from './secrets-check.js';

describe('doctor: user namespaces', () => {
  it('passes with a "containers" range in both files, and says what to add when one is missing', () => {
    const files: Record<string, string> = {
      '/etc/subuid': 'alice:100000:65536\ncontainers:2147483647:2147483648\n',
      '/etc/subgid': 'alice:100000:65536\n',
    };
    const read = (f: string) => {
      if (!(f in files)) throw new Error('ENOENT');
      return files[f]!;
    };
    const missing = userNamespaceCheck(false, read);
    expect(missing).toMatchObject({
      ok: false,
      detail: expect.stringContaining('/etc/subgid'),
      fix: expect.stringContaining('containers:2147483647:2147483648'),
    });
    expect(missing.detail).not.toContain('/etc/subuid');
    files['/etc/subgid'] += 'containers:2147483647:2147483648\n';
    expect(userNamespaceCheck(false, read).ok).toBe(true);
    expect(userNamespaceCheck(true, () => '').ok).toBe(true);
    expect(
      userNamespaceCheck(false, () => {
        throw new Error('EACCES');
      }).ok,
    ).toBe(false);
  });
});

describe('doctor: agent separation', () => {
  const stats = (modes: Record<string, number>) => (p: string) => {
    const name = Object.keys(modes).find((k) => p.endsWith(k));
    if (!name) throw new Error('ENOENT');
    return { uid: 1000, mode: modes[name]! } as Stats;
  };
  it('fails when a secret or the home is readable beyond its owner, and says how to close it', () => {
    const open = secretsCheck('/h/warden', stats({ '/h/warden': 0o40755, 'user.token': 0o100644 }));
    expect(open).toMatchObject({
      ok: false,
      detail: expect.stringContaining('user.token (mode 644)'),
      fix: expect.stringContaining('chmod go-rw /h/warden'),
    });
    expect(open.detail).toContain('/h/warden (mode 755)');
  });
  it('fails for a ledger others can read (every command and its output preview)', () => {
    const open = secretsCheck('/h/warden', stats({ '/h/warden': 0o40711, 'ledger.db': 0o100644 }));
    expect(open).toMatchObject({ ok: false, detail: expect.stringContaining('ledger.db (mode 644)') });
  });
  it('lets others pass through the home (0711: sandbox disks live in it) when nothing in it is theirs to read', () => {
    const ok = secretsCheck('/h/warden', stats({ '/h/warden': 0o40711, 'user.token': 0o100600, 'ledger.db': 0o100600 }));
    expect(ok.ok).toBe(true);
  });
  it('passes when only the owner can read them, and still says agents belong under another user', () => {
    const closed = secretsCheck('/h/warden', stats({ '/h/warden': 0o40700, 'user.token': 0o100600, 'ui-token': 0o100600 }));
    expect(closed).toMatchObject({ ok: true, detail: expect.stringContaining('run agents as another user') });
    expect(closed.detail).toContain('uid 1000');
  });
});
