/* What the training loop (train.c) and full sharding (train_full.c)
 * share: the trainer's ranks and the meeting of the ranks. Private to
 * trainer/. */
#ifndef GD_TRAINER_TRAIN_IMPL_H
#define GD_TRAINER_TRAIN_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trainer/model.h"
#include "trainer/train.h"

/* One rank of the trainer: a backend (one GPU, or the CPU) and its share
 * of the model. A trainer of one rank holds every array whole; over n
 * ranks rank r owns the shard [lo, hi) of the gradient and of AdamW's
 * moments, and updates that shard of the parameters for everyone. With
 * optimizer sharding (ZeRO-1) every rank also holds the whole model and a
 * micro-batch's whole gradient; with full sharding (ZeRO-3) it holds only
 * its shard of the parameters and gathers the model a unit (a layer, the
 * embedding, the head) at a time (train_full.c). */
typedef struct gd_rank {
    gd_backend be;
    struct gd_trainer *t;
    gd_model_f32 *model;
    int32_t *tokens;     /* host: the micro-batch it computes, micro_batch rows of seq_len + 1 */
    float *params;       /* optimizer: the whole model, the same bits on every rank between
                            steps; full: the shard [lo, hi) */
    float *micro;        /* one micro-batch's gradient, whole (NULL: not needed) */
    float *inbox;        /* optimizer: n_ranks slices [lo, hi) of a round's micro gradients;
                            full: one unit's slice from one rank (one rank: NULL) */
    float *grads;                        /* the shard [lo, hi) */
    /* AdamW's moments of the shard: floats, or bf16 codes with moments
     * bf16 (t->moment_bytes each); in host memory when offloaded, staged
     * through a window on the rank in the same format. */
    void *exp_avg, *exp_avg_sq;
    void *stage_m, *stage_v;
    size_t stage_count;
    size_t lo, hi;
    /* Full sharding: two unit windows (the unit in use, and the next one
     * arriving beside it: train_full.c), a unit's gradient, and with a
     * tied head unit 0 (the table, used first and last) apart from them;
     * the parameter windows hold GD_GATHER_TAIL values more than a unit. */
    float *unit_params[GD_UNIT_SLOTS], *unit_grads;
    float *table_params, *table_grads;
    bool table_gathered, table_grads_open;
    size_t micro_index;  /* the micro-batch it computes this round */
    bool busy;           /* it has one this round */
    double loss;
    gd_status status;
    char why[256]; /* status's detail, from the rank's thread */
} gd_rank;

/* Full sharding: what one slot of every rank's unit windows holds (the
 * same on every rank). */
typedef struct gd_unit_slot {
    size_t unit;
    bool held;     /* unit's parameters are there, or arriving */
    bool arriving; /* on the transfer queues: the ops must wait for them (and a
                      bf16 unit's codes be widened) before they read it */
} gd_unit_slot;

/* What the last rank to reach a meeting does for all of them. */
typedef void (*gd_meet_action)(struct gd_trainer *t, size_t unit);

struct gd_trainer {
    gd_param_layout layout;
    gd_train_options options;
    gd_pool *pool;   /* host work: the CPU backend's ops, fallbacks, hashing */
    gd_backend be;   /* rank 0's backend: where callers find the parameters */
    gd_rank *ranks;
    size_t n_ranks;
    gd_collective *coll; /* borrowed; NULL with one rank */
    gd_memory_settings memory;        /* sharding, recomputation, offload */
    size_t offload_window;            /* values staged at a time when offloaded */
    size_t moment_bytes;              /* 4, or 2 with moments bf16 (fixed at creation) */
    gd_model_settings model_settings; /* the model's part of memory */
    bool meet_ready;     /* meet_lock and meet_cond are initialised */
    bool tied;           /* the head is the embedding's table (unit 0) */
    /* Full sharding: the largest unit in the unit window and in a tied
     * table's (values), and the bytes gathered into busy ranks' windows
     * from other ranks since the trainer was made. */
    size_t unit_window, table_window;
    uint64_t gathered_bytes;
    uint64_t gathers_now, gathers_ahead; /* units gathered on demand, and ahead */
    /* Full sharding: the unit windows' slots, the slot the last gather
     * served and the unit it served (has_last: one since the last drain). */
    gd_unit_slot slots[GD_UNIT_SLOTS];
    size_t served_slot, last_unit;
    bool has_last;
    uint64_t step;   /* optimizer steps taken */
    /* Full sharding: the busy ranks meet at each unit's gather and at each
     * unit's gradient; the last to arrive acts for all (train_full.c). */
    pthread_mutex_t meet_lock;
    pthread_cond_t meet_cond;
    size_t meet_expected, meet_arrived;
    uint64_t meet_generation;
    gd_meet_action meet_action;
    size_t meet_unit;
    size_t round_first;  /* the micro-batch of rank 0 in this round */
};

/* --- full sharding (train_full.c) --- */

/* The model feed of a fully sharded rank (trainer/model_api.h); ctx is
 * the gd_rank. */
extern const gd_model_feed_f32 gd_rank_feed;

/* Sets up and tears down the ranks' meeting. */
gd_status gd_trainer_meet_init(gd_trainer *t) GD_MUST_CHECK;
void gd_trainer_meet_free(gd_trainer *t);
/* Before a round: the busy ranks are the ones that will meet. */
void gd_trainer_meet_expect(gd_trainer *t, size_t ranks);
/* A busy rank that stops before its first meeting (its forward failed)
 * leaves, so the others do not wait for it. */
void gd_trainer_meet_leave(gd_trainer *t);
/* A rank's pass starts: nothing of unit 0 is held over from the last. */
void gd_rank_feed_reset(gd_rank *k);
/* After the ranks' passes: the ops wait for every transfer still queued
 * (a prefetch no pass asked for), and the unit windows hold nothing, so
 * the parameters may change. */
void gd_trainer_prefetch_drain(gd_trainer *t);

#endif
