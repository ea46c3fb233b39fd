// TCP_USER_TIMEOUT of a socket in another process (or this one), read on a copy of its descriptor
// taken with pidfd_getfd (Linux 5.6, root here): `ss` from iproute2 6.1 does not show it.
import { execFileSync } from 'node:child_process';

const READ = `import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
pidfd = libc.syscall(434, int(sys.argv[1]), 0)
fd = libc.syscall(438, pidfd, int(sys.argv[2]), 0)
if pidfd < 0 or fd < 0: sys.exit("no copy of fd %s of process %s: errno %d" % (sys.argv[2], sys.argv[1], ctypes.get_errno()))
print(socket.socket(fileno=fd).getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT))`;

export function userTimeoutOf(pid: number, fd: number): number {
  return Number(
    execFileSync('python3', ['-c', READ, String(pid), String(fd)])
      .toString()
      .trim(),
  );
}
