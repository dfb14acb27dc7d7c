/* The round engine: a participant's compute for one round of a chain run,
 * with no I/O. The daemon, the simulation and tests all train, check and
 * aggregate through it, so every host derives the same bits from the same
 * chain state:
 *
 *   train      G_r and the worker's own state -> the payload, the transcript
 *              and the segment-start states it serves, and the commitment;
 *   check      a commitment, a drawn check and what the target served ->
 *              a verdict and the digest the chain compares;
 *   aggregate  the aggregation set's payloads and tokens -> G_{r+1}.
 *
 * A worker's optimizer state (moments, step, residual) carries from one
 * round to the next only when the chain holds its commitment of the round
 * before; otherwise it starts the round from zeros at step 0, which is what
 * a validator then requires of its first leaf (docs/protocol.md, "Round
 * engine"). With overlap a worker that committed in the round before starts
 * from S_r = G_{r-1} - Δ̂_{w,r-1} (gd_engine_overlap_start_path), which it can
 * compute as soon as that commitment is made, so it may train round r a
 * segment at a time while round r - 1 is still checked and aggregated
 * (gd_engine_job); a validator then checks leaf 0 by the drawn chunk. */
#ifndef GD_PLUGIN_MEMBER_ROUND_ENGINE_H
#define GD_PLUGIN_MEMBER_ROUND_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/wire/diloco_msg.h"
#include "common/bytes.h"
#include "common/status.h"
#include "gonka/diloco/v1/types.pb-c.h"
#include "kernels/backend_registry.h"
#include "plugin/member/run_config.h"
#include "proofs/diloco_rules.h"
#include "trainer/diloco.h"
#include "trainer/verify.h"

typedef struct gd_engine {
    gd_run_config rc;
    char data_spec[1024];
    gd_backend_group backends;   /* where the trainer's tensors live (ranks[0]: G) */
    gd_trainer *trainer;
    gd_data *data;
    size_t n;                    /* the model's parameter count */
    gd_state_tag tag;
    uint8_t zero_root[32];       /* the root of n zeros (first-round links) */
    uint32_t chunks;             /* chunks of n values */
} gd_engine;

/* What a host brings to a run: its threads and accelerators, where it
 * keeps the run's data, and what it remembers of that data. */
typedef struct gd_engine_host {
    int threads;
    const char *backend;                /* kernels/backend_registry.h; NULL: cpu */
    size_t gpus;                        /* data-parallel ranks; 0 meaning 1 */
    gd_memory_settings memory;          /* how the model is kept on them */
    const char *const *data_paths;      /* the node's `data` key; none: the spec's */
    size_t n_data_paths;
    const gd_data_hash_memo *data_memo; /* NULL: every file is read and hashed */
} gd_engine_host;

/* The engine of run `run` from its spec (plugin/member/run_config.h) on host's
 * resources: its model, trainer and data source, the spec's data read from
 * the host's paths when any are given and refused unless it is the run's
 * (gd_run_config_open_data). */
gd_status gd_engine_open(gd_engine *e, const Gonka__Diloco__V1__RunSpec *spec, uint64_t run,
                         const gd_engine_host *host) GD_MUST_CHECK;
void gd_engine_close(gd_engine *e);

/* G_0: the spec's seed's weights and zero momentum; its hash must be the
 * spec's initial_state_hash (GD_ERR_INVALID otherwise). g is initialised. */
gd_status gd_engine_initial_global(gd_engine *e, gd_global_state *g) GD_MUST_CHECK;
gd_status gd_engine_global_hash(gd_engine *e, const gd_global_state *g,
                                uint8_t out[32]) GD_MUST_CHECK;

/* A worker's state at its start in a run: zeros at step 0 with the chain's
 * rank and the member's address (at most GD_STATE_ADDRESS_MAX bytes). */
gd_status gd_engine_worker_init(gd_engine *e, gd_worker_state *w, const char *address,
                                uint32_t rank) GD_MUST_CHECK;

