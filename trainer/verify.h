/* What a verifier checks about one worker's commitment for a round, with
 * no I/O: every input is either from the chain (the commitment, the
 * member's rank, the round's start state hash) or served by the worker with
 * a proof against something on the chain. docs/verification.md says what
 * each check proves and what it costs.
 *
 * A round's transcript has S + 2 leaves (trainer/diloco.h): the states
 * after 0, 1, ..., S segments and after encoding. The checks:
 *
 *   links    (no compute; three descriptors and, after the first round, the
 *            previous round's last one) leaf 0's parameters are S_r (their
 *            root is G_r's, or with overlap checked by chunk below); its
 *            moments, step and residual are the previous round's last leaf's
 *            (zeros and step 0 in the worker's first round); every leaf names
 *            the run's spec, the round, the worker and its chain rank; leaf S
 *            is H steps on with leaf 0's residual; the last leaf is leaf S
 *            with only the residual changed.
 *   payload chunk (one chunk of four arrays) chunk c of the payload is the
 *            chunk coding of S_r - θ_H + decay·e_in, and chunk c of the last
 *            leaf's residual is what that coding left over.
 *   start chunk (overlap only) chunk c of leaf 0's parameters is
 *            G_{r-1} - Δ̂_{w,r-1}.
 *   segment  (K inner steps) re-executes segment s from its served start
 *            state and requires leaf s + 1 exactly; returns the segment's
 *            trace and end hash, which the chain's verdict digest covers.
 *
 * Each check writes a gd_check_result: pass, and in why the first rule that
 * failed. A check returns an error status only for a local failure (out of
 * memory, a caller's mistake); what a peer got wrong is a failed check. */
#ifndef GD_TRAINER_VERIFY_H
#define GD_TRAINER_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "proofs/mmr.h"
#include "trainer/data.h"
#include "trainer/diloco.h"
#include "trainer/state.h"
#include "trainer/train.h"

/* One commitment as the chain records it. */
typedef struct gd_commitment_view {
    uint64_t round;
    const char *address;
    uint32_t rank;                    /* the member's data rank, assigned at join */
    uint32_t segments;                /* S = segment_count */
    const uint8_t *transcript_root;   /* 32 bytes */
    const uint8_t *payload_root;      /* 32 bytes */
    uint32_t payload_leaves;
    const uint8_t *start_state_hash;  /* 32 bytes: the round's G_r */
} gd_commitment_view;

/* A transcript leaf as a worker serves it: descriptor and proof. */
typedef struct gd_leaf_evidence {
    gd_worker_desc desc;
    gd_mmr_proof proof;
} gd_leaf_evidence;

/* The worker's previous commitment: its last leaf links to this round.
 * With `initial` set it is instead a state the run defines as every
 * worker's start (only post.desc's step and optimizer roots are used): a
 * simulation's shared warm start. A chain run's initial optimizer state is
 * zeros at step 0, which a NULL link means. */
typedef struct gd_prev_link {
    bool initial;
    uint64_t round;
    const uint8_t *transcript_root;
    uint32_t segments;
    gd_leaf_evidence post; /* leaf segments + 1 */
} gd_prev_link;

typedef struct gd_check_result {
    bool pass;
    char why[224];
    /* segment checks: the segment's trace (every step's loss and gradient
     * norm) and the state at its end, which the chain's verdict digest
     * (proofs/diloco_rules.h) covers */
    uint8_t trace[GD_MMR_HASH_LEN];
    uint8_t end_state[GD_MMR_HASH_LEN];
} gd_check_result;

/* True if ev's descriptor is leaf `index` of the transcript of a round of
 * `segments` segments under root. */
bool gd_diloco_leaf_proven(const uint8_t root[GD_MMR_HASH_LEN], uint32_t segments,
                           uint32_t index, const gd_leaf_evidence *ev);

/* The links of a commitment: start = leaf 0, final = leaf S, post = leaf
 * S + 1; g_start is G_r's descriptor (its hash must be the commitment's
 * start_state_hash); prev is NULL in the worker's first round. n is the
 * model's size. zero_root is the root of n zeros in the run's chunks
 * (gd_zero_values_root: a verifier computes it once per run); if it is
 * NULL, a first round hashes n zeros (pool may be NULL). */
gd_status gd_diloco_check_links(gd_pool *pool, const gd_diloco_config *c,
                                const uint8_t layout_digest[32], size_t n,
                                const gd_commitment_view *cv, const gd_global_desc *g_start,
                                const gd_prev_link *prev, const uint8_t *zero_root,
                                const gd_leaf_evidence *start,
                                const gd_leaf_evidence *final, const gd_leaf_evidence *post,
                                gd_check_result *res) GD_MUST_CHECK;

