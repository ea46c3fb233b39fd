// Where a sandbox's TCP memory bound is written, read from /proc/PID/cgroup as the host sees it.
import { describe, expect, it } from 'vitest';
import { tcpLimitFileOf, tcpMemoryHostCheck } from './tcp-memory.js';

describe('tcpLimitFileOf', () => {
  it('finds the memory controller of a v1 or hybrid hierarchy, joined or not', () => {
    const hybrid = '12:pids:/machine/x\n4:memory:/libpod_parent/libpod-abc\n0::/\n';
    expect(tcpLimitFileOf(hybrid)).toEqual({ file: '/sys/fs/cgroup/memory/libpod_parent/libpod-abc/memory.kmem.tcp.limit_in_bytes' });
    expect(tcpLimitFileOf('5:cpuacct,memory:/a:b\n')).toEqual({ file: '/sys/fs/cgroup/memory/a:b/memory.kmem.tcp.limit_in_bytes' });
  });

  it('says a v2 hierarchy charges socket buffers itself, and names a process with no memory cgroup', () => {
    expect(tcpLimitFileOf('0::/machine.slice/libpod-abc.scope\n')).toEqual({ v2: true });
    expect(tcpLimitFileOf('3:pids:/x\n')).toEqual({ why: 'the sandbox has no memory cgroup' });
  });
});

describe('tcpMemoryHostCheck', () => {
  const v1 = () => '4:memory:/user.slice\n';
  it('passes where the v1 file can be written, and says why not where it cannot', () => {
    expect(tcpMemoryHostCheck(v1, () => undefined).ok).toBe(true);
    const refused = tcpMemoryHostCheck(v1, () => {
      throw new Error('EACCES');
    });
    expect(refused).toMatchObject({ ok: false, detail: expect.stringMatching(/rootless/) });
    expect(tcpMemoryHostCheck(() => '0::/user.slice\n').ok).toBe(true);
  });
});
