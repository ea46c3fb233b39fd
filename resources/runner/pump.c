/*
 * `warden-runner egress-pump OUT_LIMIT`, run on the HOST by Warden's egress proxy (never inside a
 * sandbox): carries one connection that Warden has already decided, from fd 3 (the sandbox's side,
 * a Unix socket from its relay) to fd 4 (the destination) and back, with splice(2) through pipes, so
 * a large transfer costs no copy through Warden's JavaScript. It decides nothing: it reports the
 * bytes it moved on stdout ("in N" toward the sandbox, "out N" toward the destination, at least every
 * REPORT bytes) and Warden, which counts them against the run's budget, kills it when it must cut.
 * OUT_LIMIT: -1 passes everything and an EOF on to the destination (a CONNECT tunnel); N >= 0 passes
 * at most N more bytes from the sandbox and no EOF (a plain HTTP request body). It ends when the
 * destination's side has ended and been passed on (and, for a tunnel, the sandbox's too), on any
 * error ("end ERROR" on stdout), or when Warden goes (its stdin closes).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "runner.h"

#define REPORT (1024 * 1024)
#define PIPE_SIZE (1024 * 1024)

struct dir {
  int src, dst;
  int pipe[2];
  size_t in_pipe;   /* spliced in, not yet out */
  long long limit;  /* bytes still allowed from src; -1: no limit */
  size_t unreported;
  unsigned long long taken; /* all spliced in so far */
  int eof, done;    /* done: EOF passed on (or not to be passed) */
  int pass_eof;     /* a tunnel passes an EOF on; a plain request's body does not */
  const char *name; /* "in" or "out" */
};

static void report(struct dir *d, int all) {
  if (d->unreported && (all || d->unreported >= REPORT)) {
    printf("%s %zu\n", d->name, d->unreported);
    fflush(stdout);
    d->unreported = 0;
  }
}

static void finish(struct dir *a, struct dir *b, const char *error) {
  report(a, 1);
  report(b, 1);
  printf("end %s\n", error ? error : "");
  fflush(stdout);
  exit(0);
}

static char error_text[160];

static const char *failed(int fd) {
  snprintf(error_text, sizeof error_text, "%s: %s", fd == 3 ? "sandbox side" : "destination", strerror(errno));
  return error_text;
}

/* Moves what it can; returns an error text or NULL. */
static const char *step(struct dir *d, short src_ev, short dst_ev) {
  if (!d->eof && d->limit != 0 && (src_ev & (POLLIN | POLLHUP)) && d->in_pipe < PIPE_SIZE) {
    size_t want = PIPE_SIZE - d->in_pipe;
    if (d->limit > 0 && (long long)want > d->limit) want = (size_t)d->limit;
    ssize_t n = splice(d->src, NULL, d->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      d->in_pipe += (size_t)n;
      d->taken += (unsigned long long)n;
      if (d->limit > 0) d->limit -= n;
    } else if (n == 0) d->eof = 1;
    else if (errno != EAGAIN && errno != EINTR) return failed(d->src);
  }
  (void)dst_ev; /* tried whenever something waits: nonblocking, so a full destination is only EAGAIN */
  if (d->in_pipe) {
    ssize_t n = splice(d->pipe[0], NULL, d->dst, NULL, d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      d->in_pipe -= (size_t)n;
      d->unreported += (size_t)n;
      report(d, 0);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) return failed(d->dst);
  }
  if (d->eof && !d->in_pipe && !d->done) {
    if (d->pass_eof) shutdown(d->dst, SHUT_WR);
    d->done = 1;
  }
  return NULL;
}

int pump_main(const char *limit_text) {
  char *end;
  long long limit = strtoll(limit_text, &end, 10);
  if (*end || limit < -1) {
    fprintf(stderr, "egress-pump needs an out limit\n");
    return 2;
  }
  struct dir in = {.src = 4, .dst = 3, .limit = -1, .pass_eof = 1, .name = "in"};
  struct dir out = {.src = 3, .dst = 4, .limit = limit, .pass_eof = limit < 0, .name = "out"};
  struct dir *dirs[2] = {&in, &out};
  for (int i = 0; i < 2; i++) {
    if (pipe2(dirs[i]->pipe, O_NONBLOCK | O_CLOEXEC) < 0) finish(&in, &out, "no pipe");
    fcntl(dirs[i]->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
  }
  /* A deep send buffer toward the relay: fewer, larger moves on both sides (forced where Warden may). */
  int deep = 4 * 1024 * 1024;
  if (setsockopt(3, SOL_SOCKET, SO_SNDBUFFORCE, &deep, sizeof deep) < 0) setsockopt(3, SOL_SOCKET, SO_SNDBUF, &deep, sizeof deep);
  fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
  fcntl(4, F_SETFL, fcntl(4, F_GETFL) | O_NONBLOCK);
  for (;;) {
    /* A plain request's body is done once its length is through: the sandbox's later bytes stay unread. */
    if (out.limit == 0 && !out.in_pipe) out.done = 1;
    if (in.done && out.done) finish(&in, &out, NULL);
    struct pollfd fds[5] = {{.fd = 0, .events = POLLIN}};
    int n = 1;
    int idx[2][2];
    for (int i = 0; i < 2; i++) {
      struct dir *d = dirs[i];
      int want_in = !d->eof && d->limit != 0 && d->in_pipe < PIPE_SIZE;
      idx[i][0] = n;
      fds[n++] = (struct pollfd){.fd = want_in ? d->src : -1, .events = POLLIN};
      idx[i][1] = n;
      fds[n++] = (struct pollfd){.fd = d->in_pipe ? d->dst : -1, .events = POLLOUT};
    }
    if (poll(fds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      finish(&in, &out, strerror(errno));
    }
    if (fds[0].revents) finish(&in, &out, "Warden went away");
    for (int i = 0; i < 2; i++) {
      short se = fds[idx[i][0]].revents, de = fds[idx[i][1]].revents;
      if ((se | de) & POLLERR) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(se & POLLERR ? dirs[i]->src : dirs[i]->dst, SOL_SOCKET, SO_ERROR, &err, &len);
        snprintf(error_text, sizeof error_text, "%s: %s", (se & POLLERR ? dirs[i]->src : dirs[i]->dst) == 3 ? "sandbox side" : "destination",
                 err ? strerror(err) : "socket error");
        finish(&in, &out, error_text);
      }
      const char *e = step(dirs[i], se, de);
      /* Moving on while bytes keep coming costs a splice that finds nothing, where going back to
       * poll would cost a poll per chunk the socket hands over (a loopback gives 64 KiB at a time). */
      for (int more = 0; !e && (se & POLLIN) && more < 16; more++) {
        unsigned long long before = dirs[i]->taken;
        e = step(dirs[i], POLLIN, POLLOUT);
        if (dirs[i]->taken == before) break;
      }
      if (e) finish(&in, &out, e);
    }
  }
}
