/* A fixed set of worker threads that runs "tasks 0..n-1 of this function"
 * and returns when all are done.
 *
 * Determinism is the caller's contract: split work into tasks whose results
 * do not depend on which thread runs them or how many threads there are
 * (fixed task boundaries, no cross-task reductions in completion order).
 * The kernels do exactly that, so a training step's bits do not depend on
 * the thread count. */
#ifndef GD_COMMON_POOL_H
#define GD_COMMON_POOL_H

#include <stddef.h>

#include "common/status.h"

typedef struct gd_pool gd_pool;

/* fn(ctx, task) for one task; may run on any pool thread or the caller's. */
typedef void (*gd_pool_fn)(void *ctx, size_t task);

/* threads >= 1 (1 runs everything on the caller's thread; at most 1024). */
gd_status gd_pool_new(gd_pool **out, int threads) GD_MUST_CHECK;
void gd_pool_free(gd_pool *pool);

int gd_pool_threads(const gd_pool *pool);

/* Runs fn(ctx, i) for every i in [0, n_tasks); the caller's thread takes
 * part. Not reentrant: a task must not call gd_pool_run on the same pool.
 * pool may be NULL (runs inline). */
void gd_pool_run(gd_pool *pool, size_t n_tasks, gd_pool_fn fn, void *ctx);

#endif
