/* Data parallelism (trainer/train.c's ranks, trainer/train_full.c,
 * kernels/collective.h): a trainer over 1, 2, 3 or 8 ranks, with optimizer
 * or full sharding, activations kept or recomputed, moments on the rank
 * or offloaded to host memory, tied head or not,
 * gives, step after step, the bits of
 * one rank on the CPU backend: parameters, both AdamW moments, loss and
 * gradient norm; and so do its evaluation and a save and resume. The ranks are device-like test backends (tests/support/backend_copy.h:
 * every op through the CPU fallback, every transfer explicit, guard bytes
 * around every buffer) joined by the host collective, so a copy the
 * trainer forgets, a slice sent to the wrong owner, or an addition out of
 * order fails here without a GPU. The tiny model's 115,008 parameters are
 * two chunks of the sum of squares: over 3 ranks the last one owns
 * nothing, a shard boundary falls inside a layer, and 5 micro-batches over
 * 2 or 3 ranks leave a rank idle in the last round. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/collective.h"
#include "tests/support/backend_copy.h"
#include "tests/support/testkit.h"
#include "trainer/data.h"
#include "trainer/owned_read.h"
#include "trainer/state.h"
#include "trainer/train.h"

#define STEPS 3

typedef struct run {
    gd_step_stats stats[STEPS];
    float *params, *m, *v;
    size_t n; /* values in each */
} run;

/* The run's attention path (its bits differ; every case runs under both). */
static gd_attention g_attention;
/* bf16 storage of weights, activations and moments (other bits again). */
static bool g_bf16;

