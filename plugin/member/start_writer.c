/* Segment-start states written behind training (start_writer.h). */
#include "plugin/member/start_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gd_status gd_start_failed_as(gd_status s, uint64_t round, uint32_t leaf) {
    return s == GD_OK ? GD_OK
                      : gd_fail_context(s, "the state of round %" PRIu64 ", leaf %u", round,
                                        leaf);
}

/* One state file, streamed from state's arrays: no serialized copy. */
static gd_status gd_start_write(const gd_start_writer *w, uint64_t round, uint32_t leaf,
                                const gd_worker_desc *desc, const gd_worker_state *state) {
    uint8_t header[GD_WORKER_DESC_BYTES];
    gd_bytes_part parts[GD_WORKER_STATE_FILE_PARTS];
    gd_status s = gd_worker_state_file_parts(parts, header, desc, state);
    if (s == GD_OK)
        s = gd_artifact_put_parts(w->store, GD_ARTIFACT_STATE, w->run, round, leaf, parts,
                                  GD_WORKER_STATE_FILE_PARTS);
    return gd_start_failed_as(s, round, leaf);
}

/* A window of the four arrays of a state file of n values, each at its
 * place (the file's header first, then params, exp_avg, exp_avg_sq and
 * residual). */
static gd_status gd_state_file_window(const gd_file_atomic *f, size_t n, const float *params,
                                      const float *exp_avg, const float *exp_avg_sq,
                                      const float *residual, size_t lo, size_t count) {
    const float *arrays[4] = {params, exp_avg, exp_avg_sq, residual};
    for (int a = 0; a < 4; a++)
        GD_TRY(gd_file_write_at(f->fd, arrays[a], count * sizeof(float),
                                GD_WORKER_DESC_BYTES + ((uint64_t)a * n + lo) * sizeof(float),
                                f->tmp));
    return GD_OK;
}

/* The three roots of the staged start, into desc: hashed here, on the
 * writer's own threads, while the trainer goes on. */
static gd_status gd_start_hash(gd_start_writer *w, gd_worker_desc *desc) {
    if (w->pool == NULL)
        GD_TRY(gd_pool_new(&w->pool, GD_START_HASH_THREADS));
    const gd_worker_state *st = &w->staging;
    const float *arrays[3] = {st->params, st->exp_avg, st->exp_avg_sq};
    uint8_t *roots[3] = {desc->params_root, desc->exp_avg_root, desc->exp_avg_sq_root};
    for (int a = 0; a < 3; a++)
        GD_TRY(gd_values_root(w->pool, arrays[a], st->n, desc->tag.chunk_elems, roots[a]));
    return GD_OK;
}

/* Under the lock: the first failure is kept, with its detail, for the
 * caller's thread (details are thread-local). */
static void gd_start_failed(gd_start_writer *w, gd_status s) {
    if (s != GD_OK && w->failed == GD_OK) {
        w->failed = s;
        snprintf(w->why, sizeof w->why, "%s", gd_error_detail());
    }
}

static gd_status gd_start_failure(gd_start_writer *w) {
    return w->failed == GD_OK ? GD_OK : gd_fail(w->failed, "%s", w->why);
}

static void *gd_start_writer_main(void *arg) {
    gd_start_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->queued && !w->stop)
            pthread_cond_wait(&w->wake, &w->mu);
        if (!w->queued)
            break;
        /* The staging state is the writer's until queued is cleared. */
        gd_worker_desc desc = w->desc;
        uint64_t round = w->round;
        uint32_t leaf = w->leaf;
        bool hash = w->hash_queued;
        pthread_mutex_unlock(&w->mu);
        gd_status s = hash ? gd_start_hash(w, &desc) : GD_OK;
        if (s == GD_OK)
            s = gd_start_write(w, round, leaf, &desc, &w->staging);
        pthread_mutex_lock(&w->mu);
        if (hash && s == GD_OK) { /* what the round asks for (gd_start_writer_start_roots) */
            w->hashed = desc;
            w->hashed_leaf = leaf;
        }
        gd_start_failed(w, s);
        w->written += s == GD_OK;
        w->queued = false;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

gd_status gd_start_writer_open(gd_start_writer *w, const gd_artifact_store *store, uint64_t run,
                               bool background) {
    memset(w, 0, sizeof *w);
    w->store = store;
    w->run = run;
    w->background = background;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    return GD_OK;
}

/* Under the lock: until the queued write, if any, is done. */
static void gd_start_wait(gd_start_writer *w) {
    while (w->queued)
        pthread_cond_wait(&w->done, &w->mu);
}

