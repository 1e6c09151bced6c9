/*
 * Origin: a verbatim copy of ../shared/bench/limit.c (the shared bench directory beside
 * this repository: the project's shared measuring stick, the "bare C server" of issue 16),
 * copied 2026-12-03 (sha256 5749ac8b47d5ee76…) so that CI, which clones only this repository,
 * can build it. Change it there, not here; bench/compare.sh builds this copy with gcc.
 */
/*
 * limit - minimal single-threaded SSE fan-out server: the "physical limit"
 * anchor for bench/run.sh (what a near-optimal server could do on one core).
 *
 * Build: gcc -O2 -o limit limit.c        Run: taskset -c 0 ./limit PORT
 *
 * Listens on 127.0.0.1:PORT.  HTTP/1.1 keep-alive, pipelining allowed:
 *   GET  /events/<t>  -> 200 chunked text/event-stream, first chunk "retry: 2000\n\n";
 *                        the connection then subscribes to <t> (its further input is ignored)
 *   POST /events/<t>  -> body (Content-Length, <= 64 KiB) becomes one SSE event
 *                        "id: <n>\ndata: <line>\n...\n\n" (n per topic, from 1), queued to
 *                        every subscriber of <t>; reply {"id":"<n>","subscribers":<k>}
 *   GET  /healthz     -> 200 ok
 * /state/<t> is served exactly like /events/<t> (separate topic; no replay).
 * No TLS, no replay, no Connection: close / Expect / chunked-request handling.
 *
 * Design: one level-triggered epoll loop.  Every output is a reference-counted
 * frame; each connection keeps a ring of frame references.  A publish builds the
 * chunk-encoded frame once and shares it.  Connections that get new output are
 * put on a dirty list; after all ready events of an epoll_wait batch are handled,
 * each dirty connection is written with ONE writev of all its pending frames
 * (publish replies before subscribers, so publishers are not held up by the
 * fan-out).  On EAGAIN the rest stays queued and EPOLLOUT is awaited.  A
 * subscriber with 1024 frames pending is dropped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define QMAX 1024            /* max frames queued per connection (== IOV_MAX: one writev) */
#define QINIT 8              /* initial ring capacity (power of two) */
#define MAXHDR 8192          /* request head limit */
#define MAXBODY 65536        /* publish body limit */
#define NBUCKET 16384        /* topic hash buckets (power of two) */
#define MAXEV 1024

/* ------------------------------------------------------------------ frames */
typedef struct frame {
    int refs;                /* queued references; < 0: static, never freed */
    int len;
    const char *data;
} frame_t;

static void unref(frame_t *f) {
    if (f->refs > 0 && --f->refs == 0) free(f);
}
static frame_t *frame_new(int len) {          /* data lives right after the header */
    frame_t *f = malloc(sizeof *f + (size_t)len);
    if (!f) { perror("malloc"); exit(1); }
    f->refs = 0; f->len = len; f->data = (char *)(f + 1);
    return f;
}
#define STATIC_FRAME(name, s) static frame_t name = { -1, sizeof(s) - 1, s }
STATIC_FRAME(F_SUBSCRIBED, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
             "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
             "d\r\nretry: 2000\n\n\r\n");
