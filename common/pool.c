/* The thread pool (see common/pool.h). Tasks are claimed one at a time from
 * an atomic counter, so uneven tasks balance themselves; a job ends when
 * every claimed task has finished. */
#include "common/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct gd_pool {
    int threads;
    pthread_t *workers; /* threads - 1 of them; the caller is the last */
    pthread_mutex_t lock;
    pthread_cond_t job_posted;
    pthread_cond_t job_done;
    /* the current job */
    gd_pool_fn fn;
    void *ctx;
    size_t n_tasks;
    atomic_size_t next_task;
    size_t finished_workers; /* under lock */
    unsigned long generation; /* bumped per job; workers wait for a new one */
    bool stopping;
};

static void gd_pool_drain(gd_pool *pool, gd_pool_fn fn, void *ctx, size_t n_tasks) {
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&pool->next_task, 1, memory_order_relaxed);
        if (i >= n_tasks)
            return;
        fn(ctx, i);
    }
}

static void *gd_pool_worker(void *arg) {
    gd_pool *pool = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stopping && pool->generation == seen)
            pthread_cond_wait(&pool->job_posted, &pool->lock);
        if (pool->stopping)
            break;
        seen = pool->generation;
        gd_pool_fn fn = pool->fn;
        void *ctx = pool->ctx;
        size_t n = pool->n_tasks;
        pthread_mutex_unlock(&pool->lock);
        gd_pool_drain(pool, fn, ctx, n);
        pthread_mutex_lock(&pool->lock);
        if (++pool->finished_workers == (size_t)pool->threads - 1)
            pthread_cond_signal(&pool->job_done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

gd_status gd_pool_new(gd_pool **out, int threads) {
    if (threads < 1 || threads > 1024)
        return gd_fail(GD_ERR_INVALID, "thread count %d is outside 1..1024", threads);
    gd_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    pool->threads = threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->job_posted, NULL);
    pthread_cond_init(&pool->job_done, NULL);
    atomic_init(&pool->next_task, 0);
    if (threads > 1) {
        pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers);
        if (pool->workers == NULL) {
            gd_pool_free(pool);
            return gd_fail(GD_ERR_NOMEM, "out of memory");
        }
        for (int i = 0; i < threads - 1; i++) {
            if (pthread_create(&pool->workers[i], NULL, gd_pool_worker, pool) != 0) {
                pool->threads = i + 1; /* destroy joins only those started */
                gd_pool_free(pool);
                return gd_fail(GD_ERR_NOMEM, "cannot start thread %d of %d", i + 1, threads);
            }
        }
    }
    *out = pool;
    return GD_OK;
}

void gd_pool_free(gd_pool *pool) {
    if (pool == NULL)
        return;
    if (pool->workers) {
        pthread_mutex_lock(&pool->lock);
        pool->stopping = true;
        pthread_cond_broadcast(&pool->job_posted);
        pthread_mutex_unlock(&pool->lock);
        for (int i = 0; i < pool->threads - 1; i++)
            pthread_join(pool->workers[i], NULL);
        free(pool->workers);
    }
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->job_posted);
    pthread_cond_destroy(&pool->job_done);
    free(pool);
}

int gd_pool_threads(const gd_pool *pool) {
    return pool ? pool->threads : 1;
}

void gd_pool_run(gd_pool *pool, size_t n_tasks, gd_pool_fn fn, void *ctx) {
    if (n_tasks == 0)
        return;
    if (pool == NULL || pool->threads == 1 || n_tasks == 1) {
        for (size_t i = 0; i < n_tasks; i++)
            fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->ctx = ctx;
    pool->n_tasks = n_tasks;
    atomic_store_explicit(&pool->next_task, 0, memory_order_relaxed);
    pool->finished_workers = 0;
    pool->generation++;
    pthread_cond_broadcast(&pool->job_posted);
    pthread_mutex_unlock(&pool->lock);

    gd_pool_drain(pool, fn, ctx, n_tasks);

    pthread_mutex_lock(&pool->lock);
    while (pool->finished_workers < (size_t)pool->threads - 1)
        pthread_cond_wait(&pool->job_done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}
