/*
 * Starting a command: its supervisor (the call's session leader and child subreaper, between the
 * runner and the command) and the command itself (user, cwd, environment, PATH search, exec).
 * The environment is the runner's own (the container's, as Podman gave it) with the call's on
 * top and the call's marker, WARDEN_EXEC_ID, last.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "runner.h"

extern char **environ;

/* The runner's environment with the call's env on top (same name replaced) and the marker last. */
char **build_env(char **extra, int nextra, const char *marker) {
  int n = 0;
  while (environ[n]) n++;
  char **env = calloc((size_t)(n + nextra + 2), sizeof *env);
  if (!env) fatal("out of memory");
  int k = 0;
  for (int i = 0; i < n; i++) {
    size_t nl = strcspn(environ[i], "=");
    int replaced = strncmp(environ[i], "WARDEN_EXEC_ID=", 15) == 0;
    for (int j = 0; j < nextra && !replaced; j++)
      if (strncmp(extra[j], environ[i], nl) == 0 && extra[j][nl] == '=') replaced = 1;
    if (!replaced) env[k++] = environ[i];
  }
  for (int j = 0; j < nextra; j++) env[k++] = extra[j];
  env[k++] = (char *)marker;
  env[k] = NULL;
  return env;
}

/* In the child: execve, searching PATH (from the command's own environment) as execvp would. */
static void exec_path(char **argv, char **env) {
  if (strchr(argv[0], '/')) { execve(argv[0], argv, env); return; }
  const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (char **e = env; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  int denied = 0;
  char full[4096];
  while (*path) {
    size_t len = strcspn(path, ":");
    if (len + strlen(argv[0]) + 2 < sizeof full) {
      memcpy(full, path, len);
      full[len] = 0;
      if (len == 0) strcpy(full, ".");
      strcat(full, "/");
      strcat(full, argv[0]);
      execve(full, argv, env);
      if (errno == EACCES) denied = 1;
    }
    path += len;
    if (*path == ':') path++;
  }
  errno = denied ? EACCES : ENOENT;
}

/* In the command's process: the user, the cwd, then exec. Failures to take the first two go up errpipe. */
static void command(int errpipe, const struct spawn_args *a) {
  signal(SIGPIPE, SIG_DFL);
  struct start_error e = {0, 0};
  if (a->switch_user && (setgroups((size_t)a->ngroups, a->groups) < 0 || setgid(a->gid) < 0 || setuid(a->uid) < 0))
    e = (struct start_error){1, errno};
  if (!e.stage && a->cwd[0] && chdir(a->cwd) < 0) e = (struct start_error){2, errno};
  if (e.stage) {
    (void)!write(errpipe, &e, sizeof e);
    _exit(126);
  }
  exec_path(a->argv, a->env);
  int code = errno == ENOENT ? 127 : 126;
  dprintf(2, "warden-runner: %s: %s\n", a->argv[0], strerror(errno));
  _exit(code);
}

/*
 * The call's supervisor, between the runner and the command: the command's session leader and its
 * own child subreaper, so every process the command leaves behind (setsid, nohup, double forks,
 * with or without the marker) is reparented here and stays in the tree a KILL walks. It passes the
 * command's wait status up statuspipe and exits once the command has.
 */
void supervise(const struct spawn_args *a) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGCHLD, SIG_DFL);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  setsid();
  dup2(a->in_fd, 0);
  dup2(a->out_fd, 1);
  dup2(a->err_fd, 2);
  /* A terminal's supervisor, as session leader, takes it as the controlling terminal its command inherits. */
  if (a->pty) ioctl(0, TIOCSCTTY, 0);
  /* This process never execs, so close-on-exec does not help: everything else of the runner's
     (the channel, other calls' pipes, whose stdin would never see EOF) is closed by hand. */
  int e = fcntl(a->errpipe, F_DUPFD_CLOEXEC, 5), st = fcntl(a->statuspipe, F_DUPFD_CLOEXEC, 5);
  dup3(e, 3, O_CLOEXEC);
  dup3(st, 4, O_CLOEXEC);
  if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
    for (int fd = 5; fd < 65536; fd++) close(fd);
  pid_t pid = fork();
  if (pid == 0) command(3, a);
  if (pid < 0) _exit(127);
  close(3);
  int devnull = open("/dev/null", O_RDWR);
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(devnull, 2);
  int status;
  for (;;) {
    pid_t got = wait(&status);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) _exit(127);
  }
  (void)!write(4, &status, sizeof status);
  _exit(0);
}

