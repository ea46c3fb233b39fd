/*
 * A probe, not part of Warden: could an eBPF sockmap carry a proxied download faster than the
 * egress pump's splice(2)? Egress (issue 14) is held under its 0.8-of-nat target by what any host
 * process joining two TCP connections costs on this 2-core machine (bench/proxy-ceiling.ts); a
 * sockmap lets the kernel move each arriving skb straight to the other socket, with no process in
 * between, so it was the one idea left. Measured here on the host's loopback, interleaved:
 *
 *   direct:  the client reads from the origin over one connection;
 *   splice:  through a proxy that splices origin -> pipe -> client (as the pump does);
 *   sockmap: through a proxy that puts both sockets in a SOCKMAP whose SK_SKB verdict program
 *            redirects each skb to the other socket's egress, and only waits for the end.
 *
 * Build and run by hand (root, CONFIG_BPF_STREAM_PARSER):
 *   gcc -O2 -o /tmp/sockmap-probe bench/sockmap-probe.c && /tmp/sockmap-probe 5
 * Results are in bench/RESULTS.md (egress notes).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TOTAL (1000LL * 1024 * 1024)
#define CHUNK (1 << 20)
enum { ORIGIN_PORT = 17001, SPLICE_PORT = 17002, SOCKMAP_PORT = 17003 };

static void die(const char *what) {
  perror(what);
  _exit(1);
}

static long bpf(int cmd, union bpf_attr *attr) { return syscall(SYS_bpf, cmd, attr, sizeof *attr); }

static struct sockaddr_in loopback(int port) {
  return (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
}

static int listen_on(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = loopback(port);
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16)) die("listen");
  return s;
}

static int connect_to(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = loopback(port);
  if (connect(s, (struct sockaddr *)&a, sizeof a)) die("connect");
  return s;
}

/* The origin: on one request byte, TOTAL bytes, then EOF. */
static void origin(int listener) {
  static char buf[CHUNK];
  for (;;) {
    int c = accept(listener, NULL, NULL);
    if (c < 0) continue;
    if (fork() == 0) {
      char request;
      if (read(c, &request, 1) != 1) _exit(1);
      for (long long left = TOTAL; left > 0;) {
        ssize_t n = write(c, buf, left < CHUNK ? (size_t)left : CHUNK);
        if (n <= 0) break;
        left -= n;
      }
      _exit(0);
    }
    close(c);
  }
}

static void splice_carry(int client, int upstream) {
  int p[2];
  if (pipe(p)) die("pipe");
  fcntl(p[1], F_SETPIPE_SZ, CHUNK);
  for (;;) {
    ssize_t n = splice(upstream, NULL, p[1], NULL, CHUNK, SPLICE_F_MOVE);
    if (n <= 0) break;
    while (n > 0) {
      ssize_t m = splice(p[0], NULL, client, NULL, (size_t)n, SPLICE_F_MOVE);
      if (m <= 0) die("splice");
      n -= m;
    }
  }
}

/* r3 = (skb->local_port == client_port) ? 1 : 0; return bpf_sk_redirect_map(skb, map, r3, 0). Slot 0
 * holds the client's socket, slot 1 the upstream one: each skb goes out of the other socket. */
static int verdict_program(int map, int client_port) {
  struct bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1},
      {.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 2, .src_reg = 1, .off = offsetof(struct __sk_buff, local_port)},
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 0},
      {.code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 2, .off = 1, .imm = client_port},
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 1},
      {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6},
      {.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2, .src_reg = BPF_PSEUDO_MAP_FD, .imm = map},
      {0},
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = 0},
      {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_sk_redirect_map},
      {.code = BPF_JMP | BPF_EXIT},
  };
  static char log[65536];
  union bpf_attr a = {0};
  a.prog_type = BPF_PROG_TYPE_SK_SKB;
  a.insns = (unsigned long)insns;
  a.insn_cnt = sizeof insns / sizeof insns[0];
  a.license = (unsigned long)"GPL";
  a.log_buf = (unsigned long)log;
  a.log_size = sizeof log;
  a.log_level = 1;
  int fd = (int)bpf(BPF_PROG_LOAD, &a);
  if (fd < 0) {
    fprintf(stderr, "program load: %s\n%s\n", strerror(errno), log);
    _exit(1);
  }
  return fd;
}

