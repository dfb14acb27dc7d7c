/* Fetching peers' artifacts over HTTP (plugin/ports/peer_http.h). */
#include "plugin/ports/peer_http.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf_spares.h"
#include "common/bytes.h"
#include "common/clock.h"
#include "common/file.h"
#include "plugin/http/http_path.h"

#define GD_PEER_URL_MAX 512
#define GD_PEER_PROOF_HEX_MAX 16384

/* Every transfer ends by its deadline (the request's, from its window) or
 * within this cap, and keeps an average rate above the floor over the
 * whole transfer once the grace has passed: a peer that drips a burst now
 * and then, to stay above a per-interval stall limit, cannot hold a member
 * for longer than the grace. */
#define GD_PEER_MAX_TRANSFER_MS (60LL * 60 * 1000)
#define GD_PEER_RATE_FLOOR 16384 /* bytes per second, on average */
#define GD_PEER_RATE_GRACE_MS 10000

/* Transfers of one batch at once, and to one peer. */
#define GD_PEER_PARALLEL 16
#define GD_PEER_PARALLEL_PER_HOST 4

struct gd_peer_http {
    CURL *curl;
    CURLM *multi;         /* batches (fetch_all); keeps its connections between them */
    gd_buf_spares spares; /* bodies given back, fetched into again */
};

typedef struct gd_peer_fetch {
    gd_artifact_answer *out;
    gd_buf_spares *spares;
    size_t max_len;
    bool too_large;
    bool bad_proof;
    int64_t started_ms;
    bool too_slow; /* below the average rate floor */
    const atomic_int *cancel;
    bool cancelled;
    /* A body fetched into a file (req->into): its temporary file. */
    bool to_file;
    gd_file_atomic file;
    bool write_failed;
} gd_peer_fetch;

/* libcurl's progress callback: non-zero aborts the transfer. */
static int gd_peer_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                            curl_off_t ulnow) {
    (void)dltotal;
    (void)ultotal;
    (void)ulnow;
    gd_peer_fetch *f = ctx;
    if (f->cancel != NULL && atomic_load(f->cancel)) {
        f->cancelled = true;
        return 1;
    }
    int64_t elapsed = gd_clock_ms() - f->started_ms;
    if (elapsed > GD_PEER_RATE_GRACE_MS &&
        (double)dlnow < (double)GD_PEER_RATE_FLOOR * (double)elapsed / 1000.0) {
        f->too_slow = true;
        return 1;
    }
    return 0;
}

static size_t gd_peer_body(char *data, size_t size, size_t n, void *ctx) {
    gd_peer_fetch *f = ctx;
    size_t len = size * n;
    if (f->to_file) {
        if (len > f->max_len - f->file.size) {
            f->too_large = true;
            return 0;
        }
        if (gd_file_atomic_append(&f->file, data, len) != GD_OK) {
            f->write_failed = true;
            return 0;
        }
        return len;
    }
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
        if (declared <= f->max_len && f->out->body.len == 0 && !f->to_file) {
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
    p->multi = curl_multi_init();
    if (p->curl == NULL || p->multi == NULL) {
        gd_peer_http_close(p);
        return gd_fail(GD_ERR_NOMEM, "curl_easy_init failed");
    }
    curl_multi_setopt(p->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)GD_PEER_PARALLEL);
    curl_multi_setopt(p->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)GD_PEER_PARALLEL_PER_HOST);
    *out = p;
    return GD_OK;
}

void gd_peer_http_close(gd_peer_http *p) {
    if (p == NULL)
        return;
    if (p->multi != NULL)
        curl_multi_cleanup(p->multi);
    if (p->curl != NULL)
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

/* Sets up c to fetch req from the member at url into f (its answer and
 * the buffers to fetch into); range holds the Range header's text. */
static gd_status gd_peer_setup(CURL *c, const char *url, const gd_artifact_req *req,
                               gd_peer_fetch *f, char *full, size_t full_cap, char range[48]) {
    GD_TRY(gd_peer_url(full, full_cap, url, req));
    f->started_ms = gd_clock_ms();
    f->cancel = req->cancel;
    int64_t budget = GD_PEER_MAX_TRANSFER_MS;
    if (req->deadline_ms > 0 && req->deadline_ms - f->started_ms < budget)
        budget = req->deadline_ms - f->started_ms;
    if (budget <= 0)
        return gd_fail(GD_ERR_TIMEOUT, "%s: its window's deadline has passed", url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)budget);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, gd_peer_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, f);
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
    curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, gd_peer_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, f);
    if (req->first_bytes > 0) {
        snprintf(range, 48, "0-%llu", (unsigned long long)req->first_bytes - 1);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
    }
    if (req->into != NULL) {
        /* Whatever keeps the file from being made is this node's failure,
         * never the peer's (a missing directory is not a 404). */
        if (gd_file_atomic_begin(&f->file, req->into, 0600) != GD_OK)
            return gd_fail_context(GD_ERR_IO, "cannot fetch into %s", req->into);
        f->to_file = true;
    }
    return GD_OK;
}

