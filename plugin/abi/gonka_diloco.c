/* libgonka_diloco (plugin/include/gonka_diloco.h): a member configured by a
 * node.yaml, wired to the chain over RPC, to peers and its own server over
 * HTTP. */
#include "plugin/include/gonka_diloco.h"
#include "plugin/abi/gonka_diloco_host.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chain/keys/keyfile.h"
#include "common/log.h"
#include "common/secure.h"
#include "plugin/http/http_server.h"
#include "plugin/http/status_page.h"
#include "plugin/member/hardware_class.h"
#include "plugin/member/member.h"
#include "plugin/member/member_settings.h"
#include "plugin/ports/chain_port_rpc.h"
#include "plugin/ports/peer_http.h"

#define GD_ABI __attribute__((visibility("default")))

struct gonka_diloco {
    gd_member_settings s;
    const char *data_paths[GD_SETTINGS_DATA_MAX]; /* into s.data, for the member */
    gonka_diloco_seams seams;                 /* none but for the test-only adversaries */
    gd_key key;
    gd_chain_rpc chain;
    gd_peer_http *peers;
    gd_member *member;
    gd_http_server *http;
    char listen[300];
};

/* what: the part that failed, or NULL when the detail names it already. */
static int gd_abi_fail(int code, gd_status s, char *err, size_t cap, const char *what) {
    const char *detail = s == GD_OK ? "failed" : gd_error_detail();
    if (err && cap)
        snprintf(err, cap, "%s%s%s", what ? what : "", what ? ": " : "", detail);
    return code;
}

static int gd_abi_code(gd_status s) {
    switch (s) {
    case GD_OK: return GONKA_DILOCO_OK;
    case GD_ERR_NOMEM: return GONKA_DILOCO_ERR_NOMEM;
    case GD_ERR_NETWORK:
    case GD_ERR_TIMEOUT:
    case GD_ERR_RPC:
    case GD_ERR_CHAIN:
    case GD_ERR_NOT_FOUND:
    case GD_ERR_PARSE: return GONKA_DILOCO_ERR_CHAIN;
    case GD_ERR_IO:
    case GD_ERR_PERMISSION: return GONKA_DILOCO_ERR_STATE;
    default: return GONKA_DILOCO_ERR_INVALID;
    }
}

GD_ABI unsigned gonka_diloco_abi_version(void) { return GONKA_DILOCO_ABI_VERSION; }
GD_ABI const char *gonka_diloco_version(void) {
#ifdef GD_VERSION
    return GD_VERSION;
#else
    return "0";
#endif
}
GD_ABI void gonka_diloco_free(void *p) { free(p); }