STATIC_FRAME(F_HEALTHZ, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n");
STATIC_FRAME(F_NOTFOUND, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");

/* ------------------------------------------------------------- connections */
struct topic;
typedef struct conn {
    int fd;
    uint8_t open;
    uint8_t dirty;           /* on the dirty list; belongs to the fd slot, survives close */
    uint8_t want_out;        /* EPOLLOUT registered (socket was full) */
    struct topic *topic;     /* set once the connection is a subscriber */
    int slot;                /* index in topic->subs */
    char *in; int inlen;     /* unparsed request bytes (only while a request is incomplete) */
    frame_t **q;             /* ring of pending frames */
    uint16_t qhead, qlen, qcap;
    int off;                 /* bytes of q[qhead] already written */
} conn_t;

typedef struct topic {
    struct topic *next;      /* hash chain */
    uint64_t last_id;
    conn_t **subs; int n, cap;
    int namelen; char name[];
} topic_t;

static int ep, lfd, maxconn;
static conn_t *conns;        /* indexed by fd */
static conn_t **dirty; static int ndirty;
static topic_t *buckets[NBUCKET];
static char rbuf[MAXBODY + MAXHDR];
static struct iovec iov[QMAX];

static void set_out(conn_t *c, int on) {      /* toggle EPOLLOUT interest */
    if (c->want_out == on) return;
    struct epoll_event e = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.fd = c->fd };
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
    c->want_out = (uint8_t)on;
}
static void mark_dirty(conn_t *c) {
    if (!c->dirty) { c->dirty = 1; dirty[ndirty++] = c; }
}

/* queue a frame reference; returns -1 if the queue is full */
static int enqueue(conn_t *c, frame_t *f) {
    if (c->qlen == QMAX) return -1;
    if (c->qlen == c->qcap) {                  /* grow the ring, unwrapping it */
        uint16_t ncap = c->qcap ? (uint16_t)(c->qcap * 2) : QINIT;
        frame_t **nq = malloc(ncap * sizeof *nq);
        if (!nq) { perror("malloc"); exit(1); }
        for (int i = 0; i < c->qlen; i++) nq[i] = c->q[(c->qhead + i) & (c->qcap - 1)];
        free(c->q); c->q = nq; c->qhead = 0; c->qcap = ncap;
    }
    c->q[(c->qhead + c->qlen++) & (c->qcap - 1)] = f;
    if (f->refs >= 0) f->refs++;
    if (!c->want_out) mark_dirty(c);           /* else EPOLLOUT will mark it */
    return 0;
}

static void topic_remove(conn_t *c) {         /* swap-remove from the subscriber array */
    topic_t *t = c->topic;
    conn_t *last = t->subs[--t->n];
    t->subs[c->slot] = last; last->slot = c->slot;
    c->topic = NULL;
}

static void conn_close(conn_t *c) {
    if (c->topic) topic_remove(c);
    while (c->qlen) { unref(c->q[c->qhead]); c->qhead = (c->qhead + 1) & (c->qcap - 1); c->qlen--; }
    free(c->q); free(c->in);
    close(c->fd);                              /* also removes it from epoll */
    uint8_t d = c->dirty;
    memset(c, 0, sizeof *c);
    c->dirty = d;
}

/* write all pending frames with one writev; keep the rest on EAGAIN / short write */
static void flush(conn_t *c) {
    int n = c->qlen;
    for (int i = 0; i < n; i++) {
        frame_t *f = c->q[(c->qhead + i) & (c->qcap - 1)];
        int skip = i ? 0 : c->off;
        iov[i].iov_base = (char *)f->data + skip; iov[i].iov_len = (size_t)(f->len - skip);
    }
    ssize_t w = writev(c->fd, iov, n);
    if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) set_out(c, 1);
        else conn_close(c);
        return;
    }
    while (c->qlen) {                          /* pop what went out */
        frame_t *f = c->q[c->qhead];
        if (w < f->len - c->off) { c->off += (int)w; break; }
        w -= f->len - c->off; c->off = 0;
        unref(f); c->qhead = (c->qhead + 1) & (c->qcap - 1); c->qlen--;
    }
    set_out(c, c->qlen > 0);                   /* short write: the socket is full */
}

/* flush the dirty connections that are (1) or are not (0) subscribers */
static void flush_dirty(int subscribers) {
    for (int i = 0; i < ndirty; i++) {
        conn_t *c = dirty[i];
        if (!c->dirty || (c->topic != NULL) != subscribers) continue;
        c->dirty = 0;
        if (c->open && c->qlen) flush(c);
        else if (c->open) set_out(c, 0);      /* EPOLLOUT with nothing left to write */
    }
}

/* ------------------------------------------------------------------ topics */
static topic_t *topic_get(const char *name, int len) {
    uint32_t h = 2166136261u;                  /* FNV-1a */
    for (int i = 0; i < len; i++) h = (h ^ (uint8_t)name[i]) * 16777619u;
    topic_t **b = &buckets[h & (NBUCKET - 1)];
    for (topic_t *t = *b; t; t = t->next)
        if (t->namelen == len && !memcmp(t->name, name, (size_t)len)) return t;
    topic_t *t = calloc(1, sizeof *t + (size_t)len);
    if (!t) { perror("calloc"); exit(1); }
    memcpy(t->name, name, (size_t)len); t->namelen = len;
    t->next = *b; *b = t;
    return t;
}

