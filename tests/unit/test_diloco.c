/* The DiLoCo engine: deterministic aggregation (across thread counts and
 * processes), clipping against a huge or garbage contribution, the outer
 * Nesterov step, worker rounds with transcripts, segment re-execution that
 * accepts honest work and rejects cheating, and the simulation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/rng.h"
#include "proofs/diloco_rules.h"
#include "tests/support/testkit.h"
#include "trainer/diloco.h"
#include "trainer/sim.h"
#include "trainer/verify.h"

#define N_PARAMS 200003 /* several aggregation tasks, not a multiple of anything */

static float *random_vector(size_t n, uint64_t seed, double scale) {
    float *v = malloc(n * sizeof(float));
    gd_rng rng;
    uint32_t ids[4] = {7, 7, 7, 7};
    gd_rng_init(&rng, seed, ids);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(gd_rng_normal12(&rng) * scale);
    return v;
}

/* A layout digest the aggregation tests share: contributions must carry G's. */
static const uint8_t k_layout[32] = {1, 2, 3};

static gd_contribution contrib(const char *address, const float *delta, size_t n,
                               uint64_t tokens) {
    return (gd_contribution){.address = address, .n = n, .layout_digest = k_layout,
                             .delta = delta, .tokens = tokens};
}

static gd_diloco_config test_config(void) {
    gd_diloco_config c;
    gd_diloco_config_default(&c);
    return c;
}

/* Aggregates the same four contributions (given in a shuffled order) with
 * `threads` threads from a fixed starting state; returns G's hash. */
static void aggregate_hash(uint8_t out[32], int threads) {
    gd_diloco_config c = test_config();
    gd_global_state g;
    CHECK_OK(gd_global_state_init(&g, N_PARAMS));
    float *init = random_vector(N_PARAMS, 1, 0.02);
    memcpy(g.params, init, N_PARAMS * sizeof(float));
    float *d[4];
    for (int i = 0; i < 4; i++)
        d[i] = random_vector(N_PARAMS, 10 + (uint64_t)i, 0.001 * (i + 1));
    gd_contribution contribs[4] = {contrib("worker-00002", d[2], N_PARAMS, 1000),
                                   contrib("worker-00000", d[0], N_PARAMS, 1000),
                                   contrib("worker-00003", d[3], N_PARAMS, 700),
                                   contrib("worker-00001", d[1], N_PARAMS, 1300)};
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, threads));
    gd_backend be;
    gd_backend_cpu_init(&be, pool);
    for (int round = 0; round < 3; round++)
        CHECK_OK(gd_diloco_aggregate(&be, &c, k_layout, contribs, 4, &g, NULL));
    CHECK_OK(gd_global_state_hash(pool, out, k_layout, c.chunk_elems, &g));
    gd_pool_free(pool);
    for (int i = 0; i < 4; i++)
        free(d[i]);
    free(init);
    gd_global_state_free(&g);
}

static void test_aggregation_is_deterministic(void) {
    uint8_t one[32], three[32], child[32];
    aggregate_hash(one, 1);
    aggregate_hash(three, 3);
    CHECK(memcmp(one, three, 32) == 0);
    /* Another process (its own heap, its own thread pool of 2) agrees. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        uint8_t h[32];
        aggregate_hash(h, 2);
        ssize_t w = write(fds[1], h, 32);
        _exit(w == 32 ? 0 : 1);
    }
    close(fds[1]);
    CHECK(read(fds[0], child, 32) == 32);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(memcmp(one, child, 32) == 0);
}

/* One outer step from zero momentum against the documented float formula,
 * bit for bit (docs/protocol.md: weights rounded once, one rounding per
 * operation, address order), and against the double-precision value. */
static void test_outer_step(void) {
    gd_diloco_config c = test_config();
    c.clip_factor = 0;
    size_t n = 1000;
    gd_global_state g;
    CHECK_OK(gd_global_state_init(&g, n));
    float *init = random_vector(n, 2, 0.02);
    memcpy(g.params, init, n * sizeof(float));
    float *a = random_vector(n, 3, 0.01), *b = random_vector(n, 4, 0.01);
    gd_contribution contribs[2] = {contrib("b", b, n, 300), contrib("a", a, n, 100)};
    CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, contribs, 2, &g, NULL));
    const float wa = 0.25f, wb = 0.75f, lr = 0.7f, mu = 0.9f;
    size_t mismatches = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        float ta = wa * a[i], tb = wb * b[i];
        float avg = 0.0f;
        avg = avg + ta; /* "a" sorts before "b" */
        avg = avg + tb;
        float buf = mu * 0.0f;
        buf = buf + avg;
        float nesterov = mu * buf;
        float d = avg + nesterov;
        float step = lr * d;
        float p = init[i] - step;
        mismatches += memcmp(&p, &g.params[i], 4) != 0 || memcmp(&buf, &g.momentum[i], 4) != 0;
        double exact = init[i] - 0.7 * 1.9 * (0.25 * a[i] + 0.75 * b[i]);
        worst = fmax(worst, fabs(exact - g.params[i]));
    }
    CHECK(mismatches == 0);
    CHECK(worst < 1e-7);
    CHECK(g.round == 1);
    /* Duplicate addresses and no contributions are refused. */
    gd_contribution dup[2] = {contrib("a", a, n, 1), contrib("a", b, n, 1)};
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, dup, 2, &g, NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, dup, 0, &g, NULL), GD_ERR_INVALID);
    /* A contribution of another size or layout is refused before any value
     * is read (a short buffer would otherwise be read past its end). */
    float *g_before = malloc(n * sizeof(float));
    memcpy(g_before, g.params, n * sizeof(float));
    gd_contribution short_one[2] = {contrib("a", a, n, 1), contrib("b", b, n - 1, 1)};
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, short_one, 2, &g, NULL),
                 GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "has 999 values; G has 1000") != NULL);
    static const uint8_t other_layout[32] = {9};
    gd_contribution foreign[2] = {contrib("a", a, n, 1), contrib("b", b, n, 1)};
    foreign[1].layout_digest = other_layout;
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, foreign, 2, &g, NULL), GD_ERR_INVALID);
    CHECK(memcmp(g_before, g.params, n * sizeof(float)) == 0 && g.round == 1);
    free(g_before);
    free(a);
    free(b);
    free(init);
    gd_global_state_free(&g);
}