/* The HTTP server's answers: status and metrics, else the member's. */
static gd_status gd_abi_answer(void *ctx, const gd_artifact_req *req, gd_artifact_answer *out,
                               unsigned *http_status) {
    gd_member *m = ctx;
    memset(out, 0, sizeof *out);
    if (req->kind == GD_REQ_PAGE) {
        size_t len = 0;
        const char *page = gd_status_page(&len);
        out->content_type = GD_STATUS_PAGE_TYPE;
        *http_status = 500;
        GD_TRY(gd_buf_append(&out->body, page, len));
        *http_status = 200;
        return GD_OK;
    }
    if (req->kind == GD_REQ_STATUS || req->kind == GD_REQ_METRICS) {
        char *text = NULL;
        if (req->kind == GD_REQ_STATUS) {
            json_t *o = gd_member_status_json(m);
            text = o ? json_dumps(o, JSON_COMPACT) : NULL;
            json_decref(o);
            out->content_type = "application/json";
        } else {
            text = gd_member_metrics_text(m);
            out->content_type = "text/plain; version=0.0.4";
        }
        *http_status = 500;
        if (text == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory");
        gd_status s = gd_buf_append(&out->body, text, strlen(text));
        free(text);
        if (s == GD_OK)
            *http_status = 200;
        return s;
    }
    return gd_member_serve(m, req, out, http_status);
}

static void gd_abi_count(void *ctx, uint64_t bytes_out) { gd_member_count_out(ctx, bytes_out); }
static void gd_abi_refused(void *ctx, const char *reason) { gd_member_count_refused(ctx, reason); }

static int gd_abi_open_member(gonka_diloco *h, char *err, size_t cap) {
    const gd_member_settings *s = &h->s;
    char cls[GD_HARDWARE_CLASS_MAX + 1];
    gd_status st = GD_OK;
    if (strcmp(s->hardware_class, "auto") == 0)
        st = gd_hardware_class_auto(cls, s->backend, NULL, 0);
    else
        snprintf(cls, sizeof cls, "%s", s->hardware_class);
    if (st != GD_OK)
        return gd_abi_fail(GONKA_DILOCO_ERR_INVALID, st, err, cap, "hardware_class");
    gd_member_options o = {.run = s->run, .roles = s->roles, .join = true,
                           .artifact_url = s->public_url, .hw_class = cls,
                           .state_dir = s->state_dir, .backend = s->backend, .gpus = s->gpus,
                           .memory = s->memory, .memory_budget = s->memory_budget,
                           .retention = {.hot_rounds = s->hot_rounds,
                                         .archive_every = s->archive_every,
                                         .archive_dir = s->archive_dir[0] ? s->archive_dir
                                                                          : NULL},
                           .threads = s->threads ? (int)s->threads
                                                 : (int)sysconf(_SC_NPROCESSORS_ONLN),
                           .data_paths = h->data_paths, .n_data_paths = s->n_data,
                           .train = h->seams.train, .check = h->seams.check,
                           .withhold = h->seams.withhold, .drip = h->seams.drip,
                           .duty = h->seams.duty};
    for (unsigned i = 0; i < s->n_data; i++)
        h->data_paths[i] = s->data[i];
    if ((st = gd_coin_parse(&o.collateral, s->collateral)) != GD_OK)
        return gd_abi_fail(GONKA_DILOCO_ERR_CONFIG, st, err, cap, "collateral");
    if ((st = gd_chain_rpc_open(&h->chain, s->rpc, s->chain_id, s->gas_price)) != GD_OK)
        return gd_abi_fail(GONKA_DILOCO_ERR_CONFIG, st, err, cap, "chain.rpc");
    if ((st = gd_peer_http_open(&h->peers)) != GD_OK)
        return gd_abi_fail(GONKA_DILOCO_ERR_NOMEM, st, err, cap, "peers");
    st = gd_member_open(&h->member, &o, &h->key, gd_chain_rpc_port(&h->chain),
                        gd_peer_http_port(h->peers));
    gd_key_wipe(&h->key); /* the member holds its own copy */
    if (st != GD_OK)
        return gd_abi_fail(gd_abi_code(st) == GONKA_DILOCO_ERR_NOMEM ? GONKA_DILOCO_ERR_NOMEM
                                                                    : GONKA_DILOCO_ERR_STATE,
                           st, err, cap, "state_dir");
    char listen[300];
    snprintf(listen, sizeof listen, "%s:%u", s->listen_host, (unsigned)s->listen_port);
    gd_http_limits limits = gd_http_limits_default();
    gd_http_handler handler = {.answer = gd_abi_answer, .count = gd_abi_count,
                               .refused = gd_abi_refused, .ctx = h->member};
    st = gd_http_server_start(&h->http, listen, &limits, &handler, h->listen, sizeof h->listen);
    if (st != GD_OK)
        return gd_abi_fail(GONKA_DILOCO_ERR_LISTEN, st, err, cap, "listen");
    GD_LOG_INFO("node", "%s: run %" PRIu64 ", class %s, serving on %s as %s",
                gd_member_address(h->member), s->run, cls, h->listen, s->public_url);
    return GONKA_DILOCO_OK;
}

GD_ABI int gonka_diloco_open(const char *config_path, gonka_diloco **out, char *err,
                             size_t err_cap) {
    return gonka_diloco_open_with(config_path, NULL, out, err, err_cap);
}

int gonka_diloco_open_with(const char *config_path, const gonka_diloco_seams *seams,
                           gonka_diloco **out, char *err, size_t err_cap) {
    if (out == NULL || config_path == NULL)
        return gd_abi_fail(GONKA_DILOCO_ERR_INVALID, GD_OK, err, err_cap, "arguments");
    *out = NULL;
    gonka_diloco *h = calloc(1, sizeof *h);
    if (h == NULL)
        return gd_abi_fail(GONKA_DILOCO_ERR_NOMEM, GD_OK, err, err_cap, "out of memory");
    if (seams)
        h->seams = *seams;
    gd_status st = gd_member_settings_load(&h->s, config_path);
    int rc = GONKA_DILOCO_OK;
    if (st != GD_OK)
        rc = gd_abi_fail(GONKA_DILOCO_ERR_CONFIG, st, err, err_cap, NULL); /* names the file */
    gd_log_format format;
    if (rc == GONKA_DILOCO_OK && gd_log_configure(h->s.log_level) != GD_OK)
        rc = gd_abi_fail(GONKA_DILOCO_ERR_CONFIG, GD_ERR_INVALID, err, err_cap, "log_level");
    if (rc == GONKA_DILOCO_OK && gd_log_format_parse(&format, h->s.log_format) == GD_OK)
        gd_log_set_format(format);
    if (rc == GONKA_DILOCO_OK && (st = gd_keyfile_read(&h->key, h->s.key)) != GD_OK)
        rc = gd_abi_fail(GONKA_DILOCO_ERR_KEY, st, err, err_cap, "chain.key");
    if (rc == GONKA_DILOCO_OK)
        rc = gd_abi_open_member(h, err, err_cap);
    if (rc != GONKA_DILOCO_OK) {
        gonka_diloco_close(h);
        return rc;
    }
    *out = h;
    return GONKA_DILOCO_OK;
}

GD_ABI int gonka_diloco_set_memory_budget(gonka_diloco *h, uint64_t bytes) {
    if (h == NULL)
        return GONKA_DILOCO_ERR_INVALID;
    gd_member_set_memory_budget(h->member, bytes);
    return GONKA_DILOCO_OK;
}

GD_ABI int gonka_diloco_step(gonka_diloco *h, char *err, size_t err_cap) {
    if (h == NULL)
        return gd_abi_fail(GONKA_DILOCO_ERR_INVALID, GD_OK, err, err_cap, "handle");
    size_t done = 0;
    gd_status st = gd_member_step(h->member, &done);
    return st == GD_OK ? GONKA_DILOCO_OK : gd_abi_fail(gd_abi_code(st), st, err, err_cap, "step");
}

static void gd_sleep_ms(unsigned ms, const volatile int *stop) {
    while (ms > 0 && !*stop) {
        unsigned slice = ms < 100 ? ms : 100;
        struct timespec ts = {0, (long)slice * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !*stop) {
        }
        ms -= slice;
    }
}

GD_ABI int gonka_diloco_run(gonka_diloco *h, const volatile int *stop, unsigned poll_ms,
                            char *err, size_t err_cap) {
    if (h == NULL || stop == NULL)
        return gd_abi_fail(GONKA_DILOCO_ERR_INVALID, GD_OK, err, err_cap, "arguments");
    unsigned backoff = 0;
    int rc = GONKA_DILOCO_OK;
    gd_member_stop_on(h->member, stop);
    gd_rpc_set_cancel(h->chain.rpc, stop);
    while (!*stop) {
        char why[512] = "";
        rc = gonka_diloco_step(h, why, sizeof why);
        if (rc != GONKA_DILOCO_OK && *stop) {
            /* A duty cut short by the stop (training, a transaction's
             * wait): it is done again after a restart, as after a crash. */
            GD_LOG_INFO("node", "stopped: %s", why);
            rc = GONKA_DILOCO_OK;
            break;
        }
        if (rc == GONKA_DILOCO_ERR_CHAIN) {
            /* An RPC outage is waited out, not fatal. */
            backoff = backoff ? (backoff * 2 > 30000 ? 30000 : backoff * 2) : 500;
            GD_LOG_WARN("node", "%s; retrying in %.1f s", why, backoff / 1000.0);
            gd_sleep_ms(backoff, stop);
            rc = GONKA_DILOCO_OK; /* not fatal */
            continue;
        }
        if (rc != GONKA_DILOCO_OK) {
            if (err && err_cap)
                snprintf(err, err_cap, "%s", why);
            break;
        }
        if (backoff)
            GD_LOG_INFO("node", "the chain answers again");
        backoff = 0;
        gd_sleep_ms(poll_ms ? poll_ms : 250, stop);
    }
    gd_member_stop_on(h->member, NULL);
    gd_rpc_set_cancel(h->chain.rpc, NULL);
    return rc;
}

GD_ABI char *gonka_diloco_status_json(gonka_diloco *h) {
    if (h == NULL || h->member == NULL)
        return NULL;
    json_t *o = gd_member_status_json(h->member);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

GD_ABI const char *gonka_diloco_listen_address(const gonka_diloco *h) {
    return h && h->http ? h->listen : NULL;
}

GD_ABI void gonka_diloco_close(gonka_diloco *h) {
    if (h == NULL)
        return;
    if (h->http)
        gd_http_server_stop(h->http); /* before the member its threads answer from */
    gd_member_close(h->member);
    gd_peer_http_close(h->peers);
    gd_chain_rpc_close(&h->chain);
    gd_key_wipe(&h->key);
    free(h);
}
