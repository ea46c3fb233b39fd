/*
 * Warden's runner: a small static program inside each sandbox that executes tool calls (exec and
 * file access) for Warden over one long-lived channel, so a call costs a frame round trip instead
 * of a cold `podman exec`. It executes calls, it never decides them: policy, budgets and the ledger
 * stay in Warden on the host, which treats every frame from here as hostile input. Built with
 * `gcc -static -O2` (scripts/build-runner.mjs), C standard library and Linux syscalls only, so it
 * runs in any image (no libc, shell or python assumed); mounted read-only at /.warden/runner.
 * One file per concern: framing.c (the channel), main.c (the event loop), exec.c (commands and
 * their credit), spawn.c (a call's supervisor and command), tree.c (killing a process tree),
 * exit.c (the EXIT report), files.c (the file API), users.c (passwd and group), pty.c (terminals),
 * relay.c (the egress-relay mode).
 *
 * WIRE PROTOCOL (the TypeScript side is shared/contracts/runner.ts; keep the two identical)
 *
 * The channel is the stdin (host -> runner) and stdout (runner -> host) of one attached exec.
 * Every message is a frame:
 *
 *   u32 length (big-endian: payload bytes, at most RUNNER_MAX_PAYLOAD) | u8 type | u32 id (big-endian) | payload
 *
 * `id` names a call (chosen by the host, never 0 for a call); id 0 is the channel itself.
 * Inside payloads: u8/u16/u32/u64 are big-endian; `str` is u32 length + bytes (no NUL needed).
 *
 * Host -> runner
 *   0x01 EXEC   u32 window | u8 flags (1: stdin frames follow; 2: on a pseudo-terminal, a terminal:
 *               stdin and output are the terminal's, nothing comes as STDERR) | u16 argc | u16 envc | str cwd ("" = default)
 *               | str user ("" = the runner's own) | argc x str argv | envc x str "NAME=value"
 *               The command runs with the runner's environment (the container's), the given env on
 *               top and WARDEN_EXEC_ID=<marker>; argv[0] without '/' is searched in that PATH.
 *   0x02 STDIN  bytes for the call's stdin (EXEC) or its data (WRITE); an empty payload is end of input.
 *   0x03 KILL   (empty) kill the call's whole process tree (timeout, caller gone). With id 0: kill
 *               every call's tree and exit (the host lets the runner go; closing its stdin would
 *               leave Podman's exec session behind).
 *   0x04 CREDIT u32 bytes: the host took that much output; the runner may send that much more.
 *   0x05 READ   u32 limit | u16 n | n x str component        (components below /workspace)
 *   0x06 WRITE  u32 size  | u16 n | n x str component        (then STDIN frames with exactly size bytes, then an empty STDIN)
 *   0x07 LIST   u32 limit | u16 n | n x str component
 *   0x08 RESIZE u16 cols | u16 rows: the terminal's size (an EXEC with flag 2)
 *   0x09 PING   (id 0, empty) answered at once with PONG: a runner that stops answering is lost.
 *
 * Runner -> host
 *   0x80 READY  (id 0) u32 protocol version | u32 pid of the runner (as the sandbox sees it)
 *   0x81 STDOUT bytes of stdout (EXEC, only within the window the host granted: EXEC's window plus
 *               every CREDIT), or of the result (READ: the file's bytes; LIST: entries, see below).
 *   0x82 STDERR bytes of stderr (EXEC, same window as STDOUT)
 *   0x83 EXIT   u8 how (0 exited, 1 killed by a signal, 2 not started: the user or cwd could not be
 *               taken, so the host runs the call the plain way) | u8 code or signal | u8 killed (the
 *               runner killed it on KILL) | u8 0 | u64 cgroup oom_kill count (read after a SIGKILL,
 *               else 0) | str message (how 2)
 *   0x84 DONE   (empty) a READ, WRITE or LIST succeeded; its bytes came before in STDOUT frames.
 *               LIST entries: u8 type (0 file, 1 dir, 2 symlink, 3 other) | u32 mode (permission
 *               bits) | u64 size | i64 mtime seconds | u32 mtime nanoseconds | str name
 *   0x85 FAIL   str code (E_NOT_FOUND, E_BAD_INPUT, E_POLICY_DENIED, E_TOO_LARGE) | str message
 *   0x86 FATAL  (id 0) str message: the runner gives up (a bad frame from the host); it exits next.
 *   0x87 PONG   (id 0, empty) the answer to a PING.
 *   0x8a STDIN_CREDIT u32 bytes | u8 closed: that much of an EXEC's stdin left the runner (written
 *               into the command's stdin, or dropped because it is closed: then `closed` is 1, and
 *               whatever comes next is dropped too): the host, which keeps at most
 *               RUNNER_STDIN_WINDOW bytes unacknowledged, may send that many more.
 *
 * A call ends with exactly one EXIT, DONE or FAIL; nothing is sent for its id after that.
 * Flow control: an EXEC's output never exceeds the credit granted, so the runner stops reading a
 * command's pipes (and the command blocks on its next write) while the host's consumer is slow,
 * without holding back any other call on the channel. Its stdin goes the other way: the runner
 * acknowledges in STDIN_CREDIT what left its buffer, so a command that does not read its stdin
 * holds the host's writer back instead of growing the runner's memory.
 *
 * EGRESS-RELAY (`warden-runner egress-relay PORT SOCKET [--pass-fd]`, relay.c) speaks no frames: it
 * joins each connection to 127.0.0.1:PORT in the sandbox to a new connection on the Unix SOCKET
 * (Warden's egress proxy), bytes as they are, or with --pass-fd hands the connection itself over
 * that socket (one byte 'F' carrying it, SCM_RIGHTS); it forks a daemon that outlives its exec.
 * EGRESS-PUMP (`warden-runner egress-pump OUT_LIMIT`, pump.c) runs on the host, not in a sandbox:
 * the proxy hands it a decided connection's two sockets (fds 3 and 4) to splice; it reports bytes.
 * EGRESS-DIALER (`warden-runner egress-dialer TIMEOUT_MS SANDBOX_PID`, dialer.c) runs on the host too, in an
 * egress sandbox's memory cgroup: it makes the proxy's connections to that sandbox's destinations.
 */