/* A reader that copies its vector, counts its calls and may fail. */
typedef struct counted_reader {
    const float *values;
    int calls;
    int fail_at; /* 0: never; k: the k-th call fails */
} counted_reader;

static gd_status read_counted(void *ctx, float *out, size_t n) {
    counted_reader *r = ctx;
    if (++r->calls == r->fail_at)
        return gd_fail(GD_ERR_IO, "payload gone");
    memcpy(out, r->values, n * sizeof(float));
    return GD_OK;
}

/* Contributions decoded on demand, one at a time, step G to the bits of the
 * same contributions held in memory (clipping included), with each reader
 * asked exactly twice; a reader that fails leaves G as it was. */
static void test_aggregate_from_readers(void) {
    gd_diloco_config c = test_config();
    c.clip_factor = 1.5; /* the big one below is clipped */
    size_t n = N_PARAMS;
    float *init = random_vector(n, 5, 0.02), *d[4];
    for (int i = 0; i < 4; i++)
        d[i] = random_vector(n, 20 + (uint64_t)i, i == 3 ? 0.1 : 0.001 * (i + 1));
    const char *who[4] = {"worker-00003", "worker-00001", "worker-00000", "worker-00002"};
    const uint64_t tokens[4] = {900, 1100, 1000, 1000};
    gd_contribution held[4], read[4];
    counted_reader readers[4];
    for (int i = 0; i < 4; i++) {
        held[i] = contrib(who[i], d[i], n, tokens[i]);
        readers[i] = (counted_reader){.values = d[i]};
        read[i] = held[i];
        read[i].delta = NULL;
        read[i].read = read_counted;
        read[i].read_ctx = &readers[i];
    }
    /* Two held, two read: the kinds may be mixed. */
    gd_contribution mixed[4] = {held[0], read[1], held[2], read[3]};
    gd_global_state a, b, m;
    CHECK_OK(gd_global_state_init(&a, n));
    CHECK_OK(gd_global_state_init(&b, n));
    CHECK_OK(gd_global_state_init(&m, n));
    memcpy(a.params, init, n * sizeof(float));
    memcpy(b.params, init, n * sizeof(float));
    memcpy(m.params, init, n * sizeof(float));
    gd_aggregate_stats sa, sb;
    for (int round = 0; round < 2; round++) {
        CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, held, 4, &a, &sa));
        CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, read, 4, &b, &sb));
        CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, mixed, 4, &m, NULL));
    }
    CHECK(sa.clipped == 1 && sb.clipped == 1);
    CHECK(memcmp(a.params, b.params, n * sizeof(float)) == 0);
    CHECK(memcmp(a.momentum, b.momentum, n * sizeof(float)) == 0);
    CHECK(memcmp(a.params, m.params, n * sizeof(float)) == 0);
    CHECK(memcmp(a.momentum, m.momentum, n * sizeof(float)) == 0);
    CHECK(a.round == 2 && b.round == 2 && m.round == 2);
    CHECK(readers[0].calls == 4 && readers[1].calls == 8 && readers[2].calls == 4 &&
          readers[3].calls == 8);
    /* A reader failing in the step's pass, after every norm was read. */
    float *before = malloc(n * sizeof(float));
    memcpy(before, b.params, n * sizeof(float));
    readers[2] = (counted_reader){.values = d[2], .fail_at = 2};
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, read, 4, &b, NULL), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "worker-00000") != NULL);
    CHECK(memcmp(before, b.params, n * sizeof(float)) == 0 && b.round == 2);
    /* Both or neither of values and reader: refused before anything is read. */
    gd_contribution both[1] = {read[0]};
    both[0].delta = d[0];
    gd_contribution neither[1] = {held[0]};
    neither[0].delta = NULL;
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, both, 1, &b, NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_aggregate(NULL, &c, k_layout, neither, 1, &b, NULL), GD_ERR_INVALID);
    free(before);
    for (int i = 0; i < 4; i++)
        free(d[i]);
    free(init);
    gd_global_state_free(&a);
    gd_global_state_free(&b);
    gd_global_state_free(&m);
}

static double distance(const float *x, const float *y, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
    return sqrt(s);
}

static double norm(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    return sqrt(s);
}

/* A 1000x-scaled or garbage contribution among four moves G by no more than
 * clipping allows: its weight (tokens share) times lr (1 + mu) times
 * (the clip limit + the honest contribution's norm). */
/* A sum of squares made from pieces in any order is the backend's over
 * the whole array, bit for bit, with a partial last block; a piece that
 * does not start and end on a block (or at n) is refused. */
static void test_sum_squares_pieces(void) {
    size_t n = 3 * GD_SUM_SQUARES_CHUNK + 12345;
    float *v = random_vector(n, 41, 3.0);
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, NULL);
    double want = gd_backend_sum_squares(&cpu, v, n);
    gd_sum_squares sq;
    CHECK_OK(gd_sum_squares_init(&sq, n));
    size_t b = GD_SUM_SQUARES_CHUNK;
    CHECK_OK(gd_sum_squares_add(&sq, v + 3 * b, 3 * b, n - 3 * b));
    CHECK_OK(gd_sum_squares_add(&sq, v, 0, b));
    CHECK_OK(gd_sum_squares_add(&sq, v + b, b, 2 * b));
    double got = gd_sum_squares_total(&sq);
    CHECK(memcmp(&got, &want, sizeof got) == 0);
    CHECK_STATUS(gd_sum_squares_add(&sq, v + 1, 1, b), GD_ERR_INVALID);
    CHECK_STATUS(gd_sum_squares_add(&sq, v, 0, b + 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_sum_squares_add(&sq, v, 3 * b, n), GD_ERR_INVALID);
    gd_sum_squares_free(&sq);
    free(v);
}

/* A contribution read a range at a time (gd_diloco_aggregate_windows). */
typedef struct range_reader {
    const float *values;
    size_t calls;
    bool fail;
} range_reader;

static gd_status read_range(void *ctx, float *out, size_t lo, size_t count) {
    range_reader *r = ctx;
    r->calls++;
    if (r->fail)
        return gd_fail(GD_ERR_IO, "the store went away");
    memcpy(out, r->values + lo, count * sizeof(float));
    return GD_OK;
}

