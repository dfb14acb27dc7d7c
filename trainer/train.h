/* The inner training loop: parameters, gradients and AdamW moments in flat
 * buffers on a backend (kernels/backend.h; the CPU unless told otherwise),
 * one step = gradient accumulation over the micro-batches of a fixed
 * layout, global-norm clipping, one AdamW update. The host sees the state
 * only through gd_trainer_get_state / gd_trainer_set_state and the
 * checkpoint files.
 *
 * A step's bits depend only on the parameters, the optimizer state, the
 * step number and the options below; not on the thread count (the ops are
 * deterministic for any number of threads and the micro-batches are summed
 * in a fixed order), so a validator replays any step exactly with however
 * many threads it has. */
#ifndef GD_TRAINER_TRAIN_H
#define GD_TRAINER_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "kernels/backend.h"
#include "kernels/collective.h"
#include "trainer/config.h"
#include "trainer/data.h"
#include "trainer/layout.h"
#include "trainer/optim.h"
#include "trainer/settings.h"

typedef struct gd_train_options {
    gd_optim_config optim;
    size_t batch;       /* sequences per step */
    size_t seq_len;     /* tokens per sequence */
    size_t micro_batch; /* sequences per forward/backward pass; divides batch */
    uint64_t seed;      /* initial weights and batch selection */
    uint32_t worker;    /* whose data stream (DiLoCo worker rank) */
    /* 0: every micro-batch comes from `worker`'s stream. N > 0: micro-batch
     * m of a step comes from worker m mod N's stream (its micro-batch
     * m / N), so one trainer reproduces synchronous data parallelism over
     * N workers (the DDP baseline). */
    uint32_t data_workers;
    /* Naive attention with whole logits, or flash attention with the
     * cross-entropy in chunks (trainer/settings.h): a step's bits differ
     * between them, so it is a field of the run's spec. */
    gd_attention attention;
    /* bf16 storage of the weights as the ops read them and of the
     * activations (precision), and of AdamW's moments (moments), with fp32
     * arithmetic and master weights (trainer/settings.h): fields of the
     * run's spec too. */
    gd_precision precision;
    gd_precision moments;
} gd_train_options;

/* batch 8, seq_len 256, micro_batch = batch, seed 1, worker 0, default optimizer. */
void gd_train_options_default(gd_train_options *o);

gd_status gd_train_options_validate(const gd_train_options *o,
                                     const gd_model_config *c) GD_MUST_CHECK;

typedef struct gd_step_stats {
    uint64_t step;      /* the step just taken (0-based) */
    double loss;        /* mean cross-entropy over the step's tokens (nats) */
    double grad_norm;   /* global L2 norm before clipping */
    double lr;
    uint64_t tokens;    /* batch * seq_len */
} gd_step_stats;

typedef struct gd_trainer gd_trainer;

/* A trainer with freshly initialised parameters (trainer/init.h, from
 * options->seed) and zero optimizer state at step 0. */
gd_status gd_trainer_new(gd_trainer **out, const gd_model_config *config,
                         const gd_train_options *options, int threads) GD_MUST_CHECK;
/* As gd_trainer_new, with the tensors on backend (borrowed; it must
 * outlive the trainer). NULL is the CPU backend over the trainer's threads,
 * which is what gd_trainer_new uses; a backend handle without a pool
 * runs its fallbacks on the trainer's threads. */
gd_status gd_trainer_new_on(gd_trainer **out, const gd_model_config *config,
                            const gd_train_options *options, int threads,
                            const gd_backend *backend) GD_MUST_CHECK;
