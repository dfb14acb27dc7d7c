/* CometBFT JSON-RPC transport over libcurl. One gd_rpc holds one curl easy
 * handle (and its connection cache): use one per thread. */
#include "chain/client/rpc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base64.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/secure.h"

struct gd_rpc {
    CURL *curl;
    struct curl_slist *headers;
    char *url;
    gd_rpc_options opt;
    int64_t next_id;
    gd_rpc_error last_error;
    /* the call in progress, for the wait notice */
    const char *call_method;
    int64_t call_start_ms;
    bool call_noticed;
};

static pthread_once_t gd_curl_once = PTHREAD_ONCE_INIT;
static CURLcode gd_curl_init_code;

static void gd_curl_global_init(void) { gd_curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT); }

void gd_rpc_options_default(gd_rpc_options *opt) {
    opt->timeout_ms = 10000;
    opt->connect_timeout_ms = 3000;
    opt->max_retries = 3;
    opt->retry_base_ms = 200;
    opt->retry_cap_ms = 5000;
    opt->max_response = GD_RPC_MAX_RESPONSE;
    opt->deadline_ms = 0;
    opt->notice_after_ms = 0;
    opt->on_wait = NULL;
    opt->on_wait_ctx = NULL;
    opt->cancel = NULL;
}

void gd_rpc_set_cancel(gd_rpc *rpc, const volatile int *cancel) { rpc->opt.cancel = cancel; }

static bool gd_rpc_cancelled(const gd_rpc *rpc) {
    return rpc->opt.cancel != NULL && *rpc->opt.cancel != 0;
}

