// The C shim of the gateway: headers Glibc does not export to Swift (epoll,
// eventfd), and OpenSSL. Macros Swift cannot import become small inline
// functions prefixed `cstreams_`.
#ifndef CSTREAMS_SHIM_H
#define CSTREAMS_SHIM_H

#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/err.h>

/// accept4 is a GNU extension that Glibc's Swift module hides; declared here
/// exactly as glibc declares it, and wrapped so callers pass only flags.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
static inline int cstreams_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

/// epoll_event is packed on x86_64; Swift imports it, but building one field by
/// field through these helpers keeps the packing rules in C.
static inline struct epoll_event cstreams_epoll_event(uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return ev;
}
/// The data and flags of the `index`th event of an array filled by epoll_wait,
/// indexed in C so the packed stride is C's.
static inline uint64_t cstreams_epoll_event_data(const struct epoll_event *events, int index) { return events[index].data.u64; }
static inline uint32_t cstreams_epoll_event_events(const struct epoll_event *events, int index) { return events[index].events; }
static inline struct epoll_event *cstreams_epoll_events_allocate(int count) { return (struct epoll_event *)calloc((size_t)count, sizeof(struct epoll_event)); }
static inline void cstreams_epoll_events_free(struct epoll_event *events) { free(events); }

#endif