/* Under the lock: a staging state of n values, kept from the last start
 * when its size is the same. */
static gd_status gd_start_staging(gd_start_writer *w, size_t n) {
    if (w->have_staging && w->staging.n != n) {
        gd_worker_state_free(&w->staging);
        w->have_staging = false;
        w->residual_staged = false;
    }
    if (!w->have_staging) {
        GD_TRY(gd_worker_state_init(&w->staging, 0, n));
        w->have_staging = true;
    }
    return GD_OK;
}

gd_status gd_start_writer_start_begin(gd_start_writer *w, uint64_t round, uint32_t leaf,
                                      size_t n) {
    if (!w->background)
        return gd_start_writer_post_begin(w, round, leaf, n);
    pthread_mutex_lock(&w->mu);
    gd_start_wait(w);
    gd_status s = gd_start_failure(w);
    if (s == GD_OK)
        s = gd_start_staging(w, n);
    if (s == GD_OK && !w->started) {
        if (pthread_create(&w->thread, NULL, gd_start_writer_main, w) != 0)
            s = gd_fail(GD_ERR_NOMEM, "cannot start the start-state writer");
        else
            w->started = true;
    }
    w->staging_open = s == GD_OK;
    w->round = round;
    w->leaf = leaf;
    if (leaf == 0) /* a round's first start brings its residual */
        w->residual_staged = false;
    pthread_mutex_unlock(&w->mu);
    return gd_start_failed_as(s, round, leaf);
}

float *gd_start_writer_start_place(gd_start_writer *w, int array, size_t lo, size_t count) {
    gd_worker_state *st = &w->staging;
    if (!w->background || !w->staging_open || array < 0 || array > 2 || lo > st->n ||
        count > st->n - lo)
        return NULL;
    float *arrays[3] = {st->params, st->exp_avg, st->exp_avg_sq};
    return arrays[array] + lo;
}

/* A start's windows come in no set order (each rank's in turn): each at
 * its place, counted. */
gd_status gd_start_writer_start_write(gd_start_writer *w, const float *params,
                                      const float *exp_avg, const float *exp_avg_sq,
                                      const float *residual, size_t lo, size_t count) {
    if (!w->background) {
        if (!w->post_open || lo > w->post_n || count > w->post_n - lo ||
            count > w->post_n - w->post_next)
            return gd_fail(GD_ERR_INVALID, "state values [%zu, +%zu) of no start begun", lo,
                           count);
        gd_status s = gd_state_file_window(&w->post, w->post_n, params, exp_avg, exp_avg_sq,
                                           residual, lo, count);
        if (s != GD_OK) {
            gd_start_writer_post_abort(w);
            return gd_start_failed_as(s, w->post_round, w->post_leaf);
        }
        w->post_next += count;
        return GD_OK;
    }
    gd_worker_state *st = &w->staging;
    if (!w->staging_open || lo > st->n || count > st->n - lo)
        return gd_fail(GD_ERR_INVALID, "state values [%zu, +%zu) of no start begun", lo, count);
    if (residual == NULL && !(w->residual_staged && w->residual_round == w->round))
        return gd_fail(GD_ERR_INVALID, "round %llu's residual was never staged",
                       (unsigned long long)w->round);
    /* A window placed in the staging state (start_place) is there already. */
    const float *from[4] = {params, exp_avg, exp_avg_sq, residual};
    float *into[4] = {st->params, st->exp_avg, st->exp_avg_sq, st->residual};
    for (int a = 0; a < 4; a++)
        if (from[a] != NULL && from[a] != into[a] + lo)
            memcpy(into[a] + lo, from[a], count * sizeof(float));
    return GD_OK;
}

/* The staged start queued for the writer's thread, hashed there first
 * when hash is set. */
static gd_status gd_start_queue(gd_start_writer *w, const gd_worker_desc *desc, bool hash) {
    if (!w->staging_open)
        return desc == NULL ? GD_OK : gd_fail(GD_ERR_INVALID, "no start state was begun");
    w->staging_open = false;
    if (desc == NULL)
        return GD_OK;
    if (desc->n != w->staging.n)
        return gd_fail(GD_ERR_INVALID, "a descriptor of %llu values for a state of %zu",
                       (unsigned long long)desc->n, w->staging.n);
    pthread_mutex_lock(&w->mu);
    if (w->leaf == 0) { /* its residual stays for the round's later starts */
        w->residual_staged = true;
        w->residual_round = w->round;
    }
    /* The staging state is the writer thread's from here until queued is
     * cleared. */
    snprintf(w->staging.address, sizeof w->staging.address, "%s", desc->address);
    w->staging.rank = desc->rank;
    w->staging.step = desc->step;
    w->desc = *desc;
    w->hash_queued = hash;
    w->queued = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
    return GD_OK;
}