/* G held by the test, read and written a range at a time. */
typedef struct g_io {
    const float *params, *momentum; /* read */
    float *out_params, *out_momentum; /* written */
    size_t next;                      /* where the next write must start */
} g_io;

static gd_status g_read(void *ctx, float *params, float *momentum, size_t lo, size_t count) {
    g_io *x = ctx;
    memcpy(params, x->params + lo, count * sizeof(float));
    memcpy(momentum, x->momentum + lo, count * sizeof(float));
    return GD_OK;
}

static gd_status g_write(void *ctx, const float *params, const float *momentum, size_t lo,
                         size_t count) {
    g_io *x = ctx;
    CHECK(lo == x->next); /* once per range, in order */
    x->next = lo + count;
    memcpy(x->out_params + lo, params, count * sizeof(float));
    memcpy(x->out_momentum + lo, momentum, count * sizeof(float));
    return GD_OK;
}

/* The windowed aggregate gives the whole-array aggregate's bits (G, its
 * momentum, the clip and the stats) for windows of 2^16 and 2^17 values
 * over an n that is a multiple of neither, from a state with momentum;
 * a window that is not a multiple of the sum-of-squares chunk, and a
 * reader that fails, are refused. */
static void test_aggregate_windows(void) {
    gd_diloco_config c = test_config();
    c.clip_factor = 1.5;
    size_t n = N_PARAMS;
    float *init = random_vector(n, 6, 0.02), *mom = random_vector(n, 7, 0.001), *d[4];
    for (int i = 0; i < 4; i++)
        d[i] = random_vector(n, 30 + (uint64_t)i, i == 1 ? 0.1 : 0.001 * (i + 1));
    const char *who[4] = {"worker-00002", "worker-00000", "worker-00003", "worker-00001"};
    const uint64_t tokens[4] = {1000, 800, 1200, 1000};
    gd_contribution held[4];
    gd_contribution_windowed win[4];
    range_reader readers[4];
    for (int i = 0; i < 4; i++) {
        held[i] = contrib(who[i], d[i], n, tokens[i]);
        readers[i] = (range_reader){.values = d[i]};
        win[i] = (gd_contribution_windowed){.address = who[i], .n = n, .layout_digest = k_layout,
                                            .read_range = read_range, .read_ctx = &readers[i],
                                            .tokens = tokens[i]};
    }
    gd_global_state whole;
    CHECK_OK(gd_global_state_init(&whole, n));
    memcpy(whole.params, init, n * sizeof(float));
    memcpy(whole.momentum, mom, n * sizeof(float));
    gd_aggregate_stats sw, sx;
    CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, held, 4, &whole, &sw));
    CHECK(sw.clipped == 1);
    float *p = malloc(n * sizeof(float)), *m = malloc(n * sizeof(float));
    for (size_t window = GD_SUM_SQUARES_CHUNK; window <= 2 * GD_SUM_SQUARES_CHUNK;
         window *= 2) {
        memset(p, 0, n * sizeof(float));
        memset(m, 0, n * sizeof(float));
        g_io x = {init, mom, p, m, 0};
        gd_global_io io = {n, g_read, g_write, &x};
        CHECK_OK(gd_diloco_aggregate_windows(NULL, &c, k_layout, win, 4, &io, window, &sx));
        CHECK(x.next == n);
        CHECK(memcmp(p, whole.params, n * sizeof(float)) == 0);
        CHECK(memcmp(m, whole.momentum, n * sizeof(float)) == 0);
        CHECK(sx.clipped == sw.clipped && sx.median_norm == sw.median_norm &&
              sx.max_norm == sw.max_norm);
    }
    /* Every sum of squares known beforehand (made from pieces as a
     * payload's chunks are checked): the same bits, and each payload is
     * read once, by the step, not twice; one known, three read. */
    double known[4];
    for (int i = 0; i < 4; i++) {
        gd_sum_squares sq;
        CHECK_OK(gd_sum_squares_init(&sq, n));
        for (size_t lo = 0; lo < n; lo += 2 * GD_SUM_SQUARES_CHUNK) {
            size_t count = n - lo < 2 * GD_SUM_SQUARES_CHUNK ? n - lo : 2 * GD_SUM_SQUARES_CHUNK;
            CHECK_OK(gd_sum_squares_add(&sq, d[i] + lo, lo, count));
        }
        known[i] = gd_sum_squares_total(&sq);
        gd_sum_squares_free(&sq);
    }
    for (int all = 0; all < 2; all++) {
        size_t before[4];
        for (int i = 0; i < 4; i++) {
            win[i].sum_squares = all || i == 2 ? &known[i] : NULL;
            before[i] = readers[i].calls;
        }
        memset(p, 0, n * sizeof(float));
        memset(m, 0, n * sizeof(float));
        g_io x = {init, mom, p, m, 0};
        gd_global_io io = {n, g_read, g_write, &x};
        size_t window = GD_SUM_SQUARES_CHUNK;
        CHECK_OK(gd_diloco_aggregate_windows(NULL, &c, k_layout, win, 4, &io, window, &sx));
        CHECK(memcmp(p, whole.params, n * sizeof(float)) == 0);
        CHECK(memcmp(m, whole.momentum, n * sizeof(float)) == 0);
        CHECK(sx.clipped == sw.clipped && sx.median_norm == sw.median_norm &&
              sx.max_norm == sw.max_norm);
        size_t windows = (n + window - 1) / window;
        for (int i = 0; i < 4; i++)
            CHECK(readers[i].calls - before[i] ==
                  (win[i].sum_squares != NULL ? windows : 2 * windows));
    }
    for (int i = 0; i < 4; i++)
        win[i].sum_squares = NULL;
    /* G in memory stepped in place (gd_global_io_arrays), as the engine's
     * gd_engine_aggregate does. */
    gd_global_state in_place;
    CHECK_OK(gd_global_state_init(&in_place, n));
    memcpy(in_place.params, init, n * sizeof(float));
    memcpy(in_place.momentum, mom, n * sizeof(float));
    gd_global_arrays arrays = {.from = &in_place, .to = &in_place};
    gd_global_io in_place_io = gd_global_io_arrays(&arrays);
    CHECK_OK(gd_diloco_aggregate_windows(NULL, &c, k_layout, win, 4, &in_place_io,
                                         GD_SUM_SQUARES_CHUNK, NULL));
    CHECK(memcmp(in_place.params, whole.params, n * sizeof(float)) == 0);
    CHECK(memcmp(in_place.momentum, whole.momentum, n * sizeof(float)) == 0);
    gd_global_state_free(&in_place);
    g_io x = {init, mom, p, m, 0};
    gd_global_io io = {n, g_read, g_write, &x};
    CHECK_STATUS(gd_diloco_aggregate_windows(NULL, &c, k_layout, win, 4, &io, 4096, NULL),
                 GD_ERR_INVALID);
    readers[2].fail = true;
    CHECK_STATUS(gd_diloco_aggregate_windows(NULL, &c, k_layout, win, 4, &io,
                                             GD_SUM_SQUARES_CHUNK, NULL),
                 GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "worker-00003") != NULL);
    readers[2].fail = false;
    win[3].n = n - 1; /* not G's size: refused before anything is read */
    size_t calls = readers[0].calls;
    CHECK_STATUS(gd_diloco_aggregate_windows(NULL, &c, k_layout, win, 4, &io,
                                             GD_SUM_SQUARES_CHUNK, NULL),
                 GD_ERR_INVALID);
    CHECK(readers[0].calls == calls);
    gd_global_state_free(&whole);
    for (int i = 0; i < 4; i++)
        free(d[i]);
    free(init);
    free(mom);
    free(p);
    free(m);
}

