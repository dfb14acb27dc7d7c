/* The DiLoCo round engine (Douillard et al., "DiLoCo: Distributed
 * Low-Communication Training of Language Models", 2023).
 *
 * The global state G is the parameters and the outer momentum. In round r:
 *
 *   1. every worker starts from S_r (= G_r), keeps its own AdamW moments and
 *      step counter across rounds, and takes H inner steps on its own
 *      batches (trainer/train.h, data stream = its rank);
 *   2. its pseudo-gradient is Δ = S_r - θ_H (what the round moved it; the
 *      sign makes an outer SGD step on Δ move G the way the workers went);
 *   3. Δ (plus the error-feedback residual) is encoded into a payload
 *      (trainer/payload.h) whose MMR root the worker commits to;
 *   4. the decoded contributions, in address order, are clipped to
 *      clip_factor times their median L2 norm, averaged weighted by tokens,
 *      and the outer optimizer (SGD with Nesterov momentum) steps G.
 *
 * With overlap (the one-step delay of DiLoCoX, Qi et al. 2025) a worker
 * does not wait for G_{r+1}: it starts round r+1 from S_{r+1} = G_r - Δ̂_r
 * (the newest global state it has, plus its own decoded progress), and the
 * exchange and aggregation of round r run while it trains round r+1.
 *
 * Every worker records a transcript: the hash of its whole local state
 * (parameters, AdamW moments, step counter, residual; tagged with run,
 * round and address) at inner steps 0, K, 2K, ..., H. A validator
 * re-executes any K-step segment from its start state and requires the
 * next leaf exactly (gd_diloco_verify_segment).
 *
 * Aggregation is deterministic and bit-identical on every machine: fixed
 * address order, norms summed in double over fixed chunks, weights rounded
 * once, and float arithmetic in a fixed order without fused multiply-adds.
 * docs/protocol.md describes all of it byte by byte. */
#ifndef GD_TRAINER_DILOCO_H
#define GD_TRAINER_DILOCO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "proofs/mmr.h"
#include "trainer/codec.h"
#include "trainer/data.h"
#include "trainer/layout.h"
#include "trainer/payload.h"
#include "trainer/train.h"

typedef struct gd_diloco_config {
    uint64_t run;            /* run id: tags every hash and payload */
    uint32_t workers;
    uint32_t inner_steps;    /* H */
    uint32_t segment_steps;  /* K: a transcript leaf every K inner steps; divides H */
    gd_train_options inner;  /* each worker's inner training (worker is set per worker) */
    double outer_lr;         /* 0.7 */
    double outer_momentum;   /* 0.9, Nesterov */
    gd_codec codec;
    bool error_feedback;     /* carry the coding error into the next round's Δ */
    /* The residual is multiplied by this before it is added to the next Δ
     * (1 keeps all of it). Below 1 old, never-sent coordinates fade instead
     * of piling up, which keeps sparse codecs stable (SparseLoCo, Sarfi et
     * al. 2025, decays its error buffer the same way). */
    double error_feedback_decay;
    double clip_factor;      /* clip contributions to this times the median norm; 0 = off */
    bool overlap;            /* one-step-delay overlap */
    uint32_t chunk_elems;    /* payload chunk size (values) */
} gd_diloco_config;

/* run 1, 4 workers, H 50, K 10, outer lr 0.7, momentum 0.9, int8 with error
 * feedback, clipping at 2x the median norm, no overlap, default chunks. */
void gd_diloco_config_default(gd_diloco_config *c);
gd_status gd_diloco_config_validate(const gd_diloco_config *c,
                                    const gd_model_config *model) GD_MUST_CHECK;

/* --- states ----------------------------------------------------------------------- */

/* A worker's local state: what its transcript leaves hash. */
typedef struct gd_worker_state {
    uint32_t rank;
    char address[GD_PAYLOAD_PARTICIPANT_MAX + 1];
    size_t n;
    float *params, *exp_avg, *exp_avg_sq, *residual;
    uint64_t step; /* inner steps taken over the whole run */
} gd_worker_state;

/* Zeroed arrays of n values; address defaults to "worker-RANK" (5 digits). */
gd_status gd_worker_state_init(gd_worker_state *w, uint32_t rank, size_t n) GD_MUST_CHECK;
gd_status gd_worker_state_copy(gd_worker_state *dst, const gd_worker_state *src) GD_MUST_CHECK;
void gd_worker_state_free(gd_worker_state *w);

