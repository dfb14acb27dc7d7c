/* The aggregator's duties (plugin/member/member_internal.h): G_{r+1} from
 * the round's payloads through the round engine, written to the store a
 * window at a time (and kept in memory as the budget allows) as the
 * member's next G, and the sealed and revealed attestation of its hash. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "plugin/member/global_file.h"
#include "plugin/member/member_internal.h"

/* The file of a payload the node holds, opened for reading. */
static gd_status gd_member_payload_open(gd_member *n, int *fd,
                                        const gd_member_peer_payload *held) {
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_member_payload_path(n, path, held));
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return gd_fail(GD_ERR_IO, "cannot open the payload of %s kept this round (%s): %s",
                       held->address, path, strerror(errno));
    return GD_OK;
}

/* G_{r+1} from the node's G_r and the payloads cs, stored under r + 1 a
 * window at a time (nothing to aggregate leaves G as it was, protocol.md
 * section 7), kept in n->next as well when the budget allows; hash gets
 * its state hash. On success n->aggregated_next is set. */
static gd_status gd_member_aggregate_to_store(gd_member *n, uint64_t r,
                                              const gd_engine_contribution *cs, size_t count,
                                              uint8_t hash[32]) {
    const gd_global_state *g = &n->g;
    const uint8_t *layout = gd_trainer_layout(n->engine.trainer)->digest;
    uint32_t chunk_elems = n->engine.rc.diloco.chunk_elems;
    gd_status s = GD_OK;
    if (n->keep_next)
        s = count > 0 ? gd_global_state_init(&n->next, g->n) : gd_global_state_copy(&n->next, g);
    n->have_next = s == GD_OK && n->keep_next;
    if (s == GD_OK && count == 0) {
        s = gd_global_file_put(&n->store, gd_trainer_pool(n->engine.trainer), n->o.run, r + 1,
                               layout, chunk_elems, g);
        if (s == GD_OK)
            s = gd_engine_global_hash(&n->engine, g, hash);
    } else if (s == GD_OK) {
        gd_global_file file;
        s = gd_global_file_begin(&file, gd_trainer_pool(n->engine.trainer), &n->store, n->o.run, r + 1, g->round + 1, layout,
                                 chunk_elems, g->n, n->have_next ? &n->next : NULL);
        if (s == GD_OK)
            s = gd_member_before_compute(n);
        gd_global_file_io x = {.from = {.from = g}, .to = &file};
        gd_global_io io = gd_global_file_io_of(&x);
        if (s == GD_OK)
            s = gd_engine_aggregate_io(&n->engine, r, cs, count, &io);
        if (s == GD_OK)
            s = gd_global_file_commit(&file, hash, &n->written);
        else
            gd_global_file_abort(&file);
    }
    if (s != GD_OK) {
        gd_member_drop_next(n);
        return s;
    }
    memcpy(n->next_hash, hash, 32);
    n->aggregated_next = true;
    return GD_OK;
}

gd_status gd_duty_aggregate(gd_member *n, uint64_t r) {
    GD_TRY(gd_member_engine(n));
    gd_member_memory_plan(n); /* whether G' stays in memory: a validator may not train */
    uint8_t start[32];
    GD_TRY(gd_start_hash(n, start));
    GD_TRY(gd_member_global_at(n, r, start));
    const gd_round_view *rv = &n->view.view.round;
    gd_engine_contribution *cs = calloc(rv->n_aggregation_set + 1, sizeof *cs);
    if (cs == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    size_t opened = 0;
    for (size_t i = 0; s == GD_OK && i < rv->n_aggregation_set; i++) {
        const char *who = rv->aggregation_set[i];
        const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, who);
        const gd_member_peer_payload *held = NULL;
        /* Included on others' reports: they hold it, if its worker will not
         * give it to this node. */
        s = c ? gd_member_payload_included(n, &held, who)
              : gd_fail(GD_ERR_NOT_FOUND, "%s is aggregated but has no commitment", who);
        if (s == GD_OK && held->malformed)
            s = gd_fail(GD_ERR_INVALID, "%s is aggregated but its payload does not decode (%s)",
                        who, held->malformed_why);
        int fd = -1;
        if (s == GD_OK)
            s = gd_member_payload_open(n, &fd, held);
        if (s == GD_OK)
            cs[opened++] = (gd_engine_contribution){
                .address = who, .tokens = c->tokens, .fd = fd, .payload_len = held->len,
                .root = c->payload_root.data, .leaves = c->payload_leaves,
                .sum_squares = held->has_norm ? &held->sum_squares : NULL};
    }
    uint8_t hash[32];
    bool later = false; /* a payload may come later in the window */
    if (s == GD_OK) {
        gd_member_drop_next(n);
        s = gd_member_aggregate_to_store(n, r, cs, rv->n_aggregation_set, hash);
    } else {
        if (s != GD_ERR_PENDING) /* an answer to come is no error */
            gd_member_error(n, "height %" PRId64 ": aggregating round %" PRIu64 ": %s",
                            n->view.view.height, r, gd_error_detail());
        later = s != GD_ERR_NOMEM;
    }
    for (size_t i = 0; i < opened; i++)
        close(cs[i].fd);
    free(cs);
    if (s != GD_OK)
        return later ? GD_OK : s;
    n->journal = gd_journal_at(&n->journal, r);
    n->journal.aggregated = true;
    GD_TRY(gd_journal_save(&n->store, &n->journal));
    if (n->have_next)
        gd_member_note_state(n, &n->next);
    GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " aggregated from %zu payloads: "
                        "state %02x%02x%02x%02x...",
                n->view.view.height, r, rv->n_aggregation_set, hash[0], hash[1], hash[2],
                hash[3]);
    return GD_OK;
}

/* G_{r+1}'s hash as this node aggregated it (remembered, or the stored
 * file's descriptor after a restart). */
static gd_status gd_next_hash(gd_member *n, uint8_t out[32], uint64_t r) {
    GD_TRY(gd_member_engine(n));
    if (n->aggregated_next && n->have_g && n->g_round == r) {
        memcpy(out, n->next_hash, 32);
        return GD_OK;
    }
    gd_global_desc d;
    GD_TRY(gd_global_file_desc(&n->store, n->o.run, r + 1, n->engine.n, &d));
    gd_global_desc_hash(&d, out);
    return GD_OK;
}

gd_status gd_duty_attest(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    uint8_t hash[32], salt[32], sealed[32];
    GD_TRY(gd_next_hash(n, hash, a->round));
    gd_member_salt(n, salt, GD_SEAL_ATTEST, a->round, NULL, 0);
    gd_status s;
    if (a->kind == GD_ACT_SEAL_ATTEST) {
        gd_diloco_seal(sealed, GD_SEAL_ATTEST, n->address, hash, 32, salt);
        s = gd_diloco_msg_attest_round_sealed(msg, n->address, n->o.run, a->round, sealed);
    } else {
        s = gd_diloco_msg_attest_round_revealed(msg, n->address, n->o.run, a->round, hash, salt);
    }
    *sent = s == GD_OK;
    return s;
}
