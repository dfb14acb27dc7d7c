/* The CPU ops of a DiLoCo round (see kernels/cpu/round_ops.h). */
#include "kernels/cpu/round_ops.h"

/* Elements per task: 64 Ki floats per contribution read keep a task long
 * enough to hide the pool's claim, and tasks never change an element's
 * arithmetic, only who computes it. */
#define GD_ROUND_TASK_ELEMS ((size_t)1 << 16)

static void gd_round_range(size_t task, size_t n, size_t *lo, size_t *hi) {
    *lo = task * GD_ROUND_TASK_ELEMS;
    *hi = *lo + GD_ROUND_TASK_ELEMS < n ? *lo + GD_ROUND_TASK_ELEMS : n;
}

static size_t gd_round_tasks(size_t n) {
    return (n + GD_ROUND_TASK_ELEMS - 1) / GD_ROUND_TASK_ELEMS;
}

typedef struct gd_pseudo_gradient_job {
    float *delta, *residual;
    const float *start, *params;
    size_t n;
    float decay;
} gd_pseudo_gradient_job;

static void gd_pseudo_gradient_task(void *arg, size_t task) {
    const gd_pseudo_gradient_job *job = arg;
    size_t lo, hi;
    gd_round_range(task, job->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        job->delta[i] = job->start[i] - job->params[i];
    if (job->residual != NULL && job->decay != 1.0f)
        for (size_t i = lo; i < hi; i++)
            job->residual[i] = job->decay * job->residual[i];
}

void gd_cpu_pseudo_gradient_f32(gd_pool *pool, float *delta, const float *start,
                                const float *params, float *residual, size_t n, float decay) {
    gd_pseudo_gradient_job job = {delta, residual, start, params, n, decay};
    gd_pool_run(pool, gd_round_tasks(n), gd_pseudo_gradient_task, &job);
}

typedef struct gd_weighted_add_job {
    float *acc;
    const float *delta;
    float weight;
    size_t n;
} gd_weighted_add_job;

static void gd_weighted_add_task(void *arg, size_t task) {
    const gd_weighted_add_job *job = arg;
    size_t lo, hi;
    gd_round_range(task, job->n, &lo, &hi);
    for (size_t j = lo; j < hi; j++) {
        float term = job->weight * job->delta[j];
        job->acc[j] = job->acc[j] + term;
    }
}

void gd_cpu_weighted_add_f32(gd_pool *pool, float *acc, const float *delta, float weight,
                             size_t n) {
    gd_weighted_add_job job = {acc, delta, weight, n};
    gd_pool_run(pool, gd_round_tasks(n), gd_weighted_add_task, &job);
}

typedef struct gd_nesterov_step_job {
    float *params, *momentum;
    const float *acc;
    size_t n;
    float lr, mu;
} gd_nesterov_step_job;

static void gd_nesterov_step_task(void *arg, size_t task) {
    const gd_nesterov_step_job *job = arg;
    size_t lo, hi;
    gd_round_range(task, job->n, &lo, &hi);
    for (size_t j = lo; j < hi; j++) {
        float acc = job->acc[j];
        float scaled_buf = job->mu * job->momentum[j];
        float buf = scaled_buf + acc;
        job->momentum[j] = buf;
        float nesterov = job->mu * buf;
        float d = acc + nesterov;
        float step = job->lr * d;
        job->params[j] = job->params[j] - step;
    }
}

void gd_cpu_nesterov_step_f32(gd_pool *pool, float *params, float *momentum, const float *acc,
                              size_t n, float lr, float mu) {
    gd_nesterov_step_job job = {params, momentum, acc, n, lr, mu};
    gd_pool_run(pool, gd_round_tasks(n), gd_nesterov_step_task, &job);
}