/* The global state: parameters and outer momentum. */
typedef struct gd_global_state {
    size_t n;
    float *params, *momentum;
    uint64_t round; /* rounds aggregated so far */
} gd_global_state;

gd_status gd_global_state_init(gd_global_state *g, size_t n) GD_MUST_CHECK;
void gd_global_state_free(gd_global_state *g);

/* State hashes (proofs/state_hash.h over the canonical bytes of
 * docs/protocol.md): a worker's local state at a round, and G. */
gd_status gd_worker_state_hash(gd_pool *pool, uint64_t run, uint64_t round,
                               const gd_worker_state *w,
                               uint8_t out[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
gd_status gd_global_state_hash(gd_pool *pool, uint64_t run, const gd_global_state *g,
                               uint8_t out[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

/* --- a worker's round ----------------------------------------------------------------- */

typedef struct gd_worker_round {
    double loss_sum;       /* sum of the H inner steps' mean losses */
    uint32_t steps;        /* H */
    uint64_t tokens;       /* H * batch * seq_len */
    uint32_t n_leaves;     /* H / K + 1 */
    uint8_t (*leaves)[GD_MMR_HASH_LEN]; /* transcript leaves (state hashes) */
    uint8_t transcript_root[GD_MMR_HASH_LEN];
    gd_payload payload;
    uint8_t payload_root[GD_MMR_HASH_LEN];
    uint32_t payload_leaves;
    float *delta;          /* Δ before coding (n values) */
    double seconds;        /* measured compute time of the inner steps */
} gd_worker_round;

void gd_worker_round_free(gd_worker_round *r);

/* Runs round `round` for worker w from start (n values): H inner steps on
 * the trainer (which must have the run's layout and options), a transcript
 * leaf every K steps, then Δ = start - θ_H encoded (with error feedback).
 * w is updated (θ_H, moments, step, residual). If segment_starts is not
 * NULL it receives copies of w at the start of each of the H / K segments
 * (initialised by the callee; free each with gd_worker_state_free): what
 * a worker keeps on disk until the round settles. */
gd_status gd_diloco_worker_round(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                 uint64_t round, const float *start, gd_worker_state *w,
                                 gd_worker_state *segment_starts,
                                 gd_worker_round *out) GD_MUST_CHECK;

/* --- aggregation ------------------------------------------------------------------------ */

typedef struct gd_contribution {
    const char *address;
    const float *delta; /* decoded Δ */
    uint64_t tokens;
} gd_contribution;

typedef struct gd_aggregate_stats {
    double median_norm;
    double max_norm;
    uint32_t clipped;   /* contributions scaled down */
} gd_aggregate_stats;

/* Steps g with the contributions (any order; duplicate addresses are
 * GD_ERR_INVALID): clipping, token weights, the Nesterov outer step. */
gd_status gd_diloco_aggregate(gd_pool *pool, const gd_diloco_config *c,
                              const gd_contribution *contribs, size_t n_contribs,
                              gd_global_state *g, gd_aggregate_stats *stats) GD_MUST_CHECK;

/* --- validation ------------------------------------------------------------------------- */

typedef struct gd_segment_claim {
    uint64_t round;
    uint32_t segment;                          /* 0 .. H/K - 1 */
    const gd_worker_state *start;              /* the segment's start state */
    const uint8_t *start_leaf;                 /* transcript leaf `segment` */
    const uint8_t *end_leaf;                   /* transcript leaf `segment + 1` */
    const float *round_start;                  /* last segment only: S_r */
    const uint8_t *payload_root;               /* last segment only: the committed root */
} gd_segment_claim;

/* Re-executes a segment: the start state must hash to start_leaf; K inner
 * steps from it must reach end_leaf exactly; for the last segment the
 * re-encoded Δ = round_start - θ_H (with the start state's residual) must
 * give the committed payload root. *pass says whether it held; why gets
 * the first mismatch in words. The trainer is overwritten. */
gd_status gd_diloco_verify_segment(gd_trainer *t, const gd_diloco_config *c,
                                   const gd_data *data, const gd_segment_claim *claim,
                                   bool *pass, char *why, size_t why_cap) GD_MUST_CHECK;

#endif