static void subscribe(conn_t *c, topic_t *t) {
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4;
        t->subs = realloc(t->subs, (size_t)t->cap * sizeof *t->subs);
        if (!t->subs) { perror("realloc"); exit(1); }
    }
    c->topic = t; c->slot = t->n; t->subs[t->n++] = c;
    enqueue(c, &F_SUBSCRIBED);
}

/* build the chunk "<hex>\r\nid: <id>\ndata: <line>\n...\n\r\n" for one publish */
static frame_t *make_event(uint64_t id, const char *body, int blen) {
    int lines = 1;
    for (const char *p = body; (p = memchr(p, '\n', (size_t)(body + blen - p))); p++) lines++;
    char ids[24]; int idl = snprintf(ids, sizeof ids, "%llu", (unsigned long long)id);
    /* "id: " id "\n" + lines * ("data: " "\n") + body minus its newlines + "\n" */
    int plen = 4 + idl + 1 + lines * 7 + (blen - (lines - 1)) + 1;
    char hex[16]; int hl = snprintf(hex, sizeof hex, "%x\r\n", plen);
    frame_t *f = frame_new(hl + plen + 2);
    char *o = (char *)f->data;
    memcpy(o, hex, (size_t)hl); o += hl;
    memcpy(o, "id: ", 4); memcpy(o + 4, ids, (size_t)idl); o += 4 + idl; *o++ = '\n';
    const char *p = body, *end = body + blen;
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        memcpy(o, "data: ", 6); memcpy(o + 6, p, (size_t)(le - p)); o += 6 + (le - p); *o++ = '\n';
        if (!nl) break;
        p = nl + 1;
    }
    memcpy(o, "\n\r\n", 3);
    return f;
}

/* POST: one shared frame to every subscriber, then the JSON reply to the publisher */
static int publish(conn_t *c, topic_t *t, const char *body, int blen) {
    uint64_t id = ++t->last_id;
    int k = 0;
    if (t->n > 0) {
        frame_t *f = make_event(id, body, blen);
        for (int i = t->n - 1; i >= 0; i--) {  /* backwards: dropping swaps in a visited one */
            conn_t *s = t->subs[i];
            if (enqueue(s, f) < 0) conn_close(s);  /* 1024 frames behind: drop it */
            else k++;
        }
        if (f->refs == 0) free(f);
    }
    char js[64], hd[128];
    int jl = snprintf(js, sizeof js, "{\"id\":\"%llu\",\"subscribers\":%d}", (unsigned long long)id, k);
    int hl = snprintf(hd, sizeof hd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     "Content-Length: %d\r\n\r\n", jl);
    frame_t *r = frame_new(hl + jl);
    memcpy((char *)r->data, hd, (size_t)hl); memcpy((char *)r->data + hl, js, (size_t)jl);
    if (enqueue(c, r) < 0) { free(r); return -1; }   /* 1024 unread replies: give up */
    return 0;
}

/* ---------------------------------------------------------------- requests */
static void reject(conn_t *c, const char *msg) {  /* best-effort error reply; caller closes */
    ssize_t unused = write(c->fd, msg, strlen(msg)); (void)unused;
}

