/*
 * The runner's event loop: frames from the host are dispatched to exec.c and files.c; command
 * pipes are polled for output (within credit) and stdin; SIGCHLD arrives through a self-pipe so
 * children (and orphans, since the runner is the child subreaper) are reaped in the loop. When
 * the host's end of the channel closes, every command still running is killed and the runner exits.
 * `warden-runner egress-relay PORT SOCKET [--hand-over]` runs relay.c instead (an `egress` sandbox's way
 * out), `warden-runner egress-pump` pump.c and `warden-runner egress-dialer` dialer.c (on the host, for the proxy).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "runner.h"

#define MAX_POLL 3072

static int sigpipe_fds[2];

static void on_sigchld(int sig) {
  (void)sig;
  int saved = errno;
  (void)!write(sigpipe_fds[1], "c", 1);
  errno = saved;
}

static void dispatch(struct frame *f) {
  struct cursor c = {f->payload, f->len, 0};
  switch (f->type) {
  case F_EXEC:
  case F_READ:
  case F_WRITE:
  case F_LIST:
    if (f->id == 0 || exec_known(f->id) || file_known(f->id)) fatal("a call id that is 0 or already in use");
    if (f->type == F_EXEC) exec_start(f->id, &c);
    else file_start(f->type, f->id, &c);
    break;
  case F_STDIN:
    /* Input for a call that has just ended is dropped: the host could not know yet. */
    if (file_known(f->id)) file_data(f->id, f->payload, f->len);
    else exec_stdin(f->id, f->payload, f->len);
    break;
  case F_KILL:
    if (f->len) fatal("malformed KILL frame");
    if (f->id == 0) { /* the host lets the runner go: everything still running goes with it */
      exec_kill_all();
      exit(0);
    }
    exec_kill(f->id);
    break;
  case F_CREDIT: {
    uint32_t n = cur_u32(&c);
    if (c.bad || c.left) fatal("malformed CREDIT frame");
    exec_credit(f->id, n);
    break;
  }
  case F_PING:
    if (f->id || f->len) fatal("malformed PING frame");
    frame_send(F_PONG, 0, NULL, 0);
    break;
  case F_RESIZE: {
    uint16_t cols = cur_u16(&c), rows = cur_u16(&c);
    if (c.bad || c.left) fatal("malformed RESIZE frame");
    exec_resize(f->id, cols, rows);
    break;
  }
  default:
    fatal("unknown frame type");
  }
}

int main(int argc, char **argv) {
  /* The sandbox's keep-alive (its main process, under the init): idle until the stop's SIGTERM ends
     it. Warden's read-only mount, so nothing of the agent's runs at a start before Warden has set the
     sandbox up. Further arguments (an image's CMD) are ignored. */
  if (argc >= 2 && strcmp(argv[1], "keep-alive") == 0) {
    for (;;) pause();
  }
  /* Orphans of a command are reparented here, not to the container's init, so a KILL still finds them. */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  /* Not dumpable: the agent's commands run as the same uid, and /proc/<runner>/mem, fd and environ
     would otherwise let them rewrite or speak for the runner (ptrace by another route, which
     seccomp cannot see). Its supervisors inherit this; a command's execve makes it dumpable again. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  if ((argc == 4 || (argc == 5 && strcmp(argv[4], "--hand-over") == 0)) && strcmp(argv[1], "egress-relay") == 0)
    return relay_main(argv[2], argv[3], argc == 5);
  if ((argc == 2 || argc == 3) && strcmp(argv[1], "egress-pump") == 0) return pump_main(argc == 3 ? argv[2] : NULL); /* on the host, for the proxy */
  if (argc == 4 && strcmp(argv[1], "egress-dialer") == 0) return dialer_main(argv[2], argv[3]); /* on the host, too */
  if (argc == 3 && strcmp(argv[1], "seal-files") == 0) return seal_main(argv[2]); /* on the host, too */
  if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) return 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);
  /* stderr goes nowhere useful (Podman's attach carries it mixed with stdout): commands get their own. */
  int devnull = open("/dev/null", O_WRONLY);
  if (devnull >= 0) { dup2(devnull, 2); close(devnull); }

  uint8_t ready[8];
  put_u32(ready, RUNNER_PROTOCOL_VERSION);
  put_u32(ready + 4, (uint32_t)getpid());
  frame_send(F_READY, 0, ready, sizeof ready);

  static struct pollfd fds[MAX_POLL];
  static void *owners[MAX_POLL];
  for (;;) {
    fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = sigpipe_fds[0], .events = POLLIN};
    int n = 2 + exec_pollfds(fds + 2, MAX_POLL - 2, owners + 2);
    if (poll(fds, (nfds_t)n, -1) < 0 && errno != EINTR) fatal("poll failed");
    if (fds[1].revents) {
      char drain[64];
      while (read(sigpipe_fds[0], drain, sizeof drain) > 0) {}
    }
    exec_reap();
    for (int i = 2; i < n; i++)
      if (fds[i].revents) exec_on_ready(owners[i], fds[i].revents, fds[i].fd);
    if (fds[0].revents) {
      struct frame f;
      int r = frame_poll_read(0, &f);
      if (r < 0) {
        exec_kill_all();
        return 0;
      }
      while (r == 1) {
        dispatch(&f);
        r = frame_next(&f);
      }
    }
    exec_reap();
    exec_finish_ready();
  }
}