static void test_clipping_bounds_a_bad_contribution(void) {
    gd_diloco_config c = test_config();
    size_t n = 50000;
    float *d[4];
    for (int i = 0; i < 4; i++)
        d[i] = random_vector(n, 20 + (uint64_t)i, 0.001);
    float *scaled = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        scaled[i] = d[3][i] * 1000.0f;
    float *garbage = random_vector(n, 99, 1e6);
    double median = 0, norms[4];
    for (int i = 0; i < 4; i++)
        norms[i] = norm(d[i], n);
    /* the median of three honest norms and one huge one */
    double sorted[4] = {norms[0], norms[1], norms[2], 1e300};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (sorted[j] < sorted[i]) {
                double t = sorted[i];
                sorted[i] = sorted[j];
                sorted[j] = t;
            }
    median = (sorted[1] + sorted[2]) / 2;
    const float *bad_inputs[2] = {scaled, garbage};
    for (int k = 0; k < 2; k++) {
        gd_global_state honest, attacked;
        CHECK_OK(gd_global_state_init(&honest, n));
        CHECK_OK(gd_global_state_init(&attacked, n));
        gd_contribution good[4] = {contrib("w0", d[0], n, 100), contrib("w1", d[1], n, 100),
                                   contrib("w2", d[2], n, 100), contrib("w3", d[3], n, 100)};
        gd_contribution bad[4] = {contrib("w0", d[0], n, 100), contrib("w1", d[1], n, 100),
                                  contrib("w2", d[2], n, 100),
                                  contrib("w3", bad_inputs[k], n, 100)};
        gd_aggregate_stats st;
        CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, good, 4, &honest, NULL));
        CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, bad, 4, &attacked, &st));
        CHECK(st.clipped == 1);
        double bound = 0.25 * 0.7 * 1.9 * (c.clip_factor * median + norms[3]) * 1.0001;
        double moved = distance(honest.params, attacked.params, n);
        CHECK(moved <= bound);
        /* and without clipping the same attack would move it ~1000x further */
        CHECK(moved * 100 < 0.25 * 0.7 * 1.9 * norm(bad_inputs[k], n));
        gd_global_state_free(&honest);
        gd_global_state_free(&attacked);
    }
    for (int i = 0; i < 4; i++)
        free(d[i]);
    free(scaled);
    free(garbage);
}

/* A small engine: the tiny model shrunk further, 2 workers, H = 4, K = 2. */
typedef struct engine {
    gd_diloco_config c;
    gd_model_config model;
    gd_data *data;
    gd_trainer *t;
    size_t n;
    float *g0;
} engine;

static void engine_open_vocab(engine *e, uint32_t threads, uint32_t vocab);

static void engine_open(engine *e, uint32_t threads) { engine_open_vocab(e, threads, 32); }

static void engine_open_vocab(engine *e, uint32_t threads, uint32_t vocab) {
    e->c = test_config();
    e->c.workers = 2;
    e->c.inner_steps = 4;
    e->c.segment_steps = 2;
    e->c.chunk_elems = 5000; /* several chunks */
    e->c.inner.batch = 2;
    e->c.inner.micro_batch = 2;
    e->c.inner.seq_len = 16;
    e->c.inner.optim.lr = 3e-3;
    e->c.inner.optim.schedule_steps = 40;
    CHECK_OK(gd_model_config_preset(&e->model, "tiny"));
    e->model.vocab_size = vocab;
    CHECK_OK(gd_diloco_config_validate(&e->c, &e->model));
    CHECK_OK(gd_data_open(&e->data, "synthetic:markov:5"));
    CHECK_OK(gd_trainer_new(&e->t, &e->model, &e->c.inner, (int)threads));
    e->n = gd_trainer_layout(e->t)->total;
    e->g0 = malloc(e->n * sizeof(float));
    gd_trainer_get_state(e->t, e->g0, NULL, NULL, NULL);
}

static void engine_close(engine *e) {
    gd_trainer_free(e->t);
    gd_data_close(e->data);
    free(e->g0);
}

static void free_segments(gd_worker_state *s, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        gd_worker_state_free(&s[i]);
}

/* The chain's view of a worker's round-0 commitment (G_0 = g0). */
typedef struct commitment {
    gd_global_state g;
    gd_global_desc g_desc;
    uint8_t g_hash[32];
    gd_commitment_view cv;
} commitment;

static void commitment_open(commitment *m, engine *e, const gd_worker_round *res,
                            const gd_worker_state *w, uint32_t rank) {
    CHECK_OK(gd_global_state_init(&m->g, e->n));
    memcpy(m->g.params, e->g0, e->n * sizeof(float));
    CHECK_OK(gd_global_state_describe(NULL, &m->g_desc, gd_trainer_layout(e->t)->digest,
                                      e->c.chunk_elems, &m->g));
    gd_global_desc_hash(&m->g_desc, m->g_hash);
    m->cv = (gd_commitment_view){.round = 0, .address = w->address, .rank = rank,
                                 .segments = e->c.inner_steps / e->c.segment_steps,
                                 .transcript_root = res->transcript_root,
                                 .payload_root = res->payload_root,
                                 .payload_leaves = res->payload_leaves,
                                 .start_state_hash = m->g_hash};
}

