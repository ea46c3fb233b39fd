/*
 * File read, write and list inside /workspace with the confinement of the python helper it
 * replaces (electron/engine/podman/file-helper.ts), answer for answer: from an fd on /workspace each
 * component is opened relative to its parent with O_NOFOLLOW, never by a path string, so a symlink
 * anywhere is refused, and a directory swapped for a symlink after a check cannot redirect us (we
 * hold fds, not names). Hard-linked and special files are refused. A write takes all of its data
 * first, then goes to a temp file in the same directory renamed over the entry (rename never
 * follows a symlink). Error codes and messages are the helper's, so callers see the same thing.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runner.h"

#define NF (O_NOFOLLOW | O_CLOEXEC)
#define DIRF (O_RDONLY | O_DIRECTORY | NF)

struct file_call {
  uint32_t id;
  uint8_t op;
  uint32_t limit;
  char **comps;
  int n;
  uint8_t *data;
  size_t size, got;
  struct file_call *next;
};

static struct file_call *pending;
/* The call being answered: fail() needs its id and components. */
static struct file_call *cur;
static int failed;

int file_known(uint32_t id) {
  for (struct file_call *f = pending; f; f = f->next)
    if (f->id == id) return 1;
  return 0;
}

static void fail(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *code, const char *fmt, ...) {
  if (failed) return;
  failed = 1;
  char msg[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  uint32_t cl = (uint32_t)strlen(code), ml = (uint32_t)strlen(msg);
  uint8_t *p = malloc(8 + cl + ml);
  if (!p) fatal("out of memory");
  put_u32(p, cl);
  memcpy(p + 4, code, cl);
  put_u32(p + 4 + cl, ml);
  memcpy(p + 8 + cl, msg, ml);
  frame_send(F_FAIL, cur->id, p, 8 + cl + ml);
  free(p);
}

/* "/workspace/" + the first i+1 components. */
static const char *where(int i) {
  static char buf[65536];
  size_t len = (size_t)snprintf(buf, sizeof buf, "/workspace");
  for (int k = 0; k <= i && k < cur->n && len < sizeof buf; k++) len += (size_t)snprintf(buf + len, sizeof buf - len, "/%s", cur->comps[k]);
  return buf;
}

static int lstat_at(int dir, const char *name, struct stat *st) {
  return fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW);
}

static int open_dir(int parent, int i, int create) {
  const char *name = cur->comps[i];
  int fd = openat(parent, name, DIRF);
  if (fd >= 0) return fd;
  int err = errno;
  struct stat st;
  if (lstat_at(parent, name, &st) == 0 && S_ISLNK(st.st_mode)) {
    fail("E_POLICY_DENIED", "%s is a symlink; the file API does not follow symlinks", where(i));
    return -1;
  }
  if (err == ENOENT && create) {
    mkdirat(parent, name, 0755);
    return open_dir(parent, i, 0);
  }
  if (err == ENOENT) fail("E_NOT_FOUND", "%s does not exist", where(i));
  else if (err == ENOTDIR) fail("E_BAD_INPUT", "%s is not a directory", where(i));
  else if (err == EACCES) fail("E_POLICY_DENIED", "%s: permission denied", where(i));
  else fail("E_BAD_INPUT", "%s: %s", where(i), strerror(err));
  return -1;
}

/* Returns 1 when the entry is a plain, singly linked regular file. */
static int check(const struct stat *st, int last) {
  if (S_ISLNK(st->st_mode)) fail("E_POLICY_DENIED", "%s is a symlink; the file API does not follow symlinks", where(last));
  else if (S_ISDIR(st->st_mode)) fail("E_BAD_INPUT", "%s is a directory", where(last));
  else if (!S_ISREG(st->st_mode)) fail("E_POLICY_DENIED", "%s is not a regular file", where(last));
  else if (st->st_nlink > 1) fail("E_POLICY_DENIED", "%s has other hard links; the file API refuses hard-linked files", where(last));
  else return 1;
  return 0;
}

static void do_list(int d) {
  DIR *dir = fdopendir(d);
  if (!dir) { fail("E_BAD_INPUT", "%s: %s", where(cur->n - 1), strerror(errno)); close(d); return; }
  uint8_t *out = NULL;
  size_t len = 0, cap = 0;
  uint32_t count = 0;
  struct dirent *e;
  while (count < cur->limit && (e = readdir(dir))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (lstat_at(dirfd(dir), e->d_name, &st) < 0) continue;
    uint32_t nl = (uint32_t)strlen(e->d_name);
    if (len + 29 + nl > cap) {
      cap = (len + 29 + nl) * 2;
      out = realloc(out, cap);
      if (!out) fatal("out of memory");
    }
    uint8_t *p = out + len;
    p[0] = S_ISDIR(st.st_mode) ? 1 : S_ISREG(st.st_mode) ? 0 : S_ISLNK(st.st_mode) ? 2 : 3;
    put_u32(p + 1, st.st_mode & 07777);
    put_u64(p + 5, (uint64_t)st.st_size);
    put_u64(p + 13, (uint64_t)st.st_mtim.tv_sec);
    put_u32(p + 21, (uint32_t)st.st_mtim.tv_nsec);
    put_u32(p + 25, nl);
    memcpy(p + 29, e->d_name, nl);
    len += 29 + nl;
    count++;
  }
  closedir(dir);
  for (size_t off = 0; off < len; off += 65536) frame_send(F_STDOUT, cur->id, out + off, (uint32_t)(len - off < 65536 ? len - off : 65536));
  free(out);
  frame_send(F_DONE, cur->id, NULL, 0);
}

