// hiredis (Debian's libhiredis-dev 0.14) for RedisClient: only its RESP reply
// parser (redisReader*) and its command formatter (redisFormatCommandArgv).
// None of its socket code is used: I/O runs on HTTPCore's own loop. Macros and
// struct fields Swift should not touch directly become inline functions
// prefixed `chiredis_`.
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <stdlib.h>
#include <hiredis/hiredis.h>
#include <hiredis/read.h>

/// The reader's error text (set once it failed on malformed bytes).
static inline const char *chiredis_reader_error(const redisReader *reader) { return reader->errstr; }
/// Bytes fed to the reader that no complete reply has consumed yet: what a
/// reply being assembled (a large bulk) holds in memory.
static inline size_t chiredis_reader_buffered(const redisReader *reader) { return reader->len - reader->pos; }
/// The `index`th element of an array reply.
static inline const redisReply *chiredis_reply_element(const redisReply *reply, size_t index) { return reply->element[index]; }

#endif
