/*
 * fd-intake: the one thing Node cannot do for Warden's egress proxy, receive a file descriptor
 * (SCM_RIGHTS) on a Unix socket. An `egress` sandbox's relay (resources/runner/relay.c, under runc)
 * hands each program's TCP connection to the host this way, so the proxy, and past its decision
 * the egress pump, reads and writes the program's own socket: no relay and no Unix socket stay in
 * the byte path, which is what brings a download near a `nat` sandbox's speed.
 *
 * recvFirst(fd) reads the first byte of a just-accepted connection, and the descriptor that came with
 * it, without blocking. What a sandbox sends is not trusted: a descriptor is kept only when it is a
 * connected TCP socket (anything else is closed here and said so), and at most one is taken (the
 * kernel closes the rest, and that is refused too). Returns one of:
 *   { kind: 'again' }                 nothing yet
 *   { kind: 'eof' }                   closed before a byte
 *   { kind: 'data', byte }            a byte and no descriptor (a relay that carries bytes itself)
 *   { kind: 'fd', byte, fd }          a byte with a connected TCP socket, now this process's
 *   { kind: 'bad', why }              anything else (the connection is to be dropped)
 * Built by scripts/build-runner.mjs with gcc against Node-API only, so one build serves Node and Electron.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <node_api.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static napi_value result(napi_env env, const char *kind, int byte, int fd, const char *why) {
  napi_value obj, v;
  napi_create_object(env, &obj);
  napi_create_string_utf8(env, kind, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, obj, "kind", v);
  if (byte >= 0) {
    napi_create_int32(env, byte, &v);
    napi_set_named_property(env, obj, "byte", v);
  }
  if (fd >= 0) {
    napi_create_int32(env, fd, &v);
    napi_set_named_property(env, obj, "fd", v);
  }
  if (why) {
    napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, obj, "why", v);
  }
  return obj;
}

static int sockopt(int fd, int name) {
  int value = -1;
  socklen_t len = sizeof value;
  return getsockopt(fd, SOL_SOCKET, name, &value, &len) == 0 ? value : -1;
}

/* Why a received descriptor is not a program's connected TCP socket, or NULL when it is. */
static const char *not_a_connection(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return "the descriptor is not a socket";
  int domain = sockopt(fd, SO_DOMAIN);
  if (domain != AF_INET && domain != AF_INET6) return "the socket is not an IP socket";
  if (sockopt(fd, SO_TYPE) != SOCK_STREAM || sockopt(fd, SO_PROTOCOL) != IPPROTO_TCP) return "the socket is not TCP";
  if (sockopt(fd, SO_ACCEPTCONN) != 0) return "the socket listens";
  struct sockaddr_storage peer;
  socklen_t len = sizeof peer;
  if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0) return "the socket is not connected";
  return NULL;
}

static napi_value recv_first(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "recvFirst needs a file descriptor");
    return NULL;
  }
  unsigned char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  ssize_t n;
  do n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? result(env, "again", -1, -1, NULL) : result(env, "bad", -1, -1, strerror(errno));
  if (n == 0) return result(env, "eof", -1, -1, NULL);
  /* Every descriptor that came is this process's now: all are closed but the one kept. (The buffer's
   * padding has room for two, so a second one arrives rather than being cut.) */
  int got = -1, count = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++, count++) {
      int one;
      memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (got < 0) got = one;
      else close(one);
    }
  }
  if (count > 1 || (msg.msg_flags & MSG_CTRUNC)) {
    if (got >= 0) close(got);
    return result(env, "bad", -1, -1, "more than one descriptor was sent");
  }
  if (got < 0) return result(env, "data", byte, -1, NULL);
  const char *why = not_a_connection(got);
  if (why) {
    close(got);
    return result(env, "bad", -1, -1, why);
  }
  return result(env, "fd", byte, got, NULL);
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "recvFirst", NAPI_AUTO_LENGTH, recv_first, NULL, &fn);
  napi_set_named_property(env, exports, "recvFirst", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