/* A transfer's end for a body fetched into a file: put in place when the
 * answer is good (a crash may lose it: it is fetched again), removed
 * otherwise. Returns the answer's status. */
static gd_status gd_peer_sink_end(gd_peer_fetch *f, gd_status s, const gd_artifact_req *req) {
    if (!f->to_file)
        return s;
    f->to_file = false;
    if (s == GD_OK)
        s = gd_file_atomic_commit_unsynced(&f->file);
    gd_file_atomic_abort(&f->file); /* harmless after a good commit */
    if (s == GD_OK)
        snprintf(f->out->path, sizeof f->out->path, "%s", req->into);
    return s;
}

/* What a finished transfer means: the one reading of an answer's status. */
static gd_status gd_peer_outcome(CURL *c, CURLcode rc, const gd_peer_fetch *f, const char *url,
                                 const gd_artifact_req *req) {
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (f->write_failed)
        return gd_fail(GD_ERR_IO, "%s: cannot write the answer into %s", url, req->into);
    if (f->too_large)
        return gd_fail(GD_ERR_LIMIT, "%s: answer over %zu bytes", url, f->max_len);
    if (f->cancelled)
        return gd_fail(GD_ERR_CANCELLED, "%s: cancelled", url);
    if (f->too_slow)
        return gd_fail(GD_ERR_TIMEOUT, "%s: below %d bytes/s on average after %d s", url,
                       GD_PEER_RATE_FLOOR, GD_PEER_RATE_GRACE_MS / 1000);
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return gd_fail(GD_ERR_TIMEOUT, "%s: timed out", url);
    if (rc != CURLE_OK)
        return gd_fail(GD_ERR_NETWORK, "%s: %s", url, curl_easy_strerror(rc));
    if (status == 404 || status == 425)
        return gd_fail(GD_ERR_NOT_FOUND, "%s: HTTP %ld (not served)", url, status);
    if (status != 200 && !(status == 206 && req->first_bytes > 0))
        return gd_fail(GD_ERR_NETWORK, "%s: HTTP %ld", url, status);
    if (f->bad_proof)
        return gd_fail(GD_ERR_PARSE, "%s: X-Gd-Proof is not hex of at most %d digits", url,
                       GD_PEER_PROOF_HEX_MAX);
    return GD_OK;
}

static gd_status gd_peer_fetch_http(void *ctx, gd_artifact_answer *out, const char *url,
                                    const gd_artifact_req *req, size_t max_len) {
    gd_peer_http *p = ctx;
    memset(out, 0, sizeof *out);
    char full[GD_PEER_URL_MAX + GD_HTTP_PATH_MAX + 1], range[48];
    gd_peer_fetch f = {.out = out, .spares = &p->spares, .max_len = max_len};
    curl_easy_reset(p->curl);
    gd_status s = gd_peer_setup(p->curl, url, req, &f, full, sizeof full, range);
    if (s != GD_OK)
        return gd_peer_sink_end(&f, s, req);
    CURLcode rc = curl_easy_perform(p->curl);
    s = gd_peer_sink_end(&f, gd_peer_outcome(p->curl, rc, &f, url, req), req);
    if (s != GD_OK)
        gd_artifact_answer_free(out);
    return s;
}

/* One transfer of a batch. */
typedef struct gd_peer_transfer {
    CURL *curl;
    gd_peer_fetch f;
    char full[GD_PEER_URL_MAX + GD_HTTP_PATH_MAX + 1];
    char range[48];
    bool added;
} gd_peer_transfer;

