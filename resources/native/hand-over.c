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

static napi_value send_marker(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "sendMarker needs a file descriptor");
    return NULL;
  }
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
 * fixReceiveBuffer(fd, bytes): a fixed receive buffer for a connection to a destination (the kernel
 * doubles it and stops growing it). Node has no call for it, and autotuning lets the buffer of a
 * connection whose program stops reading grow to tens of MiB of host memory.
 */
static napi_value fix_receive_buffer(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1, bytes = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || napi_get_value_int32(env, argv[1], &bytes) != napi_ok) {
    napi_throw_type_error(env, NULL, "fixReceiveBuffer needs a file descriptor and a size");
    return NULL;
  }
  napi_value result;
  napi_get_boolean(env, setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) == 0, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "sendMarker", NAPI_AUTO_LENGTH, send_marker, NULL, &fn);
  napi_set_named_property(env, exports, "sendMarker", fn);
  napi_create_function(env, "passDescriptors", NAPI_AUTO_LENGTH, pass_descriptors, NULL, &fn);
  napi_set_named_property(env, exports, "passDescriptors", fn);
  napi_create_function(env, "fixReceiveBuffer", NAPI_AUTO_LENGTH, fix_receive_buffer, NULL, &fn);
  napi_set_named_property(env, exports, "fixReceiveBuffer", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
