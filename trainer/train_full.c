/* Full sharding (ZeRO-3) inside a host: each rank owns the shard [lo, hi)
 * of the flat layout (fp32 parameters, the accumulated gradient, AdamW's
 * moments) and nothing else of the model. The model's passes ask for one
 * unit at a time (trainer/layout.h: the embedding, a layer, the head)
 * through the feed (trainer/model_api.h):
 *
 *   params      every busy rank asks for unit u at the same point of its
 *               pass; the last to ask copies u's slices from their owners
 *               into every busy rank's window (a gather), then all go on;
 *   grads       the rank's own window, zeroed, for the backward pass to
 *               add into;
 *   grads_done  again a meeting: the last to arrive takes the unit's
 *               gradient to its owners, source rank by source rank, which
 *               is micro-batch order (rank r computes micro-batch first +
 *               r), each owner copying the first micro-batch's slice and
 *               adding every later one, exactly as the optimizer-sharded
 *               path adds whole micro gradients.
 *
 * So an owner's accumulated gradient receives the same values in the same
 * order of additions for any number of ranks and either sharding, and a
 * step's bits do not depend on either (test_train_ranks). Copies change
 * no bit. The gather copies fp32 master values; the ops see exactly the
 * parameters the whole-model path passes them.
 *
 * A tied head uses unit 0 (the table) first and last in each pass; it has
 * windows of its own, gathered once a pass and reduced once at its end. */
#include <string.h>

#include "kernels/backend.h"
#include "kernels/collective.h"
#include "trainer/train_impl.h"

/* --- the meeting ----------------------------------------------------------------------- */

gd_status gd_trainer_meet_init(gd_trainer *t) {
    if (pthread_mutex_init(&t->meet_lock, NULL) != 0)
        return gd_fail(GD_ERR_NOMEM, "cannot create the ranks' lock");
    if (pthread_cond_init(&t->meet_cond, NULL) != 0) {
        pthread_mutex_destroy(&t->meet_lock);
        return gd_fail(GD_ERR_NOMEM, "cannot create the ranks' condition");
    }
    return GD_OK;
}

void gd_trainer_meet_free(gd_trainer *t) {
    pthread_mutex_destroy(&t->meet_lock);
    pthread_cond_destroy(&t->meet_cond);
}

void gd_trainer_meet_expect(gd_trainer *t, size_t ranks) {
    pthread_mutex_lock(&t->meet_lock);
    t->meet_expected = ranks;
    t->meet_arrived = 0;
    pthread_mutex_unlock(&t->meet_lock);
}

/* Called with the lock held once everyone expected has arrived: runs the
 * action without the lock (the others wait for the generation to change),
 * then lets them go. */
static void gd_trainer_meet_complete(gd_trainer *t) {
    gd_meet_action action = t->meet_action;
    size_t unit = t->meet_unit;
    pthread_mutex_unlock(&t->meet_lock);
    action(t, unit);
    pthread_mutex_lock(&t->meet_lock);
    t->meet_arrived = 0;
    t->meet_generation++;
    pthread_cond_broadcast(&t->meet_cond);
}

/* Waits until every busy rank has come here; the last one runs action for
 * all of them. Every rank arrives with the same action and unit (the
 * passes are the same sequence on every rank). */
static void gd_trainer_meet(gd_trainer *t, gd_meet_action action, size_t unit) {
    pthread_mutex_lock(&t->meet_lock);
    uint64_t generation = t->meet_generation;
    t->meet_action = action;
    t->meet_unit = unit;
    if (++t->meet_arrived >= t->meet_expected)
        gd_trainer_meet_complete(t);
    else
        while (generation == t->meet_generation)
            pthread_cond_wait(&t->meet_cond, &t->meet_lock);
    pthread_mutex_unlock(&t->meet_lock);
}

void gd_trainer_meet_leave(gd_trainer *t) {
    pthread_mutex_lock(&t->meet_lock);
    if (t->meet_expected > 0)
        t->meet_expected--;
    if (t->meet_arrived > 0 && t->meet_arrived >= t->meet_expected)
        gd_trainer_meet_complete(t);
    pthread_mutex_unlock(&t->meet_lock);
}

/* --- copies between ranks ---------------------------------------------------------------- */

static void gd_trainer_copies_begin(gd_trainer *t) {
    if (t->coll)
        gd_collective_begin(t->coll);
}

static void gd_trainer_copies_end(gd_trainer *t) {
    if (t->coll)
        gd_collective_end(t->coll);
}

/* A copy between ranks' buffers; one rank copies on its own backend. */
static void gd_trainer_copy(gd_trainer *t, size_t dst_rank, float *dst, size_t src_rank,
                            const float *src, size_t count) {
    if (t->coll)
        gd_collective_copy(t->coll, dst_rank, dst, src_rank, src, count * sizeof(float));
    else
        gd_backend_copy(&t->ranks[dst_rank].be, dst, src, count * sizeof(float));
}

