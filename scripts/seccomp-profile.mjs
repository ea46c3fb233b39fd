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

/** CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME (0x80): clone is allowed only without them. */
export const CLONE_NAMESPACE_FLAGS = 0x7e020080;

export function wardenProfile(podmanDefault) {
  const withheld = new Set([...REFUSED, ...NOT_IMPLEMENTED, 'clone']);
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
    { names: [...NOT_IMPLEMENTED], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS, comment: 'warden: callers fall back' },
    { names: [...REFUSED], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, comment: 'warden: refused in every sandbox' },
  );
  return { ...podmanDefault, syscalls };
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
