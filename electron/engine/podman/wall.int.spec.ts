// The wall, tried from inside as a hostile agent would (issue 10's reproduction and its kin). Each
// attempt must fail, and the sandbox's limits, read from the host's own cgroup files, must be
// unchanged afterwards: a limit the sandbox can lift is no limit.
import { describe, expect, it } from 'vitest';
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestEngine } from '../../test-support/podman-fixture.js';
import { SANDBOX_TCP_MEMORY_BYTES } from './tcp-memory.js';
import { PODMAN_FILES } from './podman-files.js';

const t = useTestEngine();
const sh = (id: string, cmd: string) => t.sh(id, cmd);

async function hostPid(id: string): Promise<number> {
  const raw = await t.engine.connection.libpod<{ State: { Pid: number } }>('GET', `/containers/${id}/json`, undefined, 'inspect');
  return raw.State.Pid;
}

/** One of the sandbox's cgroup v1 files, as the host sees it (through its init process). */
async function hostCgroupFile(id: string, controller: string, file: string): Promise<string> {
  const path = readFileSync(`/proc/${await hostPid(id)}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes(controller))
    ?.split(':')[2];
  return readFileSync(`/sys/fs/cgroup/${controller}${path}/${file}`, 'utf8').trim();
}

/** The host's view of the sandbox's limits, from the cgroup v1 files of its init process. */
async function hostLimits(id: string): Promise<Record<string, string>> {
  const read = (controller: string, file: string) => hostCgroupFile(id, controller, file);
  return {
    memory: await read('memory', 'memory.limit_in_bytes'),
    pids: await read('pids', 'pids.max'),
    cpu: await read('cpu', 'cpu.cfs_quota_us'),
  };
}

// The reproduction: a new user namespace (full capabilities inside it), then the cgroup
// v1 hierarchies mounted read-write and the limits raised. Prints one line per step.
const CGROUP_REWRITE = String.raw`
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def step(name, r):
    print(name, "ok" if r == 0 else "refused:" + os.strerror(ctypes.get_errno()), flush=True)
    return r == 0
if step("unshare", libc.unshare(0x10000000 | 0x00020000 | 0x02000000)):
    for f, v in (("setgroups", "deny"), ("uid_map", "0 0 1"), ("gid_map", "0 0 1")):
        try: open("/proc/self/" + f, "w").write(v)
        except OSError as e: print(f, e)
    for ctl, f, v in (("memory", "memory.limit_in_bytes", str(1 << 30)), ("pids", "pids.max", "max"), ("cpu", "cpu.cfs_quota_us", "-1")):
        d = "/tmp/cg-" + ctl
        os.makedirs(d, exist_ok=True)
        if step("mount " + ctl, libc.mount(b"cgroup", d.encode(), b"cgroup", 0, ctl.encode())):
            try:
                open(d + "/" + f, "w").write(v); print("wrote", f)
            except OSError as e: print("write", f, e)
`;

const OTHER_DOORS = String.raw`
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def show(name, r): print(name, "ok" if r >= 0 else "refused", flush=True)
for flag, name in ((0x10000000, "user"), (0x00020000, "mount"), (0x40000000, "net"), (0x02000000, "cgroup"), (0x20000000, "pid"), (0x08000000, "ipc"), (0x04000000, "uts")):
    show("unshare-" + name, libc.unshare(flag))
show("mount", libc.mount(b"none", b"/mnt", b"tmpfs", 0, None))
show("ptrace-pid1", libc.ptrace(16, 1, 0, 0))
show("keyctl", libc.syscall(250, 0, 0, 0, 0))
show("bpf", libc.syscall(321, 0, 0, 0))
show("perf", libc.syscall(298, 0, 0, -1, -1, 0))
show("setns", libc.setns(os.open("/proc/1/ns/net", os.O_RDONLY), 0))
pid = os.fork()
if pid == 0: os._exit(3)
print("fork", os.waitpid(pid, 0)[1] >> 8)
`;

// A program that reads over its own loopback as fast as it can (what makes the kernel grow a
// socket's receive buffer), then stops: the buffer the kernel gave it, and what its namespace allows.
const FAST_THEN_STALLED = String.raw`
import socket, threading
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
def send():
    a, _ = l.accept()
    try:
        for _ in range(48): a.sendall(b"x" * (1 << 20))
    except OSError: pass
threading.Thread(target=send, daemon=True).start()
c = socket.create_connection(l.getsockname())
got = 0
while got < 24 << 20:
    got += len(c.recv(1 << 20))
print("rcvbuf", c.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
print("max", open("/proc/sys/net/ipv4/tcp_rmem").read().split()[2])
`;

// Many connections over the sandbox's own loopback, each asking for the largest buffers it may
// (SO_RCVBUF/SO_SNDBUF), filled and never read: every byte a send() took sits in host kernel memory.
const MANY_STALLED = String.raw`
import socket, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(512)
queued, pairs = 0, []
for _ in range(int(sys.argv[1])):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    c.connect(l.getsockname())
    a, _ = l.accept()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    c.setblocking(False)
    try:
        while True: queued += c.send(b"x" * (1 << 16))
    except BlockingIOError: pass
    pairs.append((c, a))
print("queued", queued, flush=True)
`;

// Connections a listener never accepts (the kernel charges them to no cgroup until accept), each
// sent all it takes; the sender asks for the largest buffers it may. Prints what send() took.
const NEVER_ACCEPTED = String.raw`
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
l.bind(("127.0.0.1", 0)); l.listen(4096)
queued, kept = 0, []
for _ in range(int(sys.argv[1])):
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    c.connect(l.getsockname()); c.setblocking(False)
    try:
        while True: queued += c.send(b"x" * (1 << 16))
    except BlockingIOError: pass
    kept.append(c)
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
print("queued", queued)
print("rcvbuf", s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
print("somaxconn", open("/proc/sys/net/core/somaxconn").read().strip())
`;

// The i386 ABI from a 64-bit process: socketcall(SYS_SETSOCKOPT) through `int 0x80`, whose arguments
// sit behind a pointer seccomp cannot read (stop 24's red team set 8 MiB buffers this way).
const INT80_SETSOCKOPT = String.raw`
import ctypes, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
page = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)  # rwx, private anonymous, below 4 GiB
args, value = page + 0x800, page + 0x900
code = b"\x53\xb8" + struct.pack("<I", 102) + b"\xbb" + struct.pack("<I", 14) + b"\xb9" + struct.pack("<I", args) + b"\xcd\x80\x5b\xc3"
ctypes.memmove(page, code, len(code))
s = socket.socket()
ctypes.memmove(value, struct.pack("<i", 4 << 20), 4)
ctypes.memmove(args, struct.pack("<5I", s.fileno(), 1, 8, value, 4), 20)
print("calling", flush=True)
ctypes.CFUNCTYPE(ctypes.c_int)(page)()
print("rcvbuf", s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), flush=True)
`;

describe('the wall under runc', () => {
  it('refuses a new user namespace, so the cgroup limits cannot be rewritten (issue 10 reproduction)', async () => {
    const sb = await t.create({ memory: '256m', pids: 64, cpus: 0.5 });
    const before = await hostLimits(sb.id);
    expect(before).toEqual({ memory: String(256 * 1024 ** 2), pids: '64', cpu: '50000' });

    const attack = await sh(sb.id, `python3 - <<'PY'\n${CGROUP_REWRITE}\nPY`);
    expect(attack.out).toMatch(/^unshare refused:/m);
    expect(attack.out).not.toMatch(/^wrote/m);
    // Directly, through the container's own cgroup mount.
    const direct = await sh(
      sb.id,
      'echo max > /sys/fs/cgroup/pids/pids.max; echo -1 > /sys/fs/cgroup/cpu/cpu.cfs_quota_us; echo 1073741824 > /sys/fs/cgroup/memory/memory.limit_in_bytes; true',
    );
    expect(direct.err).toMatch(/Read-only file system|Permission denied/);
    expect(await hostLimits(sb.id)).toEqual(before);

    // The limit still holds: 400 MiB in a 256 MiB sandbox is killed.
    const alloc = await sh(sb.id, `python3 -c "b = bytearray(400 * 1024 * 1024); print('allocated')"`);
    expect(alloc.out).not.toMatch(/allocated/);
  });

  it('refuses the other doors: every namespace, mount, ptrace, keyctl, bpf, perf, setns, /proc/sys and sysrq', async () => {
    const sb = await t.create();
    const probe = await sh(
      sb.id,
      `python3 - <<'PY'\n${OTHER_DOORS}\nPY
(echo 1 > /proc/sys/kernel/sysrq) 2>/dev/null && echo sysctl ok || echo sysctl refused
(echo h > /proc/sysrq-trigger) 2>/dev/null && echo sysrq ok || echo sysrq refused
unshare -U true 2>/dev/null && echo unshare-cli ok || echo unshare-cli refused`,
    );
    const lines = probe.out.trim().split('\n');
    expect(lines.filter((l) => l.endsWith(' ok'))).toEqual([]);
    expect(lines).toContain('fork 3'); // ordinary process creation still works
    expect(lines.length).toBe(17);
  });

  it("grows no socket's buffer past 1 MiB in the host's TCP memory, however a program reads, and cannot lift that", async () => {
    const sb = await t.create();
    const probe = await sh(
      sb.id,
      `python3 - <<'PY'\n${FAST_THEN_STALLED}\nPY
(echo '4096 131072 33554432' > /proc/sys/net/ipv4/tcp_rmem) 2>/dev/null && echo raise ok || echo raise refused`,
    );
    const [rcvbuf, max, raise] = probe.out.trim().split('\n');
    expect(max).toBe('max 1048576');
    expect(Number(rcvbuf!.split(' ')[1])).toBeLessThanOrEqual(1048576);
    expect(raise).toBe('raise refused');
  });

  it("holds a sandbox's socket buffers to its TCP memory bound however many connections it fills, after a restart too", async () => {
    const sb = await t.create();
    await t.engine.sandboxes.restart(sb.id); // a new cgroup: the bound must be written again
    expect(Number(await hostCgroupFile(sb.id, 'memory', 'memory.kmem.tcp.limit_in_bytes'))).toBe(SANDBOX_TCP_MEMORY_BYTES);
    // 150 pairs held 1.69 GB unbounded (when 4 MiB asked per socket was given), and would hold
    // ~165 MiB with the kernel's autotuning alone. Bounded: 32 MiB, plus a few KiB a socket.
    const probe = await sh(sb.id, `python3 - 150 <<'PY'\n${MANY_STALLED}\nPY`);
    const queued = Number(/^queued (\d+)$/m.exec(probe.out)?.[1]);
    expect(queued).toBeGreaterThan(0);
    expect(queued).toBeLessThan(SANDBOX_TCP_MEMORY_BYTES + 300 * 128 * 1024);
    const peak = Number(await hostCgroupFile(sb.id, 'memory', 'memory.kmem.tcp.max_usage_in_bytes'));
    expect(peak).toBeLessThan(SANDBOX_TCP_MEMORY_BYTES + 300 * 128 * 1024);
  });

  it("gives connections it never accepts no room the bound does not see: socket buffer sizes are the kernel's, the backlog 128", async () => {
    const sb = await t.create();
    // Unbounded (stop 24's red team): 120 such connections held 514 MB of the host's TCP memory.
    const probe = await sh(sb.id, `python3 - 120 <<'PY'\n${NEVER_ACCEPTED}\nPY`);
    const [queued, rcvbuf, somaxconn] = probe.out.trim().split('\n');
    expect(rcvbuf).toBe('rcvbuf 131072'); // asked for 4 MiB: answered "done", the default kept
    expect(somaxconn).toBe('somaxconn 128');
    // Each unaccepted connection holds at most its default 128 KiB; the senders' side is in the bound.
    expect(Number(queued!.split(' ')[1])).toBeLessThan(120 * 256 * 1024 + SANDBOX_TCP_MEMORY_BYTES);
  });

  it('runs nothing of its own filesystem at a start, before Warden has set it up: the keep-alive is the read-only runner', async () => {
    const sb = await t.create();
    // The red team's way in (stop 24): the keep-alive was `sleep`, found in the agent's writable root.
    const plant = `printf '#!/bin/sh\\necho planted > /root/ran\\nexec /bin/busybox sleep "$@" 2>/dev/null || exec sleep.real "$@"\\n' > /tmp/s
for f in /usr/bin/sleep /bin/sleep /usr/local/bin/sleep; do [ -e "$f" ] && cp "$f" /usr/local/bin/sleep.real 2>/dev/null; done
install -m 755 /tmp/s /usr/local/bin/sleep; cp /tmp/s /usr/bin/sleep 2>/dev/null; echo planted-ok`;
    expect((await sh(sb.id, plant)).out).toContain('planted-ok');
    await t.engine.sandboxes.restart(sb.id);
    const after = await sh(sb.id, 'cat /root/ran 2>/dev/null || echo nothing-ran; tr "\\0" " " < /proc/1/cmdline');
    expect(after.out).toBe('nothing-ran\n/run/podman-init -- /.warden/runner keep-alive ');
  });

  it("cannot write the files Podman mounts from the host's disk (hosts, hostname, resolv.conf, .containerenv), after a restart too", async () => {
    // Stop 25's red team: 315 MB written into /etc/hostname landed in Podman's storage on the
    // host's disk while the sandbox's own df showed 88K used (nat for /etc/resolv.conf as well).
    const sb = await t.create({ network: 'nat' });
    const tryAll = `for f in ${PODMAN_FILES.join(' ')}; do head -c 4096 /dev/zero >> $f 2>/dev/null && echo "$f written" || echo "$f refused"; done; cat /etc/hostname`;
    const refused = PODMAN_FILES.map((f) => `${f} refused\n`).join('');
    const first = await sh(sb.id, tryAll);
    expect(first.out).toMatch(new RegExp(`^${refused}\\S+\\n?$`)); // and still readable
    await t.engine.sandboxes.restart(sb.id);
    expect((await sh(sb.id, tryAll)).out).toMatch(new RegExp(`^${refused}\\S+\\n?$`));
    expect((await sh(sb.id, 'getent hosts localhost >/dev/null && echo resolves')).out).toBe('resolves\n');
  });

  it('takes no 32-bit system call from a 64-bit program: the one making it is killed (SIGSYS)', async () => {
    const sb = await t.create();
    const probe = await sh(sb.id, `python3 - <<'PY'\n${INT80_SETSOCKOPT}\nPY\necho "exit $?"`);
    expect(probe.out).toBe('calling\nexit 159\n'); // 128 + SIGSYS: never reached its next line
  });

  it("keeps Warden's mounts where Warden starts them: /.warden and the runner cannot be moved away", async () => {
    const sb = await t.create({ network: 'egress' });
    // The red team's way (stop 24): the sandbox's root owns `/`, renamed a plain /.warden (the
    // runner's mount went with it) and planted a runner of its own where Warden starts one.
    const tried = await sh(
      sb.id,
      'chmod u+w /; for m in "/.warden /.w2" "/.warden/runner /.warden/r2" "/.warden/egress /.warden/e2"; do mv $m 2>&1 | grep -c busy; done',
    );
    expect(tried.out).toBe('1\n1\n1\n');
    expect((await sh(sb.id, 'echo still mine')).out).toBe('still mine\n');
  });

  it("gives the sandbox's root an unprivileged host uid", async () => {
    const sb = await t.create();
    const status = readFileSync(`/proc/${await hostPid(sb.id)}/status`, 'utf8');
    expect(Number(/^Uid:\s+(\d+)/m.exec(status)![1])).toBeGreaterThan(0);
    const inside = await sh(sb.id, 'id -u; cat /proc/self/uid_map');
    const [uid, ...map] = inside.out.trim().split('\n');
    expect(uid).toBe('0');
    expect(map.join(' ')).not.toMatch(/^\s*0\s+0\s/);
  });

  it('lends a workspace to the sandbox and gives it back to its owner on removal', async () => {
    for (const owner of [
      { uid: 0, gid: 0 },
      { uid: 1000, gid: 1000 },
    ]) {
      const dir = mkdtempSync(join(tmpdir(), 'warden-ws-'));
      try {
        writeFileSync(join(dir, 'from-host'), 'host\n');
        chownSync(dir, owner.uid, owner.gid);
        chownSync(join(dir, 'from-host'), owner.uid, owner.gid);
        const sb = await t.create({ workspace: dir });
        const r = await sh(
          sb.id,
          'cat from-host && echo agent > from-sandbox && echo more >> from-host && mkdir -p sub/deeper && touch sub/deeper/f',
        );
        expect(r.exitCode, r.err).toBe(0);
        expect(readFileSync(join(dir, 'from-sandbox'), 'utf8')).toBe('agent\n');
        expect(readFileSync(join(dir, 'from-host'), 'utf8')).toBe('host\nmore\n');
        // While lent, the workspace belongs to the sandbox's unprivileged host uid, never to host root.
        expect(statSync(join(dir, 'from-sandbox')).uid).toBeGreaterThan(65535);
        await t.engine.sandboxes.destroy(sb.id);
        for (const f of ['.', 'from-host', 'from-sandbox', 'sub', 'sub/deeper', 'sub/deeper/f']) {
          const st = statSync(join(dir, f));
          expect({ f, uid: st.uid, gid: st.gid }).toEqual({ f, ...owner });
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

// gVisor: the guest may open namespaces and write cgroup files, but they are its own kernel's; the
// host's limits, read from the host's files, must not move, and the memory limit must still hold.
describe('the wall under gVisor (runsc)', () => {
  const runsc = () => t.engine.info().runtimes.find((r) => r.name === 'runsc');
  it('keeps the host cgroup limits whatever the guest does with namespaces and cgroupfs', async (c) => {
    if (!runsc()?.works) return c.skip(`runsc does not run here: ${runsc()?.reason ?? 'not detected'}`);
    const sb = await t.create({ runtime: 'runsc', memory: '256m', pids: 64, cpus: 0.5 });
    expect(sb.runtime).toBe('runsc');
    const before = await hostLimits(sb.id);
    expect(before.memory).toBe(String(256 * 1024 ** 2));
    expect(before.cpu).toBe('50000');
    await sh(sb.id, `python3 - <<'PY'\n${CGROUP_REWRITE}\nPY`);
    await sh(
      sb.id,
      'echo max > /sys/fs/cgroup/pids/pids.max; echo -1 > /sys/fs/cgroup/cpu/cpu.cfs_quota_us; echo 1073741824 > /sys/fs/cgroup/memory/memory.limit_in_bytes; true',
    );
    expect(await hostLimits(sb.id)).toEqual(before);
    // Last, since under gVisor reaching the limit ends the whole sandbox.
    const alloc = await sh(sb.id, `python3 -c "b = bytearray(400 * 1024 * 1024); print('allocated')"`).catch((err: Error) => ({
      out: '',
      err: err.message,
    }));
    expect(alloc.out).not.toMatch(/allocated/);
  });

  it("refuses ptrace, keyctl, bpf, perf, setns, /proc/sys and sysrq; namespaces and mounts are the guest kernel's own", async (c) => {
    if (!runsc()?.works) return c.skip(`runsc does not run here: ${runsc()?.reason ?? 'not detected'}`);
    const sb = await t.create({ runtime: 'runsc' });
    const probe = await sh(
      sb.id,
      `python3 - <<'PY'\n${OTHER_DOORS}\nPY
(echo 1 > /proc/sys/kernel/sysrq) 2>/dev/null && echo sysctl ok || echo sysctl refused
(echo h > /proc/sysrq-trigger) 2>/dev/null && echo sysrq ok || echo sysrq refused`,
    );
    const lines = probe.out.trim().split('\n');
    for (const door of ['ptrace-pid1', 'keyctl', 'bpf', 'perf', 'setns', 'sysctl', 'sysrq']) expect(lines).toContain(`${door} refused`);
    expect(lines).toContain('fork 3');
  });
});