/* Re-executes segment s of res against the claimed start state. */
static gd_check_result check_segment(engine *e, const gd_commitment_view *cv,
                                     const gd_worker_round *res, uint32_t s,
                                     const gd_worker_state *start, const uint8_t *end_leaf) {
    gd_leaf_evidence a, b;
    CHECK_OK(gd_worker_round_leaf(res, &a, s));
    CHECK_OK(gd_worker_round_leaf(res, &b, s + 1));
    gd_segment_claim claim = {.cv = cv, .segment = s,
                              .first_step = res->descs[0].step,
                              .residual_root = res->descs[0].residual_root,
                              .start = gd_worker_state_source_of(start),
                              .start_proof = &a.proof, .end_leaf = end_leaf,
                              .end_proof = &b.proof};
    gd_check_result r;
    CHECK_OK(gd_diloco_verify_segment(e->t, &e->c, e->data, &claim, &r));
    return r;
}

/* res (trained by w from e's G_0 with residual `before`) has the payload
 * the whole-array encoding of Δ = G_0 - θ (a float subtraction) gives,
 * and w the residual it leaves. before is used up. */
static void check_whole_encoding(const engine *e, const gd_worker_round *res,
                                 const gd_worker_state *w, float *before) {
    float *delta = malloc(e->n * sizeof(float));
    CHECK(delta != NULL);
    for (size_t i = 0; i < e->n; i++)
        delta[i] = e->g0[i] - w->params[i];
    gd_payload whole;
    CHECK_OK(gd_payload_encode(&whole, &res->payload.header, delta,
                               e->c.error_feedback ? before : NULL, NULL));
    uint8_t root[32];
    uint32_t leaves = 0;
    CHECK_OK(gd_payload_root(&whole, root, &leaves));
    CHECK(leaves == res->payload_leaves && memcmp(root, res->payload_root, 32) == 0);
    CHECK(memcmp(before, w->residual, e->n * sizeof(float)) == 0);
    gd_payload_free(&whole);
    free(delta);
}

static void test_worker_round_and_segments(void) {
    engine e;
    engine_open(&e, 2);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, e.n));
    gd_worker_state seg[2];
    gd_worker_round res;
    CHECK_OK(gd_diloco_worker_round(e.t, &e.c, e.data, &res, 0, e.g0, e.n, &w, seg));
    CHECK(res.steps == 4 && res.n_leaves == 4 && w.step == 4);
    CHECK(res.tokens == 4 * 2 * 16);
    CHECK(res.descs[0].stage == GD_STAGE_TRAIN && res.descs[3].stage == GD_STAGE_ENCODED);
    CHECK(res.descs[2].step == 4 && res.descs[3].step == 4);
    /* The payload, made a window at a time from the trainer, is the whole
     * encoding of Δ from a zero residual, and leaves the same residual. */
    float *zeros = calloc(e.n, sizeof(float));
    CHECK(zeros != NULL);
    check_whole_encoding(&e, &res, &w, zeros);
    free(zeros);
    commitment m;
    commitment_open(&m, &e, &res, &w, 0);
    /* Both segments re-execute exactly, and give what the digest covers:
     * the end is the next leaf, and the trace is the one the worker kept
     * while it trained (every step's loss and gradient norm), which no
     * leaf shows. */
    for (uint32_t s = 0; s < 2; s++) {
        gd_check_result r = check_segment(&e, &m.cv, &res, s, &seg[s], res.leaves[s + 1]);
        CHECK(r.pass);
        CHECK(memcmp(r.end_state, res.leaves[s + 1], 32) == 0);
        CHECK(memcmp(r.trace, res.traces[s], 32) == 0);
        for (uint32_t k = 0; k < res.n_leaves; k++)
            CHECK(memcmp(r.trace, res.leaves[k], 32) != 0);
    }
    CHECK(memcmp(res.traces[0], res.traces[1], 32) != 0);

    /* Cheating, one way at a time. */
    /* tampered optimizer state at the segment start */
    gd_worker_state tampered;
    CHECK_OK(gd_worker_state_copy(&tampered, &seg[0]));
    tampered.exp_avg_sq[17] += 1e-3f;
    gd_check_result r = check_segment(&e, &m.cv, &res, 0, &tampered, res.leaves[1]);
    CHECK(!r.pass && strstr(r.why, "not transcript leaf 0") != NULL);
    gd_worker_state_free(&tampered);
    /* swapped data: a state claiming another rank than the chain's */
    gd_worker_state other;
    CHECK_OK(gd_worker_state_copy(&other, &seg[0]));
    other.rank = 1;
    r = check_segment(&e, &m.cv, &res, 0, &other, res.leaves[1]);
    CHECK(!r.pass && strstr(r.why, "rank 1") != NULL);
    gd_worker_state_free(&other);
    /* skipped steps: a transcript whose next leaf is one step, not two, on */
    gd_diloco_config skipped = e.c;
    skipped.segment_steps = 1;
    skipped.inner_steps = 2;
    gd_worker_state w2;
    CHECK_OK(gd_worker_state_copy(&w2, &seg[0]));
    gd_worker_round res2;
    CHECK_OK(gd_diloco_worker_round(e.t, &skipped, e.data, &res2, 0, seg[0].params, e.n, &w2,
                                    NULL));
    r = check_segment(&e, &m.cv, &res, 0, &seg[0], res2.leaves[1]); /* after one step */
    CHECK(!r.pass && strstr(r.why, "does not reach") != NULL);
    gd_worker_round_free(&res2);
    gd_worker_state_free(&w2);
    /* a changed learning rate */
    gd_diloco_config hot = e.c;
    hot.inner.optim.lr *= 1.01;
    gd_worker_state w3;
    CHECK_OK(gd_worker_state_copy(&w3, &seg[0]));
    gd_worker_round res3;
    CHECK_OK(gd_diloco_worker_round(e.t, &hot, e.data, &res3, 0, seg[0].params, e.n, &w3, NULL));
    r = check_segment(&e, &m.cv, &res, 0, &seg[0], res3.leaves[1]);
    CHECK(!r.pass);
    gd_worker_round_free(&res3);
    gd_worker_state_free(&w3);
    /* a segment-start state at the wrong step */
    gd_worker_state late;
    CHECK_OK(gd_worker_state_copy(&late, &seg[1]));
    r = check_segment(&e, &m.cv, &res, 0, &late, res.leaves[1]);
    CHECK(!r.pass && strstr(r.why, "at step 2, not 0") != NULL);
    gd_worker_state_free(&late);
    /* a start that is not the round's own: the worker round refuses a
     * start of another size than the model's */
    gd_worker_round bad;
    CHECK_STATUS(gd_diloco_worker_round(e.t, &e.c, e.data, &bad, 0, e.g0, e.n - 1, &w, NULL),
                 GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "the model has") != NULL);
    /* a stop asked for ends the round before its next inner step */
    gd_diloco_config stopped = e.c;
    volatile int stop = 1;
    stopped.stop = &stop;
    CHECK_STATUS(gd_diloco_worker_round(e.t, &stopped, e.data, &bad, 0, e.g0, e.n, &w, NULL),
                 GD_ERR_CANCELLED);
    CHECK(strstr(gd_error_detail(), "stopped at inner step 0 of") != NULL);

    gd_global_state_free(&m.g);
    free_segments(seg, 2);
    gd_worker_round_free(&res);
    gd_worker_state_free(&w);
    engine_close(&e);
}

