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
 * A bf16 model reads every weight rounded to bf16, so its gather moves
 * 16-bit codes, half the bytes: each owner rounds its slices into the
 * upper half of its own window (value i's code at byte 2U + 2i of a unit
 * of U values), the codes go from there to the same place in every busy
 * rank's window, and each busy rank widens them in place, in steps that
 * never write a code not yet read (gd_window_widen). The widened values
 * are the rounding the model would do itself, bit for bit, except a NaN's
 * low 16 bits, which a NaN weight's step never keeps: its loss is NaN and
 * the step is refused. No window grows but by GD_GATHER_TAIL values.
 *
 * A tied head uses unit 0 (the table) first and last in each pass; it has
 * windows of its own, gathered once a pass and reduced once at its end.
 *
 * The next unit arrives while the ops run on this one. Each rank has two
 * unit windows (slots). When the ranks meet for unit u, the last to arrive
 * also starts gathering the unit the pass will ask for next (u + 1 going
 * forward, u - 1 going back: the direction of the last two asks) into the
 * other slot (forward after a jump back to the first unit, as an
 * evaluation's next batch makes), on the ranks' transfer queues (kernels/backend.h), after
 * the ops already issued (which may still read that slot's old unit);
 * when the pass asks for it, the ops wait for those transfers, and a
 * bf16 unit's codes are widened, before anything reads it. The backward
 * pass starts on the two units the forward pass ended with, so they are
 * not gathered again. A guess no pass asks for costs a gather, no bit;
 * after the ranks' passes the ops wait for every transfer and the slots
 * are emptied, so the optimizer may change the parameters (the sources).
 * The copies are the same bytes whichever queue carries them, so the
 * prefetch changes no bit (test_train_ranks). */
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

static void gd_trainer_copies_begin(gd_trainer *t, bool transfers) {
    if (t->coll == NULL)
        return;
    if (transfers)
        gd_collective_begin_transfers(t->coll);
    else
        gd_collective_begin(t->coll);
}

/* Calls wait (a backend's queue order: kernels/backend.h) on every rank:
 * owners send, busy ranks receive. */
static void gd_trainer_each_rank(gd_trainer *t, void (*wait)(const gd_backend *be)) {
    for (size_t r = 0; r < t->n_ranks; r++)
        wait(&t->ranks[r].be);
}

static void gd_trainer_copies_end(gd_trainer *t) {
    if (t->coll)
        gd_collective_end(t->coll);
}

/* A copy of bytes between ranks' buffers; one rank copies on its own
 * backend. */
static void gd_trainer_copy_bytes(gd_trainer *t, size_t dst_rank, void *dst, size_t src_rank,
                                  const void *src, size_t bytes) {
    if (t->coll)
        gd_collective_copy(t->coll, dst_rank, dst, src_rank, src, bytes);
    else
        gd_backend_copy(&t->ranks[dst_rank].be, dst, src, bytes);
}

static void gd_trainer_copy(gd_trainer *t, size_t dst_rank, float *dst, size_t src_rank,
                            const float *src, size_t count) {
    gd_trainer_copy_bytes(t, dst_rank, dst, src_rank, src, count * sizeof(float));
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

static bool gd_trainer_bf16(const gd_trainer *t) {
    return t->model_settings.precision == GD_PRECISION_BF16;
}

/* The table's window, or unit slot `slot`'s. */
static float *gd_rank_window(const gd_rank *k, bool table, size_t slot) {
    return table ? k->table_params : k->unit_params[slot];
}

/* --- a bf16 gather's codes ---------------------------------------------------------------- */

/* Where a window holding a unit of count values keeps their codes: its
 * upper half. */
static uint16_t *gd_window_codes(float *window, size_t count) {
    return (uint16_t *)window + count;
}

/* Widens the count codes of gd_window_codes into the window's first count
 * floats, in place: each step widens half the codes not yet read into
 * floats that end where those codes begin (2i + 4k <= 2U after i values,
 * for k <= (U - i) / 2), so no step writes a code it has not read; the
 * last GD_GATHER_TAIL at most go through the tail past `capacity` (the
 * window's largest unit) and are copied into place. About log2(U / tail)
 * steps, each an ordinary dequantize of disjoint ranges. */
static void gd_window_widen(const gd_backend *be, float *window, size_t count,
                            size_t capacity) {
    uint16_t *codes = gd_window_codes(window, count);
    size_t done = 0;
    while (count - done > GD_GATHER_TAIL) {
        size_t k = (count - done) / 2;
        gd_backend_bf16_dequantize(be, window + done, codes + done, k);
        done += k;
    }
    if (done < count) {
        gd_backend_bf16_dequantize(be, window + capacity, codes + done, count - done);
        gd_backend_copy(be, window + done, window + capacity, (count - done) * sizeof(float));
    }
}

/* --- the actions ------------------------------------------------------------------------- */

/* fp32: copies unit's parameters from their owners into every busy rank's
 * window (on the transfer queues when transfers). */
static void gd_trainer_gather_f32(gd_trainer *t, size_t lo, size_t hi, bool table, size_t slot,
                                  bool transfers) {
    gd_trainer_copies_begin(t, transfers);
    for (size_t dst = 0; dst < t->n_ranks; dst++) {
        gd_rank *d = &t->ranks[dst];
        if (!d->busy)
            continue;
        float *window = gd_rank_window(d, table, slot);
        for (size_t src = 0; src < t->n_ranks; src++) {
            const gd_rank *o = &t->ranks[src];
            size_t a, b;
            if (!gd_rank_owns(o, lo, hi, &a, &b))
                continue;
            gd_trainer_copy(t, dst, window + (a - lo), src, o->params + (a - o->lo), b - a);
            t->gathered_bytes += dst != src ? (b - a) * sizeof(float) : 0;
        }
    }
    gd_trainer_copies_end(t);
}

/* bf16: each owner rounds its slices into its own window's codes, and
 * the codes go to every busy rank's window (on the transfer queues when
 * transfers); gd_trainer_gather_widen then makes them floats. */
static void gd_trainer_gather_bf16(gd_trainer *t, size_t lo, size_t hi, bool table, size_t slot,
                                   bool transfers) {
    size_t count = hi - lo;
    for (size_t src = 0; src < t->n_ranks; src++) {
        gd_rank *o = &t->ranks[src];
        size_t a, b;
        if (gd_rank_owns(o, lo, hi, &a, &b))
            gd_backend_bf16_quantize(
                &o->be, gd_window_codes(gd_rank_window(o, table, slot), count) + (a - lo), NULL,
                o->params + (a - o->lo), b - a);
    }
    if (transfers)
        gd_trainer_each_rank(t, gd_backend_transfers_after_ops); /* after the rounding */
    gd_trainer_copies_begin(t, transfers);
    for (size_t dst = 0; dst < t->n_ranks; dst++) {
        gd_rank *d = &t->ranks[dst];
        if (!d->busy)
            continue;
        uint16_t *codes = gd_window_codes(gd_rank_window(d, table, slot), count);
        for (size_t src = 0; src < t->n_ranks; src++) {
            gd_rank *o = &t->ranks[src];
            size_t a, b;
            if (src == dst || !gd_rank_owns(o, lo, hi, &a, &b))
                continue;
            const uint16_t *from = gd_window_codes(gd_rank_window(o, table, slot), count);
            gd_trainer_copy_bytes(t, dst, codes + (a - lo), src, from + (a - lo),
                                  (b - a) * sizeof(uint16_t));
            t->gathered_bytes += (b - a) * sizeof(uint16_t);
        }
    }
    gd_trainer_copies_end(t);
}

static void gd_trainer_gather_widen(gd_trainer *t, size_t lo, size_t hi, bool table,
                                    size_t slot) {
    size_t capacity = table ? t->table_window : t->unit_window;
    for (size_t dst = 0; dst < t->n_ranks; dst++)
        if (t->ranks[dst].busy)
            gd_window_widen(&t->ranks[dst].be, gd_rank_window(&t->ranks[dst], table, slot),
                            hi - lo, capacity);
}

/* Starts bringing unit's parameters from their owners into every busy
 * rank's window (the table's, or slot's): on the ops' queues, or on the
 * transfer queues after the ops already issued. */
static void gd_trainer_gather_start(gd_trainer *t, size_t unit, size_t slot, bool transfers) {
    size_t lo, hi;
    gd_param_layout_unit(&t->layout, unit, &lo, &hi);
    bool table = gd_trainer_is_table(t, unit);
    if (gd_trainer_bf16(t)) {
        gd_trainer_gather_bf16(t, lo, hi, table, slot, transfers);
        return;
    }
    if (transfers)
        gd_trainer_each_rank(t, gd_backend_transfers_after_ops);
    gd_trainer_gather_f32(t, lo, hi, table, slot, transfers);
}

/* Ends a gather for the ops: they wait for its transfers, if any, and a
 * bf16 unit's codes are widened. */
static void gd_trainer_gather_finish(gd_trainer *t, size_t unit, size_t slot, bool transfers) {
    if (transfers)
        gd_trainer_each_rank(t, gd_backend_ops_after_transfers);
    if (gd_trainer_bf16(t)) {
        size_t lo, hi;
        gd_param_layout_unit(&t->layout, unit, &lo, &hi);
        gd_trainer_gather_widen(t, lo, hi, gd_trainer_is_table(t, unit), slot);
    }
}

/* The tied table, gathered once a pass into its own windows. */
static void gd_trainer_gather_table(gd_trainer *t, size_t unit) {
    t->gathers_now++;
    gd_trainer_gather_start(t, unit, 0, false);
    gd_trainer_gather_finish(t, unit, 0, false);
}

/* --- the unit windows' slots ------------------------------------------------------------ */

static int gd_trainer_slot_of(const gd_trainer *t, size_t unit) {
    for (size_t i = 0; i < GD_UNIT_SLOTS; i++)
        if (t->slots[i].held && t->slots[i].unit == unit)
            return (int)i;
    return -1;
}

/* The unit the pass will ask for after unit (false: none to prefetch):
 * the next one in the direction of the last two asks, forward after the
 * first ask and after a jump (an evaluation's next batch starts again at
 * unit 0); never the tied table, which has windows of its own. */
static bool gd_trainer_next_unit(const gd_trainer *t, size_t unit, size_t *next) {
    bool back = t->has_last && unit <= t->last_unit && t->last_unit - unit <= 1;
    if (back ? unit == 0 : unit + 1 >= gd_param_layout_units(&t->layout))
        return false;
    *next = back ? unit - 1 : unit + 1;
    return !gd_trainer_is_table(t, *next);
}

/* Unit's parameters in a slot of every busy rank, ready for the ops, and
 * the next unit on its way into the other slot. */
static void gd_trainer_gather(gd_trainer *t, size_t unit) {
    if (gd_trainer_is_table(t, unit)) {
        gd_trainer_gather_table(t, unit);
        return;
    }
    int held = gd_trainer_slot_of(t, unit);
    size_t slot;
    if (held >= 0) {
        slot = (size_t)held;
        if (t->slots[slot].arriving)
            gd_trainer_gather_finish(t, unit, slot, true);
    } else {
        /* Not guessed: gathered now, on the ops' queues, into the slot the
         * last unit is not in; a guess may still be arriving there. */
        slot = t->has_last ? (t->served_slot + 1) % GD_UNIT_SLOTS : 0;
        gd_trainer_each_rank(t, gd_backend_ops_after_transfers);
        t->gathers_now++;
        gd_trainer_gather_start(t, unit, slot, false);
        gd_trainer_gather_finish(t, unit, slot, false);
    }
    t->slots[slot] = (gd_unit_slot){.unit = unit, .held = true};
    size_t next;
    if (gd_trainer_next_unit(t, unit, &next) && gd_trainer_slot_of(t, next) < 0) {
        size_t other = (slot + 1) % GD_UNIT_SLOTS;
        t->gathers_ahead++;
        gd_trainer_gather_start(t, next, other, true);
        t->slots[other] = (gd_unit_slot){.unit = next, .held = true, .arriving = true};
    }
    t->served_slot = slot;
    t->last_unit = unit;
    t->has_last = true;
}

void gd_trainer_prefetch_drain(gd_trainer *t) {
    if (t->memory.shard != GD_SHARD_FULL)
        return;
    gd_trainer_each_rank(t, gd_backend_ops_after_transfers);
    memset(t->slots, 0, sizeof t->slots);
    t->has_last = false;
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
        gd_trainer_copies_begin(t, false);
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
        /* Read before this rank's next meeting, which cannot complete
         * before every rank has read it. */
        return k->unit_params[t->served_slot];
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

const gd_model_feed_f32 gd_rank_feed = {.params = gd_rank_unit_params,
                                        .grads = gd_rank_unit_grads,
                                        .grads_done = gd_rank_unit_grads_done,
                                        .rounded = true};

void gd_rank_feed_reset(gd_rank *k) {
    k->table_gathered = false;
    k->table_grads_open = false;
}
