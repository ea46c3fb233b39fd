/*
 * The channel's framing (see runner.h for the wire protocol): frames are read from stdin as they
 * arrive, never more than one header and RUNNER_MAX_PAYLOAD at a time, and written to stdout
 * whole. Writes block: the host reads the channel without pause (its own memory is bounded by the
 * per-call credit), so a blocked write only waits for the pipe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/uio.h>
#include "runner.h"

static uint8_t *inbuf;
static size_t inlen, inoff, incap;

static uint32_t get_u32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void put_u32(uint8_t *p, uint32_t v) {
  p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

void put_u64(uint8_t *p, uint64_t v) {
  put_u32(p, (uint32_t)(v >> 32));
  put_u32(p + 4, (uint32_t)v);
}

int frame_next(struct frame *f) {
  size_t have = inlen - inoff;
  if (have < RUNNER_HEADER_BYTES) return 0;
  const uint8_t *h = inbuf + inoff;
  uint32_t len = get_u32(h);
  if (len > RUNNER_MAX_PAYLOAD) fatal("frame larger than the protocol allows");
  if (have < RUNNER_HEADER_BYTES + (size_t)len) return 0;
  f->len = len;
  f->type = h[4];
  f->id = get_u32(h + 5);
  f->payload = (uint8_t *)h + RUNNER_HEADER_BYTES;
  inoff += RUNNER_HEADER_BYTES + len;
  return 1;
}

int frame_poll_read(int fd, struct frame *f) {
  if (frame_next(f)) return 1;
  /* Whatever was consumed is dropped before reading more: the buffer never holds more than a frame's worth plus one read. */
  if (inoff > 0) {
    memmove(inbuf, inbuf + inoff, inlen - inoff);
    inlen -= inoff;
    inoff = 0;
  }
  size_t want = RUNNER_HEADER_BYTES + RUNNER_MAX_PAYLOAD + 65536;
  if (incap < want) {
    inbuf = realloc(inbuf, want);
    if (!inbuf) fatal("out of memory");
    incap = want;
  }
  ssize_t n = read(fd, inbuf + inlen, incap - inlen);
  if (n == 0) return -1;
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return 0;
    return -1;
  }
  inlen += (size_t)n;
  return frame_next(f);
}

/* One writev per frame: each write becomes a read (and an engine stream frame) on the host's side of
 * the exec, so a header written apart from its payload doubled the work of every frame on the way up. */
static void write_all(struct iovec *iov, int cnt) {
  while (cnt > 0) {
    ssize_t n = writev(1, iov, cnt);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd pfd = {.fd = 1, .events = POLLOUT};
        poll(&pfd, 1, -1);
        continue;
      }
      /* The host is gone: nothing more to say to anyone. */
      exec_kill_all();
      _exit(0);
    }
    while (cnt > 0 && (size_t)n >= iov->iov_len) {
      n -= (ssize_t)iov->iov_len;
      iov++;
      cnt--;
    }
    if (cnt > 0) {
      iov->iov_base = (uint8_t *)iov->iov_base + n;
      iov->iov_len -= (size_t)n;
    }
  }
}

void frame_send2(uint8_t type, uint32_t id, const void *a, uint32_t alen, const void *b, uint32_t blen) {
  uint8_t h[RUNNER_HEADER_BYTES];
  put_u32(h, alen + blen);
  h[4] = type;
  put_u32(h + 5, id);
  struct iovec iov[3] = {{h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
  write_all(iov, blen ? 3 : alen ? 2 : 1);
}

void frame_send(uint8_t type, uint32_t id, const void *payload, uint32_t len) {
  frame_send2(type, id, payload, len, NULL, 0);
}

void fatal(const char *message) {
  uint8_t l[4];
  put_u32(l, (uint32_t)strlen(message));
  frame_send2(F_FATAL, 0, l, 4, message, (uint32_t)strlen(message));
  exec_kill_all();
  _exit(2);
}

uint8_t cur_u8(struct cursor *c) {
  if (c->left < 1) { c->bad = 1; return 0; }
  c->left -= 1;
  return *c->p++;
}

uint16_t cur_u16(struct cursor *c) {
  uint16_t hi = cur_u8(c);
  return (uint16_t)((hi << 8) | cur_u8(c));
}

uint32_t cur_u32(struct cursor *c) {
  if (c->left < 4) { c->bad = 1; c->left = 0; return 0; }
  uint32_t v = get_u32(c->p);
  c->p += 4;
  c->left -= 4;
  return v;
}

char *cur_str(struct cursor *c) {
  uint32_t len = cur_u32(c);
  if (c->bad || len > c->left || memchr(c->p, 0, len)) { c->bad = 1; return NULL; }
  char *s = malloc((size_t)len + 1);
  if (!s) fatal("out of memory");
  memcpy(s, c->p, len);
  s[len] = 0;
  c->p += len;
  c->left -= len;
  return s;
}