#ifndef WARDEN_RUNNER_H
#define WARDEN_RUNNER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RUNNER_PROTOCOL_VERSION 3
#define RUNNER_MAX_PAYLOAD (1u << 20)
#define RUNNER_HEADER_BYTES 9

enum {
  F_EXEC = 0x01, F_STDIN = 0x02, F_KILL = 0x03, F_CREDIT = 0x04,
  F_READ = 0x05, F_WRITE = 0x06, F_LIST = 0x07, F_RESIZE = 0x08, F_PING = 0x09,
  F_READY = 0x80, F_STDOUT = 0x81, F_STDERR = 0x82, F_EXIT = 0x83,
  F_DONE = 0x84, F_FAIL = 0x85, F_FATAL = 0x86, F_PONG = 0x87,
  F_STDIN_CREDIT = 0x8a,
};

/* framing.c: the channel. */
struct frame {
  uint8_t type;
  uint32_t id;
  uint32_t len;
  uint8_t *payload;
};
/* Reads what stdin has; returns 1 when a whole frame is ready in *f, 0 when more is needed, -1 at EOF. */
int frame_poll_read(int fd, struct frame *f);
/* The next frame already buffered, if any (1), else 0. */
int frame_next(struct frame *f);
void frame_send(uint8_t type, uint32_t id, const void *payload, uint32_t len);
void frame_send2(uint8_t type, uint32_t id, const void *a, uint32_t alen, const void *b, uint32_t blen);
void fatal(const char *message) __attribute__((noreturn));

/* A cursor over a payload; any read past its end sets `bad`. */
struct cursor {
  const uint8_t *p;
  uint32_t left;
  int bad;
};
uint8_t cur_u8(struct cursor *c);
uint16_t cur_u16(struct cursor *c);
uint32_t cur_u32(struct cursor *c);
/* A NUL-terminated copy (strings with a NUL inside are refused: bad). */
char *cur_str(struct cursor *c);
void put_u32(uint8_t *p, uint32_t v);
void put_u64(uint8_t *p, uint64_t v);

