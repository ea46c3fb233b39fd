/*
 * `warden-runner egress-dialer TIMEOUT_MS SANDBOX_PID`, run on the HOST by Warden's egress proxy (never inside a
 * sandbox): one per `egress` sandbox, which Warden puts in that sandbox's memory cgroup before its
 * first request. Why it exists: the kernel charges a socket's buffers to the memory cgroup of the
 * process that made it, so the connections made here to a sandbox's destinations count in that
 * sandbox's TCP memory bound (electron/engine/podman/tcp-memory.ts), orphans included, and not in
 * Warden's own, which nothing bounds: a sandbox holding its connections stalled can no longer pin
 * the host's TCP memory through Warden's side of them.
 *
 * It decides nothing: Warden has decided and resolved the address. Requests come on stdin, one a
 * line, "ID ADDRESS PORT" (ID: up to 15 characters of [0-9a-z], ADDRESS a literal IPv4 or IPv6). Each
 * gets one answer on stdout: "ID ok" once the connected socket has been sent on fd 3 (a SOCK_SEQPACKET
 * socket: one message, the ID, with the descriptor attached), or "ID error CODE TEXT" (CODE an errno
 * name: ECONNREFUSED, ETIMEDOUT past TIMEOUT_MS, EINVAL for a request it cannot read). It ends when
 * stdin closes, when Warden goes, or when the sandbox's first process (SANDBOX_PID) ends: a process
 * left in its cgroup would keep the runtime from removing it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "fdpass.h"
#include "runner.h"

/* More in flight than a sandbox may have connections (256), and the sockets of a cut-off flood. */
#define MAX_PENDING 1024
#define LINE_MAX_BYTES 128

struct pending {
  int fd;
  char id[16];
  long long deadline;
};

static struct pending pend[MAX_PENDING];
static int npend;
static long long timeout_ms;

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void answer_error(const char *id, int err) {
  const char *name = strerrorname_np(err);
  printf("%s error %s %s\n", id, name ? name : "EIO", strerror(err));
  fflush(stdout);
}

static void deliver(const char *id, int fd) {
  int err = send_with_fd(3, id, strlen(id), fd, 0) < 0 ? errno : 0;
  close(fd); /* the copy sent is Warden's now */
  if (err) answer_error(id, err);
  else {
    printf("%s ok\n", id);
    fflush(stdout);
  }
}

/* Starts one connect; answers at once where it cannot be in flight. */
static void dial(const char *line) {
  char id[16], address[64];
  int port;
  char extra;
  if (sscanf(line, "%15[0-9a-z] %63[0-9a-fA-F.:] %d %c", id, address, &port, &extra) != 3 || port < 1 || port > 65535) {
    char shown[16] = "?";
    sscanf(line, "%15[0-9a-z]", shown);
    answer_error(shown, EINVAL);
    return;
  }
  struct sockaddr_storage to;
  memset(&to, 0, sizeof to);
  socklen_t len;
  struct sockaddr_in *v4 = (struct sockaddr_in *)&to;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&to;
  if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    len = sizeof *v6;
  } else {
    answer_error(id, EINVAL);
    return;
  }
  if (npend == MAX_PENDING) {
    answer_error(id, EAGAIN);
    return;
  }
  int s = socket(to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) {
    answer_error(id, errno);
    return;
  }
  /* Bounded as Warden bounds every destination connection (hand-over.ts); set before the connect so
   * the window it offers matches its buffer from the first segment. */
  int size = EGRESS_SOCKET_BUFFER;
  unsigned int stall = EGRESS_STALL_MS;
  setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt(s, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  setsockopt(s, IPPROTO_TCP, TCP_USER_TIMEOUT, &stall, sizeof stall);
  if (connect(s, (struct sockaddr *)&to, len) == 0) {
    deliver(id, s);
    return;
  }
  if (errno != EINPROGRESS) {
    answer_error(id, errno);
    close(s);
    return;
  }
  pend[npend].fd = s;
  strcpy(pend[npend].id, id);
  pend[npend].deadline = now_ms() + timeout_ms;
  npend++;
}

static void settle(int i, int err) {
  if (err) {
    answer_error(pend[i].id, err);
    close(pend[i].fd);
  } else {
    deliver(pend[i].id, pend[i].fd);
  }
  pend[i] = pend[--npend];
}

int dialer_main(const char *timeout, const char *sandbox_pid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* Only its stdio and fd 3: nothing else its launcher left open. */
  syscall(SYS_close_range, 4U, ~0U, 0U);
  timeout_ms = atoll(timeout);
  int sandbox = (int)syscall(SYS_pidfd_open, atoi(sandbox_pid), 0);
  if (timeout_ms <= 0 || sandbox < 0) return 2;
  fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  char buf[LINE_MAX_BYTES * 8];
  size_t have = 0;
  static struct pollfd fds[MAX_PENDING + 2];
  for (;;) {
    long long now = now_ms(), wait = -1;
    fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[MAX_PENDING + 1] = (struct pollfd){.fd = sandbox, .events = POLLIN};
    for (int i = 0; i < npend; i++) {
      fds[i + 1] = (struct pollfd){.fd = pend[i].fd, .events = POLLOUT};
      long long left = pend[i].deadline - now;
      if (wait < 0 || left < wait) wait = left < 0 ? 0 : left;
    }
    int n = npend;
    fds[n + 1] = fds[MAX_PENDING + 1];
    if (poll(fds, (nfds_t)n + 2, (int)wait) < 0 && errno != EINTR) return 1;
    if (fds[n + 1].revents) return 0; /* the sandbox stopped */
    /* Back to front: settle() moves the last one into the place it frees. */
    now = now_ms();
    for (int i = n - 1; i >= 0; i--) {
      if (fds[i + 1].revents) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(pend[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
        settle(i, err);
      } else if (pend[i].deadline <= now) {
        settle(i, ETIMEDOUT);
      }
    }
    if (fds[0].revents) {
      ssize_t r = read(0, buf + have, sizeof buf - have);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return 0; /* Warden let it go */
      if (r > 0) have += (size_t)r;
      char *start = buf, *nl;
      while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
        *nl = '\0';
        dial(start);
        start = nl + 1;
      }
      have -= (size_t)(start - buf);
      memmove(buf, start, have);
      if (have >= LINE_MAX_BYTES) { /* no line is this long: drop what came */
        answer_error("?", EINVAL);
        have = 0;
      }
    }
  }
}
