/* The trainer on GPUs (label gpu; a CTest skip, exit 77, where the CUDA
 * backend is not built or no GPU is usable):
 *  - run to run: the same steps twice on GPU 0 give the same bits;
 *  - the collective (NCCL where it loads) opens over one GPU and its copies
 *    land byte for byte, on the ops' queue and on the transfer queue (on
 *    the emulator: a transfer without either wait stops the process);
 *  - with two GPUs or more: a trainer over 2 ranks gives one rank's bits,
 *    with optimizer or full sharding (and full sharding with recomputation
 *    and the moments in host memory on one GPU too);
 *  - flash attention (its kernels, flash_attention.cu): run to run the same
 *    bits, and two fully sharded GPUs give one GPU's;
 *  - bf16 storage and moments (the rounding on the device): the same. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/backend_registry.h"
#include "tests/support/testkit.h"
#include "trainer/data.h"
#include "trainer/train.h"

#define STEPS 3

static gd_data *g_data;

static gd_attention g_attention;
static gd_precision g_precision; /* precision and moments */

static gd_train_options options(void) {
    gd_train_options o;
    gd_train_options_default(&o);
    o.attention = g_attention;
    o.precision = g_precision;
    o.moments = g_precision;
    o.batch = 4;
    o.micro_batch = 1;
    o.seq_len = 64;
    o.seed = 5;
    o.optim.lr = 1e-2;
    o.optim.warmup_steps = 1;
    o.optim.schedule_steps = STEPS;
    o.optim.grad_clip = 0.5;
    return o;
}

/* STEPS steps of the small model on gpus ranks; the state, on the host. */
static float *train_on(const gd_data *data, size_t gpus, gd_memory_settings memory, size_t *n) {
    gd_backend_group g;
    CHECK_OK(gd_backend_group_open(&g, "cuda", gpus, NULL));
    if (gpus > 1)
        printf("  %zu ranks, %s sharding, collective %s\n", gpus,
               gd_setting_name(&gd_setting_shard, (int)memory.shard), g.collective);
    gd_model_config c;
    CHECK_OK(gd_model_config_preset(&c, "small"));
    gd_train_options o = options();
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new_ranks(&t, &c, &o, 4,
                                  &(gd_trainer_host){g.ranks, g.n, &g.coll, memory}));
    for (int i = 0; i < STEPS && t; i++)
        CHECK_OK(gd_trainer_step(t, data, NULL));
    *n = gd_trainer_layout(t)->total;
    float *state = malloc(3 * *n * sizeof(float));
    CHECK(state != NULL);
    gd_trainer_get_state(t, state, state + *n, state + 2 * *n, NULL);
    gd_trainer_free(t);
    gd_backend_group_close(&g);
    return state;
}

static void test_run_to_run(void) {
    size_t n = 0;
    float *a = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, &n);
    float *b = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, &n);
    float *c = train_on(
        g_data, 1,
        (gd_memory_settings){GD_SHARD_FULL, GD_RECOMPUTE_FULL, GD_OFFLOAD_OPTIMIZER}, &n);
    CHECK(memcmp(a, b, 3 * n * sizeof(float)) == 0);
    CHECK(memcmp(a, c, 3 * n * sizeof(float)) == 0);
    free(a);
    free(b);
    free(c);
}

static void test_collective_one_gpu(void) {
    gd_backend_group g;
    CHECK_OK(gd_backend_group_open(&g, "cuda", 1, NULL));
    gd_collective coll;
    char why[300];
    CHECK_OK(gd_collective_open(&coll, g.ranks, 1, why, sizeof why));
    printf("  collective over one GPU: %s\n", why);
    enum { N = 1 << 20 };
    float *host = malloc(N * sizeof(float)), *back = malloc(N * sizeof(float));
    for (size_t i = 0; i < N; i++)
        host[i] = (float)i * 0.5f - 7.0f;
    float *src = gd_backend_alloc_f32(&g.ranks[0], N);
    float *dst = gd_backend_alloc_f32(&g.ranks[0], N);
    CHECK(src && dst);
    gd_backend_upload(&g.ranks[0], src, host, N * sizeof(float));
    gd_collective_begin(&coll);
    gd_collective_copy(&coll, 0, dst, 0, src, N * sizeof(float));
    gd_collective_end(&coll);
    gd_backend_download(&g.ranks[0], back, dst, N * sizeof(float));
    CHECK(memcmp(host, back, N * sizeof(float)) == 0);
    gd_backend_free(&g.ranks[0], src);
    gd_backend_free(&g.ranks[0], dst);
    free(host);
    free(back);
    gd_collective_close(&coll);
    gd_backend_group_close(&g);
}

/* A copy from src to dst in a transfer group on one GPU's transfer queue
 * (kernels/backend.h), src first written by an op. wait_before and
 * wait_after: the two waits that order it against the ops; without either
 * it is a race. Returns whether dst came back as src. */
