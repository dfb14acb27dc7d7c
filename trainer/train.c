/* The CPU training loop (see trainer/train.h). */
#include "trainer/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "trainer/checkpoint.h"
#include "trainer/init.h"
#include "trainer/model.h"

struct gd_trainer {
    gd_param_layout layout;
    gd_train_options options;
    gd_pool *pool;  /* host work: the CPU backend's ops, fallbacks, hashing */
    gd_backend be;  /* where the tensors live */
    gd_model_f32 *model;
    float *params, *grads, *exp_avg, *exp_avg_sq; /* backend buffers, layout.total each */
    int32_t *tokens; /* one micro-batch of windows: micro_batch rows of seq_len + 1 */
    uint64_t step;   /* optimizer steps taken */
};

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
    return GD_OK;
}

static void gd_trainer_free_buffers(gd_trainer *t) {
    gd_model_destroy_f32(t->model);
    t->model = NULL;
    free(t->tokens);
    t->tokens = NULL;
}

void gd_trainer_destroy(gd_trainer *t) {
    if (t == NULL)
        return;
    gd_trainer_free_buffers(t);
    if (t->be.iface != NULL) {
        gd_backend_free(&t->be, t->params);
        gd_backend_free(&t->be, t->grads);
        gd_backend_free(&t->be, t->exp_avg);
        gd_backend_free(&t->be, t->exp_avg_sq);
    }
    gd_pool_destroy(t->pool);
    gd_param_layout_free(&t->layout);
    free(t);
}