gd_status gd_start_writer_start_end_unhashed(gd_start_writer *w, const gd_worker_desc *desc) {
    if (!w->background)
        return gd_fail(GD_ERR_INVALID, "a start written in the foreground is hashed by the "
                                       "round");
    return gd_start_queue(w, desc, true);
}

gd_status gd_start_writer_start_roots(gd_start_writer *w, uint64_t round, uint32_t leaf,
                                      uint8_t roots[3][GD_MMR_HASH_LEN]) {
    pthread_mutex_lock(&w->mu);
    gd_start_wait(w);
    gd_status s = gd_start_failure(w);
    const gd_worker_desc *d = &w->hashed;
    if (s == GD_OK && (d->round != round || d->n == 0 || w->hashed_leaf != leaf))
        s = gd_fail(GD_ERR_INVALID, "no start of round %llu, leaf %u was hashed here",
                    (unsigned long long)round, leaf);
    if (s == GD_OK) {
        memcpy(roots[0], d->params_root, GD_MMR_HASH_LEN);
        memcpy(roots[1], d->exp_avg_root, GD_MMR_HASH_LEN);
        memcpy(roots[2], d->exp_avg_sq_root, GD_MMR_HASH_LEN);
    }
    pthread_mutex_unlock(&w->mu);
    return s;
}

gd_status gd_start_writer_start_end(gd_start_writer *w, const gd_worker_desc *desc) {
    if (!w->background) {
        if (desc != NULL)
            return gd_start_writer_post_end(w, desc);
        gd_start_writer_post_abort(w);
        return GD_OK;
    }
    return gd_start_queue(w, desc, false);
}

gd_status gd_start_writer_post_begin(gd_start_writer *w, uint64_t round, uint32_t leaf,
                                     size_t n) {
    gd_start_writer_post_abort(w);
    gd_status s = GD_OK;
    if (w->background) { /* the queued write first, and its failure */
        pthread_mutex_lock(&w->mu);
        gd_start_wait(w);
        s = gd_start_failure(w);
        pthread_mutex_unlock(&w->mu);
    }
    if (s == GD_OK)
        s = gd_artifact_begin(w->store, &w->post, GD_ARTIFACT_STATE, w->run, round, leaf);
    if (s != GD_OK)
        return gd_start_failed_as(s, round, leaf);
    w->post_open = true;
    w->post_n = n;
    w->post_next = 0;
    w->post_round = round;
    w->post_leaf = leaf;
    uint8_t zeros[GD_WORKER_DESC_BYTES] = {0}; /* the descriptor's place, written at the end */
    s = gd_file_atomic_append(&w->post, zeros, sizeof zeros);
    if (s != GD_OK)
        gd_start_writer_post_abort(w);
    return gd_start_failed_as(s, round, leaf);
}

gd_status gd_start_writer_post_write(gd_start_writer *w, const float *params,
                                     const float *exp_avg, const float *exp_avg_sq,
                                     const float *residual, size_t lo, size_t count) {
    if (!w->post_open || lo != w->post_next || count > w->post_n - lo)
        return gd_fail(GD_ERR_INVALID, "state values [%zu, +%zu) out of order", lo, count);
    gd_status s = gd_state_file_window(&w->post, w->post_n, params, exp_avg, exp_avg_sq,
                                       residual, lo, count);
    if (s != GD_OK) {
        gd_start_writer_post_abort(w);
        return gd_start_failed_as(s, w->post_round, w->post_leaf);
    }
    w->post_next = lo + count;
    return GD_OK;
}

gd_status gd_start_writer_post_end(gd_start_writer *w, const gd_worker_desc *desc) {
    if (!w->post_open || w->post_next != w->post_n || desc->n != w->post_n)
        return gd_fail(GD_ERR_INVALID, "a state file ended before its last value");
    uint8_t header[GD_WORKER_DESC_BYTES];
    gd_worker_desc_encode(desc, header);
    gd_status s = gd_file_write_at(w->post.fd, header, sizeof header, 0, w->post.tmp);
    if (s == GD_OK)
        s = gd_file_atomic_commit(&w->post);
    uint64_t round = w->post_round;
    uint32_t leaf = w->post_leaf;
    gd_start_writer_post_abort(w);
    w->written += s == GD_OK;
    return gd_start_failed_as(s, round, leaf);
}

