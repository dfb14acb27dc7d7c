/* Cheats of an overlap run (tests/adversary/adversary.h), where a worker
 * that committed in round r - 1 trains round r from S_r = G_{r-1} - Δ̂_{w,r-1}
 * and its validators check leaf 0 by the drawn chunk, the links leaving its
 * parameters to them.
 *
 * shifted-start trains honestly from a start that is not S_r: every value
 * moved by g_adv_start_shift (here the stand-in for any start it prefers,
 * G_r among them). Its transcript, segments and payload agree with each
 * other; the drawn chunk of leaf 0 is not G_{r-1} minus the decoded chunk
 * of its payload of r - 1, so every check FAILs (and a validator that only
 * checked the links would pass it).
 *
 * withhold-payload-chunks serves its payloads whole (it is reported and
 * included) but no single payload chunk, so no validator can derive S_r's
 * chunk from the round before: UNAVAILABLE, the re-checkers too, upheld. */
#include "tests/adversary/adversary.h"

float g_adv_start_shift = 1e-3f;

gd_status gd_adv_shifted_start_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                                     const gd_global_state *g, bool fresh, gd_worker_state *w) {
    gd_global_state shifted;
    GD_TRY(gd_global_state_copy(&shifted, g));
    for (size_t i = 0; i < shifted.n; i++)
        shifted.params[i] += g_adv_start_shift;
    gd_status s = gd_engine_train(e, out, round, &shifted, fresh, w);
    gd_global_state_free(&shifted);
    return s;
}

bool gd_adv_withhold_payload_chunks(const gd_artifact_req *req, const gd_serve_clock *now) {
    (void)now;
    return req->kind == GD_REQ_PAYLOAD_CHUNK;
}