/* --- training ---------------------------------------------------------------------------- */

typedef struct gd_trained_round {
    gd_worker_round r;
    uint32_t segments;
    gd_worker_state *starts;  /* the segment-start states (segments of them), or NULL
                               * where a job's sink took them as they were reached */
    gd_buf transcript;        /* every leaf's descriptor (gd_engine_transcript_parse) */
    gd_diloco_commit commit;  /* MsgCommitRound's fields */
    double mean_loss;         /* over the round's inner steps */
} gd_trained_round;

void gd_trained_round_free(gd_trained_round *t);
/* Frees all but what a stored round still needs in memory: its commitment's
 * fields, mean loss and segment count (its files are on disk). */
void gd_trained_round_shed(gd_trained_round *t);

/* A fresh start of w (no commitment of it in the round before): zero
 * moments, residual and step; its parameters are overwritten by G_r. */
void gd_engine_worker_reset(gd_worker_state *w);

/* Trains round `round` of w from start's parameters: S_r, which is G_r,
 * or with overlap gd_engine_overlap_start_path's (start's momentum is not
 * read). With fresh (the chain holds no commitment of w in round - 1) w's
 * moments, step and residual are reset to zeros first. w is updated to the
 * state after encoding (leaf S + 1). */
gd_status gd_engine_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                          const gd_global_state *g, bool fresh, gd_worker_state *w) GD_MUST_CHECK;

/* The transcript file and commitment fields of a trained round whose r
 * and starts are filled: MsgCommitRound's fields (the payload's size is
 * its file form's, which is written from r.payload's chunks, never
 * serialized whole) and the mean loss (gd_engine_train's last step). */
gd_status gd_engine_round_seal(gd_engine *e, gd_trained_round *out, uint64_t round) GD_MUST_CHECK;

/* S_r of an overlapped round for a worker that committed in round - 1:
 * G_{r-1} (g_prev) minus its own decoded payload of round - 1 (its file at
 * prev_path, which must be the commitment's: root and leaf count), read in
 * place and decoded a chunk at a time. out's parameters are S_r
 * (initialised here): in memory, or with spill_dir in a file there that
 * has no name (gd_global_state_make_file), read back a chunk at a time,
 * each checked against the leaf recorded as it was written. It has no
 * momentum (a start's is never read). The bits are the same either way. */
gd_status gd_engine_overlap_start_path(gd_engine *e, gd_global_state *out, uint64_t round,
                                       const char *address, const gd_global_state *g_prev,
                                       const char *prev_path, const uint8_t prev_root[32],
                                       uint32_t prev_leaves, const char *spill_dir) GD_MUST_CHECK;

/* A round trained a segment at a time (trainer/diloco.h): a node that
 * trains the next round ahead does its other duties between segments, on
 * the same trainer. The worker's state lives in the trainer, never copied
 * whole: begin loads the moments and step of prev (the worker's state file
 * after its previous round; NULL: a fresh optimizer state), whose residual
 * the job reads a window at a time as it needs it (through a descriptor
 * of its own, so the caller may close prev's; a prev read from memory must
 * outlive the job). S_r is not copied: the job either
 * takes it over (take: an overlapped start made for it, left empty) or
 * borrows its parameters (borrow: the node's G_r, which must stay
 * unchanged until the job ends; the round refuses a start that changed);
 * each
 * leaf goes to the sink as it is reached, read from the trainer a window
 * at a time; each gd_engine_job_segment trains one segment (first loading
 * reload, the state at its start, when other work used the trainer), and
 * the last also encodes, sends leaf S + 1 to the sink and seals, leaving
 * job->out as gd_engine_train's out without its starts (*done set). On an
 * error the job is over (freed); free it with gd_engine_job_free either
 * way. */
