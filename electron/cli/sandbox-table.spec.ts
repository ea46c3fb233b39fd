// `warden sandbox ls`: the disk column says when a host does not hold the limit.
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
});
