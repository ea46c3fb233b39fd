// `warden sandbox ls`: the disk column says when a host does not hold the limit; a sandbox Podman did
// not answer for says so, with what to do.
import { describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import { formatSandboxTable } from './sandbox-table.js';

const base: SandboxInfo = {
  id: 'a'.repeat(64),
  name: 'box',
  image: 'img',
  state: 'running',
  runtime: 'runc',
  network: 'none',
  workspace: null,
  limits: {
    memoryBytes: 512 * 1024 ** 2,
    cpus: 1,
    pids: 256,
    readOnlyRoot: false,
    tmpSizeBytes: null,
    diskBytes: 4 * 1024 ** 3,
    diskEnforced: true,
  },
  createdAt: '2026-01-01T00:00:00Z',
  startedAt: null,
  expiresAt: null,
  labels: {},
  exitCode: null,
  oomKilled: false,
  exitReason: null,
};

describe('sandbox table', () => {
  it('shows the disk limit, and marks one this host does not enforce', () => {
    expect(formatSandboxTable([base])).toMatch(/DISK[\s\S]*4\.0 GiB(?! \(not enforced\))/);
    expect(formatSandboxTable([{ ...base, limits: { ...base.limits, diskEnforced: false } }])).toMatch(/4\.0 GiB \(not enforced\)/);
  });

  it('marks a sandbox Podman did not answer for, and prints its message and hint under the table', () => {
    const stuck: SandboxInfo = {
      ...base,
      name: 'stuck',
      unreachable: { code: 'E_TIMEOUT', message: 'Podman did not answer for sandbox stuck within 10 s', hint: 'podman rm -f aaaaaaaaaaaa' },
    };
    const out = formatSandboxTable([base, stuck]);
    expect(out).toMatch(/^stuck\s+unreachable\s/m);
    expect(out).toMatch(/^box\s+running\s/m);
    expect(out).toContain('stuck: Podman did not answer for sandbox stuck within 10 s\n  podman rm -f aaaaaaaaaaaa\n');
  });
});
