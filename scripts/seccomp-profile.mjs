#!/usr/bin/env node
// Writes resources/seccomp/warden.json, Warden's seccomp profile, from Podman's default
// (/usr/share/containers/seccomp.json, containers-common). Podman's default allows unshare, clone
// with namespace flags, mount, ptrace and keyctl to processes without capabilities, because
// rootless Podman-in-Podman needs them; inside a rootful sandbox they let an agent open a user
// namespace, get a full capability set there and mount and rewrite its own cgroup limits.
// The output is committed, so a sandbox's wall does not depend on the host's containers-common;
// rerun after a containers-common upgrade and review the diff:
//   node scripts/seccomp-profile.mjs [/usr/share/containers/seccomp.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const EPERM = 1;
const ENOSYS = 38;

/** Never needed by an agent's work; each is a door out of a namespace or into the kernel. */
export const REFUSED = [
  // new namespaces and joining others
  'unshare',
  'setns',
  // filesystems: mounting, the new mount API, root switching
  'mount',
  'umount',
  'umount2',
  'pivot_root',
  'chroot',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'move_mount',
  'open_tree',
  'mount_setattr',
  // reading or steering other processes
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'kcmp',
  'pidfd_getfd',
  // kernel keyring, BPF, perf, userfaultfd: common kernel-exploit entry points
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  // modules, reboot, kexec, accounting, swap, quotas, raw I/O ports
  'init_module',
  'finit_module',
  'delete_module',
  'reboot',
  'kexec_load',
  'kexec_file_load',
  'acct',
  'swapon',
  'swapoff',
  'quotactl',
  'quotactl_fd',
  'iopl',
  'ioperm',
  // file handles bypass path checks (the "shocker" escape)
  'open_by_handle_at',
  'name_to_handle_at',
];

/** Answered "not implemented" so that libraries fall back (glibc's clone3 → clone, libuv's io_uring → epoll). */
export const NOT_IMPLEMENTED = ['clone3', 'io_uring_setup', 'io_uring_enter', 'io_uring_register'];

const SOL_SOCKET = 1;
/**
 * SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE: answered "done" and not done, so a program's
 * sockets keep the kernel's autotuned buffers. Host TCP memory a socket holds before it is accepted is
 * charged to no cgroup (the kernel ties a socket to one only at accept), and with these a program
 * could give each of thousands of such connections 8 MiB (found by attacking it); without them each
 * gets the namespace's default (128 KiB). Success, not EPERM: many programs set them as a hint.
 */
export const IGNORED_SOCKET_OPTIONS = [7, 8, 32, 33];

/** CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME (0x80): clone is allowed only without them. */
export const CLONE_NAMESPACE_FLAGS = 0x7e020080;

export function wardenProfile(podmanDefault) {
  const withheld = new Set([...REFUSED, ...NOT_IMPLEMENTED, 'clone', 'setsockopt']);
  const syscalls = [];
  for (const rule of podmanDefault.syscalls) {
    const names = (rule.names ?? []).filter((n) => !withheld.has(n));
    if (names.length) syscalls.push({ ...rule, names });
  }
  syscalls.push(
    {
      names: ['clone'],
      action: 'SCMP_ACT_ALLOW',
      args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      excludes: { arches: ['s390', 's390x'] },
      comment: 'warden: threads and fork, never new namespaces',
    },
    {
      names: ['clone'],
      action: 'SCMP_ACT_ALLOW',
      args: [{ index: 1, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      includes: { arches: ['s390', 's390x'] },
      comment: 'warden: s390 passes clone flags second',
    },
    ...setsockoptRules(),
    { names: [...NOT_IMPLEMENTED], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS, comment: 'warden: callers fall back' },
    { names: [...REFUSED], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, comment: 'warden: refused in every sandbox' },
  );
  return { ...podmanDefault, archMap: withoutI386(podmanDefault.archMap ?? []), syscalls };
}

/**
 * No 32-bit x86 or ARM system calls from a 64-bit sandbox: the i386 ABI's socketcall multiplexes
 * setsockopt and the rest behind a pointer seccomp cannot read, so `int 0x80` set the socket buffer
 * sizes the profile leaves to the kernel (stop 24's red team: 8 MiB each, uncharged in an accept
 * queue). Such calls get the default action; 32-bit programs do not run in sandboxes.
 */
function withoutI386(archMap) {
  const compat = new Set(['SCMP_ARCH_X86', 'SCMP_ARCH_ARM']);
  return archMap.map((a) => ({ ...a, subArchitectures: (a.subArchitectures ?? []).filter((s) => !compat.has(s)) }));
}

/**
 * setsockopt is allowed but for IGNORED_SOCKET_OPTIONS at SOL_SOCKET, answered 0. A rule's comparisons
 * are ANDed and name an argument once, so "any other option" is spelled as ranges around 7, 8, 32, 33.
 */
function setsockoptRules() {
  const arg = (index, op, value, valueTwo = 0) => ({ index, value, valueTwo, op });
  const atSocketLevel = arg(1, 'SCMP_CMP_EQ', SOL_SOCKET);
  const allow = (...args) => ({ names: ['setsockopt'], action: 'SCMP_ACT_ALLOW', args, comment: 'warden: every other socket option' });
  return [
    allow(arg(1, 'SCMP_CMP_NE', SOL_SOCKET)),
    allow(atSocketLevel, arg(2, 'SCMP_CMP_LT', 7)), // 0-6
    allow(atSocketLevel, arg(2, 'SCMP_CMP_EQ', 9)), // 9
    allow(atSocketLevel, arg(2, 'SCMP_CMP_MASKED_EQ', 0xfffffffe, 10)), // 10-11
    allow(atSocketLevel, arg(2, 'SCMP_CMP_MASKED_EQ', 0xfffffffc, 12)), // 12-15
    allow(atSocketLevel, arg(2, 'SCMP_CMP_MASKED_EQ', 0xfffffff0, 16)), // 16-31
    allow(atSocketLevel, arg(2, 'SCMP_CMP_GT', 33)), // 34 and up
    ...IGNORED_SOCKET_OPTIONS.map((option) => ({
      names: ['setsockopt'],
      action: 'SCMP_ACT_ERRNO',
      errnoRet: 0,
      args: [atSocketLevel, arg(2, 'SCMP_CMP_EQ', option)],
      comment: "warden: socket buffer sizes are the kernel's to choose",
    })),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2] ?? '/usr/share/containers/seccomp.json';
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'resources', 'seccomp', 'warden.json');
  const profile = wardenProfile(JSON.parse(readFileSync(source, 'utf8')));
  writeFileSync(out, JSON.stringify(profile, null, 1) + '\n');
  console.log(
    `wrote ${out} from ${source}: ${REFUSED.length} syscalls refused, ${NOT_IMPLEMENTED.length} answered ENOSYS, clone without namespace flags`,
  );
}
