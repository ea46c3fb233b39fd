/*
 * How a call's end is told to the host: one EXIT frame (how it ended, code or signal, whether the
 * runner killed it, and, after a SIGKILL it did not send, the sandbox cgroup's OOM-kill count, so
 * the host can tell an OOM kill from any other).
 */
#include <stdio.h>
#include <string.h>
#include "runner.h"

void send_exit(uint32_t id, uint8_t how, uint8_t value, uint8_t killed, uint64_t oom, const char *message) {
  uint8_t p[16];
  uint32_t mlen = message ? (uint32_t)strlen(message) : 0;
  p[0] = how; p[1] = value; p[2] = killed; p[3] = 0;
  put_u64(p + 4, oom);
  put_u32(p + 12, mlen);
  frame_send2(F_EXIT, id, p, sizeof p, message, mlen);
}

/* The sandbox cgroup's cumulative OOM kills (v2 memory.events, v1 memory.oom_control). */
uint64_t oom_kills(void) {
  const char *files[] = {"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(files[i], "re");
    if (!f) continue;
    char key[64];
    unsigned long long v;
    while (fscanf(f, "%63s %llu", key, &v) == 2)
      if (strcmp(key, "oom_kill") == 0) { fclose(f); return v; }
    fclose(f);
  }
  return 0;
}