/* Where a job's states go as training reaches them: leaf i (the worker's
 * state at the start of segment i) goes to `starts` in the pass that
 * describes it (trainer/diloco.h, gd_state_leaf_sink; leaf 0 is put in
 * place only once it matches the previous state's descriptor); leaf S + 1,
 * the state after encoding, comes as the round makes it: post_begin,
 * post_write for each window in order, then post_end with its descriptor
 * (NULL: the round failed, the file is given up). payload_begin, when set, begins the file the round's payload is
 * encoded into, a window of chunks at a time (its place in the store); the
 * job commits it, durable, once the round is encoded, before it seals, and
 * aborts it on a failure. Without it the payload stays in job->out. */
typedef struct gd_engine_start_sink {
    gd_state_leaf_sink starts; /* leaves 0 to S - 1, with a context of its own */
    gd_status (*post_begin)(void *ctx, uint64_t round, uint32_t leaf, size_t n);
    gd_status (*post_write)(void *ctx, const float *params, const float *exp_avg,
                            const float *exp_avg_sq, const float *residual, size_t lo,
                            size_t count);
    gd_status (*post_end)(void *ctx, const gd_worker_desc *desc);
    gd_status (*payload_begin)(void *ctx, uint64_t round, gd_file_atomic *f);
    void *ctx;
} gd_engine_start_sink;

typedef struct gd_engine_job {
    bool active;
    uint64_t round;
    gd_global_state own_start; /* S_r when taken over (else empty: borrowed) */
    gd_values_reader start;    /* S_r's params: own_start's or the borrowed G's */
    bool prev_open;           /* prev_fd is the job's to close */
    int prev_fd;              /* the previous post state's file (the job's own) */
    bool has_prev;            /* the round continues a previous state: prev */
    gd_state_file_view prev;  /* read through prev_fd: the residual the round began with */
    gd_values_reader residual; /* it, or zeros for a fresh state */
    gd_trained_round out;
    gd_worker_round_run run;
    gd_engine_start_sink sink;
    uint32_t start_leaf;      /* the start being handed to the sink */
} gd_engine_job;

gd_status gd_engine_job_begin(gd_engine *e, uint64_t round, const gd_global_state *borrow,
                              gd_global_state *take, const gd_state_file_view *prev,
                              const char *address, uint32_t rank,
                              const gd_engine_start_sink *sink, gd_engine_job *job) GD_MUST_CHECK;
gd_status gd_engine_job_segment(gd_engine *e, gd_engine_job *job,
                                const gd_worker_state_source *reload, bool *done) GD_MUST_CHECK;
/* The step the job's worker has reached (its trainer's). */
uint64_t gd_engine_job_step(const gd_engine *e);
/* Hands the finished round over (job->out moved into out; the job ends). */
void gd_engine_job_take(gd_engine_job *job, gd_trained_round *out);
void gd_engine_job_free(gd_engine_job *job);

/* What trains a round for a member: gd_engine_train, or a stand-in with
 * its signature (the test-only adversaries of tests/adversary play their
 * cheats through it; the product never sets another). */
typedef gd_status (*gd_engine_train_fn)(gd_engine *e, gd_trained_round *out, uint64_t round,
                                        const gd_global_state *g, bool fresh,
                                        gd_worker_state *w);

/* The file form of state leaf `leaf` of a trained round: the segment
 * starts for leaf < S, the post-encoding state w for leaf S + 1. */
gd_status gd_engine_state_file(gd_engine *e, gd_buf *out, uint64_t round,
                               const gd_worker_state *state, uint32_t leaf,
                               uint32_t segments) GD_MUST_CHECK;

/* A transcript file: S + 2 descriptors; each must decode, and their MMR
 * must have the committed root. descs receives the S + 2 descriptors
 * (caller's array) and mmr the tree (initialised here; free it). */
gd_status gd_engine_transcript_parse(const uint8_t *bytes, size_t len, uint32_t segments,
                                     const uint8_t root[32], gd_worker_desc *descs,
                                     gd_mmr *mmr) GD_MUST_CHECK;

/* --- checking ---------------------------------------------------------------------------- */

