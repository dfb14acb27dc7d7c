/* The training loop (see trainer/train.h). */
#include "trainer/train.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "trainer/checkpoint.h"
#include "trainer/init.h"
#include "trainer/model.h"
#include "trainer/train_impl.h"

void gd_train_options_default(gd_train_options *o) {
    memset(o, 0, sizeof *o);
    gd_optim_config_default(&o->optim);
    o->batch = 8;
    o->seq_len = 256;
    o->micro_batch = 8;
    o->seed = 1;
    o->worker = 0;
}

gd_status gd_train_options_validate(const gd_train_options *o, const gd_model_config *c) {
    GD_TRY(gd_optim_config_validate(&o->optim));
    if (o->batch == 0 || o->batch > (1u << 20))
        return gd_fail(GD_ERR_INVALID, "batch %zu must be 1..%u", o->batch, 1u << 20);
    if (o->seq_len == 0 || o->seq_len > c->max_position_embeddings)
        return gd_fail(GD_ERR_INVALID, "sequence length %zu must be 1..%u (the model's "
                                       "max_position_embeddings)",
                       o->seq_len, c->max_position_embeddings);
    if (o->micro_batch == 0 || o->micro_batch > o->batch || o->batch % o->micro_batch != 0)
        return gd_fail(GD_ERR_INVALID, "micro-batch %zu must divide the batch %zu",
                       o->micro_batch, o->batch);
    if (o->attention != GD_ATTENTION_NAIVE && o->attention != GD_ATTENTION_FLASH)
        return gd_fail(GD_ERR_INVALID, "unknown attention %d", (int)o->attention);
    if (o->precision != GD_PRECISION_FP32 && o->precision != GD_PRECISION_BF16)
        return gd_fail(GD_ERR_INVALID, "unknown precision %d", (int)o->precision);
    if (o->moments != GD_PRECISION_FP32 && o->moments != GD_PRECISION_BF16)
        return gd_fail(GD_ERR_INVALID, "unknown moments precision %d", (int)o->moments);
    return GD_OK;
}

static size_t gd_trainer_micro_steps(const gd_trainer *t) {
    return t->options.batch / t->options.micro_batch;
}

static void gd_trainer_free_batch(gd_trainer *t) {
    for (size_t r = 0; r < t->n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        gd_model_free_f32(k->model);
        k->model = NULL;
        free(k->tokens);
        k->tokens = NULL;
        if (k->be.iface != NULL)
            gd_backend_free(&k->be, k->micro);
        k->micro = NULL;
    }
}

void gd_trainer_free(gd_trainer *t) {
    if (t == NULL)
        return;
    gd_trainer_free_batch(t);
    for (size_t r = 0; r < t->n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        if (k->be.iface == NULL)
            continue;
        gd_backend_free(&k->be, k->params);
        gd_backend_free(&k->be, k->inbox);
        gd_backend_free(&k->be, k->grads);
        if (t->memory.offload == GD_OFFLOAD_OPTIMIZER) {
            free(k->exp_avg);
            free(k->exp_avg_sq);
        } else {
            gd_backend_free(&k->be, k->exp_avg);
            gd_backend_free(&k->be, k->exp_avg_sq);
        }
        gd_backend_free(&k->be, k->stage_m);
        gd_backend_free(&k->be, k->stage_v);
        for (size_t i = 0; i < GD_UNIT_SLOTS; i++)
            gd_backend_free(&k->be, k->unit_params[i]);
        gd_backend_free(&k->be, k->unit_grads);
        gd_backend_free(&k->be, k->table_params);
        gd_backend_free(&k->be, k->table_grads);
    }
    free(t->ranks);
    if (t->meet_ready)
        gd_trainer_meet_free(t);
    gd_pool_free(t->pool);
    gd_param_layout_free(&t->layout);
    free(t);
}

/* (Re)allocates what depends on the batch shape: activations, tokens, and
 * the micro-batch gradient where a step has more than one micro-batch's or
 * more than one rank. */
