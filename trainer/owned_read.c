/* The trainer's state read by the ranks that own it (trainer/owned_read.h). */
#include "trainer/owned_read.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "kernels/backend.h"
#include "proofs/state_desc.h"
#include "trainer/state.h"

#define GD_OWNED_CHUNK_MAX ((uint32_t)1 << 22)
#define GD_OWNED_LEAVES_MAX (((size_t)24 << 20) / (3 * GD_MMR_HASH_LEN))

bool gd_trainer_read_owned_fits(size_t n, uint32_t chunk_elems) {
    return chunk_elems >= 1 && chunk_elems <= GD_OWNED_CHUNK_MAX && n >= 1 &&
           (n - 1) / chunk_elems + 1 <= GD_OWNED_LEAVES_MAX;
}

/* One rank's window in a batch: whole chunks from `lo`, the first `own`
 * values its own (the rest, less than a chunk, the next shards'). */
typedef struct gd_owned_window {
    size_t rank;
    float *buf;       /* the pass's `window` floats of each array, in the rank's backend's
                       * host memory (NULL when the sink places every window) */
    float *arrays[3]; /* where this batch's window of params, exp_avg, exp_avg_sq goes */
    size_t lo, count, own;
} gd_owned_window;

typedef struct gd_owned_pass {
    gd_trainer *t;
    uint32_t chunk_elems;
    size_t n, window;
    size_t ranks;
    gd_owned_window w[GD_TRAINER_RANKS_MAX];
    size_t active[GD_TRAINER_RANKS_MAX]; /* the ranks with a window this batch */
    size_t n_active;
    uint8_t *leaves; /* 3 arrays of every chunk's leaf */
    size_t chunks;
} gd_owned_pass;

/* The batch's window of each array: where the sink places it, or the
 * rank's buffer. */
static gd_status gd_owned_place(const gd_owned_pass *p, gd_owned_window *w,
                                const gd_owned_sink *to) {
    for (int a = 0; a < 3; a++) {
        w->arrays[a] = to != NULL && to->place != NULL ? to->place(to->ctx, a, w->lo, w->count)
                       : w->buf != NULL               ? w->buf + (size_t)a * p->window
                                                      : NULL;
        if (w->arrays[a] == NULL)
            return gd_fail(GD_ERR_INVALID, "nowhere to put values [%zu, +%zu)", w->lo,
                           w->count);
    }
    return GD_OK;
}

/* The rank's own values, on its thread: no pool, its backend only. */
typedef struct gd_owned_job {
    const gd_owned_pass *pass;
    const gd_owned_window *w;
} gd_owned_job;

static void *gd_owned_read_rank(void *arg) {
    const gd_owned_job *j = arg;
    const gd_owned_window *w = j->w;
    gd_trainer_get_owned(j->pass->t, w->rank, w->arrays[0], w->arrays[1], w->arrays[2], w->lo,
                         w->own);
    return NULL;
}

/* The batch's ranks copy their windows at once (one thread each when
 * there are several), then the values past a shard's end come from their
 * owners on this thread. */
static void gd_owned_read_batch(gd_owned_pass *p) {
    gd_owned_job jobs[GD_TRAINER_RANKS_MAX];
    pthread_t threads[GD_TRAINER_RANKS_MAX];
    bool started[GD_TRAINER_RANKS_MAX] = {false};
    for (size_t i = 0; i < p->n_active; i++) {
        jobs[i] = (gd_owned_job){p, &p->w[p->active[i]]};
        if (p->n_active > 1)
            started[i] = pthread_create(&threads[i], NULL, gd_owned_read_rank, &jobs[i]) == 0;
        if (!started[i])
            gd_owned_read_rank(&jobs[i]); /* one rank, or no thread to be had */
    }
    for (size_t i = 0; i < p->n_active; i++)
        if (started[i])
            pthread_join(threads[i], NULL);
    for (size_t i = 0; i < p->n_active; i++) {
        const gd_owned_window *w = &p->w[p->active[i]];
        if (w->own < w->count)
            gd_trainer_get_range(p->t, w->arrays[0] + w->own,
                                 w->arrays[1] + w->own,
                                 w->arrays[2] + w->own, w->lo + w->own,
                                 w->count - w->own);
    }
}

/* Task i of a batch's hashing: one chunk of one array of one window. */
typedef struct gd_owned_hash {
    const gd_owned_pass *p;
    size_t per_window; /* tasks a window: 3 * its most chunks */
} gd_owned_hash;

static void gd_owned_hash_task(void *ctx, size_t task) {
    const gd_owned_hash *h = ctx;
    const gd_owned_pass *p = h->p;
    const gd_owned_window *w = &p->w[p->active[task / h->per_window]];
    size_t rest = task % h->per_window, per_array = h->per_window / 3;
    int a = (int)(rest / per_array);
    size_t at = (rest % per_array) * p->chunk_elems; /* within the window */
    if (at >= w->count)
        return;
    size_t count = w->count - at < p->chunk_elems ? w->count - at : p->chunk_elems;
    uint32_t chunk = (uint32_t)((w->lo + at) / p->chunk_elems);
    gd_mmr_hash_leaf(p->leaves + ((size_t)a * p->chunks + chunk) * GD_MMR_HASH_LEN, chunk,
                     w->arrays[a] + at, count * sizeof(float));
}

