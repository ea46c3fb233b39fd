/*
 * `warden-runner egress-pump`, run on the HOST by Warden's egress proxy (never inside a sandbox),
 * started ahead and set going by a line on its stdin (read_go below): carries one connection that Warden has already decided, from fd 3 (the sandbox's
 * side, a Unix connection from its relay) to fd 4 (the destination) and back, with splice(2) through
 * pipes, so a large transfer costs no copy through Warden's JavaScript.
 *
 * With HAND_OVER (runc: Warden has just asked the relay, with a marker, to hand the program's
 * connection over), the relay sends what it still had of the program's bytes, then one byte 'F'
 * with the program's TCP socket (SCM_RIGHTS). Those bytes go on to the destination, and from then on
 * the program's own socket is spliced to the destination with no relay and no Unix socket between.
 * The socket is taken here, in a process of the connection's own, and never by Warden's: the
 * sandbox may keep a copy of it and clear O_NONBLOCK or set a long SO_LINGER, which could block any
 * process that touches it, so only this one may. A descriptor that is not a connected TCP socket
 * ends the connection. A relay that ends its side instead (its program had already ended its own)
 * is carried as without it. Nothing is read from the destination until then: the relay
 * hands over only once all Warden sent it is through, so the bytes keep their order.
 *
 * It decides nothing: it reports the
 * bytes it moved on stdout ("in N" toward the sandbox, "out N" toward the destination, at least every
 * REPORT bytes; "end gone" when the sandbox's side closed or reset under it) and Warden, which counts them against the run's budget, kills it when it must cut.
 * LIMIT: -1 passes everything and an EOF on to the destination (a CONNECT tunnel); N >= 0 passes
 * at most N more bytes from the sandbox and no EOF (a plain HTTP request body). It ends when the
 * destination's side has ended and been passed on (and, for a tunnel, the sandbox's too), on any
 * error ("end ERROR" on stdout), or when Warden goes (its stdin closes).
 *
 * SANDBOX_PID (the sandbox's first process, when Warden knows it): the pump also ends, with "end the
 * sandbox stopped", once that process has (a pidfd). The sockets it holds can outlive every process of
 * the sandbox: a program may hand over one end of a loopback pair of its own and the other end to a
 * second pump, and exit, and nothing of the sandbox would then ever close them (stop 25's red team:
 * six pumps and the removed sandbox's network namespace still there 85 s later, no `net.closed`).
 */
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fdpass.h"
#include "runner.h"

#define REPORT (1024 * 1024)
#define PIPE_SIZE (1024 * 1024)
/* The sandbox's side gets a deep send buffer of this size (fewer, larger moves on both sides). */
#define SOCKET_BUFFER EGRESS_SOCKET_BUFFER
/* What one read of the relay's connection takes while the program's socket is awaited. */
#define AWAIT_CHUNK (64 * 1024)

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

/* The sandbox's side: the relay's Unix connection (fd 3), or the program's own socket once handed over. */
static int sandbox_fd = 3;

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

static const char *side(int fd) { return fd == 4 ? "destination" : "sandbox side"; }

/* The sandbox's side closed or reset under a write: its program left, which Warden judges (a tunnel's
 * program may leave whenever it likes), so it is said as that and not as an error of the path. */
#define GONE "gone"
/* Its sandbox's first process ended (stopped, removed, or killed): whatever it holds has nobody behind it. */
#define SANDBOX_STOPPED "the sandbox stopped"

static const char *failed_with(int fd, int err) {
  if (fd != 4 && (err == EPIPE || err == ECONNRESET)) return GONE;
  snprintf(error_text, sizeof error_text, "%s: %s", side(fd), strerror(err));
  return error_text;
}

static const char *failed(int fd) { return failed_with(fd, errno); }

/* Counts bytes taken from a direction's source, within its limit; returns how many of n may pass. */
static size_t take(struct dir *d, size_t n) {
  if (d->limit >= 0 && (long long)n > d->limit) n = (size_t)d->limit;
  d->taken += n;
  if (d->limit > 0) d->limit -= (long long)n;
  return n;
}