static void gd_peer_item_fail(gd_peer_fetch_item *it, gd_status s) {
    it->status = s;
    snprintf(it->why, sizeof it->why, "%s", gd_error_detail());
    gd_artifact_answer_free(&it->answer);
}

/* Runs the added transfers to their ends and reads each one's outcome. */
static void gd_peer_run_multi(CURLM *m, gd_peer_fetch_item *items, gd_peer_transfer *t) {
    int running = 1;
    while (running > 0) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        if (running > 0 && curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
            break;
    }
    CURLMsg *msg;
    int left = 0;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        size_t i = (size_t)((gd_peer_transfer *)(void *)priv - t);
        gd_status s = gd_peer_outcome(t[i].curl, msg->data.result, &t[i].f, items[i].url,
                                      &items[i].req);
        s = gd_peer_sink_end(&t[i].f, s, &items[i].req);
        if (s != GD_OK)
            gd_peer_item_fail(&items[i], s);
        else
            items[i].status = GD_OK;
        t[i].added = false;
        curl_multi_remove_handle(m, t[i].curl);
    }
}

static gd_status gd_peer_fetch_all_http(void *ctx, gd_peer_fetch_item *items, size_t n) {
    gd_peer_http *p = ctx;
    gd_peer_transfer *t = calloc(n ? n : 1, sizeof *t);
    if (t == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu transfers", n);
    for (size_t i = 0; i < n; i++) {
        gd_peer_fetch_item *it = &items[i];
        memset(&it->answer, 0, sizeof it->answer);
        /* Whatever ends a transfer other than its answer says why. */
        it->status = GD_ERR_NETWORK;
        snprintf(it->why, sizeof it->why, "%s: the transfer did not finish", it->url);
        t[i].f = (gd_peer_fetch){.out = &it->answer, .spares = &p->spares,
                                 .max_len = it->max_len};
        t[i].curl = curl_easy_init();
        if (t[i].curl == NULL) {
            gd_peer_item_fail(it, gd_fail(GD_ERR_NOMEM, "curl_easy_init failed"));
            continue;
        }
        gd_status s = gd_peer_setup(t[i].curl, it->url, &it->req, &t[i].f, t[i].full,
                                    sizeof t[i].full, t[i].range);
        if (s != GD_OK) {
            (void)gd_peer_sink_end(&t[i].f, s, &it->req);
            gd_peer_item_fail(it, s);
            continue;
        }
        curl_easy_setopt(t[i].curl, CURLOPT_PRIVATE, (void *)&t[i]);
        t[i].added = curl_multi_add_handle(p->multi, t[i].curl) == CURLM_OK;
        if (!t[i].added)
            gd_peer_item_fail(it, gd_peer_sink_end(&t[i].f, gd_fail(GD_ERR_NOMEM, "cannot start "
                                                                               "a transfer"),
                                                   &it->req));
    }
    gd_peer_run_multi(p->multi, items, t);
    for (size_t i = 0; i < n; i++) {
        if (t[i].added) { /* never finished: its status says so */
            curl_multi_remove_handle(p->multi, t[i].curl);
            (void)gd_peer_sink_end(&t[i].f, GD_ERR_NETWORK, &items[i].req);
            gd_artifact_answer_free(&items[i].answer);
        }
        if (t[i].curl != NULL)
            curl_easy_cleanup(t[i].curl);
    }
    free(t);
    return GD_OK;
}

static void gd_peer_recycle_http(void *ctx, gd_buf *b) {
    gd_peer_http *p = ctx;
    gd_buf_spares_put(&p->spares, b);
}

static gd_status gd_peer_open_another_http(void *ctx, gd_peer_port *out) {
    (void)ctx;
    gd_peer_http *p = NULL;
    GD_TRY(gd_peer_http_open(&p));
    *out = gd_peer_http_port(p);
    return GD_OK;
}

static void gd_peer_close_http(void *ctx) { gd_peer_http_close(ctx); }

static const gd_peer_port_iface gd_peer_http_iface = {
    gd_peer_fetch_http,        gd_peer_recycle_http, gd_peer_fetch_all_http,
    gd_peer_open_another_http, gd_peer_close_http};

gd_peer_port gd_peer_http_port(gd_peer_http *p) { return (gd_peer_port){&gd_peer_http_iface, p}; }
