/*
 * hand-over: the one thing Node cannot do for Warden's egress proxy, send a descriptor (SCM_RIGHTS)
 * on a Unix socket. Under runc an `egress` sandbox's relay (resources/runner/relay.c) can give the
 * program's own TCP connection away, so that past the proxy's decision the pump splices it to the
 * destination with no relay and no Unix socket between (resources/runner/pump.c takes it). The
 * relay must be told when, among the bytes it carries toward the program, and a byte alone could be
 * the program's: a read that brings a descriptor ends with the byte it came on, so one byte sent with
 * a descriptor is a marker no program byte can forge.
 *
 * sendMarker(fd) sends that byte, with the read end of a fresh empty pipe (it carries nothing and the
 * relay closes it), on Warden's own end of the relay's connection, without blocking:
 *   'sent'    the marker is on its way
 *   'again'   the connection cannot take it now (its buffer is full): try again
 *   otherwise why it failed (the connection is then carried as it was)
 * Warden never receives, reads or writes the program's socket itself: the sandbox may keep a copy and
 * make it block whoever touches it, so only the pump, a process of the connection's own, does.
 * Built by scripts/build-native.mjs with gcc against Node-API only, so one build serves Node and Electron.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <node_api.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "../runner/fdpass.h"

static napi_value text(napi_env env, const char *s) {
  napi_value v;
  napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
  return v;
}

/*
 * Reads the call's first `count` arguments (at most 3) as int32 into out[], the first a descriptor
 * (not negative); false, with a TypeError saying `usage`, when they are not.
 */
static bool int_args(napi_env env, napi_callback_info info, size_t count, int32_t *out, const char *usage) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  bool ok = argc >= count;
  for (size_t i = 0; ok && i < count; i++) ok = napi_get_value_int32(env, argv[i], &out[i]) == napi_ok;
  if (!ok || out[0] < 0) {
    napi_throw_type_error(env, NULL, usage);
    return false;
  }
  return true;
}

static napi_value send_marker(napi_env env, napi_callback_info info) {
  int32_t fd = -1;
  if (!int_args(env, info, 1, &fd, "sendMarker needs a file descriptor")) return NULL;
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return text(env, strerror(errno));
  ssize_t n = send_byte_with_fd(fd, 'S', p[0], MSG_DONTWAIT);
  int err = errno;
  close(p[0]);
  close(p[1]);
  if (n == 1) return text(env, "sent");
  return text(env, err == EAGAIN || err == EWOULDBLOCK ? "again" : strerror(err));
}

/* SO_PASSRIGHTS (Linux 6.16): whether descriptors may be sent to this socket at all; older headers lack it. */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif

/*
 * passDescriptors(fd, allow): sets whether a sender may attach descriptors (SCM_RIGHTS) to what it
 * sends to this socket; true when the kernel took it (false: a kernel before 6.16, which always lets
 * them through). Refused, a sandbox's sendmsg with a descriptor fails with EPERM in the sandbox, so
 * none ever reaches Warden's process: were one to, Node's plain read() would make the kernel close
 * it there, and the close of the last reference to a lingering TCP socket blocks the closer (the
 * red team froze `warden serve` that way). Set on the listening socket, accepted ones inherit it.
 */
static napi_value pass_descriptors(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1;
  bool allow = false;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || napi_get_value_bool(env, argv[1], &allow) != napi_ok) {
    napi_throw_type_error(env, NULL, "passDescriptors needs a file descriptor and a boolean");
    return NULL;
  }
  int value = allow ? 1 : 0;
  napi_value result;
  napi_get_boolean(env, setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &value, sizeof value) == 0, &result);
  return result;
}

/*
 * boundDestination(fd, bytes, stallMs): a connection to a destination holds at most `bytes` of host
 * memory each way (SO_RCVBUF and SO_SNDBUF: fixed, the kernel doubles them and stops growing them),
 * and gives up once `stallMs` pass with bytes sent and not taken (TCP_USER_TIMEOUT, zero-window
 * probes included). Node has no call for either. Autotuning lets the buffers of a connection whose
 * program stops reading, or whose destination stops reading, grow to tens of MiB of host memory; and
 * once closed with bytes unsent such a socket would stay an orphan for minutes, held by no one.
 * Returns whether all three were set.
 */
static napi_value bound_destination(napi_env env, napi_callback_info info) {
  int32_t args[3] = {-1, 0, 0};
  if (!int_args(env, info, 3, args, "boundDestination needs a file descriptor, a size and a time in ms")) return NULL;
  if (args[2] < 0) {
    napi_throw_type_error(env, NULL, "boundDestination needs a time in ms of 0 or more");
    return NULL;
  }
  int32_t fd = args[0], bytes = args[1], stall_ms = args[2];
  unsigned int timeout = (unsigned int)stall_ms;
  int ok = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) == 0;
  ok = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) == 0 && ok;
  ok = setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout, sizeof timeout) == 0 && ok;
  napi_value result;
  napi_get_boolean(env, ok, &result);
  return result;
}

/*
 * descriptorPair(): a SOCK_SEQPACKET socket pair (close-on-exec) for an egress dialer
 * (resources/runner/dialer.c): one end becomes its fd 3, on which it sends each socket it connected;
 * Warden keeps the other and reads it only with takeDescriptor, never with Node (whose reads would
 * drop the descriptors). Node has no call for a socket pair.
 */
static napi_value descriptor_pair(napi_env env, napi_callback_info info) {
  (void)info;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  napi_value pair, a, b;
  napi_create_array_with_length(env, 2, &pair);
  napi_create_int32(env, sv[0], &a);
  napi_create_int32(env, sv[1], &b);
  napi_set_element(env, pair, 0, a);
  napi_set_element(env, pair, 1, b);
  return pair;
}

/*
 * takeDescriptor(fd): the next message on a dialer's pair, without blocking: { id, fd } (fd -1 when
 * none came with it), or null when none waits. Any descriptor past the first is closed.
 */
static napi_value take_descriptor(napi_env env, napi_callback_info info) {
  int32_t fd = -1;
  if (!int_args(env, info, 1, &fd, "takeDescriptor needs a file descriptor")) return NULL;
  char id[32];
  int kept = -1, count = 0, cut = 0;
  ssize_t n = recv_with_fds(fd, id, sizeof id - 1, &kept, 1, &count, &cut);
  napi_value result, v;
  if (n <= 0) {
    napi_get_null(env, &result);
    return result;
  }
  id[n] = '\0';
  napi_create_object(env, &result);
  napi_create_string_utf8(env, id, (size_t)n, &v);
  napi_set_named_property(env, result, "id", v);
  napi_create_int32(env, count ? kept : -1, &v);
  napi_set_named_property(env, result, "fd", v);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "sendMarker", NAPI_AUTO_LENGTH, send_marker, NULL, &fn);
  napi_set_named_property(env, exports, "sendMarker", fn);
  napi_create_function(env, "passDescriptors", NAPI_AUTO_LENGTH, pass_descriptors, NULL, &fn);
  napi_set_named_property(env, exports, "passDescriptors", fn);
  napi_create_function(env, "descriptorPair", NAPI_AUTO_LENGTH, descriptor_pair, NULL, &fn);
  napi_set_named_property(env, exports, "descriptorPair", fn);
  napi_create_function(env, "takeDescriptor", NAPI_AUTO_LENGTH, take_descriptor, NULL, &fn);
  napi_set_named_property(env, exports, "takeDescriptor", fn);
  napi_create_function(env, "boundDestination", NAPI_AUTO_LENGTH, bound_destination, NULL, &fn);
  napi_set_named_property(env, exports, "boundDestination", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
