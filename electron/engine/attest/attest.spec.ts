// The probe's output as runc and gVisor sandboxes print it → the verdict per promise. The runc
// sample is a real sandbox's; the gVisor one has what gVisor differs in (no NoNewPrivs or Seccomp
// lines, its own kernel and dmesg banner, gofer mounts, no cgroup files inside).
import { describe, expect, it } from 'vitest';
import { buildProbe, parseSections, SECTION_MARK, shQuote } from './probe.js';
import { plainChecks, type AttestExpectations } from './verdict.js';
import { deepChecks, deepTries } from './deep.js';
import { parseMountinfo, unexpectedHostMounts } from './mounts.js';

const HOST_VERSION = 'Linux version 6.18.44-fc-v769 (builder@sandboxing) #1 SMP PREEMPT_DYNAMIC @0';
const MiB = 1024 * 1024;

const sec = (parts: Record<string, string>) =>
  Object.entries(parts)
    .map(([k, v]) => `\n${SECTION_MARK} ${k}\n${v}`)
    .join('\n');

const RUNC_MOUNTS = `300 216 0:102 / / rw,relatime - overlay overlay rw,lowerdir=/x
301 300 0:105 / /proc rw,nosuid - proc proc rw
302 300 0:106 / /dev rw,nosuid - tmpfs tmpfs rw
303 300 0:107 / /sys ro - sysfs sysfs ro
304 300 254:0 /usr/bin/catatonit /run/podman-init ro,relatime - ext4 /dev/vda rw
307 300 254:0 /run/containers/storage/overlay-containers/abc/userdata/hostname /etc/hostname rw - ext4 /dev/vda rw
308 300 254:0 /run/containers/storage/overlay-containers/abc/userdata/hosts /etc/hosts rw - ext4 /dev/vda rw
310 300 254:0 /run/containers/storage/overlay-containers/abc/userdata/.containerenv /run/.containerenv rw - ext4 /dev/vda rw
315 311 0:32 /libpod_parent/libpod-abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory
321 302 0:6 /null /dev/null rw - devtmpfs devtmpfs rw
244 301 0:6 /null /proc/keys rw - devtmpfs devtmpfs rw`;

const RUNC = sec({
  version: HOST_VERSION,
  status:
    'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2',
  uid_map: '         0 2147483647      65536',
  dmesg: 'dmesg: read kernel buffer failed: Operation not permitted',
  netdev: 'Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n    lo:       0       0    0',
  mountinfo: RUNC_MOUNTS,
  memory: '/sys/fs/cgroup/memory/memory.limit_in_bytes 536870912',
  pids: '/sys/fs/cgroup/pids/pids.max 256',
  reachable: '',
});

const GVISOR = sec({
  version: 'Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016',
  status: 'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000',
  uid_map: '         0          0 4294967295',
  dmesg: '[   0.000000] Starting gVisor...\n[   0.512000] Reticulating splines...',
  netdev: 'Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n    lo:       0       0    0',
  mountinfo:
    '1 0 0:1 / / rw - 9p none rw\n2 1 0:2 / /proc rw - proc none rw\n3 1 0:3 / /dev rw - devtmpfs none rw\n4 1 0:4 / /etc/hosts rw - 9p none rw',
  memory: 'none',
  pids: 'none',
  reachable: '',
});

const expectRunc = (over: Partial<AttestExpectations> = {}): AttestExpectations => ({
  runtime: 'runc',
  rootless: false,
  network: 'none',
  readOnlyRoot: false,
  memoryBytes: 512 * MiB,
  pids: 256,
  workspace: null,
  deep: false,
  host: { procVersion: HOST_VERSION, memory: '536870912', pids: '256' },
  ...over,
});

const byId = (checks: ReturnType<typeof plainChecks>) => Object.fromEntries(checks.map((c) => [c.id, c]));

