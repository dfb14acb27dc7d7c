/* Replay (tests/adversary/adversary.h): the worker trains its first round
 * honestly and keeps where that training started (G and its own state);
 * every later round it trains that same start again and commits the result
 * under the new round, described and hashed as the new round's, with the
 * payload coding Δ against the old G. Nothing inside the transcript is
 * inconsistent except its first link: leaf 0 is not G_r, which every check
 * verifies (docs/verification.md, "replay"). */
#include <stdbool.h>

#include "tests/adversary/adversary.h"

static gd_global_state g_first_g;
static gd_worker_state g_first_w;
static bool g_have_first;

gd_status gd_adv_replay_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                              const gd_global_state *g, bool fresh, gd_worker_state *w) {
    if (fresh)
        gd_engine_worker_reset(w);
    if (!g_have_first) {
        GD_TRY(gd_global_state_copy(&g_first_g, g));
        gd_status s = gd_worker_state_copy(&g_first_w, w);
        if (s != GD_OK) {
            gd_global_state_free(&g_first_g);
            return s;
        }
        g_have_first = true;
        return gd_engine_train(e, out, round, g, false, w);
    }
    gd_worker_state again;
    GD_TRY(gd_worker_state_copy(&again, &g_first_w));
    gd_worker_state_free(w);
    *w = again;
    return gd_engine_train(e, out, round, &g_first_g, false, w);
}