/* What a check needs from the chain: the target's commitment and rank, the
 * drawn segment, step and chunk, and the target's commitment of the round
 * before (NULL if the chain holds none). With overlap and prev, also chunk
 * `chunk` of G_{r-1}'s parameters, proved by the caller against the
 * chain's start state hash of round - 1 (gd_engine_overlapped says when). */
typedef struct gd_check_input {
    uint64_t round;
    const char *target;
    uint32_t rank;
    const Gonka__Diloco__V1__Commitment *commitment;
    const Gonka__Diloco__V1__Commitment *prev; /* round - 1, or NULL */
    uint32_t segment, step, chunk;
    const float *prev_global_chunk; /* the chunk's values of G_{r-1}, or NULL */
} gd_check_input;

/* Whether round `round` of a worker whose commitment of round - 1 the
 * chain holds (has_prev) started overlapped: from G_{r-1} - Δ̂_{w,r-1},
 * not G_r. One rule for the worker, its checkers and the fetches. */
bool gd_engine_overlapped(const gd_engine *e, uint64_t round, bool has_prev);

/* What the target served for it (all required, except the previous
 * transcript when there is no prev). Only the segment re-executed is
 * fetched whole, and without its residual: the payload chunk check needs
 * one chunk of the start and post states, each array's chunk proved
 * against the transcript's roots (12 bytes per parameter per check, where
 * three whole states took 48). */
typedef struct gd_check_evidence {
    gd_buf transcript;      /* round's transcript */
    gd_buf prev_transcript; /* round - 1's, when prev */
    gd_buf segment_state;   /* leaf `segment` without its residual (its first 312 + 12 n
                             * bytes): where the re-execution starts; in memory, or
                             * empty when it was fetched to segment_state_path */
    char segment_state_path[4096]; /* "" unless the state is in this file */
    gd_buf start_chunk;     /* chunk `chunk` of leaf 0's arrays (states/0/chunks/{chunk}) */
    gd_buf start_proof;     /* its X-Gd-Proof: four LE32-length-prefixed MMR proofs */
    gd_buf post_chunk;      /* chunk `chunk` of leaf S + 1's arrays */
    gd_buf post_proof;
    gd_buf prev_payload_chunk; /* overlapped: chunk `chunk` of the round - 1 payload */
    gd_buf prev_payload_proof; /* its X-Gd-Proof (an MMR proof's wire form) */
    const uint8_t *payload; /* the whole payload file as fetched for the round (not owned), */
    size_t payload_len;
    char payload_path[4096]; /* or, when payload is NULL, the file it was fetched to */
} gd_check_evidence;

void gd_check_evidence_free(gd_check_evidence *ev);

typedef struct gd_check_answer {
    gd_diloco_verdict verdict; /* PASS or FAIL (UNAVAILABLE is the caller's, on no evidence) */
    uint8_t digest[32];        /* the verdict digest (zeros when no segment was re-executed) */
    char why[256];             /* why it failed */
} gd_check_answer;

/* Checks the links, the drawn payload chunk and the drawn segment against
 * G_r = g. What the target got wrong is a FAIL; an error status is a local
 * failure only. */
gd_status gd_engine_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                          const gd_global_state *g, gd_check_answer *out) GD_MUST_CHECK;

/* What answers a check for a member: gd_engine_check, or a stand-in with its
 * signature (the test-only adversaries' seam, as gd_engine_train_fn). */
typedef gd_status (*gd_engine_check_fn)(gd_engine *e, const gd_check_input *in,
                                        const gd_check_evidence *ev, const gd_global_state *g,
                                        gd_check_answer *out);

/* --- aggregation --------------------------------------------------------------------------- */

typedef struct gd_engine_contribution {
    const char *address;
    uint64_t tokens;         /* the chain's count */
    const uint8_t *payload;  /* the payload file in memory, or NULL: */
    int fd;                  /* ... the payload file on disk (gd_engine_aggregate_io only) */
    size_t payload_len;
    const uint8_t *root;     /* the committed root and leaf count it must match */
    uint32_t leaves;
    /* Its sum of squares when the caller checked the payload as it arrived
     * (gd_payload_decoded's), else NULL: see gd_engine_aggregate_io. */
    const double *sum_squares;
} gd_engine_contribution;