/* Rank r's windows cover the chunks whose first value it owns:
 * [first, end) in values. */
static void gd_owned_span(const gd_owned_pass *p, size_t r, size_t *first, size_t *end) {
    size_t lo = 0, hi = 0;
    gd_trainer_rank_shard(p->t, r, &lo, &hi);
    size_t e = p->chunk_elems;
    *first = lo % e ? lo + (e - lo % e) : lo;
    *end = hi % e ? hi + (e - hi % e) : hi;
    if (*end > p->n)
        *end = p->n;
    if (*first > *end)
        *first = *end;
}

gd_status gd_trainer_read_owned(gd_trainer *t, uint8_t roots[3][GD_MMR_HASH_LEN],
                                uint32_t chunk_elems, const gd_owned_sink *to) {
    size_t n = gd_trainer_layout(t)->total;
    if (!gd_trainer_read_owned_fits(n, chunk_elems))
        return gd_fail(GD_ERR_INVALID, "a state of %zu values in chunks of %u is read in "
                                       "order, not by rank",
                       n, chunk_elems);
    gd_owned_pass *p = calloc(1, sizeof *p);
    if (p == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    *p = (gd_owned_pass){.t = t, .chunk_elems = chunk_elems, .n = n,
                         .window = gd_values_window_of(chunk_elems, n),
                         .ranks = gd_trainer_rank_count(t),
                         .chunks = gd_values_chunks(n, chunk_elems)};
    p->leaves = roots != NULL ? malloc(3 * p->chunks * GD_MMR_HASH_LEN) : NULL;
    gd_status s = p->leaves || roots == NULL ? GD_OK
                                             : gd_fail(GD_ERR_NOMEM, "out of memory for leaves");
    size_t next[GD_TRAINER_RANKS_MAX], end[GD_TRAINER_RANKS_MAX];
    for (size_t r = 0; s == GD_OK && r < p->ranks; r++) {
        gd_owned_span(p, r, &next[r], &end[r]);
        p->w[r] = (gd_owned_window){.rank = r};
        if (next[r] == end[r] || (to != NULL && to->place != NULL))
            continue; /* no chunk begins in its shard, or the sink places the windows */
        p->w[r].buf = gd_backend_host_alloc_f32(gd_trainer_rank_backend(t, r), 3 * p->window);
        if (p->w[r].buf == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of host memory for rank %zu's window", r);
    }
    gd_owned_hash h = {.p = p, .per_window = 3 * ((p->window - 1) / chunk_elems + 1)};
    while (s == GD_OK) {
        p->n_active = 0;
        for (size_t r = 0; r < p->ranks; r++) {
            if (next[r] == end[r])
                continue;
            size_t lo = 0, hi = 0;
            gd_trainer_rank_shard(t, r, &lo, &hi);
            gd_owned_window *w = &p->w[r];
            w->lo = next[r];
            w->count = end[r] - next[r] < p->window ? end[r] - next[r] : p->window;
            w->own = (w->lo + w->count < hi ? w->lo + w->count : hi) - w->lo;
            next[r] += w->count;
            p->active[p->n_active++] = r;
            if (s == GD_OK)
                s = gd_owned_place(p, w, to);
        }
        if (p->n_active == 0 || s != GD_OK)
            break;
        gd_owned_read_batch(p);
        if (roots != NULL)
            gd_pool_run(gd_trainer_pool(t), p->n_active * h.per_window, gd_owned_hash_task, &h);
        for (size_t i = 0; s == GD_OK && to != NULL && i < p->n_active; i++) {
            const gd_owned_window *w = &p->w[p->active[i]];
            s = to->write(to->ctx, w->arrays[0], w->arrays[1],
                          w->arrays[2], w->lo, w->count);
        }
    }
    for (int a = 0; s == GD_OK && roots != NULL && a < 3; a++) {
        gd_mmr_peaks peaks;
        gd_mmr_peaks_init(&peaks);
        for (size_t c = 0; s == GD_OK && c < p->chunks; c++)
            s = gd_mmr_peaks_append(&peaks,
                                    p->leaves + ((size_t)a * p->chunks + c) * GD_MMR_HASH_LEN);
        if (s == GD_OK)
            s = gd_mmr_peaks_root(&peaks, roots[a]);
    }
    for (size_t r = 0; r < p->ranks; r++)
        gd_backend_host_free(gd_trainer_rank_backend(t, r), p->w[r].buf);
    free(p->leaves);
    free(p);
    return s;
}
