/* The Range header of a GET for a resource of known size, read as
 * RFC 9110 (section 14) says a server that serves single byte ranges
 * reads it. Pure: the caller turns the result into 200, 206 or 416. */
#ifndef GD_PLUGIN_HTTP_HTTP_RANGE_H
#define GD_PLUGIN_HTTP_HTTP_RANGE_H

#include <stdint.h>

typedef enum gd_http_range_kind {
    /* No Range, or one to ignore: answer 200 with the whole resource. That
     * is RFC 9110's answer to a syntactically invalid range set, to a unit
     * other than bytes, and (as this server sends no multipart answers) to
     * several ranges of which at least one is satisfiable. */
    GD_HTTP_RANGE_FULL = 0,
    /* Answer 206 with bytes first..last (inclusive) and
     * Content-Range: bytes first-last/size. */
    GD_HTTP_RANGE_PARTIAL,
    /* Valid, but no range overlaps the resource: answer 416 with
     * Content-Range: bytes * /size (without the space). */
    GD_HTTP_RANGE_UNSATISFIABLE,
} gd_http_range_kind;

typedef struct gd_http_range {
    uint64_t first, last; /* inclusive; set only for GD_HTTP_RANGE_PARTIAL */
} gd_http_range;

/* Reads value, the Range field value (NULL when absent), for a resource of
 * size bytes. Accepted forms: "bytes=a-b", "bytes=a-" and "bytes=-n"
 * (the last n bytes), the unit case-insensitive, optional whitespace only
 * around the list's commas and at the ends, empty list elements skipped.
 * Numbers of any length are compared exactly (a first-pos past 2^64 is
 * simply past the end). A suffix of 0 is unsatisfiable; a non-zero suffix
 * on an empty resource gives GD_HTTP_RANGE_FULL, as there is no byte range
 * to name. out is written only for GD_HTTP_RANGE_PARTIAL. */
gd_http_range_kind gd_http_range_parse(gd_http_range *out, const char *value, uint64_t size);

#endif
