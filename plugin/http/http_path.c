/* Strict parsing of the daemon's HTTP request targets (plugin/http/http_path.h).
 * A table of path patterns; a target matches one only segment for segment,
 * so there is no normalisation to get wrong. */
#include "plugin/http/http_path.h"

#include <stdbool.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The most segments any served path has ("v1/runs/R/rounds/N/states/L/chunks/I"). */
#define GD_PATH_MAX_SEGMENTS 9

typedef struct gd_path_seg {
    const char *text;
    size_t len;
} gd_path_seg;

typedef struct gd_route {
    gd_artifact_req_kind kind;
    const char *pattern; /* segments; {run} {round} {leaf} {i} are numbers */
} gd_route;

static const gd_route gd_routes[] = {
    {GD_REQ_STATUS, "v1/status"},
    {GD_REQ_METRICS, "metrics"},
    {GD_REQ_PAYLOAD, "v1/runs/{run}/rounds/{round}/payload"},
    {GD_REQ_PAYLOAD_CHUNK, "v1/runs/{run}/rounds/{round}/payload/chunks/{i}"},
    {GD_REQ_PEER_PAYLOAD, "v1/runs/{run}/rounds/{round}/payloads/{leaf}"},
    {GD_REQ_TRANSCRIPT, "v1/runs/{run}/rounds/{round}/transcript"},
    {GD_REQ_STATE, "v1/runs/{run}/rounds/{round}/states/{leaf}"},
    {GD_REQ_STATE_CHUNK, "v1/runs/{run}/rounds/{round}/states/{leaf}/chunks/{i}"},
    {GD_REQ_GLOBAL_CHUNK, "v1/runs/{run}/global/{round}/chunks/{i}"},
    {GD_REQ_CHECKPOINT, "v1/runs/{run}/checkpoint.safetensors"},
};

static gd_status gd_path_refuse(unsigned *http_status, unsigned code, gd_status status,
                                const char *why) {
    *http_status = code;
    return gd_fail(status, "%s", why);
}

/* Decimal digits, no leading zero but for "0" itself, value <= max. */
static bool gd_path_number(const gd_path_seg *seg, uint64_t *out, uint64_t max) {
    if (seg->len == 0 || (seg->len > 1 && seg->text[0] == '0'))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < seg->len; i++) {
        char c = seg->text[i];
        if (c < '0' || c > '9')
            return false;
        unsigned d = (unsigned)(c - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Refuses what could mean anything but itself to a file system or a
 * proxy: percent escapes, dot segments, empty segments, control bytes. */
static gd_status gd_path_check_bytes(const char *path, size_t len, unsigned *http_status) {
    if (len == 0 || path[0] != '/')
        return gd_path_refuse(http_status, 400, GD_ERR_PARSE, "the path must start with '/'");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c == '%')
            return gd_path_refuse(http_status, 400, GD_ERR_PARSE,
                                  "percent-encoding is not accepted in paths");
        if (c < 0x21 || c > 0x7e)
            return gd_path_refuse(http_status, 400, GD_ERR_PARSE,
                                  "the path has a byte outside visible ASCII");
        if (c == '.' && i + 1 < len && path[i + 1] == '.')
            return gd_path_refuse(http_status, 400, GD_ERR_PARSE, "'..' is not accepted in paths");
        if (c == '/' && i + 1 < len && path[i + 1] == '/')
            return gd_path_refuse(http_status, 400, GD_ERR_PARSE, "'//' is not accepted in paths");
    }
    if (len > 1 && path[len - 1] == '/')
        return gd_path_refuse(http_status, 400, GD_ERR_PARSE,
                              "a trailing '/' is not accepted in paths");
    return GD_OK;
}

/* Splits "/a/b/c" (checked: no empty segments) into segments. Returns the
 * count, or GD_PATH_MAX_SEGMENTS + 1 when there are more than any route has. */
static size_t gd_path_split(const char *path, size_t len, gd_path_seg *segs) {
    size_t n = 0;
    size_t start = 1;
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        if (n == GD_PATH_MAX_SEGMENTS)
            return GD_PATH_MAX_SEGMENTS + 1;
        segs[n].text = path + start;
        segs[n].len = i - start;
        n++;
        start = i + 1;
    }
    return n;
}

static bool gd_slot_is(const char *name, size_t len, const char *slot) {
    return len == strlen(slot) && memcmp(name, slot, len) == 0;
}

/* Stores one number slot ("{run}", ...) of a matched route. */
static gd_status gd_path_slot(const char *name, size_t name_len, const gd_path_seg *seg,
                              gd_artifact_req *req, unsigned *http_status) {
    bool wide = gd_slot_is(name, name_len, "{run}") || gd_slot_is(name, name_len, "{round}");
    uint64_t v;
    if (!gd_path_number(seg, &v, wide ? UINT64_MAX : UINT32_MAX))
        return gd_path_refuse(http_status, 400, GD_ERR_PARSE,
                              wide ? "a run or round must be a decimal uint64 without leading zeros"
                                   : "a leaf or chunk must be a decimal uint32 without leading zeros");
    if (gd_slot_is(name, name_len, "{run}"))
        req->run = v;
    else if (gd_slot_is(name, name_len, "{round}"))
        req->round = v;
    else if (gd_slot_is(name, name_len, "{leaf}"))
        req->leaf = (uint32_t)v;
    else
        req->chunk = (uint32_t)v;
    return GD_OK;
}