static gd_train_options options(size_t micro_steps) {
    gd_train_options o;
    gd_train_options_default(&o);
    o.attention = g_attention;
    o.precision = g_bf16 ? GD_PRECISION_BF16 : GD_PRECISION_FP32;
    o.moments = o.precision;
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

/* tiny, or tiny with a head of its own (untied). */
static bool g_untied;

static gd_model_config tiny(void) {
    gd_model_config c;
    if (gd_model_config_preset(&c, "tiny") != GD_OK)
        abort();
    c.tie_word_embeddings = !g_untied;
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
    gd_backend be[8];
    gd_copy_backend *cbs[8];
    size_t n;
    gd_collective coll;
    gd_trainer *t;
} rank_group;

/* Offloaded moments go through a window of 1,000 values: tensors and
 * shards split at odd places. */
static void ranks_open_host(rank_group *g, size_t n, size_t micro_steps,
                            gd_memory_settings memory) {
    g->n = n;
    for (size_t r = 0; r < n; r++)
        CHECK((g->cbs[r] = gd_copy_backend_new(&g->be[r], NULL)) != NULL);
    CHECK_OK(gd_collective_host_open(&g->coll, g->be, n));
    gd_model_config c = tiny();
    gd_train_options o = options(micro_steps);
    g->t = NULL;
    CHECK_OK(gd_trainer_new_ranks(&g->t, &c, &o, 1,
                                  &(gd_trainer_host){g->be, n, &g->coll, memory, 1000}));
}

static void ranks_open(rank_group *g, size_t n, size_t micro_steps, gd_shard shard) {
    ranks_open_host(g, n, micro_steps, (gd_memory_settings){.shard = shard});
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

static void run_ranks(const gd_data *data, run *out, size_t micro_steps, size_t n_ranks,
                      gd_memory_settings memory) {
    rank_group g;
    ranks_open_host(&g, n_ranks, micro_steps, memory);
    run_steps(g.t, data, out);
    ranks_close(&g);
}

static void ranks_give_one_ranks_bits(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    static const size_t micro_steps[] = {1, 4, 5};
    static const size_t counts[] = {1, 2, 3, 8};
    for (size_t i = 0; i < sizeof micro_steps / sizeof micro_steps[0]; i++) {
        run want;
        run_cpu(data, &want, micro_steps[i]);
        for (size_t j = 0; j < 8 * sizeof counts / sizeof counts[0]; j++) {
            size_t ranks = counts[j / 8];
            gd_memory_settings memory = {j % 2 ? GD_SHARD_FULL : GD_SHARD_OPTIMIZER,
                                         j / 2 % 2 ? GD_RECOMPUTE_FULL : GD_RECOMPUTE_NONE,
                                         j / 4 % 2 ? GD_OFFLOAD_OPTIMIZER : GD_OFFLOAD_NONE};
            run have;
            run_ranks(data, &have, micro_steps[i], ranks, memory);
            char what[160];
            snprintf(what, sizeof what,
                     "%s%s%s: %zu micro-batches over %zu ranks, %s sharding, recompute %s, "
                     "offload %s",
                     g_untied ? "untied" : "tied",
                     g_attention == GD_ATTENTION_FLASH ? ", flash" : "", g_bf16 ? ", bf16" : "",
                     micro_steps[i], ranks,
                     gd_setting_name(&gd_setting_shard, (int)memory.shard),
                     gd_setting_name(&gd_setting_recompute, (int)memory.recompute),
                     gd_setting_name(&gd_setting_offload, (int)memory.offload));
            check_same(&want, &have, what);
            run_free(&have);
        }
        run_free(&want);
    }
    gd_data_close(data);
}

static void test_ranks_give_one_ranks_bits(void) {
    g_untied = false;
    ranks_give_one_ranks_bits();
}

static void test_untied_ranks_give_one_ranks_bits(void) {
    g_untied = true;
    ranks_give_one_ranks_bits();
    g_untied = false;
}

/* The flash path (flash attention, the cross-entropy in chunks) keeps the
 * property: every case above again, against one CPU rank's flash bits. */
static void test_flash_ranks_give_one_ranks_bits(void) {
    g_attention = GD_ATTENTION_FLASH;
    g_untied = false;
    ranks_give_one_ranks_bits();
    g_untied = true;
    ranks_give_one_ranks_bits();
    g_untied = false;
    g_attention = GD_ATTENTION_NAIVE;
}

/* bf16 storage keeps it too: every case above with bf16 weights,
 * activations and moments, naive and flash, against one CPU rank's bf16
 * bits; and those bits are bf16's: other than fp32's, every moment a
 * bfloat16 value. */
static void test_bf16_ranks_give_one_ranks_bits(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    run fp32, bf16;
    run_cpu(data, &fp32, 4);
    g_bf16 = true;
    run_cpu(data, &bf16, 4);
    CHECK(memcmp(fp32.params, bf16.params, fp32.n * sizeof(float)) != 0);
    CHECK(fabs(fp32.stats[STEPS - 1].loss - bf16.stats[STEPS - 1].loss) < 0.05);
    size_t inexact = 0;
    for (size_t i = 0; i < bf16.n; i++) {
        uint32_t m, v;
        memcpy(&m, &bf16.m[i], sizeof m);
        memcpy(&v, &bf16.v[i], sizeof v);
        inexact += (m & 0xffffu) != 0 || (v & 0xffffu) != 0;
    }
    CHECK(inexact == 0);
    /* The moments' format is the trainer's for life: another is refused. */
    gd_model_config c = tiny();
    gd_train_options o = options(4);
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 1));
    o.moments = GD_PRECISION_FP32;
    if (t != NULL)
        CHECK_STATUS(gd_trainer_reconfigure(t, &o), GD_ERR_INVALID);
    gd_trainer_free(t);
    run_free(&fp32);
    run_free(&bf16);
    gd_data_close(data);
    for (int flash = 0; flash < 2; flash++) {
        g_attention = flash ? GD_ATTENTION_FLASH : GD_ATTENTION_NAIVE;
        g_untied = flash;
        ranks_give_one_ranks_bits();
    }
    g_untied = false;
    g_attention = GD_ATTENTION_NAIVE;
    g_bf16 = false;
}

/* A bf16 run's full sharding gathers 16-bit codes: half the bytes of an
 * fp32 run's gather, step for step (the bits are the tests above). With
 * optimizer sharding nothing is gathered. */
