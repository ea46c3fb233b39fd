/*
 * Descriptors over a Unix socket (SCM_RIGHTS), as the egress hand-over passes them: the relay sends
 * the program's socket to the pump, Warden's addon sends the relay its marker, and the pump and the
 * relay read what comes with a byte. Header-only, so the Node addon (resources/native/hand-over.c)
 * and the runner share one copy without linking together.
 */
#ifndef WARDEN_FDPASS_H
#define WARDEN_FDPASS_H
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Sends len bytes with one descriptor attached; returns what sendmsg returns. */
static inline ssize_t send_with_fd(int sock, const void *data, size_t len, int fd, int flags) {
  struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
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
  ssize_t n;
  do n = sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n;
}

/* Sends one byte with one descriptor attached; returns what sendmsg returns (1 when it went). */
static inline ssize_t send_byte_with_fd(int sock, char byte, int fd, int flags) {
  return send_with_fd(sock, &byte, 1, fd, flags);
}

/*
 * Reads up to len bytes without blocking, and the descriptors that came with them: the first `keep`
 * go to kept[] and the rest are closed here (every descriptor that arrives is this process's, wanted
 * or not). *count says how many came and *cut whether the kernel had to drop some (no room). A read
 * that brings descriptors ends with the byte they came on. Returns what recvmsg returns.
 */
static inline ssize_t recv_with_fds(int sock, void *buf, size_t len, int *kept, int keep, int *count, int *cut) {
  struct iovec iov = {.iov_base = buf, .iov_len = len};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(4 * sizeof(int))];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  *count = 0;
  *cut = 0;
  ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  *cut = (msg.msg_flags & MSG_CTRUNC) != 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, (*count)++) {
      int one;
      memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*count < keep) kept[*count] = one;
      else close(one);
    }
  }
  return n;
}
#endif