/* What the host brings to a trainer, none of which changes a step's bits:
 * n backends where its tensors live (one per GPU; borrowed, rank 0's is
 * gd_trainer_backend) with coll copying between them (borrowed; NULL with
 * one rank), at most GD_TRAINER_RANKS_MAX; how the model is spread over
 * them (trainer/settings.h):
 *   GD_SHARD_OPTIMIZER  each rank holds the whole model and owns a shard
 *                       of the gradient and of AdamW's moments (ZeRO-1);
 *   GD_SHARD_FULL       each rank owns a shard of the parameters too and
 *                       gathers the model a layer at a time (ZeRO-3,
 *                       trainer/train_full.c);
 * whether activations are recomputed (trainer/model_api.h); and whether
 * AdamW's moments live in host memory (GD_OFFLOAD_OPTIMIZER: each update
 * brings them to the rank GD_OFFLOAD_STAGE values at a time). The ranks
 * compute their micro-batches on threads of their own, so a rank's pool,
 * if any, must not be another rank's. A step's bits are the same for any
 * number of ranks and any of these settings (see the step in
 * trainer/train.c). */
#define GD_TRAINER_RANKS_MAX 16
typedef struct gd_trainer_host {
    const gd_backend *be; /* n backends; NULL with n == 1: the CPU */
    size_t n;
    gd_collective *coll;
    gd_memory_settings memory;
    size_t offload_window; /* values of each moment an offloaded update stages at a time
                              (0: GD_OFFLOAD_STAGE; tests use small ones) */
} gd_trainer_host;

/* As gd_trainer_new_on, on host's ranks (NULL, or no backends: one rank
 * on the CPU). */
gd_status gd_trainer_new_ranks(gd_trainer **out, const gd_model_config *config,
                               const gd_train_options *options, int threads,
                               const gd_trainer_host *host) GD_MUST_CHECK;
void gd_trainer_free(gd_trainer *t);

/* One optimizer step on the data's training batches for (seed, worker,
 * step). */
gd_status gd_trainer_step(gd_trainer *t, const gd_data *data,
                          gd_step_stats *stats) GD_MUST_CHECK;

/* Writes the model checkpoint (safetensors, Hugging Face names) and its
 * optimizer companion (trainer/checkpoint.h); data_spec is recorded. */
gd_status gd_trainer_save(const gd_trainer *t, const char *path,
                          const char *data_spec) GD_MUST_CHECK;

/* Restores a trainer from a checkpoint and its optimizer companion, with
 * the options stored there, to continue bit-exactly where it stopped. */
gd_status gd_trainer_resume(gd_trainer **out, const char *path, int threads) GD_MUST_CHECK;
/* gd_trainer_resume onto backend (as gd_trainer_new_on). */
gd_status gd_trainer_resume_on(gd_trainer **out, const char *path, int threads,
                               const gd_backend *backend) GD_MUST_CHECK;
/* gd_trainer_resume onto host's ranks (as gd_trainer_new_ranks). */
gd_status gd_trainer_resume_ranks(gd_trainer **out, const char *path, int threads,
                                  const gd_trainer_host *host) GD_MUST_CHECK;

/* Changes the options of a trainer (a longer schedule, another learning
 * rate, batch or sequence length) and reallocates activations if needed.
 * A resumed run that changes them no longer matches an uninterrupted one. */
gd_status gd_trainer_reconfigure(gd_trainer *t, const gd_train_options *options) GD_MUST_CHECK;

/* Copies a worker's whole optimizer state out of or into the trainer (host
 * arrays of the layout's size, downloaded from or uploaded to the
 * backend), so one trainer (one set of activations) can run several
 * workers in turn; any pointer may be NULL to skip that array. */
void gd_trainer_get_state(const gd_trainer *t, float *params, float *exp_avg,
                          float *exp_avg_sq, uint64_t *step);
void gd_trainer_set_state(gd_trainer *t, const float *params, const float *exp_avg,
                          const float *exp_avg_sq, uint64_t step);

/* The same for the values [lo, lo + count) of each array (host arrays of
 * count values), so a state moves through a window of host memory rather
 * than a copy of the whole model; lo + count must be within the layout.
 * The step counter is set apart. */
void gd_trainer_get_range(const gd_trainer *t, float *params, float *exp_avg, float *exp_avg_sq,
                          size_t lo, size_t count);
void gd_trainer_set_range(gd_trainer *t, const float *params, const float *exp_avg,
                          const float *exp_avg_sq, size_t lo, size_t count);
void gd_trainer_set_step(gd_trainer *t, uint64_t step);

