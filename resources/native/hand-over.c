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

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "sendMarker", NAPI_AUTO_LENGTH, send_marker, NULL, &fn);
  napi_set_named_property(env, exports, "sendMarker", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
