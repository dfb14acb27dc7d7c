/* The demo's readings of the chain and of the daemons (see demo_watch.h). */
#include "plugin/demo/demo_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "common/bytes.h"
#include "common/file.h"
#include "common/parse.h"
#include "plugin/ports/peer_http.h"

gd_status gd_demo_chain_read(gd_rpc *rpc, gd_demo_chain *out, uint64_t run) {
    memset(out, 0, sizeof *out);
    gd_node_status st;
    GD_TRY(gd_rpc_status(rpc, &st));
    out->height = st.latest_block_height;
    GD_TRY(gd_diloco_query_run(rpc, &out->run, run, NULL));
    if (out->run->current_round == NULL)
        return GD_OK;
    gd_status s =
        gd_diloco_query_round(rpc, &out->round, run, out->run->current_round->index, NULL);
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

gd_status gd_demo_rewards_read(gd_rpc *rpc, gd_demo_rewards *out, uint64_t run,
                               const char *address, uint64_t last_epoch) {
    memset(out, 0, sizeof *out);
    Gonka__Diloco__V1__QueryRewardsResponse *r = NULL;
    GD_TRY(gd_diloco_query_rewards(rpc, &r, address, NULL));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < r->n_amounts; i++) {
        const Gonka__Diloco__V1__SettleAmount *a = r->amounts[i];
        uint64_t v = 0;
        if (a->run != run || a->epoch > last_epoch)
            continue;
        /* The decoder checked it is a canonical amount within 64 bits. */
        s = gd_parse_u64(&v, a->amount);
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

/* The daemons' status and checkpoint come over the peers' HTTP client
 * (plugin/ports/peer_http.h): the same paths, caps and timeouts a member uses. */
struct gd_demo_http {
    gd_peer_http *peer;
};

gd_status gd_demo_http_open(gd_demo_http **out) {
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = gd_peer_http_open(&(*out)->peer);
    if (s != GD_OK) {
        free(*out);
        *out = NULL;
    }
    return s;
}

void gd_demo_http_close(gd_demo_http *h) {
    if (h == NULL)
        return;
    gd_peer_http_close(h->peer);
    free(h);
}

/* GET what req names from base_url into *body (at most max bytes): 200, or
 * an error naming the url (NOT_FOUND for 404 and 425: not served yet). */
static gd_status gd_demo_get(gd_demo_http *h, const char *base_url, const gd_artifact_req *req,
                             size_t max, gd_buf *body) {
    gd_peer_port port = gd_peer_http_port(h->peer);
    gd_artifact_answer a;
    memset(&a, 0, sizeof a);
    GD_TRY(port.iface->fetch(port.ctx, &a, base_url, req, max));
    *body = a.body;
    a.body = (gd_buf){0};
    gd_artifact_answer_free(&a);
    return GD_OK;
}

gd_status gd_demo_http_status(gd_demo_http *h, json_t **out, const char *base_url) {
    gd_artifact_req req = {.kind = GD_REQ_STATUS};
    gd_buf b = {0};
    GD_TRY(gd_demo_get(h, base_url, &req, GD_DEMO_STATUS_MAX, &b));
    json_error_t err;
    *out = json_loadb((const char *)b.data, b.len, 0, &err);
    gd_buf_free(&b);
    if (*out == NULL || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return gd_fail(GD_ERR_PARSE, "%s/v1/status: not a JSON object", base_url);
    }
    return GD_OK;
}

gd_status gd_demo_http_checkpoint(gd_demo_http *h, const char *base_url, uint64_t run,
                                  const char *path) {
    gd_artifact_req req = {.kind = GD_REQ_CHECKPOINT, .run = run};
    gd_buf b = {0};
    GD_TRY(gd_demo_get(h, base_url, &req, GD_DEMO_CHECKPOINT_MAX, &b));
    gd_bytes_part part = {b.data, b.len};
    gd_status s = gd_file_write_atomic(path, &part, 1, 0600);
    gd_buf_free(&b);
    return s;
}