/* True if the links leave leaf 0's parameters to a start chunk check: with
 * overlap, when the worker committed in the round before. */
bool gd_diloco_start_by_chunk(const gd_diloco_config *c, const gd_commitment_view *cv,
                              const gd_prev_link *prev);

/* Chunk `chunk` of the arrays a payload chunk check needs, as served, with
 * proofs: θ_H (leaf S's parameters), e_in (leaf S's residual), e_out (the
 * last leaf's residual) and the payload chunk's canonical bytes. */
typedef struct gd_chunk_evidence {
    uint32_t chunk;
    const float *params;
    gd_mmr_proof params_proof;
    const float *residual_in;
    gd_mmr_proof residual_in_proof;
    const float *residual_out;
    gd_mmr_proof residual_out_proof;
    const uint8_t *payload;
    size_t payload_len;
    gd_mmr_proof payload_proof;
} gd_chunk_evidence;

/* start_values: chunk `chunk` of S_r, which the verifier derives itself
 * (G_r's, or gd_diloco_overlap_start's). n is the model's size. */
gd_status gd_diloco_check_payload_chunk(const gd_diloco_config *c, size_t n,
                                        const gd_commitment_view *cv,
                                        const gd_leaf_evidence *final,
                                        const gd_leaf_evidence *post,
                                        const gd_chunk_evidence *ev, const float *start_values,
                                        gd_check_result *res) GD_MUST_CHECK;

/* Chunk `chunk` of an overlapped round's start S_r = G_{r-1} - Δ̂_{w,r-1}:
 * out (count values) = g_prev - decode(prev_payload), where prev_payload
 * is the chunk of the worker's round r - 1 payload, proved against that
 * commitment (root and leaf count). *ok is false if the proof or the
 * decoding fails. */
gd_status gd_diloco_overlap_start(const gd_diloco_config *c, float *out, size_t n,
                                  uint32_t chunk, const float *g_prev,
                                  const uint8_t prev_payload_root[32], uint32_t prev_payload_leaves,
                                  const uint8_t *prev_payload, size_t prev_payload_len,
                                  const gd_mmr_proof *prev_proof, bool *ok) GD_MUST_CHECK;

/* Leaf 0's parameter chunk (values, with its proof) must be start_values. */
gd_status gd_diloco_check_start_chunk(size_t n, const gd_commitment_view *cv,
                                      const gd_leaf_evidence *start, uint32_t chunk,
                                      const float *values, const gd_mmr_proof *proof,
                                      const float *start_values,
                                      gd_check_result *res) GD_MUST_CHECK;

/* A segment to re-execute. */
typedef struct gd_segment_claim {
    const gd_commitment_view *cv;
    uint32_t segment;                /* 0 .. S - 1 */
    uint64_t first_step;             /* leaf 0's step (checked by the links) */
    const uint8_t *residual_root;    /* leaf 0's residual root (checked by the links) */
    gd_worker_state_source start;    /* the served segment-start state (its residual is
                                        not read), loaded a window at a time */
    const gd_mmr_proof *start_proof; /* leaf `segment` */
    const uint8_t *end_leaf;         /* leaf segment + 1's hash, as served */
    const gd_mmr_proof *end_proof;
} gd_segment_claim;

/* Re-executes the segment on the trainer (overwritten) with the commitment's
 * rank as data stream: the start state must have the model's size, the
 * worker's address and rank and the segment's step, and hash (with leaf 0's
 * residual root: training never changes the residual) to leaf `segment`; K
 * inner steps from it must reach leaf segment + 1 exactly. So a validator
 * downloads 12 bytes per parameter, not 16. The start is loaded into the
 * trainer and hashed a window at a time, and the end state hashed from the
 * trainer the same way: the check holds no copy of either. A start that
 * cannot be read (GD_ERR_IO) is the caller's failure, not a verdict.
 * res->trace and res->end_state are what the verdict digest covers. */
gd_status gd_diloco_verify_segment(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                   const gd_segment_claim *claim,
                                   gd_check_result *res) GD_MUST_CHECK;

/* --- the worker's side: what it serves -------------------------------------------------- */

/* Leaf i's evidence from a round the worker ran. */
gd_status gd_worker_round_leaf(const gd_worker_round *r, gd_leaf_evidence *out,
                               uint32_t index) GD_MUST_CHECK;

/* Chunk evidence from the worker's states: post is the state after the
 * round (θ_H and e_out), residual_in the residual the round started with
 * (n values; any segment-start state's). Points into those arrays. */
gd_status gd_worker_round_chunk(gd_pool *pool, const gd_diloco_config *c,
                                const gd_worker_round *r, const gd_worker_state *post,
                                gd_chunk_evidence *out, const float *residual_in,
                                uint32_t chunk) GD_MUST_CHECK;

#endif