static bool queued_copy(bool wait_before, bool wait_after) {
    gd_backend_group g;
    CHECK_OK(gd_backend_group_open(&g, "cuda", 1, NULL));
    gd_collective coll;
    CHECK_OK(gd_collective_open(&coll, g.ranks, 1, NULL, 0));
    const gd_backend *be = &g.ranks[0];
    enum { N = 1 << 16 };
    float *host = malloc(N * sizeof(float)), *back = malloc(N * sizeof(float));
    CHECK(host && back);
    for (size_t i = 0; i < N; i++)
        host[i] = (float)i * 0.25f + 1.0f;
    float *staged = gd_backend_alloc_f32(be, N), *src = gd_backend_alloc_f32(be, N),
          *dst = gd_backend_alloc_f32(be, N);
    CHECK(staged && src && dst);
    gd_backend_upload(be, staged, host, N * sizeof(float));
    gd_backend_copy(be, src, staged, N * sizeof(float)); /* an op writes src */
    if (wait_before)
        gd_backend_transfers_after_ops(be);
    gd_collective_begin_transfers(&coll);
    gd_collective_copy(&coll, 0, dst, 0, src, N * sizeof(float));
    gd_collective_end(&coll);
    if (wait_after)
        gd_backend_ops_after_transfers(be);
    gd_backend_download(be, back, dst, N * sizeof(float));
    bool same = memcmp(host, back, N * sizeof(float)) == 0;
    gd_backend_free(be, staged);
    gd_backend_free(be, src);
    gd_backend_free(be, dst);
    free(host);
    free(back);
    gd_collective_close(&coll);
    gd_backend_group_close(&g);
    return same;
}

/* Whether queued_copy(wait_before, wait_after) stops the process (the
 * emulator's stream order: tests/cuda_emu/order.c), in a child. */
static bool queued_copy_stops(bool wait_before, bool wait_after) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO); /* the report is expected */
        queued_copy(wait_before, wait_after);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void test_transfer_queue(void) {
    CHECK(queued_copy(true, true));
    char identity[1024];
    CHECK_OK(gd_backend_identity(identity, sizeof identity, "cuda"));
    if (strstr(identity, "emulated") == NULL)
        return; /* a GPU races without a word: only the emulator can tell */
    CHECK(queued_copy_stops(false, true));  /* the copy reads src before the op wrote it */
    CHECK(queued_copy_stops(true, false));  /* the download reads dst before it arrived */
    CHECK(!queued_copy_stops(true, true));
    printf("  transfer queue: both waits needed, and enough (the emulator's stream order)\n");
}

static void test_two_gpus(void) {
    gd_backend_group g;
    if (gd_backend_group_open(&g, "cuda", 2, NULL) != GD_OK) {
        printf("  one GPU here: the two-rank comparison is not run\n");
        return;
    }
    gd_backend_group_close(&g);
    size_t n = 0;
    float *one = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, &n);
    float *two = train_on(g_data, 2, (gd_memory_settings){GD_SHARD_OPTIMIZER}, &n);
    float *full = train_on(g_data, 2, (gd_memory_settings){GD_SHARD_FULL}, &n);
    CHECK(memcmp(one, two, 3 * n * sizeof(float)) == 0);
    CHECK(memcmp(one, full, 3 * n * sizeof(float)) == 0);
    free(one);
    free(two);
    free(full);
}

/* The run's settings as the globals hold them: two runs on one GPU give
 * the same bits, and so does a run fully sharded over two where there are
 * two; the one-GPU state (to free). */
static float *one_gpu_bits(size_t *n) {
    float *a = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, n);
    float *b = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, n);
    CHECK(memcmp(a, b, 3 * *n * sizeof(float)) == 0);
    free(b);
    gd_backend_group g;
    if (gd_backend_group_open(&g, "cuda", 2, NULL) == GD_OK) {
        gd_backend_group_close(&g);
        float *two = train_on(g_data, 2, (gd_memory_settings){GD_SHARD_FULL}, n);
        CHECK(memcmp(a, two, 3 * *n * sizeof(float)) == 0);
        free(two);
    }
    return a;
}

static void test_flash(void) {
    g_attention = GD_ATTENTION_FLASH;
    size_t n = 0;
    float *a = one_gpu_bits(&n);
    g_attention = GD_ATTENTION_NAIVE;
    float *naive = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, &n);
    CHECK(memcmp(a, naive, 3 * n * sizeof(float)) != 0); /* the option reaches the model */
    free(a);
    free(naive);
}

static void test_bf16(void) {
    g_precision = GD_PRECISION_BF16;
    size_t n = 0;
    float *a = one_gpu_bits(&n);
    size_t inexact = 0; /* the moments as stored: bf16 values */
    for (size_t i = n; i < 3 * n; i++) {
        uint32_t u;
        memcpy(&u, &a[i], sizeof u);
        inexact += (u & 0xffffu) != 0;
    }
    CHECK(inexact == 0);
    g_precision = GD_PRECISION_FP32;
    float *fp32 = train_on(g_data, 1, (gd_memory_settings){GD_SHARD_OPTIMIZER}, &n);
    CHECK(memcmp(a, fp32, n * sizeof(float)) != 0);
    free(a);
    free(fp32);
}

int main(void) {
    char why[256];
    if (!gd_backend_usable("cuda", why, sizeof why)) {
        printf("skipped: the cuda backend is not usable here (%s)\n", why);
        return 77;
    }
    CHECK_OK(gd_data_open(&g_data, "synthetic:markov:1"));
    RUN_TEST(test_collective_one_gpu);
    RUN_TEST(test_transfer_queue);
    RUN_TEST(test_run_to_run);
    RUN_TEST(test_two_gpus);
    RUN_TEST(test_flash);
    RUN_TEST(test_bf16);
    gd_data_close(g_data);
    return gd_test_finish();
}
