/*
 * `warden-runner egress-forward PORT`: the only way out of an `egress` sandbox. The sandbox has no
 * network (`--network none`); this process listens on 127.0.0.1:PORT inside it (programs find it
 * through HTTP_PROXY) and carries each accepted connection as a numbered stream over its own exec's
 * stdio, where Warden's egress proxy decides and records it. It decides nothing itself: it only
 * moves bytes. Flow control both ways (runner.h, "egress-forward"): it sends a stream's bytes only
 * within the host's credit, and credits the host only for what it has written into the sandbox,
 * so neither side ever buffers more than one window per stream, whichever end stalls.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "runner.h"

#define MAX_STREAMS 512
#define CHUNK 65536
#define WINDOW (256u * 1024u)
/* Credit for bytes written into the sandbox goes up in batches: a CREDIT per write was a frame up
 * through the engine's exec stream for every few KiB the program read. Never held back once the
 * buffer is empty, so the host is never left waiting on credit this side could give. */
#define CREDIT_BATCH (WINDOW / 4)

struct stream {
  uint32_t id;
  int fd;
  uint32_t send_credit; /* bytes this side may still send up */
  uint8_t *buf;         /* the host's bytes not yet written into the sandbox (at most WINDOW) */
  size_t len, off;
  uint32_t owed; /* written into the sandbox, not yet credited to the host */
  int rd_eof, host_eof, wr_shut;
};

static struct stream streams[MAX_STREAMS];
static int nstreams;
static uint32_t next_id = 1;

static struct stream *find(uint32_t id) {
  for (int i = 0; i < nstreams; i++)
    if (streams[i].id == id) return &streams[i];
  return NULL;
}

/* Gone in the sandbox: closed (a reset when cut short) and DONE told, so the host frees its end. */
static void drop(struct stream *s) {
  close(s->fd);
  free(s->buf);
  frame_send(F_DONE, s->id, NULL, 0);
  *s = streams[--nstreams];
}

static void credit_host(struct stream *s, uint32_t n) {
  uint8_t p[4];
  put_u32(p, n);
  frame_send(F_NET_CREDIT, s->id, p, 4);
}

static void shut_if_drained(struct stream *s) {
  if (s->host_eof && !s->wr_shut && s->off == s->len) {
    shutdown(s->fd, SHUT_WR);
    s->wr_shut = 1;
  }
}

/* Returns 1 when the stream was dropped. */
static int on_readable(struct stream *s) {
  static uint8_t chunk[CHUNK];
  size_t want = s->send_credit < CHUNK ? s->send_credit : CHUNK;
  if (want == 0) return 0;
  ssize_t n = read(s->fd, chunk, want);
  if (n > 0) {
    s->send_credit -= (uint32_t)n;
    frame_send(F_STDOUT, s->id, chunk, (uint32_t)n);
    return 0;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (n < 0) {
    drop(s);
    return 1;
  }
  s->rd_eof = 1;
  frame_send(F_STDOUT, s->id, NULL, 0);
  if (s->wr_shut) {
    drop(s);
    return 1;
  }
  return 0;
}

static int on_writable(struct stream *s) {
  ssize_t n = write(s->fd, s->buf + s->off, s->len - s->off);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return 0;
    drop(s);
    return 1;
  }
  s->off += (size_t)n;
  s->owed += (uint32_t)n;
  if (s->off == s->len) s->off = s->len = 0;
  if (s->owed >= CREDIT_BATCH || s->len == 0) {
    credit_host(s, s->owed);
    s->owed = 0;
  }
  shut_if_drained(s);
  if (s->rd_eof && s->wr_shut) {
    drop(s);
    return 1;
  }
  return 0;
}

static void on_host_data(struct stream *s, const uint8_t *data, uint32_t len) {
  if (s->host_eof) fatal("data after the end of a stream");
  if (len == 0) {
    s->host_eof = 1;
    shut_if_drained(s);
    if (s->rd_eof && s->wr_shut) drop(s);
    return;
  }
  if (s->off > 0) {
    memmove(s->buf, s->buf + s->off, s->len - s->off);
    s->len -= s->off;
    s->off = 0;
  }
  if (s->len + len > WINDOW) fatal("the host sent past its credit");
  memcpy(s->buf + s->len, data, len);
  s->len += len;
}