/* Moves what it can; returns an error text or NULL. */
static const char *step(struct dir *d, short src_ev) {
  if (!d->eof && d->limit != 0 && (src_ev & (POLLIN | POLLHUP)) && d->in_pipe < PIPE_SIZE) {
    size_t want = PIPE_SIZE - d->in_pipe;
    if (d->limit > 0 && (long long)want > d->limit) want = (size_t)d->limit;
    ssize_t n = splice(d->src, NULL, d->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) d->in_pipe += take(d, (size_t)n);
    else if (n == 0) d->eof = 1;
    else if (errno != EAGAIN && errno != EINTR) return failed(d->src);
  }
  /* Tried whenever something waits: nonblocking, so a full destination is only EAGAIN. */
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

static int sockopt(int fd, int name) {
  int value = -1;
  socklen_t len = sizeof value;
  return getsockopt(fd, SOL_SOCKET, name, &value, &len) == 0 ? value : -1;
}

/* Why a descriptor from the relay is not a program's connected TCP socket, or NULL when it is. The
 * sandbox's network namespace holds nothing else it could be: its loopback, and no route out. */
static const char *not_a_connection(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return "the relay handed over something that is not a socket";
  int domain = sockopt(fd, SO_DOMAIN);
  if (domain != AF_INET && domain != AF_INET6) return "the relay handed over a socket that is not an IP socket";
  if (sockopt(fd, SO_TYPE) != SOCK_STREAM || sockopt(fd, SO_PROTOCOL) != IPPROTO_TCP) return "the relay handed over a socket that is not TCP";
  if (sockopt(fd, SO_ACCEPTCONN) != 0) return "the relay handed over a listening socket";
  struct sockaddr_storage peer;
  socklen_t len = sizeof peer;
  if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0) return "the relay handed over a socket that is not connected";
  return NULL;
}

/*
 * One read of the relay's connection while the program's socket is awaited (the out direction's pipe
 * is empty then, so what is read always fits). Bytes go on toward the destination, within the
 * limit (a plain request's body: what is past it is dropped); the read that brings a descriptor
 * ends with its byte 'F'. Returns 1 when the program's socket is now the sandbox's side, 0 to go on
 * (-1 in *ended: the relay ended its side instead), or an error through *why.
 */
static int await_socket(struct dir *out, const char **why) {
  static char buf[AWAIT_CHUNK];
  int got = -1, count, cut;
  ssize_t n = recv_with_fds(3, buf, sizeof buf, &got, 1, &count, &cut);
  if (n < 0) {
    if (errno != EAGAIN && errno != EINTR) *why = failed(3);
    return 0;
  }
  if (n == 0) {
    out->eof = 1;
    return -1;
  }
  size_t data = (size_t)n;
  if (count || cut) {
    const char *bad = count != 1 || cut ? "the relay handed over more than one descriptor"
                      : buf[n - 1] != 'F'                        ? "the relay handed over a descriptor with a byte other than 'F'"
                                                                 : not_a_connection(got);
    if (bad) {
      if (got >= 0) close(got);
      *why = bad;
      return 0;
    }
    data--;
  }
  size_t pass = take(out, data);
  if (pass && write(out->pipe[1], buf, pass) != (ssize_t)pass) {
    *why = "the pump's pipe refused bytes";
    return 0;
  }
  out->in_pipe += pass;
  if (got < 0) return 0;
  fcntl(got, F_SETFL, fcntl(got, F_GETFL) | O_NONBLOCK);
  close(3);
  sandbox_fd = got;
  return 1;
}

/*
 * Reads the word to start, "go LIMIT HAND_OVER\n", from stdin (blocking: nothing else happens until
 * it comes). Warden starts a pump before it needs it and goes on carrying the connection itself
 * meanwhile, so a transfer never waits for a process to start; until this word the pump touches
 * neither socket. LIMIT: the out limit; HAND_OVER: 1 when the relay was asked to hand over.
 */