/* The part [*a, *b) of unit [lo, hi) that rank k owns; false if none. */
static bool gd_rank_owns(const gd_rank *k, size_t lo, size_t hi, size_t *a, size_t *b) {
    *a = lo > k->lo ? lo : k->lo;
    *b = hi < k->hi ? hi : k->hi;
    return *a < *b;
}

static bool gd_trainer_is_table(const gd_trainer *t, size_t unit) {
    return t->tied && unit == 0;
}

/* --- the actions ------------------------------------------------------------------------- */

/* Copies unit's parameters from their owners into every busy rank's
 * window. */
static void gd_trainer_gather(gd_trainer *t, size_t unit) {
    size_t lo, hi;
    gd_param_layout_unit(&t->layout, unit, &lo, &hi);
    bool table = gd_trainer_is_table(t, unit);
    gd_trainer_copies_begin(t);
    for (size_t dst = 0; dst < t->n_ranks; dst++) {
        gd_rank *d = &t->ranks[dst];
        if (!d->busy)
            continue;
        float *window = table ? d->table_params : d->unit_params;
        for (size_t src = 0; src < t->n_ranks; src++) {
            const gd_rank *o = &t->ranks[src];
            size_t a, b;
            if (gd_rank_owns(o, lo, hi, &a, &b))
                gd_trainer_copy(t, dst, window + (a - lo), src, o->params + (a - o->lo), b - a);
        }
    }
    gd_trainer_copies_end(t);
}

/* Takes unit's gradient from every busy rank's window to its owners, in
 * micro-batch order: the owner's slice of the step's first micro-batch is
 * copied, every later one added. */
static void gd_trainer_reduce_unit(gd_trainer *t, size_t unit) {
    size_t lo, hi;
    gd_param_layout_unit(&t->layout, unit, &lo, &hi);
    bool table = gd_trainer_is_table(t, unit);
    for (size_t src = 0; src < t->n_ranks && t->ranks[src].busy; src++) {
        gd_rank *s = &t->ranks[src];
        const float *window = table ? s->table_grads : s->unit_grads;
        gd_trainer_copies_begin(t);
        for (size_t dst = 0; dst < t->n_ranks; dst++) {
            size_t a, b;
            if (dst != src && gd_rank_owns(&t->ranks[dst], lo, hi, &a, &b))
                gd_trainer_copy(t, dst, t->ranks[dst].inbox, src, window + (a - lo), b - a);
        }
        gd_trainer_copies_end(t);
        bool first = t->round_first + src == 0;
        for (size_t dst = 0; dst < t->n_ranks; dst++) {
            gd_rank *d = &t->ranks[dst];
            size_t a, b;
            if (!gd_rank_owns(d, lo, hi, &a, &b))
                continue;
            const float *slice = dst == src ? window + (a - lo) : d->inbox;
            float *acc = d->grads + (a - d->lo);
            if (first)
                gd_backend_copy(&d->be, acc, slice, (b - a) * sizeof(float));
            else
                gd_backend_add(&d->be, acc, acc, slice, b - a);
        }
        if (table)
            s->table_grads_open = false;
    }
}

/* --- the feed ---------------------------------------------------------------------------- */

static float *gd_rank_unit_params(void *ctx, size_t unit) {
    gd_rank *k = ctx;
    gd_trainer *t = k->t;
    if (!gd_trainer_is_table(t, unit)) {
        gd_trainer_meet(t, gd_trainer_gather, unit);
        return k->unit_params;
    }
    if (!k->table_gathered) {
        gd_trainer_meet(t, gd_trainer_gather, unit);
        k->table_gathered = true;
    }
    return k->table_params;
}

static float *gd_rank_unit_grads(void *ctx, size_t unit) {
    gd_rank *k = ctx;
    gd_trainer *t = k->t;
    size_t lo, hi;
    gd_param_layout_unit(&t->layout, unit, &lo, &hi);
    if (!gd_trainer_is_table(t, unit)) {
        gd_backend_zero(&k->be, k->unit_grads, (hi - lo) * sizeof(float));
        return k->unit_grads;
    }
    if (!k->table_grads_open) {
        gd_backend_zero(&k->be, k->table_grads, (hi - lo) * sizeof(float));
        k->table_grads_open = true;
    }
    return k->table_grads;
}

static void gd_rank_unit_grads_done(void *ctx, size_t unit) {
    gd_rank *k = ctx;
    gd_trainer_meet(k->t, gd_trainer_reduce_unit, unit);
}

const gd_model_feed_f32 gd_rank_feed = {gd_rank_unit_params, gd_rank_unit_grads,
                                        gd_rank_unit_grads_done, NULL};

void gd_rank_feed_reset(gd_rank *k) {
    k->table_gathered = false;
    k->table_grads_open = false;
}
