/* Range header parsing (plugin/http/http_range.h): RFC 9110 sections 14.1.1
 * (syntax), 14.1.2 (byte ranges) and 14.2 (ignore what is invalid). */
#include "plugin/http/http_range.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* A decimal number as written: its digits (for exact comparison, whatever
 * their count) and its value, saturated at UINT64_MAX. Saturation is exact
 * for every use here, as no resource has UINT64_MAX bytes or more. */
typedef struct gd_range_num {
    const char *digits;
    size_t len;
    uint64_t value;
} gd_range_num;

/* int-range "first-[last]", or suffix-range "-last" when suffix is set. */
typedef struct gd_range_spec {
    bool suffix;
    bool has_last;
    gd_range_num first, last;
} gd_range_spec;

static bool gd_range_ows(char c) { return c == ' ' || c == '\t'; }

/* Reads 1*DIGIT at p; returns the count (0 when there is none). */
static size_t gd_range_digits(const char *p, const char *end, gd_range_num *n) {
    n->digits = p;
    n->value = 0;
    size_t len = 0;
    while (p + len < end && p[len] >= '0' && p[len] <= '9') {
        unsigned d = (unsigned)(p[len] - '0');
        n->value = n->value > (UINT64_MAX - d) / 10 ? UINT64_MAX : n->value * 10 + d;
        len++;
    }
    n->len = len;
    return len;
}

/* a < b on the written numbers, exactly. */
static bool gd_range_num_less(const gd_range_num *a, const gd_range_num *b) {
    const char *pa = a->digits, *pb = b->digits;
    size_t la = a->len, lb = b->len;
    while (la > 1 && *pa == '0')
        pa++, la--;
    while (lb > 1 && *pb == '0')
        pb++, lb--;
    if (la != lb)
        return la < lb;
    return memcmp(pa, pb, la) < 0;
}

/* One range-spec between p and end (whitespace already trimmed). False for
 * anything RFC 9110 calls invalid, including last-pos < first-pos. */
static bool gd_range_spec_parse(const char *p, const char *end, gd_range_spec *spec) {
    memset(spec, 0, sizeof *spec);
    if (p < end && *p == '-') {
        spec->suffix = true;
        size_t n = gd_range_digits(p + 1, end, &spec->last);
        return n > 0 && p + 1 + n == end;
    }
    size_t n = gd_range_digits(p, end, &spec->first);
    if (n == 0 || p + n == end || p[n] != '-')
        return false;
    p += n + 1;
    n = gd_range_digits(p, end, &spec->last);
    if (p + n != end)
        return false;
    spec->has_last = n > 0;
    return !spec->has_last || !gd_range_num_less(&spec->last, &spec->first);
}

/* RFC 9110 14.1.1: an int-range starting inside the resource, or a suffix
 * of at least one byte. */
static bool gd_range_satisfiable(const gd_range_spec *spec, uint64_t size) {
    if (spec->suffix)
        return spec->last.value > 0;
    return spec->first.value < size;
}

static void gd_range_resolve(const gd_range_spec *spec, gd_http_range *out, uint64_t size) {
    if (spec->suffix) {
        out->first = spec->last.value >= size ? 0 : size - spec->last.value;
        out->last = size - 1;
        return;
    }
    out->first = spec->first.value;
    out->last = spec->has_last && spec->last.value < size - 1 ? spec->last.value : size - 1;
}

gd_http_range_kind gd_http_range_parse(gd_http_range *out, const char *value, uint64_t size) {
    if (value == NULL)
        return GD_HTTP_RANGE_FULL;
    const char *p = value, *end = value + strlen(value);
    while (p < end && gd_range_ows(*p))
        p++;
    while (end > p && gd_range_ows(end[-1]))
        end--;
    static const char unit[] = "bytes=";
    if ((size_t)(end - p) < sizeof unit - 1 || strncasecmp(p, unit, sizeof unit - 1) != 0)
        return GD_HTTP_RANGE_FULL;
    p += sizeof unit - 1;
    size_t count = 0;
    bool any_satisfiable = false;
    gd_range_spec only = {0};
    while (p <= end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        const char *a = p, *b = stop;
        while (a < b && gd_range_ows(*a))
            a++;
        while (b > a && gd_range_ows(b[-1]))
            b--;
        if (a < b) { /* empty list elements are skipped (RFC 9110 5.6.1) */
            gd_range_spec spec;
            if (!gd_range_spec_parse(a, b, &spec))
                return GD_HTTP_RANGE_FULL;
            any_satisfiable = any_satisfiable || gd_range_satisfiable(&spec, size);
            if (count++ == 0)
                only = spec;
        }
        p = stop + 1;
    }
    if (count == 0)
        return GD_HTTP_RANGE_FULL;
    if (!any_satisfiable)
        return GD_HTTP_RANGE_UNSATISFIABLE;
    /* Several ranges would need multipart/byteranges; 200 is allowed. An
     * empty resource has no byte to name in a Content-Range. */
    if (count > 1 || size == 0)
        return GD_HTTP_RANGE_FULL;
    gd_range_resolve(&only, out, size);
    return GD_HTTP_RANGE_PARTIAL;
}
