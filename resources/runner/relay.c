/*
 * `warden-runner egress-relay PORT SOCKET [--hand-over]`: the way out of an `egress` sandbox. The
 * sandbox has no network (`--network none`); programs find this relay on 127.0.0.1:PORT through
 * HTTP_PROXY, and it joins each accepted connection to one new connection on SOCKET, the Unix socket
 * Warden's egress proxy listens on (a host directory bind-mounted read-only at /.warden/egress,
 * holding nothing else), moving the bytes both ways with splice(2). It decides nothing: which
 * sandbox a connection comes from is known on the host by which socket it reached, never from
 * anything said here. With nobody serving the socket (no Warden process listening), a connection
 * gets a one-line 503 saying so, never a way past the proxy. Started by an exec, it forks a daemon
 * and returns once it listens, so it outlives the Warden process that started it; a second start
 * finds the port taken and leaves it running.
 *
 * With --hand-over (under runc, where the kernel carries descriptors across) each connection to the
 * proxy starts with the byte HANDS_OVER, saying this relay can give the program's connection away.
 * Once Warden has decided a connection and it has carried a while, Warden sends one byte with a
 * descriptor attached (the marker: a read that brings descriptors ends with it, so it is told
 * from the program's bytes by that alone). The relay then stops reading the program, passes on
 * what it still holds both ways, and sends the program's socket itself (one byte 'F', SCM_RIGHTS)
 * to the pump that Warden has started for it (resources/runner/pump.c), and lets go of both: the
 * bytes then go from the program's socket to the destination with nothing of this process between.
 * A program that had already ended its side is carried on here instead (its EOF has gone out and
 * nothing can follow it); the pump sees that EOF and carries it the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "fdpass.h"
#include "runner.h"

#define MAX_PAIRS 512
/* Each way goes through a pipe with splice(2): bytes move between the sockets without a copy here.
 * Not larger: the kernel allows a user 64 MiB of pipes (pipe-user-pages-soft), and past it new pipes
 * get two pages, so 256 KiB keeps every connection of a busy sandbox at full size up to 128. */
#define PIPE_CAP (256 * 1024)
/* What a refused connection may still send (its request) before it is closed unread. */
#define DISCARD_LIMIT (1024 * 1024)
/* The first byte on the proxy's connection from a relay that hands connections over (never an HTTP request's first). */
#define HANDS_OVER 0x01
/* One read of the proxy's connection where the marker may come (into an empty pipe, where it always fits). */
#define MARKED_CHUNK (64 * 1024)

struct way {
  int pipe[2];
  size_t in_pipe; /* spliced in from the source, not yet out to the destination */
  size_t cap;     /* the pipe's size (PIPE_CAP, or less where the system gave less) */
  int eof;  /* its source said EOF */
  int shut; /* its destination was told (shutdown SHUT_WR) */
};

/* fds[0]: the program's TCP connection; fds[1]: the proxy's Unix connection (-1 for a refused one). */
struct pair {
  int fds[2];
  struct way ways[2]; /* ways[0]: from fds[0] to fds[1] (to the proxy); ways[1]: back */
  size_t discarded;
  int handing; /* the marker came: what is held goes on, then the program's socket goes to the pump */
};

static struct pair pairs[MAX_PAIRS];
static int npairs;
static struct sockaddr_un proxy_addr;
static int hand_over_mode;

/* A start that fails says why on stderr (the exec's), and exits non-zero. */
static void fatal_text(const char *message) __attribute__((noreturn));
static void fatal_text(const char *message) {
  fprintf(stderr, "%s\n", message);
  exit(1);
}

static void drop(int i) {
  struct pair *p = &pairs[i];
  for (int k = 0; k < 2; k++) {
    if (p->fds[k] >= 0) close(p->fds[k]);
    for (int e = 0; e < 2; e++)
      if (p->ways[k].pipe[e] > 0) close(p->ways[k].pipe[e]);
  }
  pairs[i] = pairs[--npairs];
}

/* The one line a program gets when no Warden process serves this sandbox (or the proxy cannot take it). */
static void refuse(int fd, const char *why) {
  char body[512], head[256];
  int n = snprintf(body, sizeof body,
                   "warden egress: no Warden process is serving this sandbox's egress (%s); nothing leaves the sandbox "
                   "until one does (the app, `warden serve`, or a command run through Warden)\n",
                   why);
  if (n < 0 || n >= (int)sizeof body) n = (int)sizeof body - 1;
  int h = snprintf(head, sizeof head,
                   "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                   "Content-Length: %d\r\nConnection: close\r\n\r\n",
                   n);
  (void)!write(fd, head, (size_t)h);
  (void)!write(fd, body, (size_t)n);
  shutdown(fd, SHUT_WR);
}

/* Sends the program's connection over the proxy's connection as a descriptor (to the pump): 1 when it
 * went (both are then let go here), 0 to try again once the connection can take it, -1 when it failed. */
