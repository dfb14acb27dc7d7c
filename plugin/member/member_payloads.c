/* Peers' payloads of the current round (plugin/member/member_internal.h): each
 * fetched once, alone or in a block's batch, checked against the payload
 * its peer committed, and kept for the round's reports, checks and
 * aggregate. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

/* The round's commitment of address, refused when it claims a payload
 * larger than this run's model and codec can make (before anything is
 * fetched): a payload is at most its header, its table and every chunk at
 * the codec's bound (a zstd frame never exceeds the raw chunk it stores). */
static gd_status gd_payload_commitment(gd_member *n, const Gonka__Diloco__V1__Commitment **out,
                                       const char *address) {
    const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, address);
    if (c == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "%s has no commitment this round", address);
    const gd_diloco_config *dc = &n->engine.rc.diloco;
    uint64_t bound = GD_PAYLOAD_HEADER_BYTES +
                     (uint64_t)n->engine.chunks *
                         (GD_PAYLOAD_TABLE_ENTRY_BYTES + gd_codec_chunk_bound(&dc->codec,
                                                                              dc->chunk_elems));
    if (c->payload_bytes > bound || c->payload_bytes > GD_MEMBER_PAYLOAD_MAX)
        return gd_fail(GD_ERR_LIMIT, "%s committed a payload of %" PRIu64 " bytes, over the "
                                     "%" PRIu64 " this run's model and codec make",
                       address, c->payload_bytes, bound);
    *out = c;
    return GD_OK;
}

/* Keeps address's payload for the round once its bytes are the payload it
 * committed (c): a peer's written to the round's peer-L.gdpl (a crash may
 * lose it: it is fetched again), the node's own already in its store.
 * Takes bytes in every case (back to the peer client for reuse). */