static void dispatch(struct frame *f) {
  struct cursor c = {f->payload, f->len, 0};
  struct stream *s = f->id ? find(f->id) : NULL;
  switch (f->type) {
  case F_STDIN:
    if (s) on_host_data(s, f->payload, f->len);
    break;
  case F_CREDIT: {
    uint32_t n = cur_u32(&c);
    if (c.bad || c.left) fatal("malformed CREDIT frame");
    if (s) {
      if ((uint64_t)s->send_credit + n > WINDOW) fatal("credit past the window");
      s->send_credit += n;
    }
    break;
  }
  case F_KILL:
    if (f->len) fatal("malformed KILL frame");
    if (f->id == 0) exit(0);
    if (s) drop(s);
    break;
  case F_PING:
    if (f->id || f->len) fatal("malformed PING frame");
    frame_send(F_PONG, 0, NULL, 0);
    break;
  default:
    fatal("a frame the egress forwarder does not take");
  }
}

static void accept_one(int lfd) {
  int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  if (nstreams == MAX_STREAMS) {
    close(fd);
    return;
  }
  uint8_t *buf = malloc(WINDOW);
  if (!buf) fatal("out of memory");
  uint32_t id = next_id++;
  if (next_id == 0) next_id = 1;
  streams[nstreams++] = (struct stream){.id = id, .fd = fd, .send_credit = WINDOW, .buf = buf};
  frame_send(F_OPEN, id, NULL, 0);
}

int forward_main(const char *port_text) {
  char *end;
  long port = strtol(port_text, &end, 10);
  if (*end || port < 1 || port > 65535) fatal("egress-forward needs a port");
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 128) < 0) {
    char message[128];
    snprintf(message, sizeof message, "cannot listen on 127.0.0.1:%ld: %s", port, strerror(errno));
    fatal(message);
  }
  uint8_t ready[8];
  put_u32(ready, RUNNER_PROTOCOL_VERSION);
  put_u32(ready + 4, (uint32_t)getpid());
  frame_send(F_READY, 0, ready, sizeof ready);

  static struct pollfd fds[MAX_STREAMS + 2];
  static uint32_t ids[MAX_STREAMS + 2];
  for (;;) {
    fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = lfd, .events = nstreams < MAX_STREAMS ? POLLIN : 0};
    int n = 2;
    for (int i = 0; i < nstreams; i++) {
      struct stream *s = &streams[i];
      short ev = 0;
      if (!s->rd_eof && s->send_credit > 0) ev |= POLLIN;
      if (s->off < s->len) ev |= POLLOUT;
      ids[n] = s->id;
      /* Nothing wanted (no credit, nothing to write): left out, or a hang-up would wake the loop for ever. */
      fds[n++] = (struct pollfd){.fd = ev ? s->fd : -1, .events = ev};
    }
    if (poll(fds, (nfds_t)n, -1) < 0 && errno != EINTR) fatal("poll failed");
    /* By id: a stream dropped in this round moves another into its slot. */
    for (int i = 2; i < n; i++) {
      struct stream *s = find(ids[i]);
      short re = fds[i].revents;
      if (!s || !re) continue;
      if (re & POLLERR) {
        drop(s);
        continue;
      }
      if ((re & POLLOUT) && on_writable(s)) continue;
      if ((re & (POLLIN | POLLHUP)) && !s->rd_eof && s->send_credit > 0) on_readable(s);
    }
    if (fds[1].revents & POLLIN) accept_one(lfd);
    if (fds[0].revents) {
      struct frame f;
      int r = frame_poll_read(0, &f);
      if (r < 0) exit(0);
      while (r == 1) {
        dispatch(&f);
        r = frame_next(&f);
      }
    }
  }
}