/* users.c: names from the image's /etc/passwd and /etc/group (no NSS in a static binary). */
int resolve_user(const char *spec, uid_t *uid, gid_t *gid, gid_t *groups, int *ngroups, int maxgroups);

/* spawn.c: a call's supervisor and its command. */
struct spawn_args {
  int in_fd, out_fd, err_fd, errpipe, statuspipe;
  const char *cwd;
  int switch_user;
  uid_t uid;
  gid_t gid;
  gid_t *groups;
  int ngroups;
  char **argv, **env;
  int pty;
};
/* Why a command never ran, sent up errpipe: stage 1 the user, 2 the cwd; and errno. */
struct start_error {
  int32_t stage;
  int32_t err;
};
char **build_env(char **extra, int nextra, const char *marker);
void supervise(const struct spawn_args *a) __attribute__((noreturn));

/* exit.c */
void send_exit(uint32_t id, uint8_t how, uint8_t value, uint8_t killed, uint64_t oom, const char *message);
uint64_t oom_kills(void);

/* pty.c */
int pty_open(int *master, int *slave);
void pty_resize(int master, uint16_t cols, uint16_t rows);

/* exec.c */
void exec_start(uint32_t id, struct cursor *c);
void exec_stdin(uint32_t id, const uint8_t *data, uint32_t len);
void exec_kill(uint32_t id);
void exec_credit(uint32_t id, uint32_t bytes);
void exec_resize(uint32_t id, uint16_t cols, uint16_t rows);
int exec_known(uint32_t id);
/* Fills pollfds for every exec; returns how many were added. */
int exec_pollfds(struct pollfd *fds, int max, void **owners);
void exec_on_ready(void *owner, short revents, int fd);
void exec_reap(void);
void exec_finish_ready(void);
void exec_kill_all(void);
/* tree.c: SIGKILL to a command's whole process tree. */
void kill_tree(pid_t root, const char *marker);
/* What is left of a call whose supervisor died before its command (killed from inside): its
   session, the descendants and the marker; the supervisor's pid is not signalled (already reaped). */
void kill_orphaned_session(pid_t sid, const char *marker);
int exec_count(void);

/* relay.c: the egress-relay mode. */
int relay_main(const char *port, const char *socket_path, int hand_over);
/* pump.c: the egress-pump mode (run on the host by Warden's egress proxy). */
int pump_main(const char *sandbox_pid);
/* dialer.c: the egress-dialer mode (on the host, one per egress sandbox, in its memory cgroup). */
int dialer_main(const char *timeout_ms, const char *sandbox_pid);

/* seal.c: the seal-files mode (on the host, after each start of a runc sandbox). */
int seal_main(const char *pid);

/*
 * A destination connection's socket buffers each way (the kernel doubles them): fixed, not grown by
 * autotuning, which lets one whose program stops reading reach tens of MiB of host memory. And bytes
 * toward a destination it has not taken for EGRESS_STALL_MS end the connection (TCP_USER_TIMEOUT):
 * closed with bytes unsent, a socket would otherwise stay an orphan for minutes. Warden's addon sets
 * the same (electron/engine/egress/hand-over.ts: DESTINATION_BUFFER, DESTINATION_STALL_MS).
 */
#define EGRESS_SOCKET_BUFFER (1024 * 1024)
#define EGRESS_STALL_MS 60000

/*
 * The program's connection to its egress relay is one loopback hop inside the sandbox, which never
 * loses a packet and has no bottleneck to find: a pacing congestion control there (BBR, which some
 * hosts make their default and a new network namespace inherits) only holds each burst back on a
 * timer, which cost the proxied download about a quarter of its speed here. Reno, which every
 * kernel has and lets anyone choose, sends as the window allows. The destination's side keeps the
 * host's choice: it crosses real networks.
 */
#define EGRESS_LOOPBACK_CONGESTION "reno"

/* files.c */
void file_start(uint8_t op, uint32_t id, struct cursor *c);
void file_data(uint32_t id, const uint8_t *data, uint32_t len);
int file_known(uint32_t id);

#endif