void gd_start_writer_post_abort(gd_start_writer *w) {
    if (w->post_open)
        gd_file_atomic_abort(&w->post);
    w->post_open = false;
}

static gd_status gd_sink_start_begin(void *ctx, uint64_t round, uint32_t leaf, size_t n) {
    return gd_start_writer_start_begin(ctx, round, leaf, n);
}

static gd_status gd_sink_start_write(void *ctx, const float *params, const float *exp_avg,
                                     const float *exp_avg_sq, const float *residual, size_t lo,
                                     size_t count) {
    return gd_start_writer_start_write(ctx, params, exp_avg, exp_avg_sq, residual, lo, count);
}

static gd_status gd_sink_start_end(void *ctx, const gd_worker_desc *desc) {
    return gd_start_writer_start_end(ctx, desc);
}

static float *gd_sink_start_place(void *ctx, int array, size_t lo, size_t count) {
    return gd_start_writer_start_place(ctx, array, lo, count);
}

static gd_status gd_sink_start_end_unhashed(void *ctx, const gd_worker_desc *desc) {
    return gd_start_writer_start_end_unhashed(ctx, desc);
}

static gd_status gd_sink_start_roots(void *ctx, uint64_t round, uint32_t leaf,
                                     uint8_t roots[3][GD_MMR_HASH_LEN]) {
    return gd_start_writer_start_roots(ctx, round, leaf, roots);
}

static gd_status gd_sink_post_begin(void *ctx, uint64_t round, uint32_t leaf, size_t n) {
    return gd_start_writer_post_begin(ctx, round, leaf, n);
}

static gd_status gd_sink_post_write(void *ctx, const float *params, const float *exp_avg,
                                    const float *exp_avg_sq, const float *residual, size_t lo,
                                    size_t count) {
    return gd_start_writer_post_write(ctx, params, exp_avg, exp_avg_sq, residual, lo, count);
}

static gd_status gd_sink_post_end(void *ctx, const gd_worker_desc *desc) {
    if (desc != NULL)
        return gd_start_writer_post_end(ctx, desc);
    gd_start_writer_post_abort(ctx);
    return GD_OK;
}

/* The round's payload, encoded into its place in the store. */
static gd_status gd_sink_payload_begin(void *ctx, uint64_t round, gd_file_atomic *f) {
    gd_start_writer *w = ctx;
    return gd_artifact_begin(w->store, f, GD_ARTIFACT_PAYLOAD, w->run, round, 0);
}

gd_engine_start_sink gd_start_writer_sink(gd_start_writer *w) {
    /* Behind training the writer's own threads hash each start, placed
     * straight into its staging state, the round's residual kept. */
    gd_state_leaf_sink starts = {.begin = gd_sink_start_begin, .write = gd_sink_start_write,
                                 .end = gd_sink_start_end, .ctx = w};
    if (w->background) {
        starts.end_unhashed = gd_sink_start_end_unhashed;
        starts.roots = gd_sink_start_roots;
        starts.place = gd_sink_start_place;
        starts.keeps_residual = true;
    }
    return (gd_engine_start_sink){.starts = starts,
                                  .post_begin = gd_sink_post_begin,
                                  .post_write = gd_sink_post_write,
                                  .post_end = gd_sink_post_end,
                                  .payload_begin = gd_sink_payload_begin, .ctx = w};
}

/* Waits for the queued write, frees the staging state and forgets the
 * failure, which is returned (GD_OK: none); records no detail. */
static gd_status gd_start_settle(gd_start_writer *w) {
    pthread_mutex_lock(&w->mu);
    gd_start_wait(w);
    gd_status s = w->failed;
    w->failed = GD_OK;
    if (w->have_staging)
        gd_worker_state_free(&w->staging);
    w->have_staging = false;
    pthread_mutex_unlock(&w->mu);
    return s;
}

gd_status gd_start_writer_drain(gd_start_writer *w) {
    gd_status s = gd_start_settle(w);
    return s == GD_OK ? GD_OK : gd_fail(s, "%s", w->why);
}

void gd_start_writer_forget(gd_start_writer *w) {
    if (w->store != NULL)
        (void)gd_start_settle(w);
}

void gd_start_writer_close(gd_start_writer *w) {
    if (w->store == NULL)
        return;
    gd_start_writer_post_abort(w);
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->mu);
    if (w->started)
        pthread_join(w->thread, NULL);
    if (w->have_staging)
        gd_worker_state_free(&w->staging);
    gd_pool_free(w->pool);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->mu);
    memset(w, 0, sizeof *w);
}