static int read_go(long long *limit, int *hand_over) {
  char line[64];
  size_t len = 0;
  while (len < sizeof line - 1) {
    ssize_t n = read(0, line + len, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    if (line[len++] == '\n') break;
  }
  line[len] = 0;
  char nl;
  return sscanf(line, "go %lld %d%c", limit, hand_over, &nl) == 3 && nl == '\n' && *limit >= -1 && (*hand_over == 0 || *hand_over == 1);
}

int pump_main(const char *sandbox_pid) {
  /* Gone with Warden: a pump that the sandbox blocks (it holds a copy of the program's socket) must not outlive it. */
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* Only its stdio and the two sockets: nothing else its launcher left open (close_range, Linux 5.9). */
  syscall(SYS_close_range, 5U, ~0U, 0U);
  /* Taken before anything is carried: a sandbox already gone is told at the first poll. */
  int sandbox = sandbox_pid ? (int)syscall(SYS_pidfd_open, atoi(sandbox_pid), 0) : -1;
  long long limit;
  int hand_over;
  if (!read_go(&limit, &hand_over)) return 0; /* not needed after all (Warden carried it on), or Warden went */
  struct dir in = {.src = 4, .dst = 3, .limit = -1, .pass_eof = 1, .name = "in"};
  struct dir out = {.src = 3, .dst = 4, .limit = limit, .pass_eof = limit < 0, .name = "out"};
  struct dir *dirs[2] = {&in, &out};
  for (int i = 0; i < 2; i++) {
    if (pipe2(dirs[i]->pipe, O_NONBLOCK | O_CLOEXEC) < 0) finish(&in, &out, "no pipe");
    fcntl(dirs[i]->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
  }
  fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
  fcntl(4, F_SETFL, fcntl(4, F_GETFL) | O_NONBLOCK);
  /* The destination's socket, bounded as Warden bounds it (hand-over.ts), where Warden's addon could not. */
  int size = EGRESS_SOCKET_BUFFER;
  unsigned int stall = EGRESS_STALL_MS;
  setsockopt(4, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt(4, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  setsockopt(4, IPPROTO_TCP, TCP_USER_TIMEOUT, &stall, sizeof stall);
  if (sandbox_pid && sandbox < 0) finish(&in, &out, SANDBOX_STOPPED);
  int awaiting = hand_over; /* the program's socket is yet to come from the relay */
  int deep = 0;             /* the sandbox's side has its deep send buffer */
  for (;;) {
    if (!awaiting && !deep) {
      /* A deep send buffer toward the sandbox: fewer, larger moves on both sides (forced where Warden may). */
      int size = SOCKET_BUFFER;
      if (setsockopt(sandbox_fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
        setsockopt(sandbox_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
      /* Where it is the program's TCP socket, unpaced (runner.h; the relay's listener set it too, but
       * a pump may be given any connected socket); on the relay's Unix socket this does nothing. */
      setsockopt(sandbox_fd, IPPROTO_TCP, TCP_CONGESTION, EGRESS_LOOPBACK_CONGESTION, sizeof EGRESS_LOOPBACK_CONGESTION - 1);
      in.dst = out.src = sandbox_fd;
      deep = 1;
    }
    /* A plain request's body is done once its length is through: the sandbox's later bytes stay unread. */
    if (!awaiting && out.limit == 0 && !out.in_pipe) out.done = 1;
    if (in.done && out.done) finish(&in, &out, NULL);
    struct pollfd fds[6] = {{.fd = 0, .events = POLLIN}, {.fd = sandbox, .events = POLLIN}};
    int n = 2;
    int idx[2][2];
    for (int i = 0; i < 2; i++) {
      struct dir *d = dirs[i];
      /* While awaiting: only the relay's bytes, one read at a time into an empty pipe; nothing from the destination. */
      int want_in = awaiting ? d == &out && !d->in_pipe : !d->eof && d->limit != 0 && d->in_pipe < PIPE_SIZE;
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
    if (fds[1].revents) finish(&in, &out, SANDBOX_STOPPED);
    for (int i = 0; i < 2; i++) {
      short se = fds[idx[i][0]].revents, de = fds[idx[i][1]].revents;
      if ((se | de) & POLLERR) {
        int fd = se & POLLERR ? dirs[i]->src : dirs[i]->dst, err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        finish(&in, &out, err ? failed_with(fd, err) : fd == 4 ? "destination: socket error" : "sandbox side: socket error");
      }
      const char *e = NULL;
      if (awaiting && dirs[i] == &out && (se & (POLLIN | POLLHUP))) {
        int r = await_socket(&out, &e);
        if (r != 0) awaiting = 0;
        se = 0;
      }
      if (!e) e = step(dirs[i], awaiting ? 0 : se);
      /* Moving on while bytes keep coming costs a splice that finds nothing, where going back to
       * poll would cost a poll per chunk the socket hands over (a loopback gives 64 KiB at a time). */
      for (int more = 0; !e && !awaiting && (se & POLLIN) && more < 16; more++) {
        unsigned long long before = dirs[i]->taken;
        e = step(dirs[i], POLLIN);
        if (dirs[i]->taken == before) break;
      }
      if (e) finish(&in, &out, e);
    }
  }
}