static unsigned long long tcp_counter(int fd, int received) {
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
  return received ? ti.tcpi_bytes_received : ti.tcpi_bytes_acked;
}

/* Both sockets go into the map before the request goes upstream: data already queued when a socket
 * joins a sockmap is not pushed through the verdict, and a full queue would never wake it. */
static void sockmap_carry(int client, int upstream, char request) {
  union bpf_attr m = {0};
  m.map_type = BPF_MAP_TYPE_SOCKMAP;
  m.key_size = 4;
  m.value_size = 4;
  m.max_entries = 2;
  int map = (int)bpf(BPF_MAP_CREATE, &m);
  if (map < 0) die("map");
  union bpf_attr attach = {0};
  attach.target_fd = map;
  attach.attach_bpf_fd = verdict_program(map, SOCKMAP_PORT);
  attach.attach_type = BPF_SK_SKB_VERDICT;
  if (bpf(BPF_PROG_ATTACH, &attach)) die("attach");
  int fds[2] = {client, upstream};
  for (int key = 0; key < 2; key++) {
    union bpf_attr u = {0};
    u.map_fd = map;
    u.key = (unsigned long)&key;
    u.value = (unsigned long)&fds[key];
    if (bpf(BPF_MAP_UPDATE_ELEM, &u)) die("map update");
  }
  if (write(upstream, &request, 1) != 1) die("request");
  struct pollfd end = {.fd = upstream, .events = POLLRDHUP};
  while (!(end.revents & (POLLRDHUP | POLLHUP | POLLERR))) poll(&end, 1, -1);
  /* The kernel passes the bytes on, not the EOF: wait until the client has acknowledged all of them
   * (the upstream's received count includes its FIN), then end the client's side. */
  unsigned long long received = tcp_counter(upstream, 1) - 1;
  while (tcp_counter(client, 0) < received) usleep(1000);
}

static void proxy(int listener, int sockmap) {
  for (;;) {
    int client = accept(listener, NULL, NULL);
    if (client < 0) continue;
    if (fork() == 0) {
      int upstream = connect_to(ORIGIN_PORT);
      char request;
      if (read(client, &request, 1) != 1) _exit(1);
      if (sockmap) sockmap_carry(client, upstream, request);
      else {
        if (write(upstream, &request, 1) != 1) die("request");
        splice_carry(client, upstream);
      }
      shutdown(client, SHUT_WR);
      _exit(0);
    }
    close(client);
  }
}

static double download_mbps(int port) {
  static char buf[CHUNK];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int s = connect_to(port);
  if (write(s, "x", 1) != 1) die("request");
  long long got = 0;
  for (ssize_t n; (n = read(s, buf, sizeof buf)) > 0;) got += n;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  close(s);
  if (got != TOTAL) fprintf(stderr, "port %d: short download, %lld bytes\n", port, got);
  return (double)got / 1e6 / ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

int main(int argc, char **argv) {
  signal(SIGCHLD, SIG_IGN);
  int origin_l = listen_on(ORIGIN_PORT), splice_l = listen_on(SPLICE_PORT), sockmap_l = listen_on(SOCKMAP_PORT);
  if (fork() == 0) origin(origin_l);
  if (fork() == 0) proxy(splice_l, 0);
  if (fork() == 0) proxy(sockmap_l, 1);
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  for (int r = 0; r < runs; r++) {
    double direct = download_mbps(ORIGIN_PORT), spliced = download_mbps(SPLICE_PORT), mapped = download_mbps(SOCKMAP_PORT);
    printf("direct %.0f  splice %.0f  sockmap %.0f MB/s\n", direct, spliced, mapped);
    fflush(stdout);
  }
  signal(SIGTERM, SIG_IGN);
  kill(0, SIGTERM);
  return 0;
}