/* (Re)allocates what depends on the batch shape: activations and tokens. */
static gd_status gd_trainer_alloc_batch(gd_trainer *t) {
    gd_trainer_free_buffers(t);
    const gd_train_options *o = &t->options;
    GD_TRY(gd_model_create_f32(&t->model, &t->layout, o->micro_batch, o->seq_len, &t->be));
    t->tokens = calloc(o->micro_batch * (o->seq_len + 1), sizeof *t->tokens);
    if (t->tokens == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    return GD_OK;
}

/* A trainer with zeroed buffers for layout (taken over) and options, on
 * backend (NULL: the CPU backend over the trainer's threads). */
static gd_status gd_trainer_alloc(gd_trainer **out, gd_param_layout *layout,
                                  const gd_train_options *options, int threads,
                                  const gd_backend *backend) {
    GD_TRY(gd_train_options_validate(options, &layout->config));
    gd_trainer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    t->layout = *layout;
    memset(layout, 0, sizeof *layout);
    t->options = *options;
    gd_status s = gd_pool_create(&t->pool, threads);
    size_t n = t->layout.total;
    if (s == GD_OK) {
        if (backend != NULL)
            t->be = *backend;
        else
            gd_backend_cpu_init(&t->be, t->pool);
        if (t->be.pool == NULL) /* a handle without host threads borrows the trainer's */
            t->be.pool = t->pool;
        t->params = gd_backend_alloc_f32(&t->be, n);
        t->grads = gd_backend_alloc_f32(&t->be, n);
        t->exp_avg = gd_backend_alloc_f32(&t->be, n);
        t->exp_avg_sq = gd_backend_alloc_f32(&t->be, n);
        if (!t->params || !t->grads || !t->exp_avg || !t->exp_avg_sq)
            s = gd_fail(GD_ERR_NOMEM, "out of memory for %zu parameters and their optimizer "
                                      "state (%zu MiB)",
                        n, n * 16 >> 20);
    }
    if (s == GD_OK)
        s = gd_trainer_alloc_batch(t);
    if (s != GD_OK) {
        gd_trainer_destroy(t);
        return s;
    }
    *out = t;
    return GD_OK;
}

gd_status gd_trainer_create(gd_trainer **out, const gd_model_config *config,
                            const gd_train_options *options, int threads) {
    return gd_trainer_create_on(out, config, options, threads, NULL);
}

gd_status gd_trainer_create_on(gd_trainer **out, const gd_model_config *config,
                               const gd_train_options *options, int threads,
                               const gd_backend *backend) {
    gd_param_layout layout;
    GD_TRY(gd_param_layout_build(&layout, config));
    gd_status s = gd_trainer_alloc(out, &layout, options, threads, backend);
    gd_param_layout_free(&layout); /* no-op when taken over */
    GD_TRY(s);
    gd_trainer *t = *out;
    /* The initial weights are drawn on the host (trainer/init.h) and
     * uploaded once. */
    float *host = t->be.iface->host_memory ? t->params : malloc(t->layout.total * sizeof(float));
    if (host == NULL) {
        gd_trainer_destroy(t);
        *out = NULL;
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    gd_params_init(t->pool, host, &t->layout, options->seed);
    if (host != t->params) {
        gd_backend_upload(&t->be, t->params, host, t->layout.total * sizeof(float));
        free(host);
    }
    return GD_OK;
}

gd_status gd_trainer_reconfigure(gd_trainer *t, const gd_train_options *options) {
    GD_TRY(gd_train_options_validate(options, &t->layout.config));
    bool shape_changed = options->micro_batch != t->options.micro_batch ||
                         options->seq_len != t->options.seq_len;
    t->options = *options;
    return shape_changed ? gd_trainer_alloc_batch(t) : GD_OK;
}

/* One AdamW update of every tensor: norm weights without weight decay. */
static void gd_trainer_update(gd_trainer *t, double lr, double grad_scale) {
    const gd_optim_config *c = &t->options.optim;
    uint64_t step = t->step + 1;
    double bc1 = gd_optim_bias_correction(c->beta1, step);
    double bc2 = gd_optim_bias_correction(c->beta2, step);
    for (size_t i = 0; i < t->layout.n_tensors; i++) {
        const gd_param_tensor *p = &t->layout.tensors[i];
        gd_backend_adamw(&t->be, t->params + p->offset, t->grads + p->offset,
                         t->exp_avg + p->offset, t->exp_avg_sq + p->offset, p->numel, lr,
                         c->beta1, c->beta2, c->eps, p->decay ? c->weight_decay : 0, bc1, bc2,
                         grad_scale);
    }
}

gd_status gd_trainer_step(gd_trainer *t, const gd_data *data, gd_step_stats *stats) {
    const gd_train_options *o = &t->options;
    size_t micro_steps = o->batch / o->micro_batch;
    double tokens = (double)o->batch * (double)o->seq_len;
    gd_backend_zero(&t->be, t->grads, t->layout.total * sizeof(float));
    double loss_sum = 0;
    for (size_t micro = 0; micro < micro_steps; micro++) {
        uint32_t worker = o->worker, index = (uint32_t)micro;
        if (o->data_workers > 0) {
            worker = (uint32_t)(micro % o->data_workers);
            index = (uint32_t)(micro / o->data_workers);
        }
        GD_TRY(gd_data_train_batch(data, t->tokens, o->micro_batch, o->seq_len,
                                   t->layout.config.vocab_size, o->seed, worker, t->step,
                                   index));
        double micro_loss = 0;
        GD_TRY(gd_model_forward_f32(t->model, t->params, t->tokens, o->micro_batch,
                                    &micro_loss));
        loss_sum += micro_loss;
        gd_model_backward_f32(t->model, t->params, t->grads, 1.0 / tokens);
    }
    double norm = sqrt(gd_backend_sum_squares(&t->be, t->grads, t->layout.total));
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
    const float *params = t->params, *m = t->exp_avg, *v = t->exp_avg_sq;
    if (!t->be.iface->host_memory) {
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
        s = gd_trainer_alloc(&t, &layout, &state.options, threads, backend);
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

void gd_trainer_get_state(const gd_trainer *t, float *params, float *exp_avg,
                          float *exp_avg_sq, uint64_t *step) {
    size_t bytes = t->layout.total * sizeof(float);
    if (params)
        gd_backend_download(&t->be, params, t->params, bytes);
    if (exp_avg)
        gd_backend_download(&t->be, exp_avg, t->exp_avg, bytes);
    if (exp_avg_sq)
        gd_backend_download(&t->be, exp_avg_sq, t->exp_avg_sq, bytes);
    if (step)
        *step = t->step;
}

void gd_trainer_set_state(gd_trainer *t, const float *params, const float *exp_avg,
                          const float *exp_avg_sq, uint64_t step) {
    size_t bytes = t->layout.total * sizeof(float);
    if (params)
        gd_backend_upload(&t->be, t->params, params, bytes);
    if (exp_avg)
        gd_backend_upload(&t->be, t->exp_avg, exp_avg, bytes);
    if (exp_avg_sq)
        gd_backend_upload(&t->be, t->exp_avg_sq, exp_avg_sq, bytes);
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

size_t gd_trainer_activation_bytes(const gd_trainer *t) {
    return gd_model_activation_bytes_f32(t->model);
}

/* The evaluation of params (a buffer of be) on be. */
static gd_status gd_evaluate_on(const gd_backend *be, const gd_param_layout *layout,
                                const float *params, const gd_data *data, size_t batches,
                                size_t batch, size_t seq_len, size_t micro_batch,
                                double *mean_loss, uint64_t *tokens,
                                gd_eval_progress_fn progress, void *ctx) {
    if (micro_batch == 0 || micro_batch > batch || batch % micro_batch != 0)
        return gd_fail(GD_ERR_INVALID, "micro-batch %zu must divide the batch %zu", micro_batch,
                       batch);
    gd_model_f32 *model = NULL;
    GD_TRY(gd_model_create_f32(&model, layout, micro_batch, seq_len, be));
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
    gd_model_destroy_f32(model);
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
    gd_status s = gd_evaluate_on(be, layout, staged, data, batches, batch, seq_len, micro_batch,
                                 mean_loss, tokens, progress, ctx);
    gd_backend_unstage(be, staged, (float *)params, layout->total, false);
    return s;
}

gd_status gd_trainer_evaluate(const gd_trainer *t, const gd_data *data, size_t batches,
                              size_t batch, size_t seq_len, size_t micro_batch,
                              double *mean_loss, uint64_t *tokens, gd_eval_progress_fn progress,
                              void *ctx) {
    return gd_evaluate_on(&t->be, &t->layout, t->params, data, batches, batch, seq_len,
                          micro_batch, mean_loss, tokens, progress, ctx);
}
