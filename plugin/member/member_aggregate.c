/* The aggregator's duties (plugin/member/member_internal.h): G_{r+1} from
 * the round's payloads through the round engine, stored and kept as the
 * member's next G, and the sealed and revealed attestation of its hash. */
#include <inttypes.h>
#include <stdlib.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

gd_status gd_duty_aggregate(gd_member *n, uint64_t r) {
    GD_TRY(gd_member_engine(n));
    uint8_t start[32];
    GD_TRY(gd_start_hash(n, start));
    GD_TRY(gd_member_global_at(n, r, start));
    const gd_round_view *rv = &n->view.view.round;
    gd_engine_contribution *cs = calloc(rv->n_aggregation_set + 1, sizeof *cs);
    if (cs == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < rv->n_aggregation_set; i++) {
        const char *who = rv->aggregation_set[i];
        const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, who);
        const gd_buf *bytes = NULL;
        s = c ? gd_member_round_payload(n, &bytes, who)
              : gd_fail(GD_ERR_NOT_FOUND, "%s is aggregated but has no commitment", who);
        if (s == GD_OK)
            cs[i] = (gd_engine_contribution){.address = who, .tokens = c->tokens,
                                             .payload = bytes->data, .payload_len = bytes->len,
                                             .root = c->payload_root.data,
                                             .leaves = c->payload_leaves};
    }
    if (s != GD_OK) {
        free(cs);
        gd_member_error(n, "height %" PRId64 ": aggregating round %" PRIu64 ": %s",
                      n->view.view.height, r, gd_error_detail());
        return s == GD_ERR_NOMEM ? s : GD_OK; /* a payload may come later in the window */
    }
    if (n->have_next)
        gd_global_state_free(&n->next);
    n->have_next = false;
    s = gd_global_state_copy(&n->next, &n->g);
    if (s == GD_OK) {
        n->have_next = true;
        /* Nothing to aggregate leaves G as it was (protocol.md, section 7). */
        if (rv->n_aggregation_set > 0) {
            s = gd_member_before_compute(n);
            if (s == GD_OK)
                s = gd_engine_aggregate(&n->engine, r, cs, rv->n_aggregation_set, &n->next);
        }
    }
    free(cs);
    gd_buf file = {0};
    if (s == GD_OK)
        s = gd_member_global_file(n, &n->next, &file);
    if (s == GD_OK)
        s = gd_artifact_put(&n->store, GD_ARTIFACT_GLOBAL, n->o.run, r + 1, 0, file.data,
                            file.len);
    gd_buf_free(&file);
    if (s != GD_OK) {
        if (n->have_next)
            gd_global_state_free(&n->next);
        n->have_next = false;
        return s;
    }
    n->journal = gd_journal_at(&n->journal, r);
    n->journal.aggregated = true;
    GD_TRY(gd_journal_save(&n->store, &n->journal));
    gd_member_note_state(n, &n->next);
    uint8_t hash[32];
    GD_TRY(gd_engine_global_hash(&n->engine, &n->next, hash));
    GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " aggregated from %zu payloads: "
                        "state %02x%02x%02x%02x...",
                n->view.view.height, r, rv->n_aggregation_set, hash[0], hash[1], hash[2],
                hash[3]);
    return GD_OK;
}

/* G_{r+1}'s hash as this node aggregated it (from memory or the store). */
static gd_status gd_next_hash(gd_member *n, uint8_t out[32], uint64_t r) {
    GD_TRY(gd_member_engine(n));
    if (n->have_next && n->have_g && n->g_round == r)
        return gd_engine_global_hash(&n->engine, &n->next, out);
    gd_buf b = {0};
    GD_TRY(gd_artifact_get(&n->store, &b, GD_ARTIFACT_GLOBAL, n->o.run, r + 1,
                           0, GD_GLOBAL_DESC_BYTES + 8 * n->engine.n));
    gd_global_desc d;
    gd_status s = b.len >= GD_GLOBAL_DESC_BYTES
                      ? gd_global_desc_decode(&d, b.data, GD_GLOBAL_DESC_BYTES)
                      : gd_fail(GD_ERR_PARSE, "the stored G of round %" PRIu64 " is short", r + 1);
    gd_buf_free(&b);
    if (s == GD_OK)
        gd_global_desc_hash(&d, out);
    return s;
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
