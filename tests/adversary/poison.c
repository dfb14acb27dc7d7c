/* Residual poisoning (tests/adversary/adversary.h): the worker plants a
 * vector R in its error-feedback residual at the start of each round and
 * trains honestly, so its payload codes Δ + R: anything it wants G to move
 * by, carried in as "the coding error of the round before". Its segments and
 * payload chunks are consistent with the residual its leaves carry; the
 * links are not: leaf 0's residual is not the one the previous round's
 * encoding left (or not zeros, in its first round), and every check
 * verifies the links. */
#include "tests/adversary/adversary.h"

gd_status gd_adv_poison_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                              const gd_global_state *g, bool fresh, gd_worker_state *w) {
    if (fresh)
        gd_engine_worker_reset(w);
    for (size_t i = 0; i < w->n; i++)
        w->residual[i] += (i % 7 == 0) ? 0.05f : -0.01f;
    return gd_engine_train(e, out, round, g, false, w);
}