gd_status gd_rpc_open(gd_rpc **out, const char *url, const gd_rpc_options *opt) {
    pthread_once(&gd_curl_once, gd_curl_global_init);
    if (gd_curl_init_code != CURLE_OK)
        return gd_fail(GD_ERR_NETWORK, "libcurl initialisation failed");
    const char *rest = NULL;
    const char *scheme = "http://";
    if (strncmp(url, "tcp://", 6) == 0) {
        rest = url + 6; /* Cosmos config files say tcp:// for the RPC listener */
    } else if (strncmp(url, "http://", 7) == 0) {
        rest = url + 7;
    } else if (strncmp(url, "https://", 8) == 0) {
        rest = url + 8;
        scheme = "https://";
    } else {
        return gd_fail(GD_ERR_INVALID, "node URL '%.100s' must start with http://, https:// or "
                                       "tcp://", url);
    }
    if (rest[0] == '\0' || rest[0] == '/')
        return gd_fail(GD_ERR_INVALID, "node URL '%.100s' has no host", url);
    gd_rpc *rpc = calloc(1, sizeof *rpc);
    if (rpc == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    size_t len = strlen(scheme) + strlen(rest) + 1;
    rpc->url = malloc(len);
    rpc->curl = curl_easy_init();
    rpc->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (rpc->url == NULL || rpc->curl == NULL || rpc->headers == NULL) {
        gd_rpc_close(rpc);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    snprintf(rpc->url, len, "%s%s", scheme, rest);
    if (opt)
        rpc->opt = *opt;
    else
        gd_rpc_options_default(&rpc->opt);
    rpc->next_id = 1;
    *out = rpc;
    return GD_OK;
}

void gd_rpc_close(gd_rpc *rpc) {
    if (rpc == NULL)
        return;
    if (rpc->curl)
        curl_easy_cleanup(rpc->curl);
    curl_slist_free_all(rpc->headers);
    free(rpc->url);
    free(rpc);
}

const gd_rpc_error *gd_rpc_last_error(const gd_rpc *rpc) { return &rpc->last_error; }

typedef struct gd_http_body {
    gd_buf buf;
    size_t limit;
    int too_large;
} gd_http_body;

static size_t gd_rpc_write(char *data, size_t size, size_t nmemb, void *user) {
    gd_http_body *body = user;
    size_t n = size * nmemb;
    if (body->buf.len + n > body->limit) {
        body->too_large = 1;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    if (gd_buf_append(&body->buf, data, n) != GD_OK)
        return 0;
    return n;
}

/* libcurl calls this about once a second while a transfer waits: the
 * place to tell the caller, once, that the answer is slow in coming, and
 * to abort the transfer once a stop is asked for. */
static int gd_rpc_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                           curl_off_t ulnow) {
    gd_rpc *rpc = user;
    long waited = (long)(gd_clock_ms() - rpc->call_start_ms);
    if (!rpc->call_noticed && rpc->opt.on_wait && waited >= rpc->opt.notice_after_ms) {
        rpc->call_noticed = true;
        rpc->opt.on_wait(rpc->opt.on_wait_ctx, rpc->url, rpc->call_method, waited,
                         rpc->opt.deadline_ms);
    }
    return gd_rpc_cancelled(rpc) ? 1 : 0;
}

/* One HTTP exchange of at most timeout_ms. Sets *retryable for failures
 * worth another try. */
static gd_status gd_rpc_post(gd_rpc *rpc, const char *request, long timeout_ms,
                             gd_http_body *body, long *http_code, int *retryable) {
    CURL *c = rpc->curl;
    *retryable = 0;
    body->buf.len = 0;
    body->too_large = 0;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, rpc->url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(request));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, rpc->headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gd_rpc_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, rpc->opt.connect_timeout_ms < timeout_ms
                                                       ? rpc->opt.connect_timeout_ms
                                                       : timeout_ms);
    if (rpc->opt.on_wait || rpc->opt.cancel) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, gd_rpc_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, rpc);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(c);
    *http_code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, http_code);
    switch (rc) {
    case CURLE_OK:
        return GD_OK;
    case CURLE_WRITE_ERROR:
        if (body->too_large)
            return gd_fail(GD_ERR_LIMIT, "node answer from %s exceeds %zu bytes", rpc->url,
                           body->limit);
        return gd_fail(GD_ERR_NOMEM, "out of memory reading the node answer");
    case CURLE_OPERATION_TIMEDOUT:
        *retryable = 1;
        return gd_fail(GD_ERR_TIMEOUT, "no answer from %s within %ld ms", rpc->url,
                       timeout_ms);
    case CURLE_COULDNT_CONNECT:
        *retryable = 1;
        return gd_fail(GD_ERR_NETWORK, "cannot connect to %s (is the node running and is --node "
                                       "right?)", rpc->url);
    case CURLE_COULDNT_RESOLVE_HOST:
        *retryable = 1;
        return gd_fail(GD_ERR_NETWORK, "cannot resolve the host of %s", rpc->url);
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        *retryable = 1;
        return gd_fail(GD_ERR_NETWORK, "connection to %s failed: %s", rpc->url,
                       curl_easy_strerror(rc));
    case CURLE_ABORTED_BY_CALLBACK:
        return gd_fail(GD_ERR_CANCELLED, "request to %s stopped", rpc->url);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return gd_fail(GD_ERR_INVALID, "node URL %s is not usable: %s", rpc->url,
                       curl_easy_strerror(rc));
    default:
        return gd_fail(GD_ERR_NETWORK, "request to %s failed: %s", rpc->url,
                       curl_easy_strerror(rc));
    }
}

/* Full-jitter exponential backoff: uniform in [0, min(cap, base * 2^attempt)],
 * and never past left_ms; cut short by a stop. */
static void gd_rpc_backoff(const gd_rpc *rpc, int attempt, long left_ms) {
    const gd_rpc_options *opt = &rpc->opt;
    long ceiling = opt->retry_base_ms;
    for (int i = 0; i < attempt && ceiling < opt->retry_cap_ms; i++)
        ceiling *= 2;
    if (ceiling > opt->retry_cap_ms)
        ceiling = opt->retry_cap_ms;
    uint32_t r = 0;
    if (gd_random_bytes(&r, sizeof r) != GD_OK)
        r = (uint32_t)attempt * 2654435761u;
    long ms = ceiling > 0 ? (long)(r % (uint32_t)(ceiling + 1)) : 0;
    if (ms > left_ms)
        ms = left_ms > 0 ? left_ms : 0;
    for (; ms > 0 && !gd_rpc_cancelled(rpc); ms -= 100) {
        long slice = ms < 100 ? ms : 100;
        struct timespec ts = {0, slice * 1000000L};
        nanosleep(&ts, NULL);
    }
}

