/* The demo's readings of the chain and of the daemons (see demo_watch.h). */
#include "plugin/demo_watch.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/diloco_query.h"
#include "common/bytes.h"
#include "common/file.h"
#include "common/parse.h"

gd_status gd_demo_chain_read(gd_rpc *rpc, uint64_t run, gd_demo_chain *out) {
    memset(out, 0, sizeof *out);
    gd_node_status st;
    GD_TRY(gd_rpc_status(rpc, &st));
    out->height = st.latest_block_height;
    GD_TRY(gd_diloco_query_run(rpc, run, &out->run, NULL));
    if (out->run->current_round == NULL)
        return GD_OK;
    gd_status s =
        gd_diloco_query_round(rpc, run, out->run->current_round->index, &out->round, NULL);
    if (s != GD_OK)
        gd_demo_chain_free(out);
    return s;
}

void gd_demo_chain_free(gd_demo_chain *c) {
    if (c->run)
        protobuf_c_message_free_unpacked(&c->run->base, NULL);
    if (c->round)
        protobuf_c_message_free_unpacked(&c->round->base, NULL);
    c->run = NULL;
    c->round = NULL;
}

gd_status gd_demo_rewards_read(gd_rpc *rpc, uint64_t run, const char *address,
                               uint64_t last_epoch, gd_demo_rewards *out) {
    memset(out, 0, sizeof *out);
    Gonka__Diloco__V1__QueryRewardsResponse *r = NULL;
    GD_TRY(gd_diloco_query_rewards(rpc, address, &r, NULL));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < r->n_amounts; i++) {
        const Gonka__Diloco__V1__SettleAmount *a = r->amounts[i];
        uint64_t v = 0;
        if (a->run != run || a->epoch > last_epoch)
            continue;
        /* The decoder checked it is a canonical amount within 64 bits. */
        s = gd_parse_u64(a->amount, &v);
        out->settled = true;
        if (a->claimed)
            out->claimed += v;
        else
            out->unclaimed += v;
    }
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return s;
}

/* ---- HTTP ------------------------------------------------------------------------------------ */

/* A status is a few hundred bytes; a checkpoint of the demo's tiny model
 * well under a megabyte. */
#define GD_DEMO_STATUS_MAX (64u << 10)
#define GD_DEMO_CHECKPOINT_MAX (64u << 20)

struct gd_demo_http {
    CURL *curl;
};

typedef struct gd_demo_body {
    gd_buf buf;
    size_t max;
    bool too_large;
} gd_demo_body;

static size_t gd_demo_write(char *data, size_t size, size_t n, void *ctx) {
    gd_demo_body *b = ctx;
    size_t len = size * n;
    if (len > b->max - b->buf.len) {
        b->too_large = true;
        return 0;
    }
    return gd_buf_append(&b->buf, data, len) == GD_OK ? len : 0;
}

gd_status gd_demo_http_open(gd_demo_http **out) {
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    (*out)->curl = curl_easy_init();
    if ((*out)->curl == NULL) {
        free(*out);
        *out = NULL;
        return gd_fail(GD_ERR_NOMEM, "curl_easy_init failed");
    }
    return GD_OK;
}

void gd_demo_http_close(gd_demo_http *h) {
    if (h == NULL)
        return;
    curl_easy_cleanup(h->curl);
    free(h);
}

/* GET url into b (at most max bytes): 200, or an error naming the url. */
static gd_status gd_demo_get(gd_demo_http *h, const char *url, size_t max, long timeout_ms,
                             gd_demo_body *b) {
    memset(b, 0, sizeof *b);
    b->max = max;
    CURL *c = h->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gd_demo_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    gd_status s = GD_OK;
    if (b->too_large)
        s = gd_fail(GD_ERR_LIMIT, "%s: answer over %zu bytes", url, max);
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        s = gd_fail(GD_ERR_TIMEOUT, "%s: timed out", url);
    else if (rc != CURLE_OK)
        s = gd_fail(GD_ERR_NETWORK, "%s: %s", url, curl_easy_strerror(rc));
    else if (status == 404 || status == 425)
        s = gd_fail(GD_ERR_NOT_FOUND, "%s: HTTP %ld (not served yet)", url, status);
    else if (status != 200)
        s = gd_fail(GD_ERR_NETWORK, "%s: HTTP %ld", url, status);
    if (s != GD_OK)
        gd_buf_free(&b->buf);
    return s;
}

gd_status gd_demo_http_status(gd_demo_http *h, const char *base_url, json_t **out) {
    char url[600];
    snprintf(url, sizeof url, "%s/v1/status", base_url);
    gd_demo_body b;
    GD_TRY(gd_demo_get(h, url, GD_DEMO_STATUS_MAX, 3000, &b));
    json_error_t err;
    *out = json_loadb((const char *)b.buf.data, b.buf.len, 0, &err);
    gd_buf_free(&b.buf);
    if (*out == NULL || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return gd_fail(GD_ERR_PARSE, "%s: not a JSON object", url);
    }
    return GD_OK;
}

gd_status gd_demo_http_checkpoint(gd_demo_http *h, const char *base_url, uint64_t run,
                                  const char *path) {
    char url[600];
    snprintf(url, sizeof url, "%s/v1/runs/%llu/checkpoint.safetensors", base_url,
             (unsigned long long)run);
    gd_demo_body b;
    GD_TRY(gd_demo_get(h, url, GD_DEMO_CHECKPOINT_MAX, 30000, &b));
    gd_bytes_part part = {b.buf.data, b.buf.len};
    gd_status s = gd_file_write_atomic(path, &part, 1, 0600);
    gd_buf_free(&b.buf);
    return s;
}
