/*
 * Commands: each EXEC forks a supervisor (spawn.c) that runs the command in its own session with
 * its own pipes; output is read only while the host has granted credit, so a slow consumer stops
 * one command, not the channel. The supervisor is the call's child subreaper, so whatever the
 * command leaves behind stays below it, where a KILL (tree.c) finds it. A command is over when its
 * first process has exited and its pipes are drained; what a detached grandchild writes later is
 * dropped, as with a plain exec.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "runner.h"

#define READ_CHUNK 65536
#define MAX_GROUPS 64

struct exec_call {
  uint32_t id;
  pid_t pid;
  int out_fd, err_fd, in_fd, status_fd;
  uint8_t *in_buf;
  size_t in_len, in_off;
  int in_eof;
  uint64_t credit;
  int exited, status, killed;
  char marker[64];
  struct exec_call *next;
};

static struct exec_call *calls;
static unsigned long marker_seq;

static struct exec_call *find(uint32_t id) {
  for (struct exec_call *c = calls; c; c = c->next)
    if (c->id == id) return c;
  return NULL;
}

int exec_known(uint32_t id) { return find(id) != NULL; }

int exec_count(void) {
  int n = 0;
  for (struct exec_call *c = calls; c; c = c->next) n++;
  return n;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}



static void free_strings(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

void exec_start(uint32_t id, struct cursor *c) {
  uint32_t window = cur_u32(c);
  uint8_t flags = cur_u8(c);
  uint16_t argc = cur_u16(c), envc = cur_u16(c);
  char *cwd = cur_str(c), *user = cur_str(c);
  char **argv = calloc((size_t)argc + 1, sizeof *argv), **extra = calloc((size_t)envc + 1, sizeof *extra);
  if (!argv || !extra) fatal("out of memory");
  for (int i = 0; i < argc && !c->bad; i++) argv[i] = cur_str(c);
  for (int i = 0; i < envc && !c->bad; i++) {
    extra[i] = cur_str(c);
    if (extra[i] && !strchr(extra[i], '=')) c->bad = 1;
  }
  if (c->bad || c->left || argc == 0) fatal("malformed EXEC frame");

  char marker[64];
  snprintf(marker, sizeof marker, "WARDEN_EXEC_ID=runner-%d-%lu", (int)getpid(), ++marker_seq);
  uid_t uid = getuid();
  gid_t gid = getgid(), groups[MAX_GROUPS];
  int ngroups = 0, switch_user = 0;
  if (user[0]) {
    if (!resolve_user(user, &uid, &gid, groups, &ngroups, MAX_GROUPS)) {
      send_exit(id, 2, 0, 0, 0, "user not found in the image's /etc/passwd");
      goto out;
    }
    switch_user = uid != getuid() || gid != getgid();
  }
  int pty = flags & 2;
  int outp[2] = {-1, -1}, errp[2] = {-1, -1}, inp[2] = {-1, -1}, ep[2], sp[2];
  if (pipe2(ep, O_CLOEXEC) < 0 || pipe2(sp, O_CLOEXEC) < 0) fatal("no pipes left");
  if (pty) {
    /* The terminal's master is read for output and written (through its own fd) for input. */
    if (pty_open(&outp[0], &outp[1]) < 0) {
      close(ep[0]); close(ep[1]); close(sp[0]); close(sp[1]);
      send_exit(id, 2, 0, 0, 0, "no pseudo-terminal available");
      goto out;
    }
    inp[1] = fcntl(outp[0], F_DUPFD_CLOEXEC, 0);
  } else {
    if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) fatal("no pipes left");
    if (flags & 1) {
      if (pipe2(inp, O_CLOEXEC) < 0) fatal("no pipes left");
    } else {
      inp[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
  }
  char **env = build_env(extra, envc, marker);
  pid_t pid = fork();
  if (pid < 0) {
    /* At the pids limit, say: nothing ran, and the plain path answers as it would. */
    int fds[] = {outp[0], outp[1], errp[0], errp[1], inp[0], inp[1], ep[0], ep[1], sp[0], sp[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
      if (fds[i] >= 0) close(fds[i]);
    free(env);
    send_exit(id, 2, 0, 0, 0, "fork failed");
    goto out;
  }
  if (pid == 0) {
    int in = pty ? outp[1] : inp[0] >= 0 ? inp[0] : 0, err = pty ? outp[1] : errp[1];
    struct spawn_args a = {in, outp[1], err, ep[1], sp[1], cwd, switch_user, uid, gid, groups, ngroups, argv, env, pty};
    supervise(&a);
  }
  free(env);
  close(outp[1]); close(ep[1]); close(sp[1]);
  if (errp[1] >= 0) close(errp[1]);
  if (inp[0] >= 0) close(inp[0]);
  struct start_error e = {0, 0};
  ssize_t got;
  do got = read(ep[0], &e, sizeof e); while (got < 0 && errno == EINTR);
  close(ep[0]);
  if (got == (ssize_t)sizeof e) {
    /* Nothing of the command ran: the host runs it the plain way, which answers as it always has. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    close(outp[0]); close(sp[0]);
    if (errp[0] >= 0) close(errp[0]);
    if (inp[1] >= 0) close(inp[1]);
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", e.stage == 1 ? "cannot switch user" : "cannot enter cwd", strerror(e.err));
    send_exit(id, 2, 0, 0, 0, msg);
    goto out;
  }
  struct exec_call *call = calloc(1, sizeof *call);
  if (!call) fatal("out of memory");
  call->id = id;
  call->pid = pid;
  call->out_fd = outp[0];
  call->err_fd = errp[0];
  call->in_fd = inp[1];
  call->status_fd = sp[0];
  call->credit = window;
  strcpy(call->marker, marker);
  fcntl(call->out_fd, F_SETFL, O_NONBLOCK);
  if (call->err_fd >= 0) fcntl(call->err_fd, F_SETFL, O_NONBLOCK);
  if (call->in_fd >= 0) fcntl(call->in_fd, F_SETFL, O_NONBLOCK);
  call->next = calls;
  calls = call;
out:
  free(cwd);
  free(user);
  free_strings(argv, argc);
  free_strings(extra, envc);
}

/* Tells the host that n bytes of a call's stdin left the runner, and whether its stdin is now closed
   (see STDIN_CREDIT in runner.h). */
static void stdin_credit(uint32_t id, size_t n, int closed) {
  uint8_t p[5];
  if (n == 0 && !closed) return;
  put_u32(p, (uint32_t)n);
  p[4] = (uint8_t)(closed ? 1 : 0);
  frame_send(F_STDIN_CREDIT, id, p, 5);
}

void exec_stdin(uint32_t id, const uint8_t *data, uint32_t len) {
  struct exec_call *c = find(id);
  if (!c) return;
  if (c->in_fd < 0) { /* its stdin is closed: the bytes are dropped, and said to be */
    stdin_credit(id, len, 1);
    return;
  }
  if (len == 0) {
    c->in_eof = 1;
    if (c->in_off == c->in_len) close_fd(&c->in_fd);
    return;
  }
  if (c->in_off > 0 && c->in_off == c->in_len) c->in_off = c->in_len = 0;
  uint8_t *grown = realloc(c->in_buf, c->in_len + len);
  if (!grown) fatal("out of memory");
  c->in_buf = grown;
  memcpy(c->in_buf + c->in_len, data, len);
  c->in_len += len;
}

static void write_stdin(struct exec_call *c) {
  size_t before = c->in_off;
  int closed = 0;
  while (c->in_fd >= 0 && c->in_off < c->in_len) {
    ssize_t n = write(c->in_fd, c->in_buf + c->in_off, c->in_len - c->in_off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n < 0) { /* the command closed its stdin: what it did not read is its business */
      close_fd(&c->in_fd);
      c->in_off = c->in_len;
      closed = 1;
      break;
    }
    c->in_off += (size_t)n;
  }
  stdin_credit(c->id, c->in_off - before, closed);
  if (c->in_off == c->in_len) {
    free(c->in_buf);
    c->in_buf = NULL;
    c->in_off = c->in_len = 0;
    if (c->in_eof) close_fd(&c->in_fd);
  }
}

/*
 * Reads what a pipe (or terminal) has, within the credit, into one frame: a terminal hands out at
 * most a line discipline's buffer per read, so reads are gathered until the pipe is empty. At EOF
 * (or, once the command has exited, with nothing left) the pipe closes.
 */
static void read_pipe(struct exec_call *c, int *fd, uint8_t type) {
  static uint8_t buf[READ_CHUNK];
  if (*fd < 0 || c->credit == 0) return;
  size_t want = c->credit < READ_CHUNK ? (size_t)c->credit : READ_CHUNK, got = 0;
  ssize_t n = 0;
  while (got < want && (n = read(*fd, buf + got, want - got)) > 0) got += (size_t)n;
  if (got > 0) {
    frame_send(type, c->id, buf, (uint32_t)got);
    c->credit -= (uint64_t)got;
  }
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || (n < 0 && got == 0 && c->exited)) close_fd(fd);
}

int exec_pollfds(struct pollfd *fds, int max, void **owners) {
  int n = 0;
  for (struct exec_call *c = calls; c && n + 3 <= max; c = c->next) {
    if (c->credit > 0 && c->out_fd >= 0) { fds[n] = (struct pollfd){.fd = c->out_fd, .events = POLLIN}; owners[n++] = c; }
    if (c->credit > 0 && c->err_fd >= 0) { fds[n] = (struct pollfd){.fd = c->err_fd, .events = POLLIN}; owners[n++] = c; }
    if (c->in_fd >= 0 && c->in_off < c->in_len) { fds[n] = (struct pollfd){.fd = c->in_fd, .events = POLLOUT}; owners[n++] = c; }
  }
  return n;
}

void exec_on_ready(void *owner, short revents, int fd) {
  struct exec_call *c = owner;
  (void)revents;
  if (fd == c->out_fd) read_pipe(c, &c->out_fd, F_STDOUT);
  else if (fd == c->err_fd) read_pipe(c, &c->err_fd, F_STDERR);
  else if (fd == c->in_fd) write_stdin(c);
}

void exec_resize(uint32_t id, uint16_t cols, uint16_t rows) {
  struct exec_call *c = find(id);
  if (c) pty_resize(c->out_fd, cols, rows);
}

void exec_credit(uint32_t id, uint32_t bytes) {
  struct exec_call *c = find(id);
  if (c && c->credit < (1ull << 40)) c->credit += bytes;
}

void exec_reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (struct exec_call *c = calls; c; c = c->next)
      if (c->pid == pid && !c->exited) {
        /* The command's own status, as its supervisor passed it up; a supervisor killed first (KILL) has none. */
        int relayed;
        c->exited = 1;
        if (read(c->status_fd, &relayed, sizeof relayed) == (ssize_t)sizeof relayed) {
          c->status = relayed;
        } else {
          c->status = status;
          /* The supervisor died before its command without a KILL of ours: something in the sandbox
             killed it. The command's tree must not outlive its call (nor its timeout): it goes too. */
          if (!c->killed) {
            c->killed = 1;
            kill_orphaned_session(pid, c->marker);
          }
        }
        close_fd(&c->status_fd);
      }
  }
}

/* Calls whose command has exited send what is left (within credit) and, once drained, their EXIT. */
void exec_finish_ready(void) {
  for (struct exec_call **link = &calls; *link;) {
    struct exec_call *c = *link;
    if (!c->exited) { link = &c->next; continue; }
    close_fd(&c->in_fd);
    while (c->out_fd >= 0 && c->credit > 0) read_pipe(c, &c->out_fd, F_STDOUT);
    while (c->err_fd >= 0 && c->credit > 0) read_pipe(c, &c->err_fd, F_STDERR);
    if (c->out_fd >= 0 || c->err_fd >= 0) { link = &c->next; continue; }
    int sig = WIFSIGNALED(c->status) ? WTERMSIG(c->status) : 0;
    uint64_t oom = sig == SIGKILL && !c->killed ? oom_kills() : 0;
    if (sig) send_exit(c->id, 1, (uint8_t)sig, (uint8_t)c->killed, oom, NULL);
    else send_exit(c->id, 0, (uint8_t)WEXITSTATUS(c->status), (uint8_t)c->killed, 0, NULL);
    *link = c->next;
    free(c->in_buf);
    free(c);
  }
}

void exec_kill(uint32_t id) {
  struct exec_call *c = find(id);
  if (!c) return;
  c->killed = 1;
  /* A supervisor already reaped has given its pid back: only the marker still names what is left. */
  kill_tree(c->exited ? -1 : c->pid, c->marker);
}

void exec_kill_all(void) {
  for (struct exec_call *c = calls; c; c = c->next) kill_tree(c->exited ? -1 : c->pid, c->marker);
}
