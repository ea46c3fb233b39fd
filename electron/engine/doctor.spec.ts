import { describe, expect, it } from 'vitest';
import { userNamespaceCheck } from './doctor.js';

describe('doctor: user namespaces', () => {
  it('passes with a "containers" range in both files, and says what to add when one is missing', () => {
    const files: Record<string, string> = { '/etc/subuid': 'alice:100000:65536\ncontainers:2147483647:2147483648\n', '/etc/subgid': 'alice:100000:65536\n' };
    const read = (f: string) => {
      if (!(f in files)) throw new Error('ENOENT');
      return files[f]!;
    };
    const missing = userNamespaceCheck(false, read);
    expect(missing).toMatchObject({ ok: false, detail: expect.stringContaining('/etc/subgid'), fix: expect.stringContaining('containers:2147483647:2147483648') });
    expect(missing.detail).not.toContain('/etc/subuid');
    files['/etc/subgid'] += 'containers:2147483647:2147483648\n';
    expect(userNamespaceCheck(false, read).ok).toBe(true);
    expect(userNamespaceCheck(true, () => '').ok).toBe(true);
    expect(userNamespaceCheck(false, () => { throw new Error('EACCES'); }).ok).toBe(false);
  });
});