gd_status gd_rpc_call(gd_rpc *rpc, const char *method, json_t *params, json_t **result) {
    memset(&rpc->last_error, 0, sizeof rpc->last_error);
    int64_t id = rpc->next_id++;
    json_t *p = params ? json_incref(params) : json_object();
    json_t *req = json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", (json_int_t)id,
                            "method", method, "params", p);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (text == NULL)
        return gd_fail(GD_ERR_NOMEM, "cannot encode the JSON-RPC request");
    gd_http_body body = {.limit = rpc->opt.max_response ? rpc->opt.max_response
                                                       : GD_RPC_MAX_RESPONSE};
    gd_status s = GD_OK;
    rpc->call_method = method;
    rpc->call_start_ms = gd_clock_ms();
    rpc->call_noticed = false;
    /* With a deadline, each try gets what is left of it, so a node that
     * accepts and never answers costs the deadline, not every try's timeout. */
    long deadline = rpc->opt.deadline_ms;
    for (int attempt = 0;; attempt++) {
        if (gd_rpc_cancelled(rpc)) {
            s = gd_fail(GD_ERR_CANCELLED, "%s to %s stopped", method, rpc->url);
            break;
        }
        long http = 0;
        int retryable = 0;
        long timeout = rpc->opt.timeout_ms;
        if (deadline > 0) {
            long left = deadline - (long)(gd_clock_ms() - rpc->call_start_ms);
            if (attempt > 0 && left <= 0)
                break; /* s still holds the last try's failure */
            if (left < timeout)
                timeout = left > 0 ? left : 1;
        }
        s = gd_rpc_post(rpc, text, timeout, &body, &http, &retryable);
        if (s == GD_OK) {
            json_t *res = NULL;
            s = gd_rpc_parse_envelope((const char *)body.buf.data, body.buf.len, &res,
                                      &rpc->last_error);
            if (s == GD_OK || s == GD_ERR_RPC) {
                if (s == GD_OK)
                    *result = res;
                break;
            }
            /* Not JSON-RPC at all: proxies answer 429/5xx with HTML; retry those. */
            if (http == 429 || http >= 500) {
                retryable = 1;
                s = gd_fail(GD_ERR_NETWORK, "node at %s answered HTTP %ld", rpc->url, http);
            } else if (http != 200) {
                s = gd_fail(GD_ERR_RPC, "node at %s answered HTTP %ld without a JSON-RPC body "
                                        "(is --node a CometBFT RPC address?)", rpc->url, http);
            }
        }
        if (!retryable || attempt >= rpc->opt.max_retries ||
            (deadline > 0 && gd_clock_ms() - rpc->call_start_ms >= deadline))
            break;
        GD_LOG_INFO("rpc", "%s: %s; retry %d of %d", method, gd_error_detail(), attempt + 1,
                    rpc->opt.max_retries);
        gd_rpc_backoff(rpc, attempt,
                       deadline > 0 ? deadline - (long)(gd_clock_ms() - rpc->call_start_ms)
                                    : rpc->opt.retry_cap_ms);
    }
    if (s == GD_ERR_TIMEOUT && deadline > 0)
        s = gd_fail(GD_ERR_TIMEOUT, "no answer from %s to %s within %ld ms", rpc->url, method,
                    deadline);
    free(text);
    gd_buf_free(&body.buf);
    return s;
}

gd_status gd_rpc_status(gd_rpc *rpc, gd_node_status *out) {
    json_t *res = NULL;
    GD_TRY(gd_rpc_call(rpc, "status", NULL, &res));
    gd_status s = gd_rpc_parse_status(out, res);
    json_decref(res);
    return s;
}