static gd_status gd_trainer_alloc_batch(gd_trainer *t) {
    gd_trainer_free_batch(t);
    const gd_train_options *o = &t->options;
    bool micro = t->memory.shard == GD_SHARD_OPTIMIZER &&
                 (t->n_ranks > 1 || gd_trainer_micro_steps(t) > 1);
    for (size_t r = 0; r < t->n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        GD_TRY(gd_model_new_f32(&k->model, &t->layout, o->micro_batch, o->seq_len,
                                &t->model_settings, &k->be));
        if (t->memory.shard == GD_SHARD_FULL) {
            gd_model_feed_f32 feed = gd_rank_feed;
            feed.ctx = k;
            gd_model_set_feed_f32(k->model, &feed);
        }
        k->tokens = calloc(o->micro_batch * (o->seq_len + 1), sizeof *k->tokens);
        if (k->tokens == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory");
        if (micro && (k->micro = gd_backend_alloc_f32(&k->be, t->layout.total)) == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of %s memory for a micro-batch's gradient",
                           k->be.iface->name);
    }
    return GD_OK;
}

/* Rank r's shard: whole chunks of the sum of squares (so the ranks' sums
 * chain to the bits of one sum over the whole gradient), as even as they
 * come; trailing ranks of a small model may own nothing. */
static void gd_rank_shard(size_t total, size_t n_ranks, size_t r, size_t *lo, size_t *hi) {
    size_t chunks = (total + GD_SUM_SQUARES_CHUNK - 1) / GD_SUM_SQUARES_CHUNK;
    size_t per = (chunks + n_ranks - 1) / n_ranks;
    size_t a = r * per * GD_SUM_SQUARES_CHUNK, b = (r + 1) * per * GD_SUM_SQUARES_CHUNK;
    *lo = a < total ? a : total;
    *hi = b < total ? b : total;
}

/* count moments on rank k, in the trainer's format. */
static void *gd_rank_alloc_moments(const gd_trainer *t, gd_rank *k, size_t count) {
    if (t->moment_bytes == sizeof(uint16_t))
        return gd_backend_alloc_u16(&k->be, count);
    return gd_backend_alloc_f32(&k->be, count);
}

/* Value i of a moments array in the trainer's format. */
static void *gd_moment_at(const gd_trainer *t, void *moments, size_t i) {
    return (char *)moments + i * t->moment_bytes;
}

static gd_status gd_rank_alloc(gd_trainer *t, gd_rank *k) {
    size_t n = t->layout.total, shard = k->hi - k->lo;
    bool full = t->memory.shard == GD_SHARD_FULL;
    k->params = shard > 0 || !full ? gd_backend_alloc_f32(&k->be, full ? shard : n) : NULL;
    /* Full sharding's inbox: the largest slice of one unit in the shard. */
    size_t inbox = full ? gd_param_layout_slice_max(&t->layout, k->lo, k->hi)
                        : t->n_ranks * shard;
    if (t->n_ranks > 1 && inbox > 0)
        k->inbox = gd_backend_alloc_f32(&k->be, inbox);
    bool offload = t->memory.offload == GD_OFFLOAD_OPTIMIZER;
    if (shard > 0) {
        k->grads = gd_backend_alloc_f32(&k->be, shard);
        if (offload) { /* host memory, and a staging window on the rank */
            k->exp_avg = calloc(shard, t->moment_bytes);
            k->exp_avg_sq = calloc(shard, t->moment_bytes);
            k->stage_count = shard < t->offload_window ? shard : t->offload_window;
            k->stage_m = gd_rank_alloc_moments(t, k, k->stage_count);
            k->stage_v = gd_rank_alloc_moments(t, k, k->stage_count);
        } else {
            k->exp_avg = gd_rank_alloc_moments(t, k, shard);
            k->exp_avg_sq = gd_rank_alloc_moments(t, k, shard);
        }
    }
    bool ok = (k->params || (full && shard == 0)) &&
              (shard == 0 || (k->grads && k->exp_avg && k->exp_avg_sq &&
                               (!offload || (k->stage_m && k->stage_v)))) &&
              (t->n_ranks == 1 || inbox == 0 || k->inbox);
    if (ok && full) {
        /* The unit windows (a tied table has windows of its own). */
        size_t window = gd_param_layout_unit_max(&t->layout, t->tied ? 1 : 0);
        size_t table = t->tied ? gd_param_layout_unit_max(&t->layout, 0) : 0;
        t->unit_window = window;
        t->table_window = table;
        for (size_t i = 0; i < GD_UNIT_SLOTS; i++) {
            k->unit_params[i] = gd_backend_alloc_f32(&k->be, window + GD_GATHER_TAIL);
            ok = ok && k->unit_params[i];
        }
        k->unit_grads = gd_backend_alloc_f32(&k->be, window);
        if (table > 0) {
            k->table_params = gd_backend_alloc_f32(&k->be, table + GD_GATHER_TAIL);
            k->table_grads = gd_backend_alloc_f32(&k->be, table);
        }
        ok = ok && k->unit_grads && (table == 0 || (k->table_params && k->table_grads));
    }
    if (!ok)
        return gd_fail(GD_ERR_NOMEM, "out of %s memory for %zu parameters and their optimizer "
                                     "state (%zu MiB on this rank with %s sharding)",
                       k->be.iface->name, n, (full ? shard : n) * 16 >> 20,
                       gd_setting_name(&gd_setting_shard, (int)t->memory.shard));
    return GD_OK;
}

/* A trainer with zeroed buffers for layout (taken over) and options, on
 * ranks (NULL: the CPU backend over the trainer's threads). */
static gd_status gd_trainer_alloc(gd_trainer **out, gd_param_layout *layout,
                                  const gd_train_options *options, int threads,
                                  const gd_trainer_host *placement) {
    GD_TRY(gd_train_options_validate(options, &layout->config));
    /* No placement, or a zeroed one: one rank on the CPU. */
    gd_trainer_host one = {NULL, 1, NULL, {GD_SHARD_OPTIMIZER, GD_RECOMPUTE_NONE, GD_OFFLOAD_NONE}};
    if (placement)
        one.memory = placement->memory;
    const gd_trainer_host *p =
        placement && (placement->n > 0 || placement->be != NULL) ? placement : &one;
    const gd_backend *ranks = p->be;
    size_t n_ranks = p->n;
    gd_collective *coll = p->coll;
    if (n_ranks == 0 || n_ranks > GD_TRAINER_RANKS_MAX ||
        (n_ranks > 1 && (ranks == NULL || coll == NULL || coll->n != n_ranks)))
        return gd_fail(GD_ERR_INVALID, "a trainer over %zu ranks (1..%d) needs a backend for "
                                       "each and a collective over all of them",
                       n_ranks, GD_TRAINER_RANKS_MAX);
    GD_TRY(gd_memory_settings_check(&p->memory));
    gd_trainer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    t->layout = *layout;
    memset(layout, 0, sizeof *layout);
    t->options = *options;
    t->coll = n_ranks > 1 ? coll : NULL;
    t->memory = p->memory;
    t->offload_window = p->offload_window ? p->offload_window : GD_OFFLOAD_STAGE;
    t->moment_bytes = options->moments == GD_PRECISION_BF16 ? sizeof(uint16_t) : sizeof(float);
    t->model_settings.recompute = p->memory.recompute;
    t->model_settings.attention = options->attention;
    t->model_settings.precision = options->precision;
    t->tied = t->layout.lm_head == t->layout.embed;
    gd_status s = gd_trainer_meet_init(t);
    t->meet_ready = s == GD_OK;
    if (s == GD_OK)
        s = gd_pool_new(&t->pool, threads);
    if (s == GD_OK && (t->ranks = calloc(n_ranks, sizeof *t->ranks)) == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK)
        t->n_ranks = n_ranks;
    for (size_t r = 0; s == GD_OK && r < n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        k->t = t;
        if (ranks != NULL)
            k->be = ranks[r];
        else
            gd_backend_cpu_init(&k->be, t->pool);
        /* One rank without host threads borrows the trainer's; ranks of a
         * data-parallel trainer compute on threads of their own, each with
         * its own pool or none (a pool runs one batch of tasks at a time). */
        if (n_ranks == 1 && k->be.pool == NULL)
            k->be.pool = t->pool;
        gd_rank_shard(t->layout.total, n_ranks, r, &k->lo, &k->hi);
        s = gd_rank_alloc(t, k);
    }
    if (s == GD_OK) {
        t->be = t->ranks[0].be;
        s = gd_trainer_alloc_batch(t);
    }
    if (s != GD_OK) {
        gd_trainer_free(t);
        return s;
    }
    *out = t;
    return GD_OK;
}

gd_status gd_trainer_new(gd_trainer **out, const gd_model_config *config,
                         const gd_train_options *options, int threads) {
    return gd_trainer_new_on(out, config, options, threads, NULL);
}

gd_status gd_trainer_new_on(gd_trainer **out, const gd_model_config *config,
                            const gd_train_options *options, int threads,
                            const gd_backend *backend) {
    return gd_trainer_new_ranks(out, config, options, threads,
                                &(gd_trainer_host){backend, 1, NULL, {GD_SHARD_OPTIMIZER}});
}

gd_status gd_trainer_new_ranks(gd_trainer **out, const gd_model_config *config,
                               const gd_train_options *options, int threads,
                               const gd_trainer_host *ranks) {
    gd_param_layout layout;
    GD_TRY(gd_param_layout_build(&layout, config));
    gd_status s = gd_trainer_alloc(out, &layout, options, threads, ranks);
    gd_param_layout_free(&layout); /* no-op when taken over */
    GD_TRY(s);
    gd_trainer *t = *out;
    /* The initial weights are drawn on the host (trainer/init.h) and
     * uploaded once to every rank. */
    bool direct = t->n_ranks == 1 && t->be.iface->host_memory; /* params are whole */
    float *host = direct ? t->ranks[0].params : malloc(t->layout.total * sizeof(float));
    if (host == NULL) {
        gd_trainer_free(t);
        *out = NULL;
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    gd_params_init(t->pool, host, &t->layout, options->seed);
    if (!direct) {
        gd_trainer_set_state(t, host, NULL, NULL, 0);
        free(host);
    }
    return GD_OK;
}

gd_status gd_trainer_reconfigure(gd_trainer *t, const gd_train_options *options) {
    GD_TRY(gd_train_options_validate(options, &t->layout.config));
    bool shape_changed = options->micro_batch != t->options.micro_batch ||
                         options->seq_len != t->options.seq_len ||
                         options->batch / options->micro_batch != gd_trainer_micro_steps(t) ||
                         options->attention != t->options.attention ||
                         options->precision != t->options.precision;
    if (options->moments != t->options.moments)
        return gd_fail(GD_ERR_INVALID, "a trainer keeps the moments' format it was created "
                                       "with (%s)",
                       gd_setting_name(&gd_setting_moments, (int)t->options.moments));
    t->options = *options;
    t->model_settings.attention = options->attention;
    t->model_settings.precision = options->precision;
    return shape_changed ? gd_trainer_alloc_batch(t) : GD_OK;
}

/* --- the step --------------------------------------------------------------------------------
 *
 * A step's gradient is the sum of its micro-batches' gradients, each
 * computed on its own and added in micro-batch order (the first one is the
 * sum's start, not added to zero). Over n ranks, round after round, rank r
 * computes micro-batch first + r; every owner then receives its slice of
 * each and adds them in the same order. Copies change no bit and the order
 * of additions is the same for any n, so the step's bits do not depend on
 * the number of ranks: on one rank the first micro-batch's backward writes
 * the sum directly and later ones go through the micro gradient. */

/* Rank k's micro-batch: forward and backward into its micro gradient (on
 * one rank the first one straight into the sum). */
static void gd_rank_compute(gd_trainer *t, gd_rank *k) {
    size_t n = t->layout.total;
    double tokens = (double)t->options.batch * (double)t->options.seq_len;
    bool full = t->memory.shard == GD_SHARD_FULL;
    float *into = NULL; /* full sharding: the feed's windows */
    if (!full) {
        into = t->n_ranks == 1 && k->micro_index == 0 ? k->grads : k->micro;
        gd_backend_zero(&k->be, into, n * sizeof(float));
    }
    gd_rank_feed_reset(k);
    k->loss = 0;
    k->status = gd_model_forward_f32(k->model, full ? NULL : k->params, k->tokens,
                                     t->options.micro_batch, &k->loss);
    if (k->status == GD_OK) {
        gd_model_backward_f32(k->model, full ? NULL : k->params, into, 1.0 / tokens);
    } else { /* the detail lives in this thread's error slot */
        snprintf(k->why, sizeof k->why, "%s", gd_error_detail());
        gd_trainer_meet_leave(t);
    }
}

typedef struct gd_rank_job {
    gd_trainer *t;
    gd_rank *k;
} gd_rank_job;

static void *gd_rank_thread(void *arg) {
    gd_rank_job *j = arg;
    gd_rank_compute(j->t, j->k);
    return NULL;
}

/* The busy ranks compute their micro-batches, each on a thread of its own
 * when there are several (a GPU's forward waits for its loss). */
static gd_status gd_trainer_compute_round(gd_trainer *t) {
    size_t busy = 0;
    for (size_t r = 0; r < t->n_ranks; r++)
        busy += t->ranks[r].busy;
    gd_trainer_meet_expect(t, busy);
    if (t->n_ranks == 1) {
        gd_rank_compute(t, &t->ranks[0]);
        gd_trainer_prefetch_drain(t);
        return t->ranks[0].status;
    }
    gd_rank_job jobs[GD_TRAINER_RANKS_MAX];
    pthread_t threads[GD_TRAINER_RANKS_MAX];
    bool started[GD_TRAINER_RANKS_MAX] = {false};
    for (size_t r = 0; r < t->n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        if (!k->busy)
            continue;
        jobs[r] = (gd_rank_job){t, k};
        started[r] = pthread_create(&threads[r], NULL, gd_rank_thread, &jobs[r]) == 0;
        if (!started[r])
            gd_rank_compute(t, k); /* no thread to be had: this one, in turn */
    }
    gd_status s = GD_OK;
    for (size_t r = 0; r < t->n_ranks; r++) {
        if (started[r])
            pthread_join(threads[r], NULL);
        const gd_rank *k = &t->ranks[r];
        if (k->busy && k->status != GD_OK && s == GD_OK)
            s = gd_fail(k->status, "rank %zu: %s", r, k->why);
    }
    gd_trainer_prefetch_drain(t);
    return s;
}

/* Adds the round's micro gradients (micro-batches first.., one per busy
 * rank) into the owners' sums, in micro-batch order. */
static void gd_trainer_reduce_round(gd_trainer *t, size_t first) {
    if (t->memory.shard == GD_SHARD_FULL)
        return; /* each unit's gradient went to its owners as it completed */
    if (t->n_ranks == 1) {
        gd_rank *k = &t->ranks[0];
        if (first > 0)
            gd_backend_add(&k->be, k->grads, k->grads, k->micro, t->layout.total);
        return;
    }
    gd_collective_begin(t->coll);
    for (size_t src = 0; src < t->n_ranks && t->ranks[src].busy; src++)
        for (size_t dst = 0; dst < t->n_ranks; dst++) {
            gd_rank *d = &t->ranks[dst];
            size_t shard = d->hi - d->lo;
            gd_collective_copy(t->coll, dst, d->inbox + src * shard, src,
                               t->ranks[src].micro + d->lo, shard * sizeof(float));
        }
    gd_collective_end(t->coll);
    for (size_t dst = 0; dst < t->n_ranks; dst++) {
        gd_rank *d = &t->ranks[dst];
        size_t shard = d->hi - d->lo;
        for (size_t src = 0; shard > 0 && src < t->n_ranks && t->ranks[src].busy; src++) {
            const float *slice = d->inbox + src * shard;
            if (first + src == 0)
                gd_backend_copy(&d->be, d->grads, slice, shard * sizeof(float));
            else
                gd_backend_add(&d->be, d->grads, d->grads, slice, shard);
        }
    }
}

/* AdamW on n values whose moments m and v are in the trainer's format:
 * floats, or bf16 codes the op reads decoded and stores rounded. */
static void gd_trainer_adamw(const gd_trainer *t, const gd_backend *be, float *param,
                             const float *grad, void *m, void *v, size_t n, double lr,
                             double decay, double bc1, double bc2, double grad_scale) {
    const gd_optim_config *c = &t->options.optim;
    if (t->moment_bytes == sizeof(uint16_t))
        gd_backend_adamw_bf16(be, param, grad, m, v, n, lr, c->beta1, c->beta2, c->eps, decay,
                              bc1, bc2, grad_scale);
    else
        gd_backend_adamw(be, param, grad, m, v, n, lr, c->beta1, c->beta2, c->eps, decay, bc1,
                         bc2, grad_scale);
}

/* One AdamW update of every tensor, each owner its shard (norm weights
 * without weight decay); then every owner's shard of the parameters goes
 * to every other rank. */
static void gd_trainer_update(gd_trainer *t, double lr, double grad_scale) {
    const gd_optim_config *c = &t->options.optim;
    uint64_t step = t->step + 1;
    double bc1 = gd_optim_bias_correction(c->beta1, step);
    double bc2 = gd_optim_bias_correction(c->beta2, step);
    for (size_t r = 0; r < t->n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        for (size_t i = 0; i < t->layout.n_tensors; i++) {
            const gd_param_tensor *p = &t->layout.tensors[i];
            size_t a = p->offset > k->lo ? p->offset : k->lo;
            size_t b = p->offset + p->numel < k->hi ? p->offset + p->numel : k->hi;
            if (a >= b)
                continue;
            float *param = t->memory.shard == GD_SHARD_FULL ? k->params + (a - k->lo) : k->params + a;
            float *grad = k->grads + (a - k->lo);
            double decay = p->decay ? c->weight_decay : 0;
            if (t->memory.offload == GD_OFFLOAD_NONE) {
                gd_trainer_adamw(t, &k->be, param, grad, gd_moment_at(t, k->exp_avg, a - k->lo),
                                 gd_moment_at(t, k->exp_avg_sq, a - k->lo), b - a, lr, decay,
                                 bc1, bc2, grad_scale);
                continue;
            }
            /* Offloaded moments come in and go back a staging window at a
             * time: AdamW is elementwise, so its pieces give the bits of
             * one call. */
            for (size_t at = a; at < b; at += k->stage_count) {
                size_t n = b - at < k->stage_count ? b - at : k->stage_count;
                void *m = gd_moment_at(t, k->exp_avg, at - k->lo);
                void *v = gd_moment_at(t, k->exp_avg_sq, at - k->lo);
                gd_backend_upload(&k->be, k->stage_m, m, n * t->moment_bytes);
                gd_backend_upload(&k->be, k->stage_v, v, n * t->moment_bytes);
                gd_trainer_adamw(t, &k->be, param + (at - a), grad + (at - a), k->stage_m,
                                 k->stage_v, n, lr, decay, bc1, bc2, grad_scale);
                gd_backend_download(&k->be, m, k->stage_m, n * t->moment_bytes);
                gd_backend_download(&k->be, v, k->stage_v, n * t->moment_bytes);
            }
        }
    }
    if (t->n_ranks == 1 || t->memory.shard == GD_SHARD_FULL)
        return; /* fully sharded: the next pass gathers what it needs */
    gd_collective_begin(t->coll);
    for (size_t src = 0; src < t->n_ranks; src++) {
        const gd_rank *s = &t->ranks[src];
        for (size_t dst = 0; dst < t->n_ranks; dst++)
            if (dst != src)
                gd_collective_copy(t->coll, dst, t->ranks[dst].params + s->lo, src,
                                   s->params + s->lo, (s->hi - s->lo) * sizeof(float));
    }
    gd_collective_end(t->coll);
}

gd_status gd_trainer_step(gd_trainer *t, const gd_data *data, gd_step_stats *stats) {
    const gd_train_options *o = &t->options;
    size_t micro_steps = gd_trainer_micro_steps(t);
    double loss_sum = 0;
    for (size_t first = 0; first < micro_steps; first += t->n_ranks) {
        /* The batches are read here, in order, on this thread. */
        for (size_t r = 0; r < t->n_ranks; r++) {
            gd_rank *k = &t->ranks[r];
            size_t micro = first + r;
            k->busy = micro < micro_steps;
            k->micro_index = micro;
            if (!k->busy)
                continue;
            uint32_t worker = o->worker, index = (uint32_t)micro;
            if (o->data_workers > 0) {
                worker = (uint32_t)(micro % o->data_workers);
                index = (uint32_t)(micro / o->data_workers);
            }
            GD_TRY(gd_data_train_batch(data, k->tokens, o->micro_batch, o->seq_len,
                                       t->layout.config.vocab_size, o->seed, worker, t->step,
                                       index));
        }
        t->round_first = first;
        GD_TRY(gd_trainer_compute_round(t));
        for (size_t r = 0; r < t->n_ranks && t->ranks[r].busy; r++)
            loss_sum += t->ranks[r].loss;
        gd_trainer_reduce_round(t, first);
    }
    double tokens = (double)o->batch * (double)o->seq_len;
    double sum_sq = 0;
    for (size_t r = 0; r < t->n_ranks; r++) {
        const gd_rank *k = &t->ranks[r];
        if (k->hi > k->lo)
            sum_sq = gd_backend_sum_squares_from(&k->be, k->grads, k->hi - k->lo, sum_sq);
    }
    double norm = sqrt(sum_sq);
    if (!isfinite(norm) || !isfinite(loss_sum))
        return gd_fail(GD_ERR_INVALID, "step %llu diverged (loss %g, gradient norm %g); lower "
                                       "the learning rate",
                       (unsigned long long)t->step, loss_sum / tokens, norm);
    double clip = o->optim.grad_clip;
    double grad_scale = clip > 0 && norm > clip ? clip / norm : 1.0;
    double lr = gd_optim_lr_at(&o->optim, t->step);
    gd_trainer_update(t, lr, grad_scale);
    if (stats)
        *stats = (gd_step_stats){.step = t->step, .loss = loss_sum / tokens,
                                 .grad_norm = norm, .lr = lr,
                                 .tokens = (uint64_t)o->batch * o->seq_len};
    t->step++;
    return GD_OK;
}

gd_status gd_trainer_save(const gd_trainer *t, const char *path, const char *data_spec) {
    /* The formats need host bytes: on a host-memory backend the buffers
     * themselves, else one download of the three arrays. */
    size_t n = t->layout.total;
    float *host = NULL;
    const gd_rank *k = &t->ranks[0];
    const float *params = k->params, *m = k->exp_avg, *v = k->exp_avg_sq;
    if (t->n_ranks > 1 || !t->be.iface->host_memory || t->moment_bytes != sizeof(float)) {
        host = n <= SIZE_MAX / (3 * sizeof(float)) ? malloc(3 * n * sizeof(float)) : NULL;
        if (host == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for a host copy of the state");
        gd_trainer_get_state(t, host, host + n, host + 2 * n, NULL);
        params = host;
        m = host + n;
        v = host + 2 * n;
    }
    gd_status s = gd_checkpoint_save_model(path, &t->layout, params, t->step);
    gd_optim_state state = {.step = t->step, .options = t->options};
    snprintf(state.data_spec, sizeof state.data_spec, "%s", data_spec ? data_spec : "");
    if (s == GD_OK)
        s = gd_checkpoint_save_optim(path, &t->layout, m, v, &state);
    free(host);
    return s;
}

gd_status gd_trainer_resume(gd_trainer **out, const char *path, int threads) {
    return gd_trainer_resume_on(out, path, threads, NULL);
}

gd_status gd_trainer_resume_on(gd_trainer **out, const char *path, int threads,
                               const gd_backend *backend) {
    return gd_trainer_resume_ranks(out, path, threads,
                                   &(gd_trainer_host){backend, 1, NULL, {GD_SHARD_OPTIMIZER}});
}

gd_status gd_trainer_resume_ranks(gd_trainer **out, const char *path, int threads,
                                  const gd_trainer_host *ranks) {
    gd_param_layout layout;
    float *params = NULL;
    uint64_t step = 0;
    GD_TRY(gd_checkpoint_load_model(path, &layout, &params, &step));
    float *m = malloc(layout.total * sizeof(float)), *v = malloc(layout.total * sizeof(float));
    gd_optim_state state;
    gd_status s = m && v ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK)
        s = gd_checkpoint_load_optim(path, &layout, m, v, &state);
    if (s == GD_OK && state.step != step)
        s = gd_fail(GD_ERR_PARSE, "checkpoint %s is at step %llu but its optimizer state at "
                                  "step %llu (a save was interrupted); resume from an earlier "
                                  "checkpoint",
                    path, (unsigned long long)step, (unsigned long long)state.step);
    gd_trainer *t = NULL;
    if (s == GD_OK)
        s = gd_trainer_alloc(&t, &layout, &state.options, threads, ranks);
    if (s == GD_OK) {
        gd_trainer_set_state(t, params, m, v, step);
        *out = t;
    }
    gd_param_layout_free(&layout);
    free(params);
    free(m);
    free(v);
    return s;
}

/* The parameters come from rank 0 (with optimizer sharding every rank
 * holds the same bits) or from each owner (full sharding), and each shard
 * of the moments from its owner; setting them uploads the parameters to
 * every rank or each shard to its owner, and each shard of the moments to
 * its owner. */
/* Moving moments between the host's floats and a rank's format, a window
 * of codes at a time: bf16 codes widen exactly, floats round to their
 * codes (a bf16 run's moments are codes' values already). */
#define GD_MOMENT_WINDOW ((size_t)1 << 15)

/* Rank k's moments (its shard of exp_avg or exp_avg_sq: n values in the
 * trainer's format, in host memory when offloaded) from the host's floats
 * `from`, or when from is NULL into the host's floats `into`; bf16 codes
 * are converted on pool (NULL: the calling thread). */
static void gd_rank_moments_move(const gd_trainer *t, gd_pool *pool, const gd_rank *k,
                                 void *moments, float *into, const float *from, size_t n) {
    bool host = t->memory.offload == GD_OFFLOAD_OPTIMIZER, set = from != NULL;
    if (t->moment_bytes == sizeof(float)) {
        if (host)
            memcpy(set ? moments : into, set ? (const void *)from : moments, n * sizeof(float));
        else if (set)
            gd_backend_upload(&k->be, moments, from, n * sizeof(float));
        else
            gd_backend_download(&k->be, into, moments, n * sizeof(float));
        return;
    }
    gd_backend cpu; /* the host's arrays */
    gd_backend_cpu_init(&cpu, pool);
    uint16_t window[GD_MOMENT_WINDOW];
    for (size_t at = 0; at < n; at += GD_MOMENT_WINDOW) {
        size_t m = n - at < GD_MOMENT_WINDOW ? n - at : GD_MOMENT_WINDOW;
        uint16_t *codes = host ? (uint16_t *)moments + at : window;
        if (set) {
            gd_backend_bf16_quantize(&cpu, codes, NULL, from + at, m);
            if (!host)
                gd_backend_upload(&k->be, (uint16_t *)moments + at, codes, m * sizeof(uint16_t));
        } else {
            if (!host)
                gd_backend_download(&k->be, codes, (uint16_t *)moments + at, m * sizeof(uint16_t));
            gd_backend_bf16_dequantize(&cpu, into + at, codes, m);
        }
    }
}

/* Rank k's part of [lo, lo + count): [*a, *b), empty when *a == *b. */
static void gd_rank_overlap(const gd_rank *k, size_t lo, size_t count, size_t *a, size_t *b) {
    *a = k->lo > lo ? k->lo : lo;
    *b = k->hi < lo + count ? k->hi : lo + count;
    if (*b < *a)
        *b = *a;
}

/* Rank k's moments from value index at (in its shard) on. */
static void *gd_rank_moments_at(const gd_trainer *t, const gd_rank *k, void *moments, size_t at) {
    return (uint8_t *)moments + (at - k->lo) * t->moment_bytes;
}

void gd_trainer_get_range(const gd_trainer *t, float *params, float *exp_avg, float *exp_avg_sq,
                          size_t lo, size_t count) {
    bool full = t->memory.shard == GD_SHARD_FULL;
    if (params && !full && count > 0)
        gd_backend_download(&t->be, params, t->ranks[0].params + lo, count * sizeof(float));
    for (size_t r = 0; r < t->n_ranks; r++) {
        const gd_rank *k = &t->ranks[r];
        size_t a = 0, b = 0;
        gd_rank_overlap(k, lo, count, &a, &b);
        if (a == b)
            continue;
        if (params && full)
            gd_backend_download(&k->be, params + (a - lo), k->params + (a - k->lo),
                                (b - a) * sizeof(float));
        if (exp_avg)
            gd_rank_moments_move(t, t->pool, k, gd_rank_moments_at(t, k, k->exp_avg, a),
                                 exp_avg + (a - lo), NULL, b - a);
        if (exp_avg_sq)
            gd_rank_moments_move(t, t->pool, k, gd_rank_moments_at(t, k, k->exp_avg_sq, a),
                                 exp_avg_sq + (a - lo), NULL, b - a);
    }
}

size_t gd_trainer_rank_count(const gd_trainer *t) {
    return t->n_ranks;
}

void gd_trainer_rank_shard(const gd_trainer *t, size_t r, size_t *lo, size_t *hi) {
    *lo = t->ranks[r].lo;
    *hi = t->ranks[r].hi;
}

const gd_backend *gd_trainer_rank_backend(const gd_trainer *t, size_t r) {
    return &t->ranks[r].be;
}

void gd_trainer_get_owned(const gd_trainer *t, size_t r, float *params, float *exp_avg,
                          float *exp_avg_sq, size_t lo, size_t count) {
    const gd_rank *k = &t->ranks[r];
    if (lo < k->lo || lo > k->hi || count > k->hi - lo) {
        fprintf(stderr, "gonka-diloco: values [%zu, +%zu) are not rank %zu's [%zu, %zu)\n", lo,
                count, r, k->lo, k->hi);
        abort(); /* a caller's bug: never read another rank's memory */
    }
    if (count == 0)
        return;
    /* Under optimizer sharding every rank holds the whole parameters, the
     * same bits: each reads its own copy. */
    size_t at = t->memory.shard == GD_SHARD_FULL ? lo - k->lo : lo;
    if (params)
        gd_backend_download(&k->be, params, k->params + at, count * sizeof(float));
    if (exp_avg)
        gd_rank_moments_move(t, NULL, k, gd_rank_moments_at(t, k, k->exp_avg, lo), exp_avg, NULL,
                             count);
    if (exp_avg_sq)
        gd_rank_moments_move(t, NULL, k, gd_rank_moments_at(t, k, k->exp_avg_sq, lo), exp_avg_sq,
                             NULL, count);
}

void gd_trainer_set_range(gd_trainer *t, const float *params, const float *exp_avg,
                          const float *exp_avg_sq, size_t lo, size_t count) {
    bool full = t->memory.shard == GD_SHARD_FULL;
    for (size_t r = 0; r < t->n_ranks; r++) {
        gd_rank *k = &t->ranks[r];
        if (params && !full && count > 0)
            gd_backend_upload(&k->be, k->params + lo, params, count * sizeof(float));
        size_t a = 0, b = 0;
        gd_rank_overlap(k, lo, count, &a, &b);
        if (a == b)
            continue;
        if (params && full)
            gd_backend_upload(&k->be, k->params + (a - k->lo), params + (a - lo),
                              (b - a) * sizeof(float));
        if (exp_avg)
            gd_rank_moments_move(t, t->pool, k, gd_rank_moments_at(t, k, k->exp_avg, a), NULL,
                                 exp_avg + (a - lo), b - a);
        if (exp_avg_sq)
            gd_rank_moments_move(t, t->pool, k, gd_rank_moments_at(t, k, k->exp_avg_sq, a), NULL,
                                 exp_avg_sq + (a - lo), b - a);
    }
}

void gd_trainer_get_state(const gd_trainer *t, float *params, float *exp_avg,
                          float *exp_avg_sq, uint64_t *step) {
    gd_trainer_get_range(t, params, exp_avg, exp_avg_sq, 0, t->layout.total);
    if (step)
        *step = t->step;
}

void gd_trainer_set_state(gd_trainer *t, const float *params, const float *exp_avg,
                          const float *exp_avg_sq, uint64_t step) {
    gd_trainer_set_range(t, params, exp_avg, exp_avg_sq, 0, t->layout.total);
    t->step = step;
}

void gd_trainer_set_step(gd_trainer *t, uint64_t step) {
    t->step = step;
}

uint64_t gd_trainer_step_count(const gd_trainer *t) {
    return t->step;
}

const gd_param_layout *gd_trainer_layout(const gd_trainer *t) {
    return &t->layout;
}

const gd_train_options *gd_trainer_options(const gd_trainer *t) {
    return &t->options;
}

gd_pool *gd_trainer_pool(gd_trainer *t) {
    return t->pool;
}

const gd_backend *gd_trainer_backend(const gd_trainer *t) {
    return &t->be;
}

uint64_t gd_trainer_gathered_bytes(const gd_trainer *t) {
    return t->gathered_bytes;
}

void gd_trainer_gather_counts(const gd_trainer *t, uint64_t *now, uint64_t *ahead) {
    *now = t->gathers_now;
    *ahead = t->gathers_ahead;
}

size_t gd_trainer_activation_bytes(const gd_trainer *t) {
    return gd_model_activation_bytes_f32(t->ranks[0].model);
}

/* The evaluation of params (a buffer of be), or of what feed gathers
 * (when not NULL), on be. */
static gd_status gd_evaluate_on(const gd_backend *be, const gd_param_layout *layout,
                                const gd_model_settings *settings, const float *params,
                                const gd_model_feed_f32 *feed, const gd_data *data,
                                size_t batches, size_t batch,
                                size_t seq_len, size_t micro_batch, double *mean_loss,
                                uint64_t *tokens, gd_eval_progress_fn progress, void *ctx) {
    if (micro_batch == 0 || micro_batch > batch || batch % micro_batch != 0)
        return gd_fail(GD_ERR_INVALID, "micro-batch %zu must divide the batch %zu", micro_batch,
                       batch);
    gd_model_f32 *model = NULL;
    GD_TRY(gd_model_new_f32(&model, layout, micro_batch, seq_len, settings, be));
    gd_model_set_feed_f32(model, feed);
    int32_t *window = calloc(batch * (seq_len + 1), sizeof *window);
    gd_status s = window ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    double sum = 0;
    uint64_t scored = 0;
    for (size_t b = 0; s == GD_OK && b < batches; b++) {
        bool available = false;
        s = gd_data_eval_batch(data, window, batch, seq_len, layout->config.vocab_size, b,
                               &available);
        if (s != GD_OK || !available)
            break;
        for (size_t r = 0; s == GD_OK && r < batch; r += micro_batch) {
            double part = 0;
            s = gd_model_forward_f32(model, params, window + r * (seq_len + 1), micro_batch,
                                     &part);
            sum += part;
            scored += (uint64_t)micro_batch * seq_len;
        }
        if (s == GD_OK && progress)
            progress(ctx, b + 1, batches);
    }
    free(window);
    gd_model_free_f32(model);
    GD_TRY(s);
    *tokens = scored;
    *mean_loss = scored ? sum / (double)scored : 0;
    return GD_OK;
}

gd_status gd_evaluate(const gd_param_layout *layout, const float *params, const gd_data *data,
                      size_t batches, size_t batch, size_t seq_len, size_t micro_batch,
                      gd_pool *pool, double *mean_loss, uint64_t *tokens) {
    return gd_evaluate_progress(layout, params, data, batches, batch, seq_len, micro_batch, pool,
                                mean_loss, tokens, NULL, NULL);
}

gd_status gd_evaluate_progress(const gd_param_layout *layout, const float *params,
                               const gd_data *data, size_t batches, size_t batch, size_t seq_len,
                               size_t micro_batch, gd_pool *pool, double *mean_loss,
                               uint64_t *tokens, gd_eval_progress_fn progress, void *ctx) {
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, pool);
    return gd_evaluate_backend(&cpu, layout, params, data, batches, batch, seq_len, micro_batch,
                               mean_loss, tokens, progress, ctx);
}

gd_status gd_evaluate_backend(const gd_backend *be, const gd_param_layout *layout,
                              const float *params, const gd_data *data, size_t batches,
                              size_t batch, size_t seq_len, size_t micro_batch,
                              double *mean_loss, uint64_t *tokens, gd_eval_progress_fn progress,
                              void *ctx) {
    float *staged = gd_backend_stage(be, params, layout->total);
    if (staged == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of %s memory for %zu parameters", be->iface->name,
                       layout->total);
    gd_status s = gd_evaluate_on(be, layout, NULL, staged, NULL, data, batches, batch, seq_len,
                                 micro_batch, mean_loss, tokens, progress, ctx);
    gd_backend_unstage(be, staged, (float *)params, layout->total, false);
    return s;
}

gd_status gd_trainer_evaluate(const gd_trainer *t, const gd_data *data, size_t batches,
                              size_t batch, size_t seq_len, size_t micro_batch,
                              double *mean_loss, uint64_t *tokens, gd_eval_progress_fn progress,
                              void *ctx) {
    if (t->memory.shard == GD_SHARD_OPTIMIZER)
        return gd_evaluate_on(&t->be, &t->layout, &t->model_settings, t->ranks[0].params, NULL,
                              data, batches, batch, seq_len, micro_batch, mean_loss, tokens,
                              progress, ctx);
    /* Fully sharded: rank 0 alone gathers each unit from the owners into
     * its windows, which are scratch between steps, not state. */
    gd_trainer *w = (gd_trainer *)t;
    for (size_t r = 0; r < w->n_ranks; r++)
        w->ranks[r].busy = r == 0;
    gd_trainer_meet_expect(w, 1);
    gd_rank_feed_reset(&w->ranks[0]);
    gd_model_feed_f32 feed = gd_rank_feed;
    feed.ctx = &w->ranks[0];
    gd_status s = gd_evaluate_on(&t->be, &t->layout, &t->model_settings, NULL, &feed, data,
                                 batches, batch, seq_len, micro_batch, mean_loss, tokens,
                                 progress, ctx);
    gd_trainer_prefetch_drain(w);
    return s;
}