static void test_bf16_gathers_half_the_bytes(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    uint64_t gathered[2][2] = {{0}};
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int full = 0; full < 2; full++) {
            g_bf16 = bf16;
            rank_group g;
            ranks_open(&g, 3, 4, full ? GD_SHARD_FULL : GD_SHARD_OPTIMIZER);
            for (int i = 0; i < 2; i++)
                CHECK_OK(gd_trainer_step(g.t, data, NULL));
            gathered[bf16][full] = gd_trainer_gathered_bytes(g.t);
            ranks_close(&g);
        }
    g_bf16 = false;
    CHECK(gathered[0][0] == 0 && gathered[1][0] == 0);
    CHECK(gathered[0][1] > 0 && gathered[0][1] == 2 * gathered[1][1]);
    gd_data_close(data);
}

/* Full sharding's prefetch: in each pass (all busy ranks' forward and
 * backward) the first unit is gathered on demand and every other one
 * ahead, while the ops run on the unit before it; the backward starts on
 * the two units the forward ended with, so a pass of M units (a tied
 * table apart, gathered once a pass) gathers M - 1 + M - 2 ahead. The
 * bits are ranks_give_one_ranks_bits's, with the prefetch on. */
static void test_full_sharding_gathers_ahead(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    for (int untied = 0; untied < 2; untied++) {
        g_untied = untied;
        rank_group g;
        ranks_open(&g, 3, 4, GD_SHARD_FULL); /* two passes a step: 3 ranks, then 1 */
        for (int i = 0; i < 2; i++)
            CHECK_OK(gd_trainer_step(g.t, data, NULL));
        uint64_t now = 0, ahead = 0, passes = 2 * 2;
        gd_trainer_gather_counts(g.t, &now, &ahead);
        uint64_t m = gd_param_layout_units(gd_trainer_layout(g.t)) - (untied ? 0 : 1);
        printf("  %s: %llu units gathered on demand, %llu ahead, over %llu passes\n",
               untied ? "untied" : "tied", (unsigned long long)now, (unsigned long long)ahead,
               (unsigned long long)passes);
        CHECK(now == passes * (untied ? 1 : 2));
        CHECK(ahead == passes * (2 * m - 3));
        /* An evaluation's passes are forward only: each batch gathers its
         * first unit on demand (a tied table once) and the rest ahead,
         * the next batch's start guessed after the jump back. */
        double mean = 0;
        uint64_t tokens = 0, now2 = 0, ahead2 = 0, batches = 3;
        CHECK_OK(gd_trainer_evaluate(g.t, data, batches, 1, 16, 1, &mean, &tokens, NULL, NULL));
        gd_trainer_gather_counts(g.t, &now2, &ahead2);
        CHECK(now2 - now == batches + (untied ? 0 : 1));
        CHECK(ahead2 - ahead == batches * (m - 1));
        ranks_close(&g);
    }
    g_untied = false;
    gd_data_close(data);
}

/* A fully sharded trainer's evaluation (rank 0 gathers each layer alone)
 * scores what one rank's does, and its checkpoint resumes onto any ranks
 * and either sharding to continue with one rank's bits. */