/* A model of more values than one window (about 2^20): the round moves
 * its state, its start and its residual through several windows, and
 * gives what the whole arrays give: the payload is the whole encoding of
 * Δ, the residual the whole encoding's, and every leaf the descriptor of
 * the state it names. */
static void test_worker_round_windows(void) {
    engine e;
    engine_open_vocab(&e, 2, 20000);
    CHECK(e.n > gd_values_window(e.c.chunk_elems)); /* two windows */
    fprintf(stderr, "  %zu values, windows of %zu\n", e.n, gd_values_window(e.c.chunk_elems));
    gd_worker_state w, seg[2];
    CHECK_OK(gd_worker_state_init(&w, 0, e.n));
    for (size_t i = 0; i < e.n; i++) /* a residual to carry, as after a round */
        w.residual[i] = (float)((int)(i % 13) - 6) * 1e-5f;
    float *residual = malloc(e.n * sizeof(float));
    CHECK(residual != NULL);
    memcpy(residual, w.residual, e.n * sizeof(float));
    gd_worker_round res;
    CHECK_OK(gd_diloco_worker_round(e.t, &e.c, e.data, &res, 0, e.g0, e.n, &w, seg));
    check_whole_encoding(&e, &res, &w, residual);
    gd_state_tag tag;
    gd_diloco_state_tag(&e.c, gd_trainer_layout(e.t), &tag);
    gd_worker_desc d;
    CHECK_OK(gd_worker_state_describe(NULL, &tag, &d, 0, GD_STAGE_ENCODED, &w));
    uint8_t a[32], b[32];
    gd_worker_desc_hash(&d, a);
    gd_worker_desc_hash(&res.descs[3], b);
    CHECK(memcmp(a, b, 32) == 0);
    CHECK_OK(gd_worker_state_describe(NULL, &tag, &d, 0, GD_STAGE_TRAIN, &seg[1]));
    gd_worker_desc_hash(&d, a);
    gd_worker_desc_hash(&res.descs[1], b);
    CHECK(memcmp(a, b, 32) == 0);
    free(residual);
    free_segments(seg, 2);
    gd_worker_round_free(&res);
    gd_worker_state_free(&w);
    engine_close(&e);
}

/* Leaf S + 1 as a round hands it over, into a whole state. */
static gd_status post_into(void *ctx, const float *params, const float *exp_avg,
                           const float *exp_avg_sq, const float *residual, size_t lo,
                           size_t count) {
    gd_worker_state *w = ctx;
    memcpy(w->params + lo, params, count * sizeof(float));
    memcpy(w->exp_avg + lo, exp_avg, count * sizeof(float));
    memcpy(w->exp_avg_sq + lo, exp_avg_sq, count * sizeof(float));
    memcpy(w->residual + lo, residual, count * sizeof(float));
    return GD_OK;
}

/* The round a segment at a time, with a validator's re-execution of
 * another worker's segment on the same trainer between segments (what a
 * node training ahead does), gives the bits of one call: leaves, payload,
 * final state. Without the reload the interloper's state leaks in. */