static gd_status gd_keep_payload(gd_member *n, const gd_member_peer_payload **out,
                                 const char *address, const Gonka__Diloco__V1__Commitment *c,
                                 gd_buf *bytes) {
    gd_payload_view p; /* checked where the bytes lie: nothing copied */
    gd_status s = gd_engine_payload_view(&n->engine, &p, n->cache_round, address,
                                         bytes->data, bytes->len, c->payload_root.data,
                                         c->payload_leaves);
    if (s == GD_OK)
        gd_payload_view_close(&p);
    bool own = strcmp(address, n->address) == 0;
    gd_member_peer_payload held = {.kind = own ? GD_ARTIFACT_PAYLOAD : GD_ARTIFACT_PEER_PAYLOAD,
                                   .leaf = own ? 0 : n->peer_files, .len = bytes->len};
    snprintf(held.address, sizeof held.address, "%s", address);
    gd_file_atomic f;
    if (s == GD_OK && !own)
        s = gd_artifact_begin(&n->store, &f, GD_ARTIFACT_PEER_PAYLOAD, n->o.run, n->cache_round,
                              held.leaf);
    if (s == GD_OK && !own) {
        s = gd_file_atomic_append(&f, bytes->data, bytes->len);
        if (s == GD_OK)
            s = gd_file_atomic_commit_unsynced(&f);
        else
            gd_file_atomic_abort(&f);
        n->peer_files += s == GD_OK;
    }
    gd_member_peer_payload *grown =
        s == GD_OK ? realloc(n->payloads, (n->n_payloads + 1) * sizeof *grown) : NULL;
    if (s == GD_OK && grown == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_member_recycle(n, bytes);
    if (s != GD_OK)
        return s;
    n->payloads = grown;
    n->payloads[n->n_payloads] = held;
    if (out != NULL)
        *out = &n->payloads[n->n_payloads];
    n->n_payloads++;
    return GD_OK;
}

static const gd_member_peer_payload *gd_held_payload(const gd_member *n, const char *address) {
    for (size_t i = 0; i < n->n_payloads; i++)
        if (strcmp(n->payloads[i].address, address) == 0)
            return &n->payloads[i];
    return NULL;
}

static gd_status gd_record_fetch_failure(gd_member *n, const char *address, gd_status status,
                                         const char *why) {
    gd_member_fetch_failure *grown =
        realloc(n->fetch_failed, (n->n_fetch_failed + 1) * sizeof *grown);
    if (grown == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    n->fetch_failed = grown;
    gd_member_fetch_failure *f = &n->fetch_failed[n->n_fetch_failed++];
    snprintf(f->address, sizeof f->address, "%s", address);
    f->status = status;
    snprintf(f->why, sizeof f->why, "%s", why);
    return GD_OK;
}

gd_status gd_member_payload_held(gd_member *n, const gd_member_peer_payload **out,
                                 const char *address) {
    if ((*out = gd_held_payload(n, address)) != NULL)
        return GD_OK;
    for (size_t i = 0; i < n->n_fetch_failed; i++)
        if (strcmp(n->fetch_failed[i].address, address) == 0)
            return gd_fail(n->fetch_failed[i].status, "%s", n->fetch_failed[i].why);
    const Gonka__Diloco__V1__Commitment *c = NULL;
    GD_TRY(gd_payload_commitment(n, &c, address));
    uint64_t r = n->cache_round;
    gd_buf bytes = {0};
    gd_status s;
    if (strcmp(address, n->address) == 0) {
        s = gd_artifact_get(&n->store, &bytes, GD_ARTIFACT_PAYLOAD, n->o.run, r, 0,
                            c->payload_bytes);
    } else {
        gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = n->o.run, .round = r};
        gd_artifact_answer a;
        s = gd_member_fetch(n, &a, address, &req, c->payload_bytes);
        bytes = a.body;
        a.body = (gd_buf){0};
        gd_artifact_answer_free(&a);
    }
    if (s != GD_OK) {
        gd_buf_free(&bytes);
        return s;
    }
    return gd_keep_payload(n, out, address, c, &bytes);
}

gd_status gd_member_payload_path(const gd_member *n, char path[GD_ARTIFACT_PATH_MAX],
                                 const gd_member_peer_payload *held) {
    return gd_artifact_path(&n->store, path, GD_ARTIFACT_PATH_MAX, held->kind, n->o.run,
                            n->cache_round, held->leaf);
}

gd_status gd_member_round_payload(gd_member *n, const gd_buf **out, const char *address) {
    const gd_member_peer_payload *held = NULL;
    GD_TRY(gd_member_payload_held(n, &held, address));
    if (n->payload_read_of[0] != '\0' && strcmp(n->payload_read_of, address) == 0) {
        *out = &n->payload_read;
        return GD_OK;
    }
    n->payload_read_of[0] = '\0';
    n->payload_read.len = 0;
    gd_status s = gd_artifact_get(&n->store, &n->payload_read, held->kind, n->o.run,
                                  n->cache_round, held->leaf, held->len);
    if (s == GD_OK && n->payload_read.len != held->len)
        s = gd_fail(GD_ERR_IO, "the payload of %s kept this round is %zu bytes, not %llu",
                    address, n->payload_read.len, (unsigned long long)held->len);
    if (s != GD_OK)
        return s;
    snprintf(n->payload_read_of, sizeof n->payload_read_of, "%s", address);
    *out = &n->payload_read;
    return GD_OK;
}

/* Adds address to the batch unless it is already there, held, this node's
 * own, or has no commitment or URL (its duty then says why, as before). */
static void gd_batch_add(gd_member *n, const char *address, gd_peer_fetch_item *items,
                         char (*who)[GD_ADDRESS_STR_MAX], size_t *n_items, size_t cap) {
    if (*n_items >= cap || strcmp(address, n->address) == 0 || gd_held_payload(n, address))
        return;
    for (size_t i = 0; i < *n_items; i++)
        if (strcmp(who[i], address) == 0)
            return;
    const Gonka__Diloco__V1__Commitment *c = NULL;
    const Gonka__Diloco__V1__Member *m = gd_member_lookup(n, address);
    if (gd_payload_commitment(n, &c, address) != GD_OK || m == NULL ||
        m->artifact_url == NULL || m->artifact_url[0] == '\0')
        return;
    snprintf(who[*n_items], sizeof who[*n_items], "%s", address);
    items[(*n_items)++] = (gd_peer_fetch_item){
        .url = m->artifact_url, .max_len = c->payload_bytes,
        .req = {.kind = GD_REQ_PAYLOAD, .run = n->o.run, .round = n->cache_round,
                .deadline_ms = gd_member_fetch_deadline(n)}};
}

gd_status gd_member_prefetch(gd_member *n, const gd_action *acts, size_t n_acts) {
    n->n_fetch_failed = 0;
    if ((n->peers.iface->fetch_all == NULL && n->fetch_pool == NULL) || !n->engine_open)
        return GD_OK;
    const gd_round_view *rv = &n->view.view.round;
    size_t cap = n_acts + rv->n_aggregation_set;
    gd_peer_fetch_item *items = calloc(cap ? cap : 1, sizeof *items);
    char (*who)[GD_ADDRESS_STR_MAX] = calloc(cap ? cap : 1, sizeof *who);
    if (items == NULL || who == NULL) {
        free(items);
        free(who);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n_acts; i++) {
        if (acts[i].kind == GD_ACT_REPORT)
            gd_batch_add(n, acts[i].target, items, who, &k, cap);
        for (size_t j = 0; acts[i].kind == GD_ACT_AGGREGATE && j < rv->n_aggregation_set; j++)
            gd_batch_add(n, rv->aggregation_set[j], items, who, &k, cap);
    }
    /* With a fetch pool every payload is queued now, and each duty takes
     * its own when it is in: a slow peer holds up only what needs it. */
    if (n->fetch_pool != NULL) {
        gd_status s = GD_OK;
        size_t in = 0, pending = 0;
        uint64_t bytes = 0;
        for (size_t i = 0; s == GD_OK && i < k; i++) {
            const gd_member_peer_payload *held = NULL;
            gd_status got = gd_member_payload_held(n, &held, who[i]);
            if (got == GD_OK) {
                in++;
                bytes += held->len;
            } else if (got == GD_ERR_PENDING) {
                pending++;
            } else if (got == GD_ERR_NOMEM) {
                s = got;
            } else {
                s = gd_record_fetch_failure(n, who[i], got, gd_error_detail());
            }
        }
        if (s == GD_OK && in + n->n_fetch_failed > 0)
            GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 ": %zu payloads in off the "
                                "step (%" PRIu64 " bytes, %zu pending, %zu failed)",
                        n->view.view.height, n->cache_round, in, bytes, pending,
                        n->n_fetch_failed);
        free(items);
        free(who);
        return s;
    }
    /* One payload alone is fetched by its duty, as before. */
    if (k < 2) {
        free(items);
        free(who);
        return GD_OK;
    }
    gd_status s = n->peers.iface->fetch_all(n->peers.ctx, items, k);
    uint64_t fetched = 0;
    for (size_t i = 0; s == GD_OK && i < k; i++) {
        gd_peer_fetch_item *it = &items[i];
        if (it->status != GD_OK) {
            s = gd_record_fetch_failure(n, who[i], it->status, it->why);
            continue;
        }
        fetched += it->answer.body.len;
        pthread_mutex_lock(&n->mu);
        n->stats.bytes_in += it->answer.body.len + it->answer.proof.len;
        pthread_mutex_unlock(&n->mu);
        const Gonka__Diloco__V1__Commitment *c = NULL;
        gd_status kept = gd_payload_commitment(n, &c, who[i]);
        if (kept == GD_OK)
            kept = gd_keep_payload(n, NULL, who[i], c, &it->answer.body);
        if (kept == GD_ERR_NOMEM)
            s = kept;
        else if (kept != GD_OK)
            s = gd_record_fetch_failure(n, who[i], kept, gd_error_detail());
    }
    if (s == GD_OK)
        GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 ": %zu payloads fetched at once "
                            "(%" PRIu64 " bytes, %zu failed)",
                    n->view.view.height, n->cache_round, k, fetched, n->n_fetch_failed);
    for (size_t i = 0; i < k; i++)
        gd_artifact_answer_free(&items[i].answer);
    free(items);
    free(who);
    return s;
}
