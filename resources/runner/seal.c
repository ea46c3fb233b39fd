/*
 * `warden-runner seal-files PID`, run on the HOST by Warden (never inside a sandbox) after each start
 * of a runc sandbox, before anything of the agent's runs: remounts read-only, in the sandbox's mount
 * namespace (that of its first process, PID), the files Podman bind-mounts into every container from
 * its own storage on the host: /etc/hosts, /etc/hostname, /etc/resolv.conf and /run/.containerenv.
 * Writes to them land on the host's disk, outside the sandbox's disk limit: stop 25's red team wrote
 * 315 MB into /etc/hostname at 431 MB/s while the sandbox's own `df` showed 88K used. Podman makes
 * them read-only only with a read-only root, which a sandbox that installs packages cannot have.
 *
 * A remount keeps the flags the mount has (the kernel refuses to clear the ones it locked when the
 * namespace was made for the sandbox's user namespace). Prints one line per file: "sealed PATH",
 * "absent PATH" (not there, or not a mount of its own), or "error PATH: WHY"; exits 1 when any failed.
 * Static and single-threaded, so it may enter another mount namespace (setns refuses a threaded process).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "runner.h"

static const char *const FILES[] = {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run/.containerenv"};

/* The mount's own flags, as a remount must repeat them. */
static unsigned long flags_of(const char *path) {
  struct statvfs st;
  if (statvfs(path, &st) != 0) return 0;
  unsigned long f = 0;
  if (st.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (st.f_flag & ST_NODEV) f |= MS_NODEV;
  if (st.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

int seal_main(const char *pid) {
  char ns[64];
  snprintf(ns, sizeof ns, "/proc/%s/ns/mnt", pid);
  int fd = open(ns, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNS) != 0) {
    printf("error %s: %s\n", ns, strerror(errno));
    return 1;
  }
  int failed = 0;
  for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
    const char *path = FILES[i];
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | flags_of(path), NULL) == 0) {
      printf("sealed %s\n", path);
    } else if (errno == ENOENT || errno == EINVAL) {
      printf("absent %s\n", path);
    } else {
      printf("error %s: %s\n", path, strerror(errno));
      failed = 1;
    }
  }
  return failed;
}