static void test_round_by_segments(void) {
    engine e;
    engine_open(&e, 2);
    gd_worker_state whole_w, other_w;
    CHECK_OK(gd_worker_state_init(&whole_w, 0, e.n));
    CHECK_OK(gd_worker_state_init(&other_w, 1, e.n));
    gd_worker_state seg[2], other_seg[2];
    gd_worker_round whole, other;
    CHECK_OK(gd_diloco_worker_round(e.t, &e.c, e.data, &whole, 0, e.g0, e.n, &whole_w, seg));
    CHECK_OK(gd_diloco_worker_round(e.t, &e.c, e.data, &other, 0, e.g0, e.n, &other_w,
                                    other_seg));
    commitment m;
    commitment_open(&m, &e, &other, &other_w, 1);
    gd_values_reader g0 = gd_values_reader_of(e.g0);
    for (int reload = 1; reload >= 0; reload--) {
        gd_worker_state w, post;
        CHECK_OK(gd_worker_state_init(&w, 0, e.n));
        CHECK_OK(gd_worker_state_init(&post, 0, e.n));
        gd_worker_state_source prev = gd_worker_state_source_of(&w);
        gd_values_reader residual = gd_values_reader_of(w.residual);
        gd_worker_state starts[2];
        gd_memory_starts kept = {.starts = starts};
        gd_state_leaf_sink to_memory = gd_memory_starts_sink(&kept);
        gd_worker_round res;
        gd_worker_round_run run;
        CHECK_OK(gd_diloco_round_begin(e.t, &e.c, &res, 0, &g0, e.n, &prev, w.address, w.rank,
                                       &residual, &to_memory, &run));
        while (run.done < run.segments) {
            /* The state at the boundary, as the starts' sink keeps it. */
            gd_worker_state *at = &starts[run.done];
            /* The trainer serves a check in between. */
            gd_check_result r =
                check_segment(&e, &m.cv, &other, 1, &other_seg[1], other.leaves[2]);
            CHECK(r.pass);
            gd_worker_state_source from = gd_worker_state_source_of(at);
            CHECK_OK(gd_diloco_round_segment(e.t, &e.c, e.data, &res, reload ? &from : NULL,
                                             &run));
        }
        gd_worker_state_source from = gd_worker_state_source_of(&starts[0]);
        CHECK_STATUS(gd_diloco_round_segment(e.t, &e.c, e.data, &res, &from, &run),
                     GD_ERR_INVALID);
        gd_state_sink to = {post_into, &post};
        CHECK_OK(gd_diloco_round_finish(e.t, &e.c, &res, &run, &to, NULL));
        bool same = memcmp(res.transcript_root, whole.transcript_root, 32) == 0 &&
                    memcmp(res.payload_root, whole.payload_root, 32) == 0 &&
                    memcmp(post.params, whole_w.params, e.n * sizeof(float)) == 0 &&
                    memcmp(post.exp_avg_sq, whole_w.exp_avg_sq, e.n * sizeof(float)) == 0 &&
                    memcmp(post.residual, whole_w.residual, e.n * sizeof(float)) == 0 &&
                    memcmp(starts[1].exp_avg, seg[1].exp_avg, e.n * sizeof(float)) == 0 &&
                    res.steps == whole.steps && res.tokens == whole.tokens;
        CHECK(same == (reload == 1));
        /* the residual the round began with is untouched: the new one went to the sink */
        CHECK(w.residual[0] == 0 && w.residual[e.n - 1] == 0);
        free_segments(starts, 2);
        gd_worker_round_free(&res);
        gd_worker_state_free(&w);
        gd_worker_state_free(&post);
    }
    /* A reload that is not the state recorded at the segment's start (here
     * another worker's) is the host's damaged copy: refused, no verdict. */
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, e.n));
    gd_worker_state_source prev = gd_worker_state_source_of(&w);
    gd_values_reader residual = gd_values_reader_of(w.residual);
    gd_worker_round res;
    gd_worker_round_run run;
    CHECK_OK(gd_diloco_round_begin(e.t, &e.c, &res, 0, &g0, e.n, &prev, w.address, w.rank,
                                   &residual, NULL, &run));
    CHECK_OK(gd_diloco_round_segment(e.t, &e.c, e.data, &res, NULL, &run));
    gd_worker_state_source wrong = gd_worker_state_source_of(&other_seg[1]);
    CHECK_STATUS(gd_diloco_round_segment(e.t, &e.c, e.data, &res, &wrong, &run), GD_ERR_IO);
    /* finish before the last segment is refused */
    CHECK_OK(gd_diloco_round_begin(e.t, &e.c, &res, 0, &g0, e.n, NULL, w.address, w.rank,
                                   &residual, NULL, &run));
    gd_state_sink to = {post_into, &w};
    CHECK_STATUS(gd_diloco_round_finish(e.t, &e.c, &res, &run, &to, NULL), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "0 of 2 segments") != NULL);
    gd_worker_state_free(&w);
    gd_global_state_free(&m.g);
    free_segments(seg, 2);
    free_segments(other_seg, 2);
    gd_worker_round_free(&whole);
    gd_worker_round_free(&other);
    gd_worker_state_free(&whole_w);
    gd_worker_state_free(&other_w);
    engine_close(&e);
}

/* Two validators re-executing the same segment with different thread
 * counts compute the same verdict digest (proofs/diloco_rules.h), which is
 * what the module compares in a double check; a digest of a state the
 * worker never published, so it cannot be copied from the transcript. */
static void test_verdict_digest_agrees(void) {
    engine worker;
    engine_open(&worker, 1);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, worker.n));
    gd_worker_state seg[2];
    gd_worker_round res;
    CHECK_OK(gd_diloco_worker_round(worker.t, &worker.c, worker.data, &res, 0, worker.g0, worker.n,
                                    &w, seg));
    commitment m;
    commitment_open(&m, &worker, &res, &w, 0);
    uint8_t digests[2][32];
    for (int v = 0; v < 2; v++) {
        engine validator;
        engine_open(&validator, v == 0 ? 1 : 3);
        gd_check_result r = check_segment(&validator, &m.cv, &res, 1, &seg[1], res.leaves[2]);
        CHECK(r.pass);
        CHECK(memcmp(r.trace, res.traces[1], 32) == 0); /* the worker's own */
        gd_diloco_verdict_digest(digests[v], validator.c.run, 0, w.address, 1, r.trace,
                                 r.end_state);
        engine_close(&validator);
    }
    CHECK(memcmp(digests[0], digests[1], 32) == 0);
    uint8_t from_leaves[32];
    gd_diloco_verdict_digest(from_leaves, worker.c.run, 0, w.address, 1, res.leaves[1],
                             res.leaves[2]);
    CHECK(memcmp(digests[0], from_leaves, 32) != 0);
    gd_global_state_free(&m.g);
    free_segments(seg, 2);
    gd_worker_round_free(&res);
    gd_worker_state_free(&w);
    engine_close(&worker);
}

/* Contributions are summed in the module's address order (by length, then
 * bytewise): "a", "c", "bb", not strcmp's "a", "bb", "c". The values make
 * the two orders round differently. */
static void test_address_order(void) {
    gd_diloco_config c = test_config();
    c.clip_factor = 0;
    size_t n = 1;
    float va = 1.0f, vbb = 1e-8f, vc = -1.0f;
    gd_global_state g;
    CHECK_OK(gd_global_state_init(&g, n));
    gd_contribution contribs[3] = {contrib("bb", &vbb, n, 1), contrib("c", &vc, n, 1),
                                   contrib("a", &va, n, 1)};
    CHECK_OK(gd_diloco_aggregate(NULL, &c, k_layout, contribs, 3, &g, NULL));
    float w = (float)(1.0 / 3.0);
    float ta = w * va, tc = w * vc, tbb = w * vbb;
    float by_length = ((0.0f + ta) + tc) + tbb;
    float by_strcmp = ((0.0f + ta) + tbb) + tc;
    CHECK(by_length != by_strcmp);
    CHECK(memcmp(&g.momentum[0], &by_length, 4) == 0);
    gd_global_state_free(&g);
}

