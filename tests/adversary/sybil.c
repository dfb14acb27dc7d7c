/* Sybil (tests/adversary/adversary.h): one training committed under two
 * addresses. This daemon trains exactly what the original (another
 * member, its address and rank given) trains: the same G, the original's
 * data rank and address in every state, so its transcript and payload
 * chunks are the original's bit for bit, and commits it under its own
 * address, the payload's header re-tagged with its own name so that the
 * format checks pass. The links give it away: the leaves name the
 * original's address and rank, not the committer's (docs/verification.md,
 * "Sybil re-tag"). */
#include <stdio.h>
#include <string.h>

#include "tests/adversary/adversary.h"
#include "trainer/payload.h"

char g_adv_sybil_address[GD_STATE_ADDRESS_MAX + 1];
uint32_t g_adv_sybil_rank;
static char g_self[GD_STATE_ADDRESS_MAX + 1];

/* The same chunks under a header that names `self`. */
static gd_status adv_retag(gd_engine *e, gd_trained_round *out) {
    gd_buf b = {0};
    GD_TRY(gd_payload_serialize(&out->r.payload, &b));
    gd_payload_header h;
    gd_status s = b.len >= GD_PAYLOAD_HEADER_BYTES
                      ? gd_payload_header_decode(&h, b.data, GD_PAYLOAD_HEADER_BYTES)
                      : gd_fail(GD_ERR_PARSE, "sybil: a short payload");
    if (s == GD_OK) {
        snprintf(h.participant, sizeof h.participant, "%s", g_self);
        gd_payload_header_encode(&h, b.data);
    }
    gd_payload p;
    if (s == GD_OK)
        s = gd_payload_parse(&p, b.data, b.len, gd_trainer_pool(e->trainer));
    gd_buf_free(&b);
    GD_TRY(s);
    gd_payload_free(&out->r.payload);
    out->r.payload = p;
    return gd_payload_root(&out->r.payload, out->r.payload_root, &out->r.payload_leaves);
}

gd_status gd_adv_sybil_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                             const gd_global_state *g, bool fresh, gd_worker_state *w) {
    if (g_self[0] == '\0')
        snprintf(g_self, sizeof g_self, "%s", w->address);
    snprintf(w->address, sizeof w->address, "%s", g_adv_sybil_address);
    w->rank = g_adv_sybil_rank;
    GD_TRY(gd_engine_train(e, out, round, g, fresh, w));
    gd_buf_free(&out->transcript);
    gd_status s = adv_retag(e, out);
    if (s == GD_OK)
        s = gd_engine_round_seal(e, out, round);
    if (s != GD_OK)
        gd_trained_round_free(out);
    return s;
}
