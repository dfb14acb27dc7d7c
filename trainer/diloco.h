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
 * Every worker records a transcript (trainer/state.h): the descriptor hash
 * of its whole local state (parameters, AdamW moments, step counter,
 * residual; tagged with the run's spec digest, run, round, address and the
 * chain-assigned rank) at inner steps 0, K, 2K, ..., H, and one last leaf
 * after encoding (the new residual). Leaf 0 is bound to the round's start
 * S_r and to the previous round's last leaf, so a worker's transcripts
 * chain from the run's start; trainer/verify.h holds the checks.
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
#include "kernels/backend.h"
#include "proofs/mmr.h"
#include "trainer/codec.h"
#include "trainer/data.h"
#include "trainer/layout.h"
#include "trainer/payload.h"
#include "trainer/state.h"
#include "trainer/train.h"

typedef struct gd_diloco_config {
    uint64_t run;            /* run id: tags every hash and payload */
    uint8_t spec_digest[32]; /* the RunSpec's digest: in every state and payload header */
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
    uint32_t chunk_elems;    /* payload chunk size (values); state hashes use the same chunks */
    /* Called after each segment of a worker's round with its mean step loss
     * (progress lines); NULL for none. Not part of the run's definition. */
    void (*on_segment)(void *ctx, uint64_t round, uint32_t segment, uint32_t segments,
                       double loss);
    void *on_segment_ctx;
    /* Read before each inner step of a worker's round: once non-zero the
     * round stops with GD_ERR_CANCELLED (a daemon asked to stop does not
     * finish minutes of training first); NULL for never. Not part of the
     * run's definition. */
    const volatile int *stop;
} gd_diloco_config;

/* run 1, 4 workers, H 50, K 10, outer lr 0.7, momentum 0.9, int8 with error
 * feedback, clipping at 2x the median norm, no overlap, default chunks, a
 * zero spec digest. */
void gd_diloco_config_default(gd_diloco_config *c);
gd_status gd_diloco_config_validate(const gd_diloco_config *c,
                                    const gd_model_config *model) GD_MUST_CHECK;

/* The tag every worker state of the run carries. */
void gd_diloco_state_tag(const gd_diloco_config *c, const gd_param_layout *layout,
                         gd_state_tag *out);

/* The training-stage descriptor at round of the state the trainer holds
 * (its parameters, moments and step), as worker `address` of data rank
 * `rank` with the residual's root given (training never changes the
 * residual): read from the trainer a window at a time and hashed as it
 * comes, so describing a state costs a window of host memory, not a copy
 * of the model. */
