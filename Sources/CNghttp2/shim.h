#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
// libnghttp2 (Debian's libnghttp2-dev): HTTP/2 framing, HPACK and flow control
// for HTTPCore's HTTP/2 connections. It does no I/O: the server's sockets, TLS
// and event loop carry its bytes.
#include <nghttp2/nghttp2.h>
#include <string.h>

/// Flags of a data provider's read callback, as plain values.
static const uint32_t cnghttp2_DATA_FLAG_EOF = NGHTTP2_DATA_FLAG_EOF;
static const uint32_t cnghttp2_DATA_FLAG_NO_COPY = NGHTTP2_DATA_FLAG_NO_COPY;
static const uint8_t cnghttp2_FLAG_END_STREAM = NGHTTP2_FLAG_END_STREAM;

/// A name/value pair for nghttp2_submit_response, from byte pointers.
static inline nghttp2_nv cnghttp2_nv(const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen) {
    nghttp2_nv nv;
    nv.name = (uint8_t *)name;
    nv.namelen = namelen;
    nv.value = (uint8_t *)value;
    nv.valuelen = valuelen;
    nv.flags = NGHTTP2_NV_FLAG_NONE;
    return nv;
}
#endif