/* Transcripts do not depend on the thread count either. */
static void test_transcript_thread_independent(void) {
    uint8_t roots[2][32], payload[2][32];
    for (int k = 0; k < 2; k++) {
        engine e;
        engine_open(&e, k == 0 ? 1 : 3);
        gd_worker_state w;
        CHECK_OK(gd_worker_state_init(&w, 1, e.n));
        gd_worker_round res;
        CHECK_OK(gd_diloco_worker_round(e.t, &e.c, e.data, &res, 3, e.g0, e.n, &w, NULL));
        memcpy(roots[k], res.transcript_root, 32);
        memcpy(payload[k], res.payload_root, 32);
        gd_worker_round_free(&res);
        gd_worker_state_free(&w);
        engine_close(&e);
    }
    CHECK(memcmp(roots[0], roots[1], 32) == 0);
    CHECK(memcmp(payload[0], payload[1], 32) == 0);
}

/* What a phase watch saw: per phase, how often it was told, its first and
 * last done, its total, and whether done ever went back or past total. */
typedef struct sim_seen {
    uint64_t calls[GD_SIM_PHASE_COUNT], first[GD_SIM_PHASE_COUNT], last[GD_SIM_PHASE_COUNT],
        total[GD_SIM_PHASE_COUNT];
    int order[GD_SIM_PHASE_COUNT], n_order;
    bool bad;
} sim_seen;

static void sim_watch(void *ctx, const gd_sim_phase_progress *p) {
    sim_seen *s = ctx;
    int ph = (int)p->phase;
    if (s->calls[ph] == 0) {
        s->first[ph] = p->done;
        s->total[ph] = p->total;
        s->order[s->n_order++] = ph;
    } else if (p->done < s->last[ph] || p->total != s->total[ph]) {
        s->bad = true;
    }
    if (p->done > p->total)
        s->bad = true;
    s->calls[ph]++;
    s->last[ph] = p->done;
}

/* The simulation end to end on a tiny problem, with both baselines and a
 * validator spot-checking every worker every round. */
static void test_sim(void) {
    gd_sim_options o;
    memset(&o, 0, sizeof o);
    gd_diloco_config_default(&o.diloco);
    o.diloco.workers = 2;
    o.diloco.inner_steps = 4;
    o.diloco.segment_steps = 2;
    o.diloco.inner.batch = 2;
    o.diloco.inner.micro_batch = 1;
    o.diloco.inner.seq_len = 16;
    o.diloco.inner.optim.lr = 3e-3;
    CHECK_OK(gd_model_config_preset(&o.model, "tiny"));
    o.model.vocab_size = 32;
    o.data_spec = "synthetic:markov:5";
    o.rounds = 3;
    o.eval_batches = 2;
    o.link_mbps = 10;
    o.rtt_ms = 20;
    o.ddp = true;
    o.local = true;
    o.verify = true;
    o.threads = 2;
    o.warm_start = 2;
    sim_seen seen;
    memset(&seen, 0, sizeof seen);
    gd_sim_phase_watch watch = {sim_watch, &seen};
    o.watch = &watch;
    gd_sim_report r;
    CHECK_OK(gd_sim_run(&o, &r, NULL, NULL));
    CHECK(r.n_rounds == 3 && r.verified_segments == 6);
    /* Every phase is told as it starts and as it ends, in the order they
     * run, never going back. */
    CHECK(!seen.bad && seen.n_order == GD_SIM_PHASE_COUNT);
    for (int ph = 0; ph < GD_SIM_PHASE_COUNT; ph++) {
        CHECK(seen.order[ph] == ph);
        CHECK(seen.first[ph] == 0 && seen.last[ph] == seen.total[ph] && seen.total[ph] > 0);
    }
    CHECK(seen.total[GD_SIM_PHASE_WARM_START] == 2);
    CHECK(seen.total[GD_SIM_PHASE_ROUNDS] == 3 * (2 + 1));
    /* Each worker's committed root of each round, distinct. */
    CHECK(r.workers == 2 && strcmp(r.addresses[1], "worker-00001") == 0);
    for (uint32_t i = 0; i < r.n_rounds; i++)
        CHECK(r.rounds[i].payload_roots != NULL &&
              memcmp(r.rounds[i].payload_roots, r.rounds[i].payload_roots + 32, 32) != 0);
    CHECK(memcmp(r.rounds[0].payload_roots, r.rounds[1].payload_roots, 32) != 0);
    CHECK(r.has_ddp && r.has_local && isfinite(r.entropy_floor));
    CHECK(r.rounds[2].eval_loss < r.rounds[0].eval_loss);
    /* DDP bytes: 2 (W-1)/W * 4 * params per step, 12 steps */
    double expect = 2.0 * 1 / 2 * 4 * (double)r.params * 12;
    CHECK(fabs((double)r.ddp_bytes - expect) < 1);
    /* per round each worker sends its payload and receives the other's */
    CHECK(r.rounds[0].bytes_sent > 0 && r.rounds[0].bytes_received > 0);
    CHECK(r.byte_reduction > 1);
    CHECK(r.utilization > 0 && r.utilization <= 1);
    CHECK(r.utilization_overlap >= r.utilization_sync);
    gd_sim_report_free(&r);
    /* overlap mode runs, and reports the overlap timeline; its validator
     * derives each start from G_{r-1} and the previous payload */
    o.diloco.overlap = true;
    o.ddp = o.local = false;
    CHECK_OK(gd_sim_run(&o, &r, NULL, NULL));
    CHECK(r.diloco_wall == r.wall_overlap);
    gd_sim_report_free(&r);
}

int main(void) {
    RUN_TEST(test_aggregation_is_deterministic);
    RUN_TEST(test_outer_step);
    RUN_TEST(test_aggregate_from_readers);
    RUN_TEST(test_sum_squares_pieces);
    RUN_TEST(test_aggregate_windows);
    RUN_TEST(test_clipping_bounds_a_bad_contribution);
    RUN_TEST(test_worker_round_and_segments);
    RUN_TEST(test_worker_round_windows);
    RUN_TEST(test_round_by_segments);
    RUN_TEST(test_verdict_digest_agrees);
    RUN_TEST(test_address_order);
    RUN_TEST(test_transcript_thread_independent);
    RUN_TEST(test_sim);
    return gd_test_finish();
}
