/* nfan: a deterministic fan-out for counting per-delivery costs (issue 27). S subscribers
 * (GET /events/<topic>, one topic) connect; the program prints "ready" and waits for a line on
 * stdin; then one publisher sends N publishes of a 128-byte body, each after the previous reply
 * (POST /events/<topic>), and every subscriber reads until it has N events; it prints "done"
 * and waits for a line again before closing. The caller starts and stops its counters at the
 * two pauses, so the counts cover exactly N publishes and N x S deliveries.
 *   cc -O2 -o /tmp/nfan bench/counts/nfan.c
 *   /tmp/nfan PORT S N [TOPIC] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (void *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
  int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/* Counts "\ndata: " occurrences across reads (a pattern split by a read boundary is kept in tail). */
typedef struct { int fd; long events; char tail[8]; int tlen; } sub;

static void feed(sub *s, const char *b, ssize_t n) {
  static const char pat[] = "\ndata: "; const int pl = 7;
  char buf[8 + 65536]; memcpy(buf, s->tail, (size_t)s->tlen); memcpy(buf + s->tlen, b, (size_t)n);
  size_t len = (size_t)s->tlen + (size_t)n; const char *p = buf, *end = buf + len;
  while ((p = memmem(p, (size_t)(end - p), pat, pl)) != NULL) { s->events++; p += pl; }
  s->tlen = len >= (size_t)pl - 1 ? pl - 1 : (int)len; memcpy(s->tail, end - s->tlen, (size_t)s->tlen);
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: nfan PORT S N [TOPIC]\n"); return 2; }
  int port = atoi(argv[1]); int S = atoi(argv[2]); long N = atol(argv[3]);
  const char *topic = argc > 4 ? argv[4] : "fan";
  sub *subs = calloc((size_t)S, sizeof *subs); struct pollfd *pf = calloc((size_t)S + 1, sizeof *pf);
  char req[512], buf[65536];
  for (int i = 0; i < S; i++) {
    subs[i].fd = dial(port);
    int len = snprintf(req, sizeof req, "GET /events/%s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n", topic);
    if (write(subs[i].fd, req, (size_t)len) != len) { perror("write"); return 1; }
  }
  /* Every stream has begun (its head arrived) before "ready". */
  for (int i = 0; i < S; i++) {
    ssize_t r = read(subs[i].fd, buf, sizeof buf);
    if (r <= 0 || memcmp(buf, "HTTP/1.1 200", 12) != 0) { fprintf(stderr, "subscriber %d refused\n", i); return 1; }
    feed(&subs[i], buf, r); subs[i].events = 0;
  }
  int pub = dial(port);
  printf("ready\n"); fflush(stdout);
  if (!fgets(buf, sizeof buf, stdin)) return 1;
  char body[129]; memset(body, 'x', 128); body[128] = 0;
  long published = 0, total = 0, want = N * (long)S; int awaiting = 0;
  while (published < N || awaiting || total < want) {
    if (!awaiting && published < N) {
      int len = snprintf(req, sizeof req, "POST /events/%s HTTP/1.1\r\nHost: x\r\nContent-Length: 128\r\n\r\n%s", topic, body);
      if (write(pub, req, (size_t)len) != len) { perror("publish"); return 1; }
      published++; awaiting = 1;
    }
    for (int i = 0; i < S; i++) { pf[i].fd = subs[i].fd; pf[i].events = POLLIN; }
    pf[S].fd = pub; pf[S].events = POLLIN;
    if (poll(pf, (nfds_t)S + 1, 10000) <= 0) { fprintf(stderr, "timeout: %ld of %ld deliveries\n", total, want); return 1; }
    if (pf[S].revents) {
      ssize_t r = read(pub, buf, sizeof buf);
      if (r <= 0 || buf[9] != '2') { fprintf(stderr, "publish failed\n"); return 1; }
      awaiting = 0;  /* a reply is one small read on loopback */
    }
    for (int i = 0; i < S; i++) {
      if (!(pf[i].revents & POLLIN)) continue;
      ssize_t r = read(subs[i].fd, buf, sizeof buf);
      if (r <= 0) { fprintf(stderr, "subscriber %d closed\n", i); return 1; }
      long before = subs[i].events; feed(&subs[i], buf, r); total += subs[i].events - before;
    }
  }
  printf("done %ld deliveries\n", total); fflush(stdout);
  if (!fgets(buf, sizeof buf, stdin)) return 0;
  return 0;
}