/* True when the literal segments of route and the segment count agree. */
static bool gd_route_shape_matches(const gd_route *route, const gd_path_seg *segs, size_t n) {
    const char *p = route->pattern;
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (p[0] != '{' && (len != segs[i].len || memcmp(p, segs[i].text, len) != 0))
            return false;
        if (end == NULL)
            return i + 1 == n;
        p = end + 1;
    }
    return false;
}

static gd_status gd_route_fill(const gd_route *route, const gd_path_seg *segs, size_t n,
                               gd_artifact_req *req, unsigned *http_status) {
    const char *p = route->pattern;
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (p[0] == '{')
            GD_TRY(gd_path_slot(p, len, &segs[i], req, http_status));
        p = end ? end + 1 : p + len;
    }
    req->kind = route->kind;
    return GD_OK;
}

gd_status gd_http_path_parse(gd_artifact_req *out, const char *method, const char *url,
                             unsigned *http_status) {
    if (method == NULL || (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0))
        return gd_path_refuse(http_status, 405, GD_ERR_INVALID, "only GET and HEAD are served");
    if (url == NULL)
        return gd_path_refuse(http_status, 400, GD_ERR_PARSE, "no request target");
    size_t len = strnlen(url, GD_HTTP_PATH_MAX + 1);
    if (len > GD_HTTP_PATH_MAX)
        return gd_path_refuse(http_status, 414, GD_ERR_LIMIT, "the request target is too long");
    const char *query = memchr(url, '?', len);
    if (query != NULL) {
        if ((size_t)(query - url) != len - 1)
            return gd_path_refuse(http_status, 400, GD_ERR_PARSE, "no query is accepted");
        len--;
    }
    GD_TRY(gd_path_check_bytes(url, len, http_status));
    gd_path_seg segs[GD_PATH_MAX_SEGMENTS];
    size_t n = len > 1 ? gd_path_split(url, len, segs) : 0;
    if (len == 1) { /* "/" */
        *out = (gd_artifact_req){.kind = GD_REQ_PAGE};
        *http_status = 200;
        return GD_OK;
    }
    for (size_t r = 0; n <= GD_PATH_MAX_SEGMENTS && r < sizeof gd_routes / sizeof gd_routes[0];
         r++) {
        if (!gd_route_shape_matches(&gd_routes[r], segs, n))
            continue;
        gd_artifact_req req = {0};
        GD_TRY(gd_route_fill(&gd_routes[r], segs, n, &req, http_status));
        *out = req;
        *http_status = 200;
        return GD_OK;
    }
    return gd_path_refuse(http_status, 404, GD_ERR_NOT_FOUND, "no such path");
}

void gd_http_path_format(const gd_artifact_req *r, char *out, size_t cap) {
    const char *pre = "/v1/runs/";
    switch (r->kind) {
    case GD_REQ_STATUS:
        snprintf(out, cap, "/v1/status");
        return;
    case GD_REQ_METRICS:
        snprintf(out, cap, "/metrics");
        return;
    case GD_REQ_PAYLOAD:
        snprintf(out, cap, "%s%" PRIu64 "/rounds/%" PRIu64 "/payload", pre, r->run, r->round);
        return;
    case GD_REQ_PAYLOAD_CHUNK:
        snprintf(out, cap, "%s%" PRIu64 "/rounds/%" PRIu64 "/payload/chunks/%" PRIu32, pre, r->run,
                 r->round, r->chunk);
        return;
    case GD_REQ_PEER_PAYLOAD:
        snprintf(out, cap, "%s%" PRIu64 "/rounds/%" PRIu64 "/payloads/%" PRIu32, pre, r->run,
                 r->round, r->leaf);
        return;
    case GD_REQ_TRANSCRIPT:
        snprintf(out, cap, "%s%" PRIu64 "/rounds/%" PRIu64 "/transcript", pre, r->run, r->round);
        return;
    case GD_REQ_STATE:
        snprintf(out, cap, "%s%" PRIu64 "/rounds/%" PRIu64 "/states/%" PRIu32, pre, r->run,
                 r->round, r->leaf);
        return;
    case GD_REQ_STATE_CHUNK:
        snprintf(out, cap, "%s%" PRIu64 "/rounds/%" PRIu64 "/states/%" PRIu32 "/chunks/%" PRIu32,
                 pre, r->run, r->round, r->leaf, r->chunk);
        return;
    case GD_REQ_GLOBAL_CHUNK:
        snprintf(out, cap, "%s%" PRIu64 "/global/%" PRIu64 "/chunks/%" PRIu32, pre, r->run,
                 r->round, r->chunk);
        return;
    case GD_REQ_CHECKPOINT:
        snprintf(out, cap, "%s%" PRIu64 "/checkpoint.safetensors", pre, r->run);
        return;
    case GD_REQ_PAGE: break;
    }
    snprintf(out, cap, "/");
}
