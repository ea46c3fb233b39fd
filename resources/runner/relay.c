/*
 * `warden-runner egress-relay PORT SOCKET [--pass-fd]`: the way out of an `egress` sandbox. The
 * sandbox has no network (`--network none`); programs find this relay on 127.0.0.1:PORT through
 * HTTP_PROXY, and it joins each accepted connection to one new connection on SOCKET, the Unix socket
 * Warden's egress proxy listens on (a host directory bind-mounted read-only at /.warden/egress,
 * holding nothing else). With --pass-fd (under runc, where the kernel carries descriptors across) it
 * sends the program's connection itself over that new connection (one byte 'F' with SCM_RIGHTS) and
 * lets go of it: the proxy then reads and writes the program's socket directly, with nothing of this
 * process in the byte path. Otherwise (gVisor, whose host sockets carry no descriptors) it moves the
 * bytes both ways itself. Either way it decides nothing: which sandbox a connection comes from is
 * known on the host by which socket it reached, never from anything said here. With nobody serving
 * the socket (no Warden process listening), a connection gets a one-line 503 saying so, never a way
 * past the proxy. Started by an exec, it forks a daemon and returns once it listens, so it outlives
 * the Warden process that started it; a second start finds the port taken and leaves it running.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "runner.h"

#define MAX_PAIRS 512
/* Each way goes through a pipe with splice(2): bytes move between the sockets without a copy here. */
#define PIPE_CAP (1024 * 1024)
/* What a refused connection may still send (its request) before it is closed unread. */
#define DISCARD_LIMIT (1024 * 1024)

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
};

static struct pair pairs[MAX_PAIRS];
static int npairs;
static struct sockaddr_un proxy_addr;
static int pass_fd;

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

/* Sends the program's connection to the proxy as a descriptor; true when it went (then both are closed here). */
static int hand_over(int fd, int up) {
  char byte = 'F';
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  /* The descriptor is a blocking socket again, as the program's side of a plain connection is. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  ssize_t n;
  do n = sendmsg(up, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != 1) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return 0;
  }
  close(up);
  close(fd);
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
  if (up >= 0 && connect(up, (struct sockaddr *)&proxy_addr, sizeof proxy_addr) == 0) {
    /* Not handed over (the send failed): carried here instead, on the same fresh connection. */
    if (pass_fd && hand_over(fd, up)) return;
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

static int fill(struct pair *p, int k) {
  struct way *w = &p->ways[k];
  ssize_t n = splice(p->fds[k], NULL, w->pipe[1], NULL, w->cap - w->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
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
          if (!p->ways[k].eof && p->ways[k].in_pipe < p->ways[k].cap) ev |= POLLIN;
          if (p->ways[1 - k].in_pipe > 0) ev |= POLLOUT;
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
        else if (re & POLLERR) bad = -1;
        else {
          if (re & POLLOUT) bad = flush(p, 1 - k);
          if (!bad && (re & (POLLIN | POLLHUP)) && !p->ways[k].eof && p->ways[k].in_pipe < p->ways[k].cap) bad = fill(p, k);
        }
      }
      if (bad || (p->fds[1] >= 0 && p->ways[0].shut && p->ways[1].shut)) drop(i);
    }
    if (fds[0].revents & POLLIN) accept_one(lfd);
  }
}

int relay_main(const char *port_text, const char *socket_path, int pass_fds) {
  pass_fd = pass_fds;
  char *end;
  long port = strtol(port_text, &end, 10);
  if (*end || port < 1 || port > 65535) fatal_text("egress-relay needs a port");
  if (strlen(socket_path) >= sizeof proxy_addr.sun_path) fatal_text("egress-relay: the socket path is too long");
  proxy_addr.sun_family = AF_UNIX;
  strcpy(proxy_addr.sun_path, socket_path);
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
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
