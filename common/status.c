/* Thread-local last-error detail (NCCL/redis style: small enum + detail). */
#include "common/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GD_DETAIL_MAX 1024

static _Thread_local char gd_detail[GD_DETAIL_MAX];

const char *gd_status_name(gd_status status) {
    switch (status) {
    case GD_OK: return "ok";
    case GD_ERR_INVALID: return "invalid argument";
    case GD_ERR_PARSE: return "malformed input";
    case GD_ERR_NOMEM: return "out of memory";
    case GD_ERR_IO: return "i/o error";
    case GD_ERR_PERMISSION: return "permission refused";
    case GD_ERR_NOT_FOUND: return "not found";
    case GD_ERR_EXISTS: return "already exists";
    case GD_ERR_CRYPTO: return "crypto error";
    case GD_ERR_NETWORK: return "network error";
    case GD_ERR_TIMEOUT: return "timeout";
    case GD_ERR_RPC: return "rpc error";
    case GD_ERR_CHAIN: return "chain error";
    case GD_ERR_LIMIT: return "limit exceeded";
    case GD_ERR_CANCELLED: return "cancelled";
    case GD_ERR_PENDING: return "pending";
    }
    return "unknown status";
}

gd_status gd_fail(gd_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(gd_detail, sizeof gd_detail, fmt, ap);
    va_end(ap);
    return status;
}

gd_status gd_fail_context(gd_status status, const char *fmt, ...) {
    char prefix[GD_DETAIL_MAX];
    char old[GD_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, gd_detail, sizeof old);
    if (old[0] != '\0')
        snprintf(gd_detail, sizeof gd_detail, "%s: %s", prefix, old);
    else
        snprintf(gd_detail, sizeof gd_detail, "%s: %s", prefix, gd_status_name(status));
    return status;
}

const char *gd_error_detail(void) { return gd_detail; }

void gd_error_clear(void) { gd_detail[0] = '\0'; }
