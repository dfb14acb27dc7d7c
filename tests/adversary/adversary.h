/* Test-only adversaries: the honest daemon with one misbehaviour switched
 * on, played through the member's seams (gd_engine_train_fn,
 * gd_engine_check_fn and gd_member_withhold_fn). The product never links this directory;
 * `gd-adversary` (main.c) is built with the tests. */
#ifndef GD_TESTS_ADVERSARY_ADVERSARY_H
#define GD_TESTS_ADVERSARY_ADVERSARY_H

#include <stdbool.h>
#include <stdint.h>

#include "plugin/member.h"
#include "plugin/round_engine.h"

/* lazy: the fraction of each round's segments it does not train. */
extern double g_adv_lazy_fraction;
gd_status gd_adv_lazy_train(gd_engine *e, uint64_t round, const gd_global_state *g, bool fresh,
                            gd_worker_state *w, gd_trained_round *out);

/* scaled: the payload codes Δ times g_adv_scale; garbage: nonsense of Δ's
 * size (tests/adversary/payload.c). */
extern double g_adv_scale;
gd_status gd_adv_scaled_train(gd_engine *e, uint64_t round, const gd_global_state *g, bool fresh,
                              gd_worker_state *w, gd_trained_round *out);
gd_status gd_adv_garbage_train(gd_engine *e, uint64_t round, const gd_global_state *g,
                               bool fresh, gd_worker_state *w, gd_trained_round *out);

/* residual poisoning: a vector planted in the round-start residual
 * (tests/adversary/poison.c). */
gd_status gd_adv_poison_train(gd_engine *e, uint64_t round, const gd_global_state *g, bool fresh,
                              gd_worker_state *w, gd_trained_round *out);

/* withholder: its segment-start states are never served
 * (tests/adversary/withhold.c). */
bool gd_adv_withhold_states(const gd_artifact_req *req);

/* lazy validator: every check PASS with a made-up digest, nothing
 * re-executed (tests/adversary/validator.c). */
gd_status gd_adv_lazy_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                            const gd_global_state *g, gd_check_answer *out);
/* UNAVAILABLE spammer: every check UNAVAILABLE (tests/adversary/validator.c). */
gd_status gd_adv_unavailable_check(gd_engine *e, const gd_check_input *in,
                                   const gd_check_evidence *ev, const gd_global_state *g,
                                   gd_check_answer *out);

#endif
