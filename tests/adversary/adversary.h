/* Test-only adversaries: the honest daemon with one misbehaviour switched
 * on, played through the member's seams (gd_engine_train_fn,
 * gd_engine_check_fn and gd_member_withhold_fn). The product never links this directory;
 * `gd-adversary` (main.c) is built with the tests. */
#ifndef GD_TESTS_ADVERSARY_ADVERSARY_H
#define GD_TESTS_ADVERSARY_ADVERSARY_H

#include <stdbool.h>
#include <stdint.h>

#include "plugin/member/member.h"
#include "plugin/member/round_engine.h"

/* lazy: the fraction of each round's segments it does not train. */
extern double g_adv_lazy_fraction;
gd_status gd_adv_lazy_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                            const gd_global_state *g, bool fresh, gd_worker_state *w);

/* scaled: the payload codes Δ times g_adv_scale; garbage: nonsense of Δ's
 * size (tests/adversary/payload.c). */
extern double g_adv_scale;
gd_status gd_adv_scaled_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                              const gd_global_state *g, bool fresh, gd_worker_state *w);
gd_status gd_adv_garbage_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                               const gd_global_state *g, bool fresh, gd_worker_state *w);
/* malformed: the honest payload with one chunk no decoder accepts, under a
 * root over its bytes (tests/adversary/payload.c). gd_adv_malform_payload
 * makes chunk's last byte an int8 code of -128 (no encoder writes it, every
 * decoder refuses it) and rebuilds the MMR over the changed bytes, so the
 * payload passes every root and proof check and fails only when decoded. */
gd_status gd_adv_malform_payload(gd_payload *p, uint32_t chunk);
gd_status gd_adv_malformed_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                                 const gd_global_state *g, bool fresh, gd_worker_state *w);

/* residual poisoning: a vector planted in the round-start residual
 * (tests/adversary/poison.c). */
gd_status gd_adv_poison_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                              const gd_global_state *g, bool fresh, gd_worker_state *w);

/* overlap runs (tests/adversary/overlap.c): training from a start moved by
 * g_adv_start_shift, not S_r = G_{r-1} - Δ̂_{w,r-1}; and payloads served
 * whole, never a single chunk (which an overlapped check needs). */
extern float g_adv_start_shift;
gd_status gd_adv_shifted_start_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                                     const gd_global_state *g, bool fresh, gd_worker_state *w);
bool gd_adv_withhold_payload_chunks(const gd_artifact_req *req, const gd_serve_clock *now);

/* withholder: its segment-start states are never served
 * (tests/adversary/withhold.c). */
bool gd_adv_withhold_states(const gd_artifact_req *req, const gd_serve_clock *now);
/* withholder: single payload chunks served, never the whole payload. */
bool gd_adv_withhold_payload(const gd_artifact_req *req, const gd_serve_clock *now);
/* late-server: its states served only from the dispute window on
 * (tests/adversary/withhold.c). */
bool gd_adv_late_server(const gd_artifact_req *req, const gd_serve_clock *now);
/* dripper: its whole payload dripped (tests/adversary/withhold.c;
 * a drip seam, gonka_diloco_seams.drip). */
bool gd_adv_drip(const gd_artifact_req *req, const gd_serve_clock *now);

/* lazy validator: every check PASS with a made-up digest, nothing
 * re-executed (tests/adversary/validator.c). */
gd_status gd_adv_lazy_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                            const gd_global_state *g, gd_check_answer *out);
/* framer: every check and re-check FAIL with a made-up digest; early
 * passer: PASS with the end leaf and the trace of no step
 * (tests/adversary/validator.c). */
gd_status gd_adv_framer_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                              const gd_global_state *g, gd_check_answer *out);
gd_status gd_adv_pass_early_check(gd_engine *e, const gd_check_input *in,
                                  const gd_check_evidence *ev, const gd_global_state *g,
                                  gd_check_answer *out);
/* UNAVAILABLE spammer: every check UNAVAILABLE (tests/adversary/validator.c). */
gd_status gd_adv_unavailable_check(gd_engine *e, const gd_check_input *in,
                                   const gd_check_evidence *ev, const gd_global_state *g,
                                   gd_check_answer *out);

/* replay: its first round's training again under every later round
 * (tests/adversary/replay.c). */
gd_status gd_adv_replay_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                              const gd_global_state *g, bool fresh, gd_worker_state *w);

/* copier: a near-copy of the payload in g_adv_copy_dir's store (another
 * worker's state_dir), one value changed (tests/adversary/copy.c). */
extern const char *g_adv_copy_dir;
gd_status gd_adv_copy_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                            const gd_global_state *g, bool fresh, gd_worker_state *w);

/* sybil: the training of the member g_adv_sybil_address (data rank
 * g_adv_sybil_rank) under its own address (tests/adversary/sybil.c). */
extern char g_adv_sybil_address[GD_STATE_ADDRESS_MAX + 1];
extern uint32_t g_adv_sybil_rank;
gd_status gd_adv_sybil_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                             const gd_global_state *g, bool fresh, gd_worker_state *w);

/* The payload coding `values` under its own name, with the files and the
 * commitment made again; out is freed on failure (tests/adversary/payload.c). */
gd_status gd_adv_commit_values(gd_engine *e, gd_trained_round *out, uint64_t round,
                               const gd_worker_state *w, const float *values);

/* Duties done their own way (tests/adversary/duty.c): the non-reporter, the
 * wrong-hash attester, the attestation copier, the copying validator and
 * the skipper. */
bool gd_adv_skipper(const gd_action *a, const char *address, uint64_t run,
                    const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg, bool *sent);
bool gd_adv_no_reports(const gd_action *a, const char *address, uint64_t run,
                       const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                       bool *sent);
bool gd_adv_wrong_attest(const gd_action *a, const char *address, uint64_t run,
                         const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                         bool *sent);
bool gd_adv_copy_attest(const gd_action *a, const char *address, uint64_t run,
                        const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                        bool *sent);
bool gd_adv_copy_verdicts(const gd_action *a, const char *address, uint64_t run,
                          const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                          bool *sent);

/* grinder: seals its secret for every round and never reveals it, paying
 * the withhold slash each round (tests/adversary/grinder.c). */
bool gd_adv_grinder(const gd_action *a, const char *address, uint64_t run,
                    const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                    bool *sent);

#endif
