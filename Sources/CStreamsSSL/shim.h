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
#include <spawn.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <openssl/ssl.h>
#include <openssl/err.h>

/// accept4 is a GNU extension that Glibc's Swift module hides; declared here
/// exactly as glibc declares it, and wrapped so callers pass only flags.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
static inline int cstreams_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

/// Two more GNU extensions Glibc's Swift module hides, declared exactly as
/// glibc declares them: how the tests start children that inherit no
/// descriptor (close everything from 3 up in the child; pipes born close-on-exec).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int cstreams_spawn_close_from(posix_spawn_file_actions_t *actions, int from) { return posix_spawn_file_actions_addclosefrom_np(actions, from); }
extern int pipe2(int fds[2], int flags);
static inline int cstreams_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

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

// MARK: OpenSSL: macros and callbacks as functions Swift can call.

#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <string.h>
#include <time.h>

/// SSL_OP_* are built by a function-like macro Swift cannot import.
static const uint64_t cstreams_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const uint64_t cstreams_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t cstreams_SSL_OP_CIPHER_SERVER_PREFERENCE = SSL_OP_CIPHER_SERVER_PREFERENCE;

static inline long cstreams_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline int cstreams_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
static inline long cstreams_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
static inline int cstreams_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline int cstreams_ERR_GET_LIB(unsigned long code) { return ERR_GET_LIB(code); }
static inline int cstreams_ERR_GET_REASON(unsigned long code) { return ERR_GET_REASON(code); }
static inline void cstreams_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

/// Server-side ALPN: choose "http/1.1" when the client offers it; otherwise
/// go on without ALPN (the client decides whether that is acceptable).
static inline int cstreams_alpn_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                              const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char http11[] = "\x08http/1.1";
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, http11, sizeof(http11) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}
static inline void cstreams_SSL_CTX_select_alpn_http11(SSL_CTX *ctx) { SSL_CTX_set_alpn_select_cb(ctx, cstreams_alpn_select_http11, NULL); }
/// Server-side ALPN with HTTP/2: "h2" when the client offers it, else "http/1.1",
/// else no ALPN.
static inline int cstreams_alpn_select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                          const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char protocols[] = "\x02h2\x08http/1.1";
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, protocols, sizeof(protocols) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}
static inline void cstreams_SSL_CTX_select_alpn_h2(SSL_CTX *ctx) { SSL_CTX_set_alpn_select_cb(ctx, cstreams_alpn_select_h2, NULL); }
/// Client-side ALPN offer of "http/1.1"; 0 on success (as SSL_set_alpn_protos).
static inline int cstreams_SSL_offer_alpn_http11(SSL *ssl) {
    static const unsigned char http11[] = "\x08http/1.1";
    return SSL_set_alpn_protos(ssl, http11, sizeof(http11) - 1);
}

/// A passphrase callback that refuses: an encrypted key fails to load instead
/// of OpenSSL prompting on the terminal of a server.
static inline int cstreams_no_passphrase(char *buf, int size, int rwflag, void *u) {
    (void)buf; (void)size; (void)rwflag; (void)u;
    return -1;
}
/// The first private key of a PEM file, or NULL (details on the error queue).
static inline EVP_PKEY *cstreams_read_private_key(const char *path) {
    BIO *bio = BIO_new_file(path, "r");
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, cstreams_no_passphrase, NULL);
    BIO_free(bio);
    return key;
}
/// Applies cstreams_no_passphrase to every PEM read of the context.
static inline void cstreams_SSL_CTX_refuse_passphrases(SSL_CTX *ctx) { SSL_CTX_set_default_passwd_cb(ctx, cstreams_no_passphrase); }

/// An X509_NAME as one RFC 2253 line ("CN=localhost,O=Example", UTF-8 kept);
/// free with cstreams_OPENSSL_free.
static inline char *cstreams_X509_NAME_text(const X509_NAME *name) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    char *text = NULL;
    if (X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0) {
        char *data = NULL;
        long length = BIO_get_mem_data(bio, &data);
        text = OPENSSL_malloc((size_t)length + 1);
        if (text != NULL) {
            if (length > 0) memcpy(text, data, (size_t)length);
            text[length] = 0;
        }
    }
    BIO_free(bio);
    return text;
}
/// A certificate's serial number in upper-case hex; free with cstreams_OPENSSL_free.
static inline char *cstreams_X509_serial_hex(X509 *cert) {
    BIGNUM *number = ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), NULL);
    if (number == NULL) return NULL;
    char *hex = BN_bn2hex(number);
    BN_free(number);
    return hex;
}
/// An ASN1_TIME as seconds since the epoch; 0 when it cannot be read.
static inline int64_t cstreams_ASN1_TIME_epoch(const ASN1_TIME *time) {
    struct tm parts;
    if (time == NULL || ASN1_TIME_to_tm(time, &parts) != 1) return 0;
    return (int64_t)timegm(&parts);
}

// MARK: libcrypto for JSON Web Tokens (Sources/JWT).

#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>

/// A MAC context for HMAC-SHA256 keyed with `key`, ready for update/final, or
/// NULL. The OSSL_PARAM array that names the digest is built in C, where its
/// string pointers stay valid for the call. Free with EVP_MAC_CTX_free.
static inline EVP_MAC_CTX *cstreams_hmac_sha256_new(const unsigned char *key, size_t key_length) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) return NULL;
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);
    if (context == NULL) return NULL;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    if (EVP_MAC_init(context, key, key_length, params) != 1) {
        EVP_MAC_CTX_free(context);
        return NULL;
    }
    return context;
}
/// HMAC-SHA256 of `data` into `out` (32 bytes) with a copy of `keyed`, a
/// context from cstreams_hmac_sha256_new that is never changed itself (so one
/// keyed context serves every thread). 1 on success.
static inline int cstreams_hmac_sha256(const EVP_MAC_CTX *keyed, const unsigned char *data, size_t length,
                                       unsigned char out[32]) {
    EVP_MAC_CTX *context = EVP_MAC_CTX_dup(keyed);
    if (context == NULL) return 0;
    size_t written = 0;
    int ok = EVP_MAC_update(context, data, length) == 1
        && EVP_MAC_final(context, out, &written, 32) == 1 && written == 32;
    EVP_MAC_CTX_free(context);
    return ok;
}
/// The public key of a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo) held in
/// memory, or NULL. Never prompts for a passphrase.
static inline EVP_PKEY *cstreams_read_public_key_pem(const char *pem, size_t length) {
    BIO *bio = BIO_new_mem_buf(pem, (int)length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PUBKEY(bio, NULL, cstreams_no_passphrase, NULL);
    BIO_free(bio);
    return key;
}
/// The first private key of a PEM held in memory, or NULL (tests sign tokens with it).
static inline EVP_PKEY *cstreams_read_private_key_pem(const char *pem, size_t length) {
    BIO *bio = BIO_new_mem_buf(pem, (int)length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, cstreams_no_passphrase, NULL);
    BIO_free(bio);
    return key;
}

/// The number of CPUs this process may run on (its affinity mask, as taskset or a
/// container's cpuset leaves it), 0 if the kernel does not say. CPU_COUNT and
/// cpu_set_t need _GNU_SOURCE, which Glibc's Swift module does not define, so the
/// mask (up to 4,096 CPUs) is read through the raw system call and its bits counted.
static inline int cstreams_affinity_cpu_count(void) {
    unsigned long mask[64];
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
    if (bytes <= 0) return 0;
    int count = 0;
    for (long i = 0; i < bytes / (long)sizeof(unsigned long); i++) count += __builtin_popcountl(mask[i]);
    return count;
}

#endif