static int give_away(struct pair *p) {
  if (send_byte_with_fd(p->fds[1], 'F', p->fds[0], MSG_DONTWAIT) < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  close(p->fds[0]);
  close(p->fds[1]);
  p->fds[0] = p->fds[1] = -1;
  return 1;
}

static void accept_one(int lfd) {
  int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  if (npairs == MAX_PAIRS) {
    close(fd);
    return;
  }
  struct pair p = {.fds = {fd, -1}};
  int up = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const char hands_over = HANDS_OVER;
  int connected = up >= 0 && connect(up, (struct sockaddr *)&proxy_addr, sizeof proxy_addr) == 0;
  if (connected && hand_over_mode && write(up, &hands_over, 1) != 1) {
    /* The proxy answered and closed before this byte went (it refuses a connection past its
     * sandbox's limit at once): its answer, still here to read, is what the program gets. */
    char said[1024];
    ssize_t n = recv(up, said, sizeof said, MSG_DONTWAIT);
    close(up);
    if (n > 0) {
      (void)!write(fd, said, (size_t)n);
      shutdown(fd, SHUT_WR);
      pairs[npairs++] = p; /* its request is read and thrown away, as a refused one's */
      return;
    }
    up = -1;
    connected = 0;
    errno = EPIPE;
  }
  if (connected) {
    p.fds[1] = up;
    for (int k = 0; k < 2; k++) {
      if (pipe2(p.ways[k].pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        if (k == 1) close(p.ways[0].pipe[0]), close(p.ways[0].pipe[1]);
        close(up);
        refuse(fd, "the relay has no room for more connections");
        p.fds[1] = -1;
        p.ways[0].pipe[0] = p.ways[0].pipe[1] = 0;
        break;
      }
      fcntl(p.ways[k].pipe[1], F_SETPIPE_SZ, PIPE_CAP);
      int cap = fcntl(p.ways[k].pipe[1], F_GETPIPE_SZ);
      p.ways[k].cap = cap > 0 ? (size_t)cap : 4096;
    }
  } else {
    int err = errno;
    if (up >= 0) close(up);
    refuse(fd, err == EAGAIN ? "its proxy is busy" : strerror(err));
  }
  pairs[npairs++] = p;
}

/* Tells the destination of a way that its source ended, once all it sent is through. */
static void shut_if_drained(struct pair *p, int k) {
  struct way *w = &p->ways[k];
  if (w->eof && !w->shut && w->in_pipe == 0) {
    shutdown(p->fds[1 - k], SHUT_WR);
    w->shut = 1;
  }
}

/* Returns -1 when the pair must go. */
static int flush(struct pair *p, int k) {
  struct way *w = &p->ways[k];
  while (w->in_pipe > 0) {
    ssize_t n = splice(w->pipe[0], NULL, p->fds[1 - k], NULL, w->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (n == 0) return -1;
    w->in_pipe -= (size_t)n;
  }
  shut_if_drained(p, k);
  return 0;
}

/*
 * The proxy's side failed: it closed with bytes of the program's unread, which is how it refuses a
 * connection at once (past its sandbox's limit), and the kernel then reports an error here rather
 * than an end. What it said before it went still goes to the program (the pipe's, then what is
 * queued), and the program's request is then read and thrown away as a refused one's, so its
 * socket is never closed with bytes unread (which would reset it and lose that answer).
 */
static int salvage(struct pair *p) {
  char said[4096];
  if (flush(p, 1) < 0) return -1;
  ssize_t n;
  while ((n = recv(p->fds[1], said, sizeof said, MSG_DONTWAIT)) > 0) (void)!write(p->fds[0], said, (size_t)n);
  close(p->fds[1]);
  p->fds[1] = -1;
  for (int k = 0; k < 2; k++)
    for (int e = 0; e < 2; e++) {
      if (p->ways[k].pipe[e] > 0) close(p->ways[k].pipe[e]);
      p->ways[k].pipe[e] = 0;
    }
  p->handing = 0;
  shutdown(p->fds[0], SHUT_WR);
  return 0;
}

/*
 * The proxy's bytes toward the program where a marker may come among them: read (not spliced, which
 * would drop a descriptor), one chunk at a time into the empty pipe. The descriptor that marks it
 * is only a marker, and is closed.
 */
static int receive(struct pair *p) {
  static char buf[MARKED_CHUNK];
  struct way *w = &p->ways[1];
  int count, cut;
  /* Into the empty pipe, never more than it holds (a pipe made past the user's limit holds 8 KiB). */
  size_t room = w->cap < sizeof buf ? w->cap : sizeof buf;
  ssize_t n = recv_with_fds(p->fds[1], buf, room, NULL, 0, &count, &cut);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : salvage(p);
  if (n == 0) {
    w->eof = 1;
    return flush(p, 1);
  }
  int marked = count > 0 || cut; /* the marker's descriptor is only a marker: closed as it came */
  size_t data = (size_t)n - (marked ? 1 : 0);
  if (data && write(w->pipe[1], buf, data) != (ssize_t)data) return -1;
  w->in_pipe += data;
  /* Past the program's own EOF nothing can follow it to the pump: this relay carries it on. */
  if (marked && !p->ways[0].eof) p->handing = 1;
  return flush(p, 1);
}

static int fill(struct pair *p, int k) {
  struct way *w = &p->ways[k];
  if (k == 1 && hand_over_mode) return receive(p);
  ssize_t n = splice(p->fds[k], NULL, w->pipe[1], NULL, w->cap - w->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : k == 1 ? salvage(p) : -1;
  if (n == 0) w->eof = 1;
  else w->in_pipe += (size_t)n;
  return flush(p, k);
}

/* A refused connection: its request is read and thrown away until it closes (or sends too much). */
static int discard(struct pair *p) {
  static uint8_t sink[16384];
  ssize_t n = read(p->fds[0], sink, sizeof sink);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  p->discarded += (size_t)n;
  return n == 0 || p->discarded > DISCARD_LIMIT ? -1 : 0;
}

/* Whether a way takes bytes from its source now: not past its EOF, not into a full pipe; once handing, none. */
static int wants_bytes(struct pair *p, int k) {
  struct way *w = &p->ways[k];
  if (w->eof || p->handing) return 0;
  return k == 1 && hand_over_mode ? w->in_pipe == 0 : w->in_pipe < w->cap;
}

/* Handing over, and everything held is through both ways: the program's socket can go. */
static int ready_to_give(struct pair *p) { return p->handing && p->fds[0] >= 0 && !p->ways[0].in_pipe && !p->ways[1].in_pipe; }

static void serve(int lfd) {
  static struct pollfd fds[2 * MAX_PAIRS + 1];
  for (;;) {
    fds[0] = (struct pollfd){.fd = lfd, .events = npairs < MAX_PAIRS ? POLLIN : 0};
    for (int i = 0; i < npairs; i++) {
      struct pair *p = &pairs[i];
      for (int k = 0; k < 2; k++) {
        short ev = 0;
        if (p->fds[1] < 0) ev = k == 0 ? POLLIN : 0;
        else {
          if (wants_bytes(p, k)) ev |= POLLIN;
          if (p->ways[1 - k].in_pipe > 0 || (k == 1 && ready_to_give(p))) ev |= POLLOUT;
        }
        /* Nothing wanted: left out, or a hang-up would wake the loop for ever. */
        fds[1 + 2 * i + k] = (struct pollfd){.fd = ev ? p->fds[k] : -1, .events = ev};
      }
    }
    int n = 1 + 2 * npairs;
    if (poll(fds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    /* Backwards: dropping pair i moves the last pair into its slot, which this round has already seen. */
    for (int i = npairs - 1; i >= 0; i--) {
      struct pair *p = &pairs[i];
      int bad = 0;
      for (int k = 0; k < 2 && !bad; k++) {
        short re = fds[1 + 2 * i + k].revents;
        if (!re) continue;
        if (p->fds[1] < 0) bad = discard(p);
        else if (re & POLLERR) bad = k == 1 ? salvage(p) : -1;
        else {
          if (re & POLLOUT) bad = flush(p, 1 - k);
          if (!bad && (re & (POLLIN | POLLHUP)) && wants_bytes(p, k)) bad = fill(p, k);
        }
      }
      if (!bad && ready_to_give(p)) bad = give_away(p);
      if (bad || (p->fds[1] >= 0 && p->ways[0].shut && p->ways[1].shut)) drop(i);
    }
    if (fds[0].revents & POLLIN) accept_one(lfd);
  }
}

int relay_main(const char *port_text, const char *socket_path, int hand_over) {
  hand_over_mode = hand_over;
  char *end;
  long port = strtol(port_text, &end, 10);
  if (*end || port < 1 || port > 65535) fatal_text("egress-relay needs a port");
  if (strlen(socket_path) >= sizeof proxy_addr.sun_path) fatal_text("egress-relay: the socket path is too long");
  proxy_addr.sun_family = AF_UNIX;
  strcpy(proxy_addr.sun_path, socket_path);
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  /* Accepted connections take it from the listener (runner.h). Only on the host's kernel, which is
   * where a relay hands over (runc): gVisor's netstack paces nothing, and its downloads measured no
   * faster with Reno (0.60-0.72 of its nat, against 0.62-0.82 with its default, interleaved). */
  if (hand_over)
    setsockopt(lfd, IPPROTO_TCP, TCP_CONGESTION, EGRESS_LOOPBACK_CONGESTION, sizeof EGRESS_LOOPBACK_CONGESTION - 1);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 512) < 0) {
    if (errno == EADDRINUSE) {
      printf("egress-relay: 127.0.0.1:%ld is already taken (a relay runs)\n", port);
      return 0;
    }
    char message[128];
    snprintf(message, sizeof message, "egress-relay: cannot listen on 127.0.0.1:%ld: %s", port, strerror(errno));
    fatal_text(message);
  }
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) fatal_text("egress-relay: cannot fork");
  if (child > 0) {
    printf("egress-relay: listening on 127.0.0.1:%ld\n", port);
    return 0;
  }
  /* The daemon: its own session, and no hold on the exec's stdio (the exec ends with the parent). */
  setsid();
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    if (devnull > 2) close(devnull);
  }
  serve(lfd);
  return 0;
}
