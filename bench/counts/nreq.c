/* nreq: exactly N keep-alive publish requests (POST /events/publish-only/<i % 100>, a
 * 128-byte body, the headers of bench/comparison's scenario 5) over C connections, each
 * connection sending its next request only after the previous reply is complete (as
 * wrk without pipelining), or P requests at a time when -p P is given (pipelined).
 * Deterministic work for the server: the same bytes, the same count, every run; so
 * instruction, allocation and syscall counts per request do not depend on the load.
 *   cc -O2 -o /tmp/nreq bench/counts/nreq.c
 *   /tmp/nreq PORT N [C] [P]        exits 0 when N replies of status 2xx came back */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct { int fd; long sent, done; char buf[65536]; size_t have; } conn;

static size_t req(char *out, long i) {
  char body[129]; memset(body, 'x', 128); body[128] = 0;
  return (size_t)sprintf(out,
    "POST /events/publish-only/%ld HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
    "Accept: application/json\r\nContent-Length: 128\r\n\r\n%s", i % 100, body);
}

/* One complete reply at the start of buf: its length, 0 if incomplete, -1 if not 2xx. */
static long reply(const char *b, size_t n) {
  const char *end = memmem(b, n, "\r\n\r\n", 4);
  if (!end) return 0;
  if (n < 12 || b[9] != '2') return -1;
  const char *cl = memmem(b, (size_t)(end - b), "ength: ", 7);
  long len = cl ? atol(cl + 7) : 0;
  size_t total = (size_t)(end + 4 - b) + (size_t)len;
  return total <= n ? (long)total : 0;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: nreq PORT N [C] [P]\n"); return 2; }
  int port = atoi(argv[1]); long n = atol(argv[2]);
  int c = argc > 3 ? atoi(argv[3]) : 32; int p = argc > 4 ? atoi(argv[4]) : 1;
  conn *cs = calloc((size_t)c, sizeof *cs); struct pollfd *pf = calloc((size_t)c, sizeof *pf);
  long issued = 0, completed = 0;
  for (int i = 0; i < c; i++) {
    cs[i].fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(cs[i].fd, (void *)&a, sizeof a) != 0) { perror("connect"); return 1; }
    int one = 1; setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  char out[65536];
  for (int i = 0; i < c; i++) {
    size_t len = 0;
    for (int k = 0; k < p && issued < n; k++) { len += req(out + len, issued++); cs[i].sent++; }
    if (len && write(cs[i].fd, out, len) != (ssize_t)len) { perror("write"); return 1; }
  }
  while (completed < n) {
    for (int i = 0; i < c; i++) { pf[i].fd = cs[i].fd; pf[i].events = cs[i].sent > cs[i].done ? POLLIN : 0; }
    if (poll(pf, (nfds_t)c, 10000) <= 0) { fprintf(stderr, "timeout at %ld of %ld\n", completed, n); return 1; }
    for (int i = 0; i < c; i++) {
      if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      conn *k = &cs[i];
      ssize_t r = read(k->fd, k->buf + k->have, sizeof k->buf - k->have);
      if (r <= 0) { fprintf(stderr, "connection %d closed at %ld\n", i, completed); return 1; }
      k->have += (size_t)r;
      long got = 0, t;
      while ((t = reply(k->buf, k->have)) != 0) {
        if (t < 0) { fprintf(stderr, "non-2xx reply: %.40s\n", k->buf); return 1; }
        memmove(k->buf, k->buf + t, k->have - (size_t)t); k->have -= (size_t)t; k->done++; completed++; got++;
      }
      if (k->sent == k->done && issued < n) {
        size_t len = 0;
        for (int q = 0; q < p && issued < n; q++) { len += req(out + len, issued++); k->sent++; }
        if (write(k->fd, out, len) != (ssize_t)len) { perror("write"); return 1; }
      }
    }
  }
  for (int i = 0; i < c; i++) close(cs[i].fd);
  printf("%ld replies\n", completed);
  return 0;
}