gd_status gd_diloco_describe_trainer(gd_trainer *t, const gd_state_tag *tag, gd_worker_desc *out,
                                     uint64_t round, const char *address, uint32_t rank,
                                     const uint8_t residual_root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

/* The transcript of a round of S = H / K segments has S + 2 leaves: leaf i
 * (0 <= i <= S) is the state after i segments, leaf S + 1 the state after
 * encoding. */
static inline uint32_t gd_transcript_leaves(uint32_t segments) { return segments + 2; }

/* --- a worker's round ----------------------------------------------------------------- */

typedef struct gd_worker_round {
    double loss_sum;       /* sum of the H inner steps' mean losses */
    double first_segment_loss, last_segment_loss; /* mean step loss of the first and last
                                                   * segments (what a commitment reports) */
    uint32_t steps;        /* H */
    uint64_t tokens;       /* H * batch * seq_len */
    uint32_t n_leaves;     /* H / K + 2 */
    gd_worker_desc *descs; /* each leaf's state descriptor */
    uint8_t (*leaves)[GD_MMR_HASH_LEN]; /* their hashes: the transcript leaves' data */
    uint8_t (*traces)[GD_MMR_HASH_LEN]; /* each segment's trace (gd_diloco_trace_step), S of
                                         * them: the target's side of its checks' digests */
    gd_mmr transcript;     /* to prove leaves */
    uint8_t transcript_root[GD_MMR_HASH_LEN];
    gd_payload payload;
    uint8_t payload_root[GD_MMR_HASH_LEN];
    uint32_t payload_leaves;
    double seconds;        /* measured compute time of the inner steps */
    double record_seconds; /* measured time recording leaves 0 to S (each described, and a
                            * segment start handed to its sink), loading leaf 0 included */
} gd_worker_round;

void gd_worker_round_free(gd_worker_round *r);

/* Runs round `round` for worker w from start (start_n values, which must be
 * w's and the layout's size): H inner steps on the trainer (which must have
 * the run's layout and options) with w's rank as its data stream, a
 * transcript leaf every K steps, then Δ = start - θ_H encoded (with error
 * feedback) and the post-encode leaf. w is updated (θ_H, moments, step,
 * residual). If segment_starts is not NULL it receives copies of w at the
 * start of each of the H / K segments (initialised by the callee; free each
 * with gd_worker_state_free): what a worker keeps on disk until the round
 * settles. */
gd_status gd_diloco_worker_round(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                 gd_worker_round *out, uint64_t round, const float *start,
                                 size_t start_n, gd_worker_state *w,
                                 gd_worker_state *segment_starts) GD_MUST_CHECK;

/* Where finish puts leaf S + 1 as it makes it, a window at a time in
 * order: the trainer's parameters and moments and the residual encoding
 * left (out->descs[S + 1] describes them once finish returns). */
typedef struct gd_state_sink {
    gd_status (*write)(void *ctx, const float *params, const float *exp_avg,
                       const float *exp_avg_sq, const float *residual, size_t lo, size_t count);
    void *ctx;
} gd_state_sink;

/* Where a round puts each segment start (leaves 0 to S - 1) in the same
 * pass of windows that describes it, as training reaches it: begin opens
 * leaf `leaf` of n values, write takes its windows, each value once in no
 * set order (the trainer's parameters and moments as the ranks that own
 * them read them, and the round's residual), end closes it with
 * the leaf's descriptor, or gives it up when desc is NULL (the pass
 * failed; end is called once for every begin that succeeded). */
typedef struct gd_state_leaf_sink {
    gd_status (*begin)(void *ctx, uint64_t round, uint32_t leaf, size_t n);
    gd_status (*write)(void *ctx, const float *params, const float *exp_avg,
                       const float *exp_avg_sq, const float *residual, size_t lo, size_t count);
    gd_status (*end)(void *ctx, const gd_worker_desc *desc);
    /* Optional, both or neither: a sink that hashes a start itself, off
     * the trainer's thread. The round then ends a start read by the ranks
     * with end_unhashed (the descriptor without its three roots: the
     * trainer goes on at once), and asks roots for that leaf's roots before
     * it needs them (the next start, a reload, finish), which waits for
     * the sink. */
    gd_status (*end_unhashed)(void *ctx, const gd_worker_desc *desc);
    gd_status (*roots)(void *ctx, uint64_t round, uint32_t leaf,
                       uint8_t roots[3][GD_MMR_HASH_LEN]);
    /* Optional: where array a (0 params, 1 exp_avg, 2 exp_avg_sq) of the
     * leaf's values [lo, lo + count) goes, for a start the ranks read: they
     * copy straight into it, and write gets those places. */
    float *(*place)(void *ctx, int array, size_t lo, size_t count);
    /* The residual given with the round's leaf 0 stays the sink's for the
     * round's later starts (training never changes it): their windows come
     * with a NULL residual, and it is not read again. */
    bool keeps_residual;
    void *ctx;
} gd_state_leaf_sink;

/* Segment starts kept in memory: leaf i into starts[i] (S of them,
 * initialised by the sink: free each with gd_worker_state_free). */
typedef struct gd_memory_starts {
    gd_worker_state *starts;
    uint32_t leaf; /* the one being written */
} gd_memory_starts;

/* The sink of m (which must outlive the round). */
gd_state_leaf_sink gd_memory_starts_sink(gd_memory_starts *m);

/* The same round a segment at a time, for a host whose trainer does other
 * work between segments (a validator's re-execution while a worker trains
 * the next round ahead, with overlap), and that keeps no copy of the
 * worker's state: the trainer holds it. begin loads the trainer with start
 * as the parameters and the moments and step of prev, the worker's state
 * after its previous round read a window at a time (NULL: a fresh
 * optimizer state, zeros and step 0), and records leaf 0; each segment
 * call takes K inner steps and records the next leaf; finish encodes Δ
 * from the trainer, the start and the residual (read through `residual`,
 * never whole) in one pass of windows, handing leaf S + 1 with the new
 * residual to a sink as it goes (start and old residual are hashed again
 * as they are read: a start that changed while the round trained, or a
 * residual read back as anything else than the round began with, is
 * refused). Every leaf is described from the trainer a window at a time,
 * and a segment start goes to `starts` (when given) in that same pass: one
 * read of the trainer's state at each boundary, from each rank's own shard.
 * gd_diloco_worker_round is exactly begin, S segments and finish, so both
 * give the same bits. With reload a segment first loads the state at its
 * start again from that source (whatever ran on the trainer in between
 * changes nothing), and requires it to be the leaf recorded there
 * (GD_ERR_IO otherwise: the host's copy is damaged). The caller keeps
 * start, residual, starts' context and out alive until finish; on an error
 * out is freed and the round is over. */
typedef struct gd_worker_round_run {
    uint64_t round;
    gd_values_reader start;          /* S_r, the layout's n values (the caller's) */
    char address[GD_STATE_ADDRESS_MAX + 1];
    uint32_t rank;
    gd_values_reader residual;       /* the error-feedback residual the round began with */
    uint8_t residual_root[GD_MMR_HASH_LEN]; /* its root while training (never changes) */
    gd_state_leaf_sink starts;       /* where each segment's start goes (begin NULL: nowhere) */
    bool unhashed;                   /* a start's roots are still the sink's to give: */
    uint32_t unhashed_leaf;          /* this one's */
    gd_state_tag tag;
    uint32_t segments;               /* S = H / K */
    uint32_t done;                   /* segments trained so far */
} gd_worker_round_run;

gd_status gd_diloco_round_begin(gd_trainer *t, const gd_diloco_config *c, gd_worker_round *out,
                                uint64_t round, const gd_values_reader *start, size_t start_n,
                                const gd_worker_state_source *prev, const char *address,
                                uint32_t rank, const gd_values_reader *residual,
                                const gd_state_leaf_sink *starts,
                                gd_worker_round_run *run) GD_MUST_CHECK;
gd_status gd_diloco_round_segment(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                  gd_worker_round *out, const gd_worker_state_source *reload,
                                  gd_worker_round_run *run) GD_MUST_CHECK;
/* After every segment (run->done == run->segments). With payload_file
 * (an empty file begun by the caller, who commits it once this returns
 * GD_OK, or aborts it) the payload's file form goes there a window of
 * chunks at a time as it is encoded and out->payload keeps no chunk's
 * bytes (in_file); without, the payload is in memory. */
gd_status gd_diloco_round_finish(gd_trainer *t, const gd_diloco_config *c, gd_worker_round *out,
                                 gd_worker_round_run *run, const gd_state_sink *post,
                                 gd_file_atomic *payload_file) GD_MUST_CHECK;
/* Δ + decay·residual of one chunk, encoded as the worker does (the rule a
 * verifier replays on one chunk): delta[i] = start[i] - params[i]; with
 * error feedback the residual is first multiplied by the decay, then
 * x = Δ + residual is coded and residual becomes x - decoded. residual
 * (count values, updated in place) is ignored without error feedback.
 * out (cap >= gd_codec_chunk_bound) receives the chunk's canonical bytes. */
gd_status gd_diloco_encode_chunk(const gd_diloco_config *c, uint8_t *out,
                                 size_t cap, const float *start, const float *params,
                                 float *residual, size_t count, size_t *written) GD_MUST_CHECK;

/* --- aggregation ------------------------------------------------------------------------ */

/* Writes a contribution's decoded Δ (n values) into out. */
typedef gd_status (*gd_contribution_read_fn)(void *ctx, float *out, size_t n);

/* A contribution's Δ is either held by the caller (delta) or decoded on
 * demand (read, with delta NULL): the aggregate then holds one decoded
 * contribution at a time, whatever their number. read is called twice per
 * contribution (its norm, then the step) and must write the same values. */
typedef struct gd_contribution {
    const char *address;
    size_t n;                   /* values in delta: must be G's */
    const uint8_t *layout_digest; /* 32 bytes: must be the run's */
    const float *delta;         /* decoded Δ, or NULL */
    gd_contribution_read_fn read; /* NULL where delta is given */
    void *read_ctx;
    uint64_t tokens;
} gd_contribution;

typedef struct gd_aggregate_stats {
    double median_norm;
    double max_norm;
    uint32_t clipped;   /* contributions scaled down */
} gd_aggregate_stats;

/* The same step a window of values at a time, for G and contributions
 * that are never whole in memory (stores on disk, payloads decoded chunk
 * by chunk): every contribution reads ranges (read_range), G is read and
 * written through io. The norms chain the backend's sum of squares over
 * windows that start at multiples of GD_SUM_SQUARES_CHUNK, and the rest is
 * element by element, so G' has gd_diloco_aggregate's bits exactly.
 * Memory: four windows of floats beside what the readers keep. */
typedef gd_status (*gd_contribution_range_fn)(void *ctx, float *out, size_t lo, size_t count);

typedef struct gd_contribution_windowed {
    const char *address;
    size_t n;
    const uint8_t *layout_digest;
    gd_contribution_range_fn read_range;
    void *read_ctx;
    uint64_t tokens;
    /* Its sum of squares when the caller already has it (gd_sum_squares
     * over the values read_range gives), or NULL: the aggregate's first
     * pass reads it. With every contribution's, the payloads are read once. */
    const double *sum_squares;
} gd_contribution_windowed;

/* A contribution's sum of squares made from its values a piece at a time,
 * in any order and on any thread (each piece once), as its payload's
 * chunks are checked: each piece adds its blocks of GD_SUM_SQUARES_CHUNK
 * values (the backend's sum of squares of each, alone), and the total adds
 * the blocks' partials in order. That is the backend's own order, so the
 * total has the bits of the sum over the whole array, the aggregate's
 * first pass. A piece must start at a multiple of the block and end at
 * one, or at n. */
typedef struct gd_sum_squares {
    size_t n, blocks;
    double *partial; /* per block */
} gd_sum_squares;

gd_status gd_sum_squares_init(gd_sum_squares *s, size_t n) GD_MUST_CHECK;
gd_status gd_sum_squares_add(gd_sum_squares *s, const float *values, size_t lo,
                             size_t count) GD_MUST_CHECK;
double gd_sum_squares_total(const gd_sum_squares *s);
void gd_sum_squares_free(gd_sum_squares *s);

typedef struct gd_global_io {
    size_t n;        /* G's values */
    /* G's params and momentum [lo, lo + count) into the arrays. */
    gd_status (*read)(void *ctx, float *params, float *momentum, size_t lo, size_t count);
    /* G' over the same range (called once per range, in order). */
    gd_status (*write)(void *ctx, const float *params, const float *momentum, size_t lo,
                       size_t count);
    void *ctx;
} gd_global_io;

/* G held in memory as a gd_global_io: windows read from `from` and G'
 * written into `to`, which may be `from` itself (each window is read
 * before it is written). a must outlive the io. */
typedef struct gd_global_arrays {
    const gd_global_state *from;
    gd_global_state *to;
} gd_global_arrays;

gd_global_io gd_global_io_arrays(gd_global_arrays *a);
/* Its read: a->from's [lo, lo + count) (ctx is a gd_global_arrays). */
gd_status gd_global_arrays_read(void *ctx, float *params, float *momentum, size_t lo,
                                size_t count) GD_MUST_CHECK;

/* window: values per window, a multiple of GD_SUM_SQUARES_CHUNK. */
gd_status gd_diloco_aggregate_windows(const gd_backend *be, const gd_diloco_config *c,
                                      const uint8_t layout_digest[32],
                                      const gd_contribution_windowed *contribs,
                                      size_t n_contribs, const gd_global_io *g, size_t window,
                                      gd_aggregate_stats *stats) GD_MUST_CHECK;

/* Steps g with the contributions (any order; they are summed in the one
 * address order of proofs/diloco_rules.h): clipping, token weights, the
 * Nesterov outer step. A contribution whose size or layout digest is not
 * g's and layout_digest's, or a duplicate address, is GD_ERR_INVALID
 * before anything is read. The arithmetic runs on be (NULL: the CPU on the
 * caller's thread) and gives the same bits on every backend. */
gd_status gd_diloco_aggregate(const gd_backend *be, const gd_diloco_config *c,
                              const uint8_t layout_digest[32], const gd_contribution *contribs,
                              size_t n_contribs, gd_global_state *g,
                              gd_aggregate_stats *stats) GD_MUST_CHECK;

#endif
