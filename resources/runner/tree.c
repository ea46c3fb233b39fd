/*
 * Killing a command's whole process tree: every process that descends from the call's supervisor
 * (its subreaper, so orphans stay below it), is in its session, or carries its marker in its
 * environment, or descends from one of those by parent links, gets SIGKILL, the supervisor last.
 * Rounds repeat until a scan finds none alive, which also catches children forked while the
 * previous round ran. The runner and its commands share a uid, so it may signal them without
 * CAP_KILL; zombies are skipped (the reaper collects them).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "runner.h"

struct proc {
  pid_t pid, ppid, sid;
  int marked;
};

static int read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t got = 0;
  ssize_t n;
  while (got < cap && (n = read(fd, buf + got, cap - got)) > 0) got += (size_t)n;
  close(fd);
  return (int)got;
}

static int has_marker(pid_t pid, const char *marker) {
  static char env[256 * 1024];
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
  int n = read_file(path, env, sizeof env - 1);
  if (n <= 0) return 0;
  env[n] = 0;
  size_t mlen = strlen(marker);
  for (int i = 0; i < n; i += (int)strlen(env + i) + 1)
    if (strncmp(env + i, marker, mlen) == 0 && env[i + mlen] == 0) return 1;
  return 0;
}

/* Fills procs from /proc; returns how many (alive, not zombies, not the runner). */
static int scan(struct proc **procs, int *cap) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  pid_t self = getpid();
  while ((e = readdir(d))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == self) continue;
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int len = read_file(path, stat, sizeof stat - 1);
    if (len <= 0) continue;
    stat[len] = 0;
    char *p = strrchr(stat, ')');
    char state;
    int ppid, pgrp, sid;
    if (!p || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4 || state == 'Z') continue;
    if (n == *cap) {
      *cap = *cap ? *cap * 2 : 256;
      *procs = realloc(*procs, (size_t)*cap * sizeof **procs);
      if (!*procs) fatal("out of memory");
    }
    (*procs)[n++] = (struct proc){(pid_t)pid, (pid_t)ppid, (pid_t)sid, 0};
  }
  closedir(d);
  return n;
}

/* root > 0: its session and descendants too; kill_root: root itself last (0 when it is already gone). */
static void sweep(pid_t root, const char *marker, int kill_root) {
  struct proc *procs = NULL;
  int cap = 0;
  for (int round = 0; round < 50; round++) {
    int n = scan(&procs, &cap), found = 0;
    for (int i = 0; i < n; i++)
      procs[i].marked = (root > 0 && (procs[i].pid == root || procs[i].sid == root)) || has_marker(procs[i].pid, marker);
    for (int changed = 1; changed;) {
      changed = 0;
      for (int i = 0; i < n; i++) {
        if (procs[i].marked) continue;
        for (int j = 0; j < n; j++)
          if (procs[j].marked && procs[j].pid == procs[i].ppid) { procs[i].marked = changed = 1; break; }
      }
    }
    /* The supervisor (root) goes last: while it lives, orphans are reparented to it and stay in the tree. */
    for (int i = 0; i < n; i++)
      if (procs[i].marked && procs[i].pid != root && kill(procs[i].pid, SIGKILL) == 0) found = 1;
    if (!found) {
      if (root > 0 && kill_root) kill(root, SIGKILL);
      break;
    }
  }
  free(procs);
}

void kill_tree(pid_t root, const char *marker) {
  sweep(root, marker, 1);
}

void kill_orphaned_session(pid_t sid, const char *marker) {
  sweep(sid, marker, 0);
}