/* The ranks that hold the state: rank r owns the values [*lo, *hi) (its
 * shard of the moments, and under full sharding of the parameters; the
 * shards cover the layout in rank order, and a rank may own none). */
size_t gd_trainer_rank_count(const gd_trainer *t);
void gd_trainer_rank_shard(const gd_trainer *t, size_t r, size_t *lo, size_t *hi);
/* Rank r's backend (where its shard lives). */
const gd_backend *gd_trainer_rank_backend(const gd_trainer *t, size_t r);
/* gd_trainer_get_range of values rank r owns ([lo, lo + count) within its
 * shard; anything else stops the process), read by that rank from its own
 * memory on the calling thread, without the trainer's pool: each rank's
 * reads may run at once on a thread of its own. */
void gd_trainer_get_owned(const gd_trainer *t, size_t r, float *params, float *exp_avg,
                          float *exp_avg_sq, size_t lo, size_t count);

uint64_t gd_trainer_step_count(const gd_trainer *t);
const gd_param_layout *gd_trainer_layout(const gd_trainer *t);
const gd_train_options *gd_trainer_options(const gd_trainer *t);
/* The trainer's host threads (host work: hashing, codecs). */
gd_pool *gd_trainer_pool(gd_trainer *t);
/* Where its tensors live. */
const gd_backend *gd_trainer_backend(const gd_trainer *t);
size_t gd_trainer_activation_bytes(const gd_trainer *t);
/* Full sharding: the bytes gathered into busy ranks' unit windows from
 * other ranks since the trainer was made (fp32 values, or bf16 codes in a
 * bf16 run; 0 with optimizer sharding). */
uint64_t gd_trainer_gathered_bytes(const gd_trainer *t);
/* Full sharding: the units gathered since the trainer was made, on demand
 * (*now: a pass's first unit, a guess missed, a tied table) and ahead of
 * the pass, while the ops ran on the unit before (*ahead). */
void gd_trainer_gather_counts(const gd_trainer *t, uint64_t *now, uint64_t *ahead);

/* The mean cross-entropy (nats/token) of params (host memory; evaluated on
 * the CPU backend over pool) over evaluation batches
 * 0..batches-1 of the data (fewer if the data runs out), micro_batch
 * sequences per pass. *tokens receives the tokens scored (0 if none). */
gd_status gd_evaluate(const gd_param_layout *layout, const float *params, const gd_data *data,
                      size_t batches, size_t batch, size_t seq_len, size_t micro_batch,
                      gd_pool *pool, double *mean_loss, uint64_t *tokens) GD_MUST_CHECK;

/* Told after each evaluation batch: done of batches scored so far. */
typedef void (*gd_eval_progress_fn)(void *ctx, size_t done, size_t batches);

/* gd_evaluate_progress of params (host memory) on backend be, which
 * receives one upload of them; its pool runs the fallbacks. */
gd_status gd_evaluate_backend(const gd_backend *be, const gd_param_layout *layout,
                              const float *params, const gd_data *data, size_t batches,
                              size_t batch, size_t seq_len, size_t micro_batch,
                              double *mean_loss, uint64_t *tokens, gd_eval_progress_fn progress,
                              void *ctx) GD_MUST_CHECK;

/* gd_evaluate_progress of the trainer's own parameters, on its backend
 * (no host copy); progress may be NULL. */
gd_status gd_trainer_evaluate(const gd_trainer *t, const gd_data *data, size_t batches,
                              size_t batch, size_t seq_len, size_t micro_batch,
                              double *mean_loss, uint64_t *tokens, gd_eval_progress_fn progress,
                              void *ctx) GD_MUST_CHECK;

/* gd_evaluate, calling progress (if not NULL) after every batch, so a long
 * evaluation can say how far it is. */
gd_status gd_evaluate_progress(const gd_param_layout *layout, const float *params,
                               const gd_data *data, size_t batches, size_t batch, size_t seq_len,
                               size_t micro_batch, gd_pool *pool, double *mean_loss,
                               uint64_t *tokens, gd_eval_progress_fn progress,
                               void *ctx) GD_MUST_CHECK;

#endif
