/* Wipe and randomness. */
#include "common/secure.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

void gd_wipe(void *p, size_t len) {
    if (p != NULL && len > 0)
        explicit_bzero(p, len);
}

gd_status gd_random_bytes(void *buf, size_t len) {
    unsigned char *out = buf;
    while (len > 0) {
        ssize_t n = getrandom(out, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return gd_fail(GD_ERR_CRYPTO, "getrandom failed: %s", strerror(errno));
        }
        out += n;
        len -= (size_t)n;
    }
    return GD_OK;
}