static void test_full_sharding_evaluates_and_resumes(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    for (int untied = 0; untied < 2; untied++) {
        g_untied = untied;
        gd_model_config c = tiny();
        gd_train_options o = options(4);
        gd_trainer *one = NULL;
        CHECK_OK(gd_trainer_new(&one, &c, &o, 2));
        rank_group g;
        ranks_open_host(&g, 3, 4,
                        (gd_memory_settings){GD_SHARD_FULL, GD_RECOMPUTE_FULL,
                                             GD_OFFLOAD_OPTIMIZER});
        for (int i = 0; i < 2; i++) {
            CHECK_OK(gd_trainer_step(one, data, NULL));
            CHECK_OK(gd_trainer_step(g.t, data, NULL));
        }
        double want = 0, have = 0;
        uint64_t tw = 0, th = 0;
        CHECK_OK(gd_trainer_evaluate(one, data, 2, 2, 16, 1, &want, &tw, NULL, NULL));
        CHECK_OK(gd_trainer_evaluate(g.t, data, 2, 2, 16, 1, &have, &th, NULL, NULL));
        CHECK(want == have && tw == th && tw > 0);
        /* A step after the evaluation still meets every rank. */
        CHECK_OK(gd_trainer_step(one, data, NULL));
        CHECK_OK(gd_trainer_step(g.t, data, NULL));
        char path[256];
        snprintf(path, sizeof path, "%s/full.safetensors", gd_test_tmpdir());
        CHECK_OK(gd_trainer_save(g.t, path, "synthetic:markov:1"));
        ranks_close(&g);
        rank_group back;
        ranks_open(&back, 2, 4, GD_SHARD_FULL);
        gd_trainer_free(back.t);
        CHECK_OK(gd_trainer_resume_ranks(&back.t, path, 1,
                                         &(gd_trainer_host){back.be, 2, &back.coll,
                                                            {GD_SHARD_FULL}}));
        run a = {0}, b = {0};
        run_steps(one, data, &a);
        run_steps(back.t, data, &b);
        check_same(&a, &b, "resumed fully sharded over 2 ranks");
        run_free(&a);
        run_free(&b);
        ranks_close(&back);
        gd_trainer_free(one);
    }
    g_untied = false;
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
    ranks_open(&g, 3, 2, GD_SHARD_FULL);
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
    check_same(&want, &back, "state set and got back over 3 fully sharded ranks");
    run_free(&back);
    ranks_close(&g);
    run_free(&want);
    gd_data_close(data);
}

/* A state moved a window at a time (gd_trainer_get_range, _set_range)
 * has the bits of the whole move, however the windows cut the shards:
 * sharded or not, moments offloaded or not, in fp32 or bf16. */
static void test_state_moves_in_windows(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    run want;
    run_cpu(data, &want, 2);
    size_t n = want.n;
    float *a = malloc(9 * n * sizeof(float));
    float *b = a + 3 * n, *other = a + 6 * n;
    for (size_t i = 0; i < 3 * n; i++)
        other[i] = (float)(i % 1013) * 1e-3f - 0.4f;
    static const size_t counts[] = {1, 3};
    static const size_t windows[] = {997, 4096};
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int shard = 0; shard < 2; shard++)
            for (int offload = 0; offload < 2; offload++)
                for (size_t c = 0; c < 2; c++) {
                    g_bf16 = bf16;
                    gd_memory_settings memory = {
                        .shard = shard ? GD_SHARD_FULL : GD_SHARD_OPTIMIZER,
                        .offload = offload ? GD_OFFLOAD_OPTIMIZER : GD_OFFLOAD_NONE};
                    rank_group g;
                    ranks_open_host(&g, counts[c], 2, memory);
                    size_t w = windows[c];
                    gd_trainer_set_state(g.t, want.params, want.m, want.v, STEPS);
                    gd_trainer_get_state(g.t, a, a + n, a + 2 * n, NULL);
                    for (size_t lo = 0; lo < n; lo += w) {
                        size_t k = n - lo < w ? n - lo : w;
                        gd_trainer_get_range(g.t, b + lo, b + n + lo, b + 2 * n + lo, lo, k);
                    }
                    CHECK(memcmp(a, b, 3 * n * sizeof(float)) == 0);
                    /* Set in windows, then whole: the same bits back. */
                    for (size_t lo = 0; lo < n; lo += w) {
                        size_t k = n - lo < w ? n - lo : w;
                        gd_trainer_set_range(g.t, other + lo, other + n + lo, other + 2 * n + lo,
                                             lo, k);
                    }
                    gd_trainer_get_state(g.t, a, a + n, a + 2 * n, NULL);
                    gd_trainer_set_state(g.t, other, other + n, other + 2 * n, STEPS);
                    gd_trainer_get_state(g.t, b, b + n, b + 2 * n, NULL);
                    CHECK(memcmp(a, b, 3 * n * sizeof(float)) == 0);
                    if (!bf16) /* fp32 moments hold any float */
                        CHECK(memcmp(a, other, 3 * n * sizeof(float)) == 0);
                    ranks_close(&g);
                }
    g_bf16 = false;
    free(a);
    run_free(&want);
    gd_data_close(data);
}