/* G_{r+1} from G_r through g's io (trainer/diloco.h), a window at a time:
 * every payload is checked against its commitment and header first, then
 * read where it lies, a chunk decoded at a time (gd_payload_view), so
 * memory is the payloads' bytes, a few windows and a chunk per payload,
 * however large the model. A payload given with its sum of squares is
 * read once, by the step, which checks it against its commitment as it
 * goes (gd_payload_view_learn): one that changed on this host's disk since
 * it was checked is GD_ERR_IO, and no G_{r+1} is committed. */
gd_status gd_engine_aggregate_io(gd_engine *e, uint64_t round, const gd_engine_contribution *cs,
                                 size_t n, const gd_global_io *g) GD_MUST_CHECK;
/* The same with G in memory, stepped in place (g->round advances). */
gd_status gd_engine_aggregate(gd_engine *e, uint64_t round, const gd_engine_contribution *cs,
                              size_t n, gd_global_state *g) GD_MUST_CHECK;

/* What decoding every chunk of a payload, in the pass that proves it
 * against its commitment, tells of it:
 * - malformed: it is the payload its worker committed to, yet bad_chunk
 *   (the lowest such) does not decode (docs/protocol.md, "A payload that
 *   does not decode"): the worker's own fault, the same for every
 *   receiver, since the commitment fixes the bytes and decoding is
 *   deterministic;
 * - its sum of squares, the aggregate's norm, when its chunks hold whole
 *   GD_SUM_SQUARES_CHUNK blocks (has_norm): the bits of the aggregate's
 *   own first pass, so an aggregate given it reads the payload once. */
typedef struct gd_payload_decoded {
    bool malformed;
    uint32_t bad_chunk;
    char why[200];
    bool has_norm;
    double sum_squares;
} gd_payload_decoded;

/* A peer's payload read in place (nothing copied), in memory, held to the
 * committed root and leaf count and the header this run expects of
 * `participant` in `round`, keeping the commitment's whole MMR in mmr (to prove a chunk from;
 * gd_mmr_free it). With decoded (may be NULL) every chunk is also decoded,
 * in the same pass: a payload whose root is the committed one but that
 * does not decode is opened all the same, with decoded->malformed set. */
gd_status gd_engine_payload_view_proved(gd_engine *e, gd_payload_view *out, gd_mmr *mmr,
                                        gd_payload_decoded *decoded, uint64_t round,
                                        const char *participant, const uint8_t *bytes,
                                        size_t len, const uint8_t root[32],
                                        uint32_t leaves) GD_MUST_CHECK;
/* gd_engine_payload_view_proved on the payload file at path. */
gd_status gd_engine_payload_view_path_proved(gd_engine *e, gd_payload_view *out, gd_mmr *mmr,
                                             gd_payload_decoded *decoded, uint64_t round,
                                             const char *participant, const char *path,
                                             const uint8_t root[32],
                                             uint32_t leaves) GD_MUST_CHECK;
/* The same checks on the payload file fd (len bytes), read in place, with
 * the root alone. */
gd_status gd_engine_payload_view_file(gd_engine *e, gd_payload_view *out,
                                      gd_payload_decoded *decoded, uint64_t round,
                                      const char *participant, int fd, uint64_t len,
                                      const uint8_t root[32], uint32_t leaves) GD_MUST_CHECK;

/* Mean loss in 1e-6 nats, rounded, as a commitment carries it. */
uint64_t gd_engine_loss_micro(double loss);

/* Evaluation loss of g's parameters on `batches` evaluation batches. */
gd_status gd_engine_eval(gd_engine *e, const gd_global_state *g, size_t batches,
                         double *loss) GD_MUST_CHECK;

#endif