/* handle every complete request in buf; returns bytes consumed, -1 to close */
static long handle_requests(conn_t *c, char *buf, long len) {
    long done = 0;
    while (!c->topic && done < len) {          /* a subscriber's further input is ignored */
        char *p = buf + done; long avail = len - done;
        char *he = memmem(p, (size_t)avail, "\r\n\r\n", 4);
        if (!he) {
            if (avail <= MAXHDR) return done;  /* wait for the rest of the head */
            reject(c, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n");
            return -1;
        }
        long hlen = he + 4 - p, clen = 0;
        for (char *l = memchr(p, '\n', (size_t)hlen); l && l + 1 < he; l = memchr(l + 1, '\n', (size_t)(he - l)))
            if (!strncasecmp(l + 1, "content-length:", 15)) clen = strtol(l + 16, NULL, 10);
        if (clen < 0 || clen > MAXBODY) {
            reject(c, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n");
            return -1;
        }
        if (avail < hlen + clen) return done;  /* wait for the rest of the body */
        done += hlen + clen;

        /* request line: METHOD SP PATH SP VERSION */
        char *sp = memchr(p, ' ', (size_t)hlen);
        char *path = sp ? sp + 1 : NULL;
        char *pe = path ? memchr(path, ' ', (size_t)(he - path)) : NULL;
        if (!pe) { reject(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"); return -1; }
        int plen = (int)(pe - path), is_get = sp - p == 3 && !memcmp(p, "GET", 3);
        int is_post = sp - p == 4 && !memcmp(p, "POST", 4);
        int pfx = plen > 8 && !memcmp(path, "/events/", 8) ? 8 : plen > 7 && !memcmp(path, "/state/", 7) ? 7 : 0;
        int r = 0;
        if (pfx && is_get) subscribe(c, topic_get(path, plen));
        else if (pfx && is_post) r = publish(c, topic_get(path, plen), p + hlen, (int)clen);
        else if (is_get && plen == 8 && !memcmp(path, "/healthz", 8)) r = enqueue(c, &F_HEALTHZ);
        else r = enqueue(c, &F_NOTFOUND);
        if (r < 0) return -1;
    }
    return done;
}

static void on_read(conn_t *c) {
    ssize_t n = recv(c->fd, rbuf, sizeof rbuf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) { conn_close(c); return; }     /* EOF or error */
    if (c->topic) return;                       /* subscriber: discard input */
    char *buf = rbuf; long len = n;
    if (c->inlen) {                             /* continue an incomplete request */
        char *nb = realloc(c->in, (size_t)(c->inlen + n));
        if (!nb) { perror("realloc"); exit(1); }
        memcpy(nb + c->inlen, rbuf, (size_t)n);
        c->in = buf = nb; len = c->inlen + n;
    }
    long used = handle_requests(c, buf, len);
    if (used < 0) { conn_close(c); return; }
    long rest = c->topic ? 0 : len - used;      /* keep an incomplete request's bytes */
    if (!rest) { free(c->in); c->in = NULL; c->inlen = 0; return; }
    if (buf == c->in) memmove(c->in, c->in + used, (size_t)rest);
    else {
        if (!(c->in = malloc((size_t)rest))) { perror("malloc"); exit(1); }
        memcpy(c->in, rbuf + used, (size_t)rest);
    }
    c->inlen = (int)rest;
}

static void on_accept(void) {
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                perror("accept4");             /* e.g. EMFILE: retried on the next wakeup */
            return;
        }
        if (fd >= maxconn) { close(fd); continue; }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = &conns[fd];
        c->fd = fd; c->open = 1;
        struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0) { perror("epoll_ctl"); conn_close(c); }
    }
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 0;
    if (port <= 0 || port > 65535) { fprintf(stderr, "usage: %s PORT\n", argv[0]); return 2; }
    signal(SIGPIPE, SIG_IGN);

    struct rlimit rl;                          /* fd soft limit := hard limit */
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    maxconn = rl.rlim_cur > (1 << 20) ? (1 << 20) : (int)rl.rlim_cur;
    conns = calloc((size_t)maxconn, sizeof *conns);
    dirty = calloc((size_t)maxconn, sizeof *dirty);
    if (!conns || !dirty) { perror("calloc"); return 1; }

    lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 4096) < 0) { perror("bind/listen"); return 1; }
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event e = { .events = EPOLLIN, .data.fd = lfd };
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);

    static struct epoll_event evs[MAXEV];
    for (;;) {
        int n = epoll_wait(ep, evs, MAXEV, -1);
        if (n < 0 && errno != EINTR) { perror("epoll_wait"); return 1; }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) { on_accept(); continue; }
            conn_t *c = &conns[fd];
            if (!c->open) continue;            /* closed earlier in this batch */
            if (evs[i].events & EPOLLOUT) mark_dirty(c);
            /* HUP/ERR are confirmed by recv, so a stale event for a reused fd is harmless */
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_read(c);
        }
        /* end of batch: replies first (publishers can send their next request
           while the fan-out is written), then one writev per subscriber */
        flush_dirty(0);
        flush_dirty(1);
        ndirty = 0;
    }
}