/* What the ranks read (gd_trainer_read_owned) hands each value on once,
 * as the ordered read gets it. */
typedef struct owned_seen {
    const float *want; /* params, exp_avg, exp_avg_sq: n each */
    size_t n;
    uint8_t *times;    /* how often each value came */
    bool same;
    float *placed;     /* 3n values the windows are placed into, or NULL */
} owned_seen;

static float *owned_seen_place(void *ctx, int array, size_t lo, size_t count) {
    owned_seen *o = ctx;
    (void)count;
    return o->placed + (size_t)array * o->n + lo;
}

static gd_status owned_seen_write(void *ctx, const float *params, const float *exp_avg,
                                  const float *exp_avg_sq, size_t lo, size_t count) {
    owned_seen *o = ctx;
    const float *got[3] = {params, exp_avg, exp_avg_sq};
    for (int a = 0; o->placed != NULL && a < 3; a++) /* each window where it was placed */
        o->same = o->same && got[a] == o->placed + (size_t)a * o->n + lo;
    for (int a = 0; a < 3; a++)
        o->same = o->same && memcmp(got[a], o->want + (size_t)a * o->n + lo,
                                    count * sizeof(float)) == 0;
    for (size_t i = lo; i < lo + count; i++)
        o->times[i]++;
    return GD_OK;
}

/* The state read by the ranks that own it gives the roots of the whole
 * state read in order, and hands every value on once with its bits: 1, 2,
 * 3 and 8 ranks, either sharding, moments offloaded or not, fp32 or bf16,
 * chunks that cross shard boundaries (1,000 values), fit them (4,096),
 * hold a whole shard and more (100,000: the second rank begins no chunk)
 * or the whole state; and `small` over 3 ranks, several windows a rank.
 * The same with the windows placed by the sink (the ranks copy straight
 * into them), hashed and not. */
static void test_owned_read_is_the_ordered_read(void) {
    static const size_t counts[] = {1, 2, 3, 8};
    static const uint32_t chunks[] = {1000, 4096, 100000, 1u << 20};
    for (int big = 0; big < 2; big++)
        for (int bf16 = 0; bf16 < 2; bf16++)
            for (int shard = 0; shard < 2; shard++)
                for (int offload = 0; offload < 2; offload++)
                    for (size_t c = 0; c < 4; c++) {
                        if (big && (bf16 || offload || c != 2))
                            continue; /* one case of `small` */
                        g_bf16 = bf16;
                        gd_memory_settings memory = {
                            .shard = shard ? GD_SHARD_FULL : GD_SHARD_OPTIMIZER,
                            .offload = offload ? GD_OFFLOAD_OPTIMIZER : GD_OFFLOAD_NONE};
                        rank_group g;
                        if (big) {
                            gd_model_config mc;
                            CHECK_OK(gd_model_config_preset(&mc, "small"));
                            g.n = 3;
                            for (size_t r = 0; r < 3; r++)
                                CHECK((g.cbs[r] = gd_copy_backend_new(&g.be[r], NULL)) != NULL);
                            CHECK_OK(gd_collective_host_open(&g.coll, g.be, 3));
                            gd_train_options o = options(2);
                            CHECK_OK(gd_trainer_new_ranks(
                                &g.t, &mc, &o, 2,
                                &(gd_trainer_host){g.be, 3, &g.coll, memory, 1000}));
                        } else {
                            ranks_open_host(&g, counts[c], 2, memory);
                        }
                        size_t n = gd_trainer_layout(g.t)->total;
                        float *state = malloc(3 * n * sizeof(float));
                        uint8_t *times = calloc(n, 1);
                        CHECK(state && times);
                        for (size_t i = 0; i < 3 * n; i++)
                            state[i] = (float)((i * 2654435761u) % 100003) * 1e-5f - 0.3f;
                        gd_trainer_set_state(g.t, state, state + n, state + 2 * n, 1);
                        gd_trainer_get_state(g.t, state, state + n, state + 2 * n, NULL);
                        uint32_t e = big ? 1000 : chunks[c];
                        uint8_t want[3][32], got[3][32];
                        for (int a = 0; a < 3; a++)
                            CHECK_OK(gd_values_root(NULL, state + (size_t)a * n, n, e, want[a]));
                        /* The windows in the pass's own buffers, and placed by the
                         * sink (hashed there, or not at all: only read). */
                        float *placed = malloc(3 * n * sizeof(float));
                        CHECK(placed != NULL);
                        owned_seen seen = {.want = state, .n = n, .times = times, .same = true};
                        gd_owned_sink to = {.write = owned_seen_write, .ctx = &seen};
                        CHECK(gd_trainer_read_owned_fits(n, e));
                        CHECK_OK(gd_trainer_read_owned(g.t, got, e, &to));
                        seen.placed = placed;
                        to.place = owned_seen_place;
                        uint8_t placed_roots[3][32];
                        CHECK_OK(gd_trainer_read_owned(g.t, placed_roots, e, &to));
                        CHECK_OK(gd_trainer_read_owned(g.t, NULL, e, &to));
                        CHECK(memcmp(placed_roots, want, sizeof want) == 0);
                        CHECK(memcmp(placed, state, 3 * n * sizeof(float)) == 0);
                        free(placed);
                        bool once = true;
                        for (size_t i = 0; i < n; i++)
                            once = once && times[i] == 3;
                        bool ok = memcmp(want, got, sizeof want) == 0 && seen.same && once;
                        if (!ok)
                            printf("  %s over %zu ranks, %s sharding, offload %d, bf16 %d, chunk "
                                   "%u: roots %s, values %s, each once a pass %s\n",
                                   big ? "small" : "tiny", g.n, shard ? "full" : "optimizer",
                                   offload, bf16, e,
                                   memcmp(want, got, sizeof want) ? "differ" : "same",
                                   seen.same ? "same" : "differ", once ? "yes" : "no");
                        CHECK(ok);
                        free(state);
                        free(times);
                        ranks_close(&g);
                    }
    g_bf16 = false;
}

