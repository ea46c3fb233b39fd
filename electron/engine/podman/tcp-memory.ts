// A sandbox's share of the host's TCP memory. Socket buffers are host kernel memory counted against
// one host-wide limit (net.ipv4.tcp_mem): past it every connection on the host starves. Under cgroup
// v2 the kernel charges them to the sandbox's own memory limit; under cgroup v1 (this project's
// hosts: Podman 4.3 on a hybrid hierarchy) it charges them to nothing unless the sandbox's memory
// cgroup has a `memory.kmem.tcp.limit_in_bytes`, and Podman 4.3 with runc 1.1 ignores the OCI field
// for it, so Warden writes it itself, right after each start and before anything of the agent's
// runs (the kernel only counts sockets made after the limit exists, and a restart makes a new cgroup).
// Hand-written: no library of the field touches this file.
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs';

/**
 * 32 MiB: room for several fast connections (each socket's buffer is capped at 1 MiB in `none` and
 * `egress`), and ~70 sandboxes at their bound before this host's hard limit (2.2 GiB). At the bound
 * the kernel keeps the sandbox's sockets at their smallest buffers: slower, never failed.
 */
export const SANDBOX_TCP_MEMORY_BYTES = 32 * 1024 * 1024;

export type TcpMemoryBound =
  | { kind: 'bounded'; file: string }
  | { kind: 'charged' } /* cgroup v2: in the sandbox's memory limit already */
  | { kind: 'unbounded'; why: string };

const V1_ROOT = '/sys/fs/cgroup/memory';

/** Where a process's v1 TCP limit lives, or that its hierarchy is v2 (from its /proc/PID/cgroup). */
export function tcpLimitFileOf(procCgroup: string): { file: string } | { v2: true } | { why: string } {
  const lines = procCgroup.split('\n').filter(Boolean);
  const memory = lines.map((l) => l.split(':')).find((f) => f.length >= 3 && f[1]!.split(',').includes('memory'));
  if (memory) return { file: `${V1_ROOT}${memory.slice(2).join(':')}/memory.kmem.tcp.limit_in_bytes` };
  if (lines.length === 1 && lines[0]!.startsWith('0::')) return { v2: true };
  return { why: 'the sandbox has no memory cgroup' };
}

/** Writes the bound for the sandbox whose first process is `pid`; never throws (Podman's start stands either way). */
export function boundTcpMemory(pid: number, bytes = SANDBOX_TCP_MEMORY_BYTES): TcpMemoryBound {
  if (!Number.isInteger(pid) || pid <= 0) return { kind: 'unbounded', why: 'the sandbox has no running process' };
  try {
    const where = tcpLimitFileOf(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
    if ('v2' in where) return { kind: 'charged' };
    if ('why' in where) return { kind: 'unbounded', why: where.why };
    writeFileSync(where.file, String(bytes));
    return { kind: 'bounded', file: where.file };
  } catch (err) {
    return { kind: 'unbounded', why: (err as Error).message };
  }
}

/**
 * Puts a host process of Warden's (an egress dialer) into the memory cgroup of the sandbox whose
 * first process is `sandboxPid`, so the sockets it makes count in that sandbox's bound. Throws why not.
 */
export function joinSandboxMemory(sandboxPid: number, pid: number): void {
  const procCgroup = readFileSync(`/proc/${sandboxPid}/cgroup`, 'utf8');
  const where = tcpLimitFileOf(procCgroup);
  if ('why' in where) throw new Error(where.why);
  // v2: the one line is "0::/path"; v1: the memory controller's directory holds the limit file.
  const dir =
    'v2' in where ? `/sys/fs/cgroup${procCgroup.trim().slice(3)}` : where.file.slice(0, -'/memory.kmem.tcp.limit_in_bytes'.length);
  writeFileSync(`${dir}/cgroup.procs`, String(pid));
}

/** What `warden doctor` says: can this host bound a sandbox's TCP memory, and how. */
export function tcpMemoryHostCheck(
  read = (f: string) => readFileSync(f, 'utf8'),
  writable = (f: string) => accessSync(f, constants.W_OK),
): { ok: boolean; detail: string } {
  const where = tcpLimitFileOf(read('/proc/self/cgroup'));
  if ('v2' in where) return { ok: true, detail: "cgroup v2: a sandbox's socket buffers count in its memory limit" };
  try {
    writable(`${V1_ROOT}/memory.kmem.tcp.limit_in_bytes`);
    return {
      ok: true,
      detail: `cgroup v1: each sandbox gets memory.kmem.tcp.limit_in_bytes = ${SANDBOX_TCP_MEMORY_BYTES >> 20} MiB at start`,
    };
  } catch {
    return {
      ok: false,
      detail:
        "cgroup v1 and memory.kmem.tcp cannot be written here (rootless?): a sandbox's socket buffers are bounded only by the host's net.ipv4.tcp_mem",
    };
  }
}
