/* Philox4x32-10 against the Random123 known-answer vectors, the streams
 * built on it, and the thread pool. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/pool.h"
#include "common/rng.h"
#include "tests/support/testkit.h"

/* Random123 (DEShawResearch/random123), tests/kat_vectors, the three
 * "philox4x32 10" lines: counter[4], key[2] -> output[4]. */
static void test_philox_known_answers(void) {
    static const uint32_t vec[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        gd_philox4x32_10(out, vec[i], vec[i] + 4);
        for (int j = 0; j < 4; j++)
            CHECK(out[j] == vec[i][6 + j]);
    }
}

static void test_streams(void) {
    uint32_t ids_a[4] = {1, 2, 3, 4}, ids_b[4] = {1, 2, 3, 5};
    gd_rng a, a2, b;
    gd_rng_init(&a, 42, ids_a);
    gd_rng_init(&a2, 42, ids_a);
    gd_rng_init(&b, 42, ids_b);
    int same_ab = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = gd_rng_u32(&a), y = gd_rng_u32(&a2), z = gd_rng_u32(&b);
        CHECK(x == y);
        same_ab += x == z;
    }
    CHECK(same_ab < 3);
    /* Uniform and bounded draws stay in range; their means are right. */
    double sum = 0, sum_sq = 0;
    int counts[7] = {0};
    for (int i = 0; i < 70000; i++) {
        double u = gd_rng_uniform(&a);
        CHECK(u >= 0 && u < 1);
        uint64_t k = gd_rng_below(&a, 7);
        CHECK(k < 7);
        counts[k]++;
        double n = gd_rng_normal12(&a);
        CHECK(n >= -6 && n <= 6);
        sum += n;
        sum_sq += n * n;
    }
    for (int k = 0; k < 7; k++)
        CHECK(abs(counts[k] - 10000) < 500);
    CHECK(fabs(sum / 70000) < 0.02);
    CHECK(fabs(sum_sq / 70000 - 1) < 0.03);
    CHECK(gd_rng_below(&a, 1) == 0);
}

typedef struct pool_job {
    atomic_int hits[1000];
    double out[1000];
} pool_job;

static void pool_task(void *ctx, size_t i) {
    pool_job *job = ctx;
    atomic_fetch_add(&job->hits[i], 1);
    job->out[i] = (double)i * 0.5;
}

static void test_pool(void) {
    for (int threads = 1; threads <= 4; threads++) {
        gd_pool *pool = NULL;
        CHECK_OK(gd_pool_new(&pool, threads));
        CHECK(gd_pool_threads(pool) == threads);
        pool_job *job = calloc(1, sizeof *job);
        for (int round = 0; round < 50; round++) {
            size_t n = (size_t)(round * 37 % 1000) + 1;
            gd_pool_run(pool, n, pool_task, job);
        }
        /* Every task of every job ran exactly once. */
        int expected[1000] = {0};
        for (int round = 0; round < 50; round++)
            for (size_t i = 0; i < (size_t)(round * 37 % 1000) + 1; i++)
                expected[i]++;
        for (int i = 0; i < 1000; i++)
            CHECK(atomic_load(&job->hits[i]) == expected[i]);
        gd_pool_run(pool, 0, pool_task, job); /* nothing to do */
        free(job);
        gd_pool_free(pool);
    }
    gd_pool *pool = NULL;
    CHECK_STATUS(gd_pool_new(&pool, 0), GD_ERR_INVALID);
    CHECK_STATUS(gd_pool_new(&pool, 5000), GD_ERR_INVALID);
    pool_job *job = calloc(1, sizeof *job);
    gd_pool_run(NULL, 10, pool_task, job); /* no pool: inline */
    CHECK(atomic_load(&job->hits[9]) == 1);
    free(job);
}

int main(void) {
    RUN_TEST(test_philox_known_answers);
    RUN_TEST(test_streams);
    RUN_TEST(test_pool);
    return gd_test_finish();
}