/* More ranks than the limit, or several without a collective, are refused. */
static void test_rejects_bad_groups(void) {
    gd_model_config c = tiny();
    gd_train_options o = options(2);
    gd_backend ranks[2];
    gd_backend_cpu_init(&ranks[0], NULL);
    gd_backend_cpu_init(&ranks[1], NULL);
    gd_trainer *t = NULL;
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1,
                                      &(gd_trainer_host){ranks, 2, NULL, {GD_SHARD_OPTIMIZER}}),
                 GD_ERR_INVALID);
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1,
                                      &(gd_trainer_host){ranks, 0, NULL, {GD_SHARD_OPTIMIZER}}),
                 GD_ERR_INVALID);
    gd_collective coll;
    CHECK_OK(gd_collective_host_open(&coll, ranks, 1));
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1,
                                      &(gd_trainer_host){ranks, 2, &coll, {GD_SHARD_FULL}}),
                 GD_ERR_INVALID);
    CHECK_STATUS(gd_trainer_new_ranks(&t, &c, &o, 1, &(gd_trainer_host){ranks, 1, NULL, {7}}),
                 GD_ERR_INVALID);
    gd_collective_close(&coll);
    CHECK(t == NULL);
}

int main(void) {
    RUN_TEST(test_ranks_give_one_ranks_bits);
    RUN_TEST(test_untied_ranks_give_one_ranks_bits);
    RUN_TEST(test_flash_ranks_give_one_ranks_bits);
    RUN_TEST(test_bf16_ranks_give_one_ranks_bits);
    RUN_TEST(test_bf16_gathers_half_the_bytes);
    RUN_TEST(test_full_sharding_gathers_ahead);
    RUN_TEST(test_full_sharding_evaluates_and_resumes);
    RUN_TEST(test_state_round_trips_through_shards);
    RUN_TEST(test_state_moves_in_windows);
    RUN_TEST(test_owned_read_is_the_ordered_read);
    RUN_TEST(test_rejects_bad_groups);
    return gd_test_finish();
}