describe('attestation verdicts', () => {
  it('passes a hardened runc sandbox on every plain promise, skipping only what was not promised', () => {
    const checks = plainChecks(parseSections(RUNC), expectRunc());
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    const c = byId(checks);
    expect(c['read-only-root']).toMatchObject({ skipped: true });
    expect(checks.filter((x) => x.skipped).map((x) => x.id)).toEqual(['read-only-root']);
    expect(c['memory-limit']!.evidence).toContain('sandbox sees 512 MiB');
    expect(c['runtime']!.evidence).toContain('is the host’s');
  });

  it('passes a gVisor sandbox, saying which promises gVisor shows another way', () => {
    const e = expectRunc({ runtime: 'runsc', host: { procVersion: HOST_VERSION, memory: '536870912', pids: '576' } });
    const c = byId(plainChecks(parseSections(GVISOR), e));
    expect(Object.values(c).filter((x) => !x.ok)).toEqual([]);
    expect(c['runtime']!.evidence).toMatch(/Starting gVisor.*differs from the host’s/);
    expect(c['no-new-privileges']).toMatchObject({ skipped: true, evidence: expect.stringContaining('n/a under gVisor') });
    expect(c['seccomp']!.skipped).toBe(true);
    expect(c['memory-limit']!.evidence).toContain('no cgroup file inside gVisor');
  });

  it('fails a runc sandbox that is really gVisor-less where gVisor was promised, and the reverse', () => {
    expect(byId(plainChecks(parseSections(RUNC), expectRunc({ runtime: 'runsc' })))['runtime']!.ok).toBe(false);
    expect(byId(plainChecks(parseSections(GVISOR), expectRunc()))['runtime']!.ok).toBe(false);
    // krun: a guest kernel of its own, or it is no microVM
    expect(byId(plainChecks(parseSections(RUNC), expectRunc({ runtime: 'krun' })))['runtime']!.ok).toBe(false);
    expect(
      byId(plainChecks(parseSections(RUNC.replace(HOST_VERSION, 'Linux version 6.2.0 (libkrunfw)')), expectRunc({ runtime: 'krun' })))[
        'runtime'
      ]!.ok,
    ).toBe(true);
  });

  it('fails a sandbox whose limits differ from the promise, naming both numbers', () => {
    const c = byId(plainChecks(parseSections(RUNC), expectRunc({ memoryBytes: 256 * MiB })));
    expect(c['memory-limit']!.ok).toBe(false);
    expect(c['memory-limit']!.evidence).toMatch(/512 MiB.*256 MiB/);
    const host = byId(plainChecks(parseSections(RUNC), expectRunc({ host: { procVersion: HOST_VERSION, memory: 'max', pids: '256' } })));
    expect(host['memory-limit']).toMatchObject({ ok: false, evidence: expect.stringContaining('host’s cgroup says no limit') });
  });

  it('fails capabilities, no-new-privs, seccomp and the user namespace of a plain root container', () => {
    const weak = RUNC.replace('CapEff:\t0000000000000000', 'CapEff:\t00000000a80425fb')
      .replace('NoNewPrivs:\t1', 'NoNewPrivs:\t0')
      .replace('Seccomp:\t2', 'Seccomp:\t0')
      .replace('0 2147483647      65536', '0 0 4294967295');
    const c = byId(plainChecks(parseSections(weak), expectRunc()));
    expect([c['capabilities'], c['no-new-privileges'], c['seccomp'], c['user-namespace']].map((x) => x!.ok)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(c['capabilities']!.evidence).toContain('CapEff=a80425fb');
  });

  it('judges the network against what was promised', () => {
    const eth = RUNC.replace('    lo:       0       0    0', '    lo: 0 0 0\n  eth0: 1 2 3');
    expect(byId(plainChecks(parseSections(eth), expectRunc()))['network']).toMatchObject({ ok: false, evidence: 'interfaces: lo, eth0' });
    expect(byId(plainChecks(parseSections(eth), expectRunc({ network: 'nat' })))['network']).toMatchObject({
      ok: true,
      evidence: 'interfaces: lo, eth0',
    });
  });

  it('checks a read-only root by the EROFS of a write', () => {
    const ro = `${RUNC}\n${SECTION_MARK} rootwrite\nrefused: /bin/sh: 1: cannot create /.warden-attest-7: Read-only file system`;
    expect(byId(plainChecks(parseSections(ro), expectRunc({ readOnlyRoot: true })))['read-only-root']!.ok).toBe(true);
    const rw = `${RUNC}\n${SECTION_MARK} rootwrite\nwritten`;
    expect(byId(plainChecks(parseSections(rw), expectRunc({ readOnlyRoot: true })))['read-only-root']!.ok).toBe(false);
  });

  it('fails a reachable engine socket and a host mount beyond the workspace', () => {
    const leaky = RUNC.replace(`${SECTION_MARK} reachable\n`, `${SECTION_MARK} reachable\n/run/podman/podman.sock`).replace(
      RUNC_MOUNTS,
      `${RUNC_MOUNTS}\n400 300 254:0 /root/.warden /data rw - ext4 /dev/vda rw`,
    );
    const c = byId(plainChecks(parseSections(leaky), expectRunc()));
    expect(c['engine-socket']).toMatchObject({ ok: false, evidence: 'reachable: /run/podman/podman.sock' });
    expect(c['mounts']).toMatchObject({ ok: false, evidence: expect.stringContaining('/data (ext4 /root/.warden)') });
  });
});

describe('mounts from the host', () => {
  it('allows the workspace only when one was promised', () => {
    const m = parseMountinfo(`${RUNC_MOUNTS}\n401 300 254:0 /home/me/proj /workspace rw - ext4 /dev/vda rw`);
    expect(unexpectedHostMounts(m, '/home/me/proj')).toEqual([]);
    expect(unexpectedHostMounts(m, null)).toEqual(['/workspace (ext4 /home/me/proj)']);
  });

  it('allows an egress sandbox its socket directory, read-only, and nothing else there', () => {
    const ro = `${RUNC_MOUNTS}\n402 300 254:0 /root/.warden/egress/0123456789abcdef /.warden/egress ro,nosuid,nodev,noexec - ext4 /dev/vda rw`;
    expect(unexpectedHostMounts(parseMountinfo(ro), null, true)).toEqual([]);
    // Writable, or in a sandbox of another network mode, or anything below it: refused.
    expect(unexpectedHostMounts(parseMountinfo(ro.replace('ro,nosuid', 'rw,nosuid')), null, true)).toEqual([
      '/.warden/egress (ext4, writable)',
    ]);
    expect(unexpectedHostMounts(parseMountinfo(ro), null, false)).toEqual(['/.warden/egress (ext4 /root/.warden/egress/0123456789abcdef)']);
    const below = `${ro}\n403 402 254:0 /etc /.warden/egress/etc ro - ext4 /dev/vda rw`;
    expect(unexpectedHostMounts(parseMountinfo(below), null, true)).toEqual(['/.warden/egress/etc (ext4 /etc)']);
    // gVisor shows it as a gofer (9p) mount with the same options.
    const gvisor = '33 16 0:26 / /.warden/egress ro,noexec - 9p none ro,trans=fd,rfdno=6,wfdno=6,aname=/';
    expect(unexpectedHostMounts(parseMountinfo(gvisor), null, true)).toEqual([]);
    expect(byId(plainChecks(parseSections(RUNC.replace(RUNC_MOUNTS, ro)), expectRunc({ network: 'egress' })))['mounts']).toMatchObject({
      ok: true,
      promise: 'only the egress socket’s directory (read-only) is mounted from the host',
    });
  });

  it('reads escaped mount points', () => {
    expect(parseMountinfo('1 0 0:1 / /a\\040b rw - ext4 /dev/x rw')[0]!.mountPoint).toBe('/a b');
  });
});

describe('deep tries', () => {
  const deep = (parts: Record<string, string>, e = expectRunc({ deep: true })) => byId(deepChecks(parseSections(sec(parts)), e));

  it('reads the real runc answers as held promises', () => {
    const c = deep({
      'deep.pids': 'exit=2\nstarted=28\n/bin/sh: 0: Cannot fork',
      'deep.memory': 'with=python3\nexit=137\n',
      'deep.userns': 'exit=1\nunshare: unshare failed: Operation not permitted',
      'deep.cgroup':
        '/sys/fs/cgroup/memory/memory.limit_in_bytes refused: /bin/sh: 25: cannot create /sys/fs/cgroup/memory/memory.limit_in_bytes: Read-only file system',
    });
    expect(Object.values(c).filter((x) => !x.ok)).toEqual([]);
    expect(c['deep.pids']!.evidence).toContain('Cannot fork');
    expect(c['deep.memory']!.evidence).toContain('OOM killer');
    expect(c['deep.cgroup-write']!.evidence).toContain('Read-only file system');
    expect(c['deep.disk']).toMatchObject({ skipped: true, evidence: expect.stringContaining('not tried') });
  });

  it('fails limits that did not hold', () => {
    const c = deep({
      'deep.pids': 'exit=0\nstarted=288',
      'deep.memory': 'with=python3\nexit=0\n',
      'deep.userns': 'exit=0\n',
      'deep.cgroup': '/sys/fs/cgroup/pids/pids.max written',
    });
    expect(['deep.pids', 'deep.memory', 'deep.userns', 'deep.cgroup-write'].map((id) => c[id]!.ok)).toEqual([false, false, false, false]);
  });

  it('skips with a reason what the image or tier cannot try', () => {
    expect(deep({ 'deep.memory': 'no-allocator\n' })['deep.memory']).toMatchObject({
      skipped: true,
      evidence: expect.stringContaining('neither python3 nor perl'),
    });
    const g = deep({}, expectRunc({ runtime: 'runsc', deep: true }));
    expect(g['deep.pids']!.skipped && g['deep.memory']!.skipped).toBe(true);
    expect(deepTries(expectRunc({ runtime: 'runsc' })).allocateBytes).toBeNull();
  });
});

describe('the probe script', () => {
  it('quotes host paths and adds the write and deep tries only when asked', () => {
    const plain = buildProbe({ forbiddenPaths: ["/tmp/it's home"], readOnlyRoot: false, deep: null });
    expect(plain).toContain(`'/tmp/it'\\''s home'`);
    expect(plain).not.toContain('rootwrite');
    expect(plain).not.toContain('deep.');
    const full = buildProbe({ forbiddenPaths: [], readOnlyRoot: true, deep: { forkTries: 300, allocateBytes: 1000 } });
    expect(full).toContain('rootwrite');
    expect(full).toContain('-lt 300');
    expect(full).toContain("b'x' * 1000");
    expect(shQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
