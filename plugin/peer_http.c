/* Fetching peers' artifacts over HTTP (plugin/peer_http.h). */
#include "plugin/peer_http.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf_spares.h"
#include "common/bytes.h"
#include "plugin/http_path.h"

#define GD_PEER_URL_MAX 512
#define GD_PEER_PROOF_HEX_MAX 16384

struct gd_peer_http {
    CURL *curl;
    gd_buf_spares spares; /* bodies given back, fetched into again */
};

typedef struct gd_peer_fetch {
    gd_artifact_answer *out;
    gd_buf_spares *spares;
    size_t max_len;
    bool too_large;
    bool bad_proof;
} gd_peer_fetch;

static size_t gd_peer_body(char *data, size_t size, size_t n, void *ctx) {
    gd_peer_fetch *f = ctx;
    size_t len = size * n;
    if (len > f->max_len - f->out->body.len) {
        f->too_large = true;
        return 0; /* aborts the transfer */
    }
    return gd_buf_append(&f->out->body, data, len) == GD_OK ? len : 0;
}

static size_t gd_peer_header(char *data, size_t size, size_t n, void *ctx) {
    gd_peer_fetch *f = ctx;
    size_t len = size * n;
    static const char name[] = "x-gd-proof:", clen[] = "content-length:";
    if (len > sizeof clen - 1 && strncasecmp(data, clen, sizeof clen - 1) == 0) {
        /* One allocation for the body when its size is declared and allowed,
         * or a buffer given back that holds it. */
        unsigned long long declared = strtoull(data + sizeof clen - 1, NULL, 10);
        if (declared <= f->max_len && f->out->body.len == 0) {
            if (f->out->body.cap == 0)
                f->out->body = gd_buf_spares_take(f->spares, (size_t)declared);
            if (gd_buf_reserve(&f->out->body, (size_t)declared) != GD_OK)
                return 0; /* out of memory: abort the transfer */
        }
        return len;
    }
    if (len < sizeof name - 1 || strncasecmp(data, name, sizeof name - 1) != 0)
        return len;
    const char *v = data + sizeof name - 1;
    size_t vlen = len - (sizeof name - 1);
    while (vlen && (*v == ' ' || *v == '\t'))
        v++, vlen--;
    while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;
    if (vlen > GD_PEER_PROOF_HEX_MAX || vlen % 2 != 0 ||
        gd_buf_reserve(&f->out->proof, vlen / 2) != GD_OK) {
        f->bad_proof = true;
        return len;
    }
    size_t got = 0;
    if (gd_hex_decode(f->out->proof.data, vlen / 2, &got, v, vlen) != GD_OK)
        f->bad_proof = true;
    else
        f->out->proof.len = got;
    return len;
}

gd_status gd_peer_http_open(gd_peer_http **out) {
    *out = NULL;
    gd_peer_http *p = calloc(1, sizeof *p);
    if (p == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    p->curl = curl_easy_init();
    if (p->curl == NULL) {
        free(p);
        return gd_fail(GD_ERR_NOMEM, "curl_easy_init failed");
    }
    *out = p;
    return GD_OK;
}

void gd_peer_http_close(gd_peer_http *p) {
    if (p == NULL)
        return;
    curl_easy_cleanup(p->curl);
    gd_buf_spares_free(&p->spares);
    free(p);
}

static gd_status gd_peer_url(char *out, size_t cap, const char *base, const gd_artifact_req *req) {
    size_t blen = strlen(base);
    if ((strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0) ||
        blen > GD_PEER_URL_MAX)
        return gd_fail(GD_ERR_INVALID, "artifact URL is not an http(s) URL of at most %d bytes",
                       GD_PEER_URL_MAX);
    for (size_t i = 0; i < blen; i++)
        if ((unsigned char)base[i] <= ' ' || (unsigned char)base[i] >= 0x7f || base[i] == '?' ||
            base[i] == '#')
            return gd_fail(GD_ERR_INVALID, "artifact URL has a byte it may not hold");
    while (blen && base[blen - 1] == '/')
        blen--;
    char path[GD_HTTP_PATH_MAX];
    gd_http_path_format(req, path, sizeof path);
    int n = snprintf(out, cap, "%.*s%s", (int)blen, base, path);
    return n > 0 && (size_t)n < cap ? GD_OK : gd_fail(GD_ERR_LIMIT, "artifact URL too long");
}

static gd_status gd_peer_fetch_http(void *ctx, const char *url, const gd_artifact_req *req,
                                    size_t max_len, gd_artifact_answer *out) {
    gd_peer_http *p = ctx;
    memset(out, 0, sizeof *out);
    char full[GD_PEER_URL_MAX + GD_HTTP_PATH_MAX + 1];
    GD_TRY(gd_peer_url(full, sizeof full, url, req));
    gd_peer_fetch f = {.out = out, .spares = &p->spares, .max_len = max_len};
    CURL *c = p->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, full);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    /* A peer that stalls below 16 KiB/s for 10 s is dropped; a large state
     * at a steady rate is not. */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 16384L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 10L);
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 1L << 20);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gd_peer_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, gd_peer_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &f);
    char range[48];
    if (req->first_bytes > 0) {
        snprintf(range, sizeof range, "0-%llu", (unsigned long long)req->first_bytes - 1);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    gd_status s = GD_OK;
    if (f.too_large)
        s = gd_fail(GD_ERR_LIMIT, "%s: answer over %zu bytes", url, max_len);
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        s = gd_fail(GD_ERR_TIMEOUT, "%s: timed out", url);
    else if (rc != CURLE_OK)
        s = gd_fail(GD_ERR_NETWORK, "%s: %s", url, curl_easy_strerror(rc));
    else if (status == 404 || status == 425)
        s = gd_fail(GD_ERR_NOT_FOUND, "%s: HTTP %ld (not served)", url, status);
    else if (status != 200 && !(status == 206 && req->first_bytes > 0))
        s = gd_fail(GD_ERR_NETWORK, "%s: HTTP %ld", url, status);
    else if (f.bad_proof)
        s = gd_fail(GD_ERR_PARSE, "%s: X-Gd-Proof is not hex of at most %d digits", url,
                    GD_PEER_PROOF_HEX_MAX);
    if (s != GD_OK)
        gd_artifact_answer_free(out);
    return s;
}

static void gd_peer_recycle_http(void *ctx, gd_buf *b) {
    gd_peer_http *p = ctx;
    gd_buf_spares_put(&p->spares, b);
}

static const gd_peer_port_iface gd_peer_http_iface = {gd_peer_fetch_http, gd_peer_recycle_http};

gd_peer_port gd_peer_http_port(gd_peer_http *p) { return (gd_peer_port){&gd_peer_http_iface, p}; }
