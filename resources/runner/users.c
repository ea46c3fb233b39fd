/*
 * User names for an exec's `user`, resolved from the image's own /etc/passwd and /etc/group the
 * way Podman does it ("name", "uid", "name:group", "uid:gid"; a uid missing from passwd is used as
 * is with gid 0). A static binary has no NSS, so the files are read directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner.h"

static int numeric(const char *s, unsigned long *out) {
  if (!*s) return 0;
  char *end;
  *out = strtoul(s, &end, 10);
  return *end == 0;
}

/* Field `want` (0-based) of the line whose first field (or, by number, field 2) matches. */
static int lookup(const char *file, const char *key, int by_number, char fields[][256], int nfields) {
  FILE *f = fopen(file, "re");
  if (!f) return 0;
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    int i = 0;
    char *p = line;
    for (; i < nfields; i++) {
      char *colon = strchr(p, ':');
      size_t n = colon ? (size_t)(colon - p) : strlen(p);
      if (n > 255) n = 255;
      memcpy(fields[i], p, n);
      fields[i][n] = 0;
      if (!colon) { i++; break; }
      p = colon + 1;
    }
    for (; i < nfields; i++) fields[i][0] = 0;
    if (strcmp(by_number ? fields[2] : fields[0], key) == 0) found = 1;
  }
  fclose(f);
  return found;
}

static int group_id(const char *spec, gid_t *gid) {
  unsigned long n;
  char g[4][256];
  if (numeric(spec, &n)) { *gid = (gid_t)n; return 1; }
  if (!lookup("/etc/group", spec, 0, g, 4) || !numeric(g[2], &n)) return 0;
  *gid = (gid_t)n;
  return 1;
}

/* Supplementary groups: every group in /etc/group that lists the user by name. */
static void member_groups(const char *name, gid_t *groups, int *ngroups, int maxgroups) {
  FILE *f = fopen("/etc/group", "re");
  if (!f) return;
  char line[4096];
  while (*ngroups < maxgroups && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *name_end = strchr(line, ':');
    char *pass_end = name_end ? strchr(name_end + 1, ':') : NULL;
    char *gid_end = pass_end ? strchr(pass_end + 1, ':') : NULL;
    if (!gid_end) continue;
    *gid_end = 0;
    unsigned long gid;
    if (!numeric(pass_end + 1, &gid)) continue;
    for (char *m = strtok(gid_end + 1, ","); m; m = strtok(NULL, ","))
      if (strcmp(m, name) == 0) { groups[(*ngroups)++] = (gid_t)gid; break; }
  }
  fclose(f);
}

int resolve_user(const char *spec, uid_t *uid, gid_t *gid, gid_t *groups, int *ngroups, int maxgroups) {
  char user[256], group[256] = "";
  const char *colon = strchr(spec, ':');
  size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);
  if (ulen == 0 || ulen > 255 || (colon && strlen(colon + 1) > 255)) return 0;
  memcpy(user, spec, ulen);
  user[ulen] = 0;
  if (colon) strcpy(group, colon + 1);
  char pw[7][256];
  unsigned long n;
  *ngroups = 0;
  if (lookup("/etc/passwd", user, numeric(user, &n), pw, 7)) {
    unsigned long u, g;
    if (!numeric(pw[2], &u) || !numeric(pw[3], &g)) return 0;
    *uid = (uid_t)u;
    *gid = (gid_t)g;
    member_groups(pw[0], groups, ngroups, maxgroups);
  } else if (numeric(user, &n)) {
    *uid = (uid_t)n;
    *gid = 0;
  } else {
    return 0;
  }
  if (group[0] && !group_id(group, gid)) return 0;
  return 1;
}