static void do_read(int d, int last) {
  const char *name = cur->comps[last];
  int fd = openat(d, name, O_RDONLY | NF | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (fd < 0) {
    int err = errno;
    if (lstat_at(d, name, &st) == 0 && !check(&st, last)) return;
    if (err == ENOENT) fail("E_NOT_FOUND", "%s does not exist", where(last));
    else fail("E_POLICY_DENIED", "%s: %s", where(last), strerror(err));
    return;
  }
  if (fstat(fd, &st) < 0 || !check(&st, last)) { close(fd); return; }
  if ((uint64_t)st.st_size > cur->limit) {
    fail("E_TOO_LARGE", "%s is %lld bytes, more than the %u the file API reads", where(last), (long long)st.st_size, cur->limit);
    close(fd);
    return;
  }
  uint8_t *buf = malloc((size_t)cur->limit + 1);
  if (!buf) fatal("out of memory");
  size_t n = 0;
  ssize_t r;
  while (n <= cur->limit && (r = read(fd, buf + n, cur->limit + 1 - n)) != 0) {
    if (r < 0) {
      if (errno == EINTR) continue;
      fail("E_POLICY_DENIED", "%s: %s", where(last), strerror(errno));
      break;
    }
    n += (size_t)r;
  }
  close(fd);
  if (!failed && n > cur->limit) fail("E_TOO_LARGE", "%s grew past the read limit", where(last));
  if (!failed) {
    for (size_t off = 0; off < n; off += 65536) frame_send(F_STDOUT, cur->id, buf + off, (uint32_t)(n - off < 65536 ? n - off : 65536));
    frame_send(F_DONE, cur->id, NULL, 0);
  }
  free(buf);
}

static void do_write(int d, int last) {
  const char *name = cur->comps[last];
  struct stat st;
  mode_t mode = 0644;
  if (lstat_at(d, name, &st) == 0) {
    if (!check(&st, last)) return;
    mode = st.st_mode & 07777;
  }
  uint8_t rnd[6];
  if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) fatal("no randomness");
  char tmp[64];
  snprintf(tmp, sizeof tmp, ".warden-%02x%02x%02x%02x%02x%02x.tmp", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
  int fd = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL | NF, mode);
  if (fd < 0) { fail("E_POLICY_DENIED", "%s: %s", where(last), strerror(errno)); return; }
  size_t off = 0;
  int err = 0;
  while (off < cur->size) {
    ssize_t w = write(fd, cur->data + off, cur->size - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) { err = errno; break; }
    off += (size_t)w;
  }
  if (close(fd) < 0 && !err) err = errno;
  if (!err && renameat(d, tmp, d, name) < 0) err = errno;
  if (err) {
    unlinkat(d, tmp, 0);
    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) fail("E_BAD_INPUT", "%s is a directory", where(last));
    else fail("E_POLICY_DENIED", "%s: %s", where(last), strerror(err));
    return;
  }
  frame_send(F_DONE, cur->id, NULL, 0);
}

static void run(struct file_call *f) {
  cur = f;
  failed = 0;
  int root = open("/workspace", DIRF);
  if (root < 0) { fail("E_NOT_FOUND", "/workspace is missing or is not a plain directory in this sandbox"); return; }
  int d = root, last = f->n - 1;
  if (f->op == F_LIST) {
    for (int i = 0; i < f->n && d >= 0; i++) {
      int next = open_dir(d, i, 0);
      close(d);
      d = next;
    }
    if (d >= 0) do_list(d);
    return;
  }
  if (last < 0) { fail("E_BAD_INPUT", "/workspace is a directory"); close(root); return; }
  for (int i = 0; i < last && d >= 0; i++) {
    int next = open_dir(d, i, f->op == F_WRITE);
    close(d);
    d = next;
  }
  if (d < 0) return;
  if (f->op == F_READ) do_read(d, last);
  else do_write(d, last);
  close(d);
}

static void release(struct file_call *f) {
  for (int i = 0; i < f->n; i++) free(f->comps[i]);
  free(f->comps);
  free(f->data);
  free(f);
}

void file_start(uint8_t op, uint32_t id, struct cursor *c) {
  struct file_call *f = calloc(1, sizeof *f);
  if (!f) fatal("out of memory");
  f->id = id;
  f->op = op;
  f->limit = cur_u32(c);
  f->n = cur_u16(c);
  f->comps = calloc((size_t)f->n + 1, sizeof *f->comps);
  if (!f->comps) fatal("out of memory");
  for (int i = 0; i < f->n && !c->bad; i++) {
    f->comps[i] = cur_str(c);
    /* The host sends plain components; anything else never reaches openat. */
    if (f->comps[i] && (!f->comps[i][0] || strchr(f->comps[i], '/') || !strcmp(f->comps[i], ".") || !strcmp(f->comps[i], ".."))) c->bad = 1;
  }
  if (c->bad || c->left) fatal("malformed file frame");
  if (op != F_WRITE) {
    run(f);
    release(f);
    return;
  }
  f->size = f->limit;
  f->data = malloc(f->size ? f->size : 1);
  if (!f->data) fatal("out of memory");
  f->next = pending;
  pending = f;
}

void file_data(uint32_t id, const uint8_t *data, uint32_t len) {
  struct file_call **link = &pending;
  while (*link && (*link)->id != id) link = &(*link)->next;
  struct file_call *f = *link;
  if (!f) return;
  if (len > f->size - f->got) fatal("more WRITE data than announced");
  memcpy(f->data + f->got, data, len);
  f->got += len;
  if (len > 0) return;
  if (f->got != f->size) fatal("less WRITE data than announced");
  *link = f->next;
  run(f);
  release(f);
}
