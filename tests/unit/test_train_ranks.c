/* Data parallelism (trainer/train.c's ranks, kernels/collective.h): a
 * trainer over 2 or 3 ranks gives, step after step, the bits of one rank
 * on the CPU backend: parameters, both AdamW moments, loss and gradient
 * norm. The ranks are device-like test backends (tests/support/backend_copy.h:
 * every op through the CPU fallback, every transfer explicit, guard bytes
 * around every buffer) joined by the host collective, so a copy the
 * trainer forgets, a slice sent to the wrong owner, or an addition out of
 * order fails here without a GPU. The tiny model's 115,008 parameters are
 * two chunks of the sum of squares: over 3 ranks the last one owns
 * nothing, and 5 micro-batches over 2 or 3 ranks leave a rank idle in the
 * last round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/collective.h"
#include "tests/support/backend_copy.h"
#include "tests/support/testkit.h"
#include "trainer/data.h"
#include "trainer/train.h"

#define STEPS 3

typedef struct run {
    gd_step_stats stats[STEPS];
    float *params, *m, *v;
    size_t n; /* values in each */
} run;

static gd_train_options options(size_t micro_steps) {
    gd_train_options o;
    gd_train_options_default(&o);
    o.batch = micro_steps;
    o.micro_batch = 1;
    o.seq_len = 16;
    o.seed = 7;
    o.optim.lr = 1e-2;
    o.optim.warmup_steps = 1;
    o.optim.schedule_steps = STEPS;
    o.optim.grad_clip = 0.5; /* clipped: the norm's bits reach the update */
    return o;
}

static gd_model_config tiny(void) {
    gd_model_config c;
    if (gd_model_config_preset(&c, "tiny") != GD_OK)
        abort();
    return c;
}

static void run_steps(gd_trainer *t, const gd_data *data, run *out) {
    size_t n = out->n = gd_trainer_layout(t)->total;
    for (int i = 0; i < STEPS; i++)
        CHECK_OK(gd_trainer_step(t, data, &out->stats[i]));
    out->params = malloc(n * sizeof(float));
    out->m = malloc(n * sizeof(float));
    out->v = malloc(n * sizeof(float));
    CHECK(out->params && out->m && out->v);
    gd_trainer_get_state(t, out->params, out->m, out->v, NULL);
}

static void run_free(run *r) {
    free(r->params);
    free(r->m);
    free(r->v);
}

static void check_same(const run *a, const run *b, const char *what) {
    size_t n = a->n;
    bool same = a->n == b->n && memcmp(a->params, b->params, n * sizeof(float)) == 0 &&
                memcmp(a->m, b->m, n * sizeof(float)) == 0 &&
                memcmp(a->v, b->v, n * sizeof(float)) == 0;
    for (int i = 0; i < STEPS; i++)
        same = same && a->stats[i].loss == b->stats[i].loss &&
               a->stats[i].grad_norm == b->stats[i].grad_norm;
    if (!same)
        printf("  %s: differs from one rank on the CPU\n", what);
    CHECK(same);
}

/* One rank on the CPU backend: the reference. */
static void run_cpu(const gd_data *data, run *out, size_t micro_steps) {
    gd_model_config c = tiny();
    gd_train_options o = options(micro_steps);
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 2));
    run_steps(t, data, out);
    gd_trainer_free(t);
}

/* A trainer over n copy backends, no pools (each rank computes on its own
 * thread), joined by the host collective. */
typedef struct rank_group {
    gd_backend be[4];
    gd_copy_backend *cbs[4];
    size_t n;
    gd_collective coll;
    gd_trainer *t;
} rank_group;

static void ranks_open(rank_group *g, size_t n, size_t micro_steps) {
    g->n = n;
    for (size_t r = 0; r < n; r++)
        CHECK((g->cbs[r] = gd_copy_backend_new(&g->be[r], NULL)) != NULL);
    CHECK_OK(gd_collective_host_open(&g->coll, g->be, n));
    gd_model_config c = tiny();
    gd_train_options o = options(micro_steps);
    g->t = NULL;
    CHECK_OK(gd_trainer_new_ranks(&g->t, &c, &o, 1, g->be, n, &g->coll));
}

/* Frees it all; every buffer's guards must be intact and none left. */
static void ranks_close(rank_group *g) {
    for (size_t r = 0; r < g->n; r++)
        CHECK(gd_copy_backend_guards_ok(g->cbs[r]));
    gd_trainer_free(g->t);
    gd_collective_close(&g->coll);
    for (size_t r = 0; r < g->n; r++)
        CHECK(gd_copy_backend_free(g->cbs[r]));
}

static void run_ranks(const gd_data *data, run *out, size_t micro_steps, size_t n_ranks) {
    rank_group g;
    ranks_open(&g, n_ranks, micro_steps);
    run_steps(g.t, data, out);
    ranks_close(&g);
}

static void test_ranks_give_one_ranks_bits(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    static const size_t micro_steps[] = {1, 4, 5};
    for (size_t i = 0; i < sizeof micro_steps / sizeof micro_steps[0]; i++) {
        run want;
        run_cpu(data, &want, micro_steps[i]);
        for (size_t ranks = 1; ranks <= 3; ranks++) {
            run have;
            run_ranks(data, &have, micro_steps[i], ranks);
            char what[64];
            snprintf(what, sizeof what, "%zu micro-batches over %zu ranks", micro_steps[i],
                     ranks);
            check_same(&want, &have, what);
            run_free(&have);
        }
        run_free(&want);
    }
    gd_data_close(data);
}

/* Resuming onto ranks continues as one rank does: the moments go to their
 * owners and come back whole. */
static void test_state_round_trips_through_shards(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    run want;
    run_cpu(data, &want, 2);
    rank_group g;
    ranks_open(&g, 3, 2);
    gd_trainer *t = g.t;
    size_t n = gd_trainer_layout(t)->total;
    gd_trainer_set_state(t, want.params, want.m, want.v, STEPS);
    run back;
    back.params = malloc(n * sizeof(float));
    back.m = malloc(n * sizeof(float));
    back.v = malloc(n * sizeof(float));
    uint64_t step = 0;
    gd_trainer_get_state(t, back.params, back.m, back.v, &step);
    CHECK(step == STEPS);
    memcpy(back.stats, want.stats, sizeof back.stats);
    back.n = n;
    check_same(&want, &back, "state set and got back over 3 ranks");
    run_free(&back);
    ranks_close(&g);
    run_free(&want);
    gd_data_close(data);
}

/* More ranks than the limit, or several without a collective, are refused. */
static void test_rejects_bad_groups(void) {
    gd_model_config c = tiny();
    gd_train_options o = options(2);
    gd_backend ranks[2];
    gd_backend_cpu_init(&ranks[0], NULL);
    gd_backend_cpu_init(&ranks[1], NULL);
    gd_trainer *t = NULL;
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1, ranks, 2, NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1, ranks, 0, NULL), GD_ERR_INVALID);
    gd_collective coll;
    CHECK_OK(gd_collective_host_open(&coll, ranks, 1));
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1, ranks, 2, &coll), GD_ERR_INVALID);
    gd_collective_close(&coll);
    CHECK(t == NULL);
}

int main(void) {
    RUN_TEST(test_ranks_give_one_ranks_bits);
    RUN_TEST(test_state_round_trips_through_shards);
    RUN_TEST(test_rejects_bad_groups);
    return gd_test_finish();
}
