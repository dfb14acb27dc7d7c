/* Status codes and the last-error detail shared by every library.
 *
 * Functions return a gd_status; on failure they record a one-line detail
 * (what went wrong and, where useful, what to do) with gd_fail(). The detail
 * is thread-local and only meaningful right after a call that failed. */
#ifndef GD_COMMON_STATUS_H
#define GD_COMMON_STATUS_H

#include <stddef.h>

#if defined(__GNUC__)
#define GD_MUST_CHECK __attribute__((warn_unused_result))
#define GD_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define GD_MUST_CHECK
#define GD_PRINTF(fmt, args)
#endif

typedef enum gd_status {
    GD_OK = 0,
    GD_ERR_INVALID,    /* an argument or user input is malformed */
    GD_ERR_PARSE,      /* outside bytes (file, network, chain) did not decode */
    GD_ERR_NOMEM,      /* allocation failed */
    GD_ERR_IO,         /* file system error */
    GD_ERR_PERMISSION, /* file mode or ownership refused */
    GD_ERR_NOT_FOUND,  /* the thing asked for does not exist (yet) */
    GD_ERR_EXISTS,     /* refusing to overwrite */
    GD_ERR_CRYPTO,     /* key, signature or hash operation failed */
    GD_ERR_NETWORK,    /* transport failure: refused, reset, DNS; retryable */
    GD_ERR_TIMEOUT,    /* no answer in time; retryable */
    GD_ERR_RPC,        /* the node answered with a JSON-RPC error */
    GD_ERR_CHAIN,      /* the chain answered with a non-zero ABCI code */
    GD_ERR_LIMIT,      /* a size or count limit was exceeded */
    GD_ERR_CANCELLED,  /* stopped on request before it finished */
    GD_ERR_PENDING,    /* started elsewhere and not done yet: ask again later */
} gd_status;

/* Returns a short constant name for a status ("invalid argument", ...). */
const char *gd_status_name(gd_status status);

/* Records a formatted detail for the calling thread and returns status, so a
 * failing path reads `return gd_fail(GD_ERR_PARSE, "bad hex at %zu", i);`. */
gd_status gd_fail(gd_status status, const char *fmt, ...) GD_PRINTF(2, 3);

/* Prefixes the current detail with context: "reading key file x: <detail>".
 * Returns status unchanged. */
gd_status gd_fail_context(gd_status status, const char *fmt, ...) GD_PRINTF(2, 3);

/* The detail recorded by the last gd_fail on this thread ("" if none). */
const char *gd_error_detail(void);

/* Forgets the current detail. */
void gd_error_clear(void);

/* Propagates a failure: evaluates expr once and returns it if not GD_OK. */
#define GD_TRY(expr)                       \
    do {                                   \
        gd_status gd_try_status_ = (expr); \
        if (gd_try_status_ != GD_OK)       \
            return gd_try_status_;         \
    } while (0)

#endif
