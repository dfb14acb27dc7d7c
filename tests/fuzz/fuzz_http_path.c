/* The HTTP server's parsers of outside bytes. The first byte selects one:
 *   even: gd_http_path_parse on "METHOD TARGET" (no space: GET TARGET);
 *         an accepted target must be the one canonical spelling of what it
 *         parsed to, so there is no second way to name an artifact;
 *   odd:  gd_http_range_parse; the next 8 bytes are the resource size (LE,
 *         fewer means the next byte alone), the rest the field value; a
 *         partial range lies inside the resource and reads back the same.
 * A NUL in the input ends the text, as it would for libmicrohttpd. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/bytes.h"
#include "plugin/http/http_path.h"
#include "plugin/http/http_range.h"
#include "tests/fuzz/fuzz.h"

static void check_path(const char *text) {
    char method[16] = "GET";
    const char *url = text;
    const char *space = strchr(text, ' ');
    if (space != NULL && (size_t)(space - text) < sizeof method) {
        memcpy(method, text, (size_t)(space - text));
        method[space - text] = '\0';
        url = space + 1;
    }
    gd_artifact_req req;
    memset(&req, 0x5a, sizeof req);
    unsigned code = 0;
    gd_status s = gd_http_path_parse(&req, method, url, &code);
    if (s != GD_OK) {
        FUZZ_ASSERT((s == GD_ERR_INVALID && code == 405) || (s == GD_ERR_LIMIT && code == 414) ||
                    (s == GD_ERR_PARSE && code == 400) || (s == GD_ERR_NOT_FOUND && code == 404));
        for (const char *p = gd_error_detail(); *p; p++) /* sent back as text */
            FUZZ_ASSERT(*p >= 0x20 && *p <= 0x7e);
        return;
    }
    FUZZ_ASSERT(code == 200);
    FUZZ_ASSERT(strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0);
    char want[GD_HTTP_PATH_MAX + 2];
    gd_http_path_format(&req, want, sizeof want);
    size_t len = strlen(url);
    if (len > 0 && url[len - 1] == '?')
        len--; /* the one allowed query: an empty one */
    FUZZ_ASSERT(strlen(want) == len && memcmp(want, url, len) == 0);
}

static void check_range(const uint8_t *data, size_t size) {
    uint64_t resource = 0;
    size_t skip = size >= 8 ? 8 : size >= 1 ? 1 : 0;
    if (skip == 8)
        resource = gd_get_le64(data);
    else if (skip == 1)
        resource = data[0];
    char *value = fuzz_cstr(data + skip, size - skip);
    gd_http_range r = {.first = 7, .last = 3};
    gd_http_range_kind k = gd_http_range_parse(&r, value, resource);
    FUZZ_ASSERT(k == GD_HTTP_RANGE_FULL || k == GD_HTTP_RANGE_PARTIAL ||
                k == GD_HTTP_RANGE_UNSATISFIABLE);
    if (k != GD_HTTP_RANGE_PARTIAL) {
        FUZZ_ASSERT(r.first == 7 && r.last == 3);
    } else {
        FUZZ_ASSERT(resource > 0 && r.first <= r.last && r.last < resource);
        char again[64];
        snprintf(again, sizeof again, "bytes=%" PRIu64 "-%" PRIu64, r.first, r.last);
        gd_http_range r2;
        FUZZ_ASSERT(gd_http_range_parse(&r2, again, resource) == GD_HTTP_RANGE_PARTIAL);
        FUZZ_ASSERT(r2.first == r.first && r2.last == r.last);
    }
    free(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    if (data[0] & 1) {
        check_range(data + 1, size - 1);
        return 0;
    }
    char *text = fuzz_cstr(data + 1, size - 1);
    check_path(text);
    free(text);
    return 0;
}