gd_status gd_rpc_abci_query(gd_rpc *rpc, gd_abci_query_result *out, const char *path,
                            const uint8_t *data, size_t len, int64_t height) {
    /* abci_query's data parameter is HexBytes: plain hex, no 0x. */
    char *hex = malloc(2 * len + 1);
    if (hex == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_hex_encode(hex, data, len, false);
    char height_text[24];
    snprintf(height_text, sizeof height_text, "%lld", (long long)height);
    json_t *params = json_pack("{s:s,s:s,s:s,s:b}", "path", path, "data", hex, "height",
                               height_text, "prove", 0);
    free(hex);
    if (params == NULL)
        return gd_fail(GD_ERR_NOMEM, "cannot encode abci_query parameters");
    json_t *res = NULL;
    gd_status s = gd_rpc_call(rpc, "abci_query", params, &res);
    json_decref(params);
    if (s == GD_OK)
        s = gd_rpc_parse_abci_query(out, res);
    json_decref(res);
    return s;
}

void gd_abci_query_result_free(gd_abci_query_result *r) { gd_buf_free(&r->value); }

gd_status gd_rpc_broadcast_tx_sync(gd_rpc *rpc, gd_broadcast_result *out, const uint8_t *tx,
                                   size_t len) {
    char *b64 = malloc(gd_base64_encoded_len(len) + 1);
    if (b64 == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_base64_encode(b64, tx, len);
    json_t *params = json_pack("{s:s}", "tx", b64);
    free(b64);
    if (params == NULL)
        return gd_fail(GD_ERR_NOMEM, "cannot encode broadcast parameters");
    json_t *res = NULL;
    gd_status s = gd_rpc_call(rpc, "broadcast_tx_sync", params, &res);
    json_decref(params);
    if (s == GD_OK) {
        s = gd_rpc_parse_broadcast(out, res);
    } else if (s == GD_ERR_RPC && strstr(rpc->last_error.data, "tx already exists in cache")) {
        /* A retried broadcast whose first try reached the mempool. */
        memset(out, 0, sizeof *out);
        out->result.code = 19;
        snprintf(out->result.codespace, sizeof out->result.codespace, "sdk");
        snprintf(out->result.log, sizeof out->result.log, "tx already exists in cache");
        s = GD_OK;
    }
    json_decref(res);
    return s;
}

gd_status gd_rpc_tx(gd_rpc *rpc, gd_tx_result *out, const uint8_t hash[32]) {
    /* /tx's hash parameter is []byte: base64 in JSON-RPC params. */
    char b64[45];
    gd_base64_encode(b64, hash, 32);
    json_t *params = json_pack("{s:s,s:b}", "hash", b64, "prove", 0);
    if (params == NULL)
        return gd_fail(GD_ERR_NOMEM, "cannot encode tx parameters");
    json_t *res = NULL;
    gd_status s = gd_rpc_call(rpc, "tx", params, &res);
    json_decref(params);
    if (s == GD_OK)
        s = gd_rpc_parse_tx(out, res);
    else if (s == GD_ERR_RPC && strstr(rpc->last_error.data, "not found"))
        s = gd_fail(GD_ERR_NOT_FOUND, "transaction not found (not yet in a block, or the node "
                                      "does not index transactions)");
    json_decref(res);
    return s;
}

gd_status gd_rpc_block(gd_rpc *rpc, gd_block_info *out, int64_t height) {
    json_t *params = json_object();
    if (params == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    if (height > 0) {
        char text[24];
        snprintf(text, sizeof text, "%lld", (long long)height);
        json_object_set_new(params, "height", json_string(text));
    }
    json_t *res = NULL;
    gd_status s = gd_rpc_call(rpc, "block", params, &res);
    json_decref(params);
    if (s == GD_OK)
        s = gd_rpc_parse_block(out, res);
    json_decref(res);
    return s;
}
