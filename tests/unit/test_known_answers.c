/* Known answers: SHA-256 digests of the exact bits the trainer and the DiLoCo
 * engine produce from fixed inputs, so a compiler, a flag or a host that
 * rounds one operation differently (a fused multiply-add, a libm call) is
 * caught here and not as a split between worker and validator. CI builds
 * this test with gcc and with clang and requires the same answers.
 *
 * Values are hashed as little-endian float32 (double for the learning
 * rates), arrays concatenated in the order stated. Each answer is also
 * printed on stdout ("kat NAME VALUE"), so two builds can be compared line
 * by line where no answer is pinned for the host (the training step). */
#include <cblas.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "common/rng.h"
#include "tests/support/testkit.h"
#include "trainer/config.h"
#include "trainer/data.h"
#include "trainer/diloco.h"
#include "trainer/optim.h"
#include "trainer/train.h"

#define KAT_HEX_LEN (2 * GD_SHA256_LEN + 1)

/* The hex SHA-256 of n_arrays arrays of n floats, concatenated, each value
 * as its little-endian bits (what a big-endian host must hash too). */
static void kat_sha256_floats(char hex[KAT_HEX_LEN], const float *const *arrays,
                              size_t n_arrays, size_t n) {
    uint8_t *bytes = malloc(n_arrays * n * 4 + 1);
    if (bytes == NULL)
        abort();
    for (size_t a = 0; a < n_arrays; a++) {
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &arrays[a][i], 4);
            gd_put_le32(bytes + (a * n + i) * 4, u);
        }
    }
    uint8_t digest[GD_SHA256_LEN];
    gd_sha256(digest, bytes, n_arrays * n * 4);
    gd_hex_encode(hex, digest, GD_SHA256_LEN, false);
    free(bytes);
}

static void kat_sha256_doubles(char hex[KAT_HEX_LEN], const double *v, size_t n) {
    uint8_t *bytes = malloc(n * 8 + 1);
    if (bytes == NULL)
        abort();
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], 8);
        gd_put_le64(bytes + i * 8, u);
    }
    uint8_t digest[GD_SHA256_LEN];
    gd_sha256(digest, bytes, n * 8);
    gd_hex_encode(hex, digest, GD_SHA256_LEN, false);
    free(bytes);
}

/* Prints the answer and checks it against the pinned one (NULL: none
 * pinned, only printed). */
static void kat_check(const char *name, const char *got, const char *expected) {
    printf("kat %s %s\n", name, got);
    if (expected == NULL)
        return;
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "    %s: got %s, expected %s\n", name, got, expected);
    CHECK(strcmp(got, expected) == 0);
}

static void kat_check_double(const char *name, double got, double expected) {
    printf("kat %s %a\n", name, got);
    if (got != expected)
        fprintf(stderr, "    %s: got %a, expected %a\n", name, got, expected);
    CHECK(got == expected);
}

static gd_model_config kat_tiny(void) {
    gd_model_config c;
    if (gd_model_config_preset(&c, "tiny") != GD_OK)
        abort();
    return c;
}

/* Every option of the training answers, stated rather than defaulted, so a
 * changed default does not move the answer. */
static gd_train_options kat_train_options(void) {
    gd_train_options o;
    gd_train_options_default(&o);
    o.optim = (gd_optim_config){.lr = 1e-2, .min_lr = 1e-3, .warmup_steps = 0,
                                .schedule_steps = 10, .beta1 = 0.9, .beta2 = 0.95,
                                .eps = 1e-8, .weight_decay = 0.1, .grad_clip = 1.0};
    o.batch = 4;
    o.seq_len = 32;
    o.micro_batch = 2;
    o.seed = 1;
    o.worker = 0;
    o.data_workers = 0;
    return o;
}

/* A warmup of 100 steps, then a cosine from 1e-3 to 1e-4 until step 1000:
 * the 1,000 learning rates of steps 0..999 as doubles. The cosine's last
 * multiply-add is where a contracting compiler rounds differently. */
static void test_learning_rates(void) {
    gd_optim_config c = {.lr = 1e-3, .min_lr = 1e-4, .warmup_steps = 100,
                         .schedule_steps = 1000, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8,
                         .weight_decay = 0.1, .grad_clip = 1.0};
    CHECK_OK(gd_optim_config_validate(&c));
    double lr[1000];
    for (uint64_t s = 0; s < 1000; s++)
        lr[s] = gd_optim_lr_at(&c, s);
    char hex[KAT_HEX_LEN];
    kat_sha256_doubles(hex, lr, 1000);
    kat_check("lr_warmup_cosine_1000", hex,
              "65cc6fa816dd04be3b52718b50981a054bffd307ddb093e0148bba03e8580efd");
    /* A few of them exactly, to say which one moved. */
    static const struct {
        uint64_t step;
        double lr;
    } pinned[] = {
        {0, 0x1.4f8b588e368f1p-17},
        {99, 0x1.0624dd2f1a9fcp-10},
        {100, 0x1.0624dd2f1a9fcp-10},
        {101, 0x1.0624ae159f3cbp-10},
        {550, 0x1.205bc01a36e2fp-11},
        {777, 0x1.e17b44d644b86p-13},
        {999, 0x1.a37120497a633p-14},
    };
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "lr_%" PRIu64, pinned[i].step);
        kat_check_double(name, lr[pinned[i].step], pinned[i].lr);
    }
}

/* G_0 of tiny: the initial parameters for seed 1. */
static void test_initial_params(void) {
    gd_model_config c = kat_tiny();
    gd_train_options o = kat_train_options();
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 1));
    if (t == NULL)
        return;
    size_t n = gd_trainer_layout(t)->total;
    float *params = malloc(n * sizeof(float));
    uint64_t step = 1;
    gd_trainer_get_state(t, params, NULL, NULL, &step);
    CHECK(step == 0);
    CHECK(n == gd_model_param_count(&c));
    char hex[KAT_HEX_LEN];
    const float *arrays[1] = {params};
    kat_sha256_floats(hex, arrays, 1, n);
    kat_check("tiny_g0_seed1", hex,
              "3ad72488895ff601027aecb0ba0b71ffade596e780ceefa229c4179dd2852637");
    /* The same G_0 as a run's spec names it: the v2 state hash (descriptor
     * with tiny's layout digest, zero momentum, payload-sized chunks). */
    gd_global_state g;
    CHECK_OK(gd_global_state_init(&g, n));
    memcpy(g.params, params, n * sizeof(float));
    uint8_t state_hash[32];
    CHECK_OK(gd_global_state_hash(NULL, state_hash, gd_trainer_layout(t)->digest,
                                  GD_PAYLOAD_CHUNK_ELEMS, &g));
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", state_hash[i]);
    kat_check("tiny_g0_state_hash", hex,
              "eecde113f3f20894c2bf652e6c66fbf22371d532a19b149eae4e011be526ee94");
    gd_global_state_free(&g);
    free(params);
    gd_trainer_free(t);
}

/* The training step runs OpenBLAS's sgemm, whose kernels OpenBLAS picks per
 * CPU (its Sandybridge kernels give other bits than Haswell's), and libm's
 * expf, pow, cos and sin, which glibc also picks per CPU (docs/trainer.md).
 * So its answer is pinned per OpenBLAS version and core, and main() makes
 * OpenBLAS use its Haswell kernels wherever the CPU can run them (AVX2 and
 * FMA): the answer is then checked on every such host, whichever core
 * OpenBLAS would have picked. Elsewhere it is printed, unchecked, and
 * scripts/test's comparison of the gcc and clang builds still holds.
 *
 * The answers changed when a step's micro-batches came to be computed
 * apart and added in micro-batch order (the data-parallel trainer; this
 * test's two micro-batches see it), which the test, then unchecked on the
 * cores of the machines that ran it, did not report. The SkylakeX,
 * Cooperlake and Sandybridge rows were taken with OPENBLAS_CORETYPE on an
 * AVX-512 host, where masking glibc's FMA and AVX2 variants
 * (GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-AVX2,-AVX) left the bits as they
 * were. */
typedef struct kat_step_answer {
    const char *blas;
    const char *state;
    const char *loss;
} kat_step_answer;

static const kat_step_answer kat_step_answers[] = {
    {"0.3.21 Haswell", "a9fd49e3a90813b579f0916b3c98a5d20d2d67743ed4917efe7edaeaf829d60a",
     "40b03b45"},
    {"0.3.21 Zen", "a9fd49e3a90813b579f0916b3c98a5d20d2d67743ed4917efe7edaeaf829d60a",
     "40b03b45"},
    {"0.3.21 SkylakeX", "db3b0c5ecfa080b4c7ceb36ae823b363597b1259a5c84cf6c75fee0ddd174402",
     "40b03b45"},
    {"0.3.21 Cooperlake", "db3b0c5ecfa080b4c7ceb36ae823b363597b1259a5c84cf6c75fee0ddd174402",
     "40b03b45"},
    {"0.3.21 Sandybridge", "60fefce50f6f439215c92314c56a00eab502c43edc5e40aa8cbe7fe128f2c7ae",
     "40b03b45"},
};

/* The same step with --precision bf16 --moments bf16 (trainer/settings.h):
 * the weights the ops read, every activation stored and the moments
 * rounded to bfloat16, in fp32 arithmetic. Every row taken with
 * OPENBLAS_CORETYPE on one AVX-512 host; the rounding hides Sandybridge's
 * difference from SkylakeX here, not Haswell's. */
static const kat_step_answer kat_step_bf16_answers[] = {
    {"0.3.21 Haswell", "0caef45135bc02bc0d2fdb1fba9b5baea9db0e15650300ed723d919ff8c4f6fc",
     "40b03a5e"},
    {"0.3.21 Zen", "0caef45135bc02bc0d2fdb1fba9b5baea9db0e15650300ed723d919ff8c4f6fc",
     "40b03a5e"},
    {"0.3.21 SkylakeX", "7c115ae1651ec0f36b1b6dc0adf0d73ddf41a470028eda1cc5fb98d0b8819a6a",
     "40b03a5e"},
    {"0.3.21 Cooperlake", "7c115ae1651ec0f36b1b6dc0adf0d73ddf41a470028eda1cc5fb98d0b8819a6a",
     "40b03a5e"},
    {"0.3.21 Sandybridge", "7c115ae1651ec0f36b1b6dc0adf0d73ddf41a470028eda1cc5fb98d0b8819a6a",
     "40b03a5e"},
};

/* "VERSION CORE" of the OpenBLAS that runs here. */
static void kat_blas_name(char *out, size_t cap) {
    char version[32] = "?";
    if (sscanf(openblas_get_config(), "OpenBLAS %31s", version) != 1)
        snprintf(version, sizeof version, "?");
    snprintf(out, cap, "%s %s", version, openblas_get_corename());
}

/* One step of tiny on a fixed batch in precision p (moments too):
 * params ‖ exp_avg ‖ exp_avg_sq after it, and the step's loss as float32
 * bits, against the answers pinned for this OpenBLAS (n of them). */
static void kat_one_step(gd_precision p, const char *name, const kat_step_answer *answers,
                         size_t n_answers) {
    gd_model_config c = kat_tiny();
    gd_train_options o = kat_train_options();
    o.precision = p;
    o.moments = p;
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 1));
    if (t == NULL || data == NULL) {
        gd_trainer_free(t);
        gd_data_close(data);
        return;
    }
    gd_step_stats st = {0};
    CHECK_OK(gd_trainer_step(t, data, &st));
    CHECK(st.step == 0 && gd_trainer_step_count(t) == 1);
    size_t n = gd_trainer_layout(t)->total;
    float *state = malloc(3 * n * sizeof(float));
    uint64_t step = 0;
    gd_trainer_get_state(t, state, state + n, state + 2 * n, &step);
    CHECK(step == 1);
    char hex[KAT_HEX_LEN], loss[16];
    const float *arrays[3] = {state, state + n, state + 2 * n};
    kat_sha256_floats(hex, arrays, 3, n);
    float loss_f = (float)st.loss;
    uint32_t loss_bits;
    memcpy(&loss_bits, &loss_f, 4);
    snprintf(loss, sizeof loss, "%08" PRIx32, loss_bits);

    char blas[96];
    kat_blas_name(blas, sizeof blas);
    printf("kat blas %s\n", blas);
    const char *want_state = NULL, *want_loss = NULL;
    for (size_t i = 0; i < n_answers; i++) {
        if (strcmp(answers[i].blas, blas) == 0) {
            want_state = answers[i].state;
            want_loss = answers[i].loss;
        }
    }
    if (want_state == NULL)
        fprintf(stderr, "    no %s answer pinned for OpenBLAS %s: printed, not checked\n",
                name, blas);
    char key[64];
    snprintf(key, sizeof key, "%s_state", name);
    kat_check(key, hex, want_state);
    snprintf(key, sizeof key, "%s_loss", name);
    kat_check(key, loss, want_loss);
    free(state);
    gd_trainer_free(t);
    gd_data_close(data);
}

static void test_one_step(void) {
    kat_one_step(GD_PRECISION_FP32, "tiny_step1", kat_step_answers,
                 sizeof kat_step_answers / sizeof kat_step_answers[0]);
}

static void test_one_step_bf16(void) {
    kat_one_step(GD_PRECISION_BF16, "tiny_step1_bf16", kat_step_bf16_answers,
                 sizeof kat_step_bf16_answers / sizeof kat_step_bf16_answers[0]);
}

#define KAT_AGG_N 1000

/* n values of stream `stream` of the answers' Philox key, scale times
 * approximately standard normal. */
static void kat_fill(float *v, size_t n, uint32_t stream, double scale) {
    gd_rng rng;
    uint32_t ids[4] = {0x4b4154u /* "KAT" */, stream, 0, 0};
    gd_rng_init(&rng, 20240601, ids);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(gd_rng_normal12(&rng) * scale);
}

/* The three contributions of the aggregation answer, in one place so that a
 * change of gd_contribution is one edit. Addresses of equal length (their
 * order is the same by bytes or by length then bytes), different token
 * counts, and "gonka1bbb" five to ten times the others' scale, so that
 * clipping at twice the median norm scales it down. Given out of address
 * order. */
static const uint8_t kat_layout[32] = {0x4b, 0x41, 0x54};

static void kat_contributions(gd_contribution out[3], float *deltas) {
    kat_fill(deltas, KAT_AGG_N, 10, 1e-3);
    kat_fill(deltas + KAT_AGG_N, KAT_AGG_N, 11, 1e-2);
    kat_fill(deltas + 2 * KAT_AGG_N, KAT_AGG_N, 12, 2e-3);
    out[0] = (gd_contribution){.address = "gonka1ccc", .n = KAT_AGG_N,
                               .layout_digest = kat_layout, .delta = deltas + 2 * KAT_AGG_N,
                               .tokens = 2048};
    out[1] = (gd_contribution){.address = "gonka1aaa", .n = KAT_AGG_N,
                               .layout_digest = kat_layout, .delta = deltas, .tokens = 1024};
    out[2] = (gd_contribution){.address = "gonka1bbb", .n = KAT_AGG_N,
                               .layout_digest = kat_layout, .delta = deltas + KAT_AGG_N,
                               .tokens = 4096};
}

/* One aggregate and outer step from a fixed G: params ‖ momentum after it. */
static void test_aggregate(void) {
    gd_diloco_config c;
    gd_diloco_config_default(&c);
    c.outer_lr = 0.7;
    c.outer_momentum = 0.9;
    c.clip_factor = 2.0;
    gd_global_state g;
    CHECK_OK(gd_global_state_init(&g, KAT_AGG_N));
    kat_fill(g.params, KAT_AGG_N, 1, 0.02);
    kat_fill(g.momentum, KAT_AGG_N, 2, 1e-3);
    float *deltas = malloc(3 * KAT_AGG_N * sizeof(float));
    gd_contribution contribs[3];
    kat_contributions(contribs, deltas);
    gd_aggregate_stats st = {0};
    CHECK_OK(gd_diloco_aggregate(NULL, &c, kat_layout, contribs, 3, &g, &st));
    CHECK(st.clipped == 1);
    CHECK(g.round == 1);
    /* The norms clipping compared: they decide the clipped weight. */
    kat_check_double("aggregate_median_norm", st.median_norm, 0x1.f0e0404d963aap-5);
    kat_check_double("aggregate_max_norm", st.max_norm, 0x1.491f0c4c9c69fp-2);
    char hex[KAT_HEX_LEN];
    const float *arrays[2] = {g.params, g.momentum};
    kat_sha256_floats(hex, arrays, 2, KAT_AGG_N);
    kat_check("aggregate_3_clipped", hex,
              "8ff8a04fa60d1b5de1e9ba4a520a38546bd9954b55863b7402418d6f1d8ea4a0");
    free(deltas);
    gd_global_state_free(&g);
}

/* OpenBLAS reads OPENBLAS_CORETYPE when it loads, before main: so the test
 * sets it and runs itself again. Where the CPU cannot run the Haswell
 * kernels, or the variable is already set (a row of another core being
 * checked), it runs as it is. */
static void kat_use_haswell_kernels(char **argv) {
#if defined(__x86_64__)
    if (getenv("OPENBLAS_CORETYPE") != NULL)
        return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return;
    if (setenv("OPENBLAS_CORETYPE", "Haswell", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    fprintf(stderr, "    could not run again with OPENBLAS_CORETYPE=Haswell; as it is\n");
    unsetenv("OPENBLAS_CORETYPE");
#else
    (void)argv;
#endif
}

int main(int argc, char **argv) {
    (void)argc;
    kat_use_haswell_kernels(argv);
    RUN_TEST(test_learning_rates);
    RUN_TEST(test_initial_params);
    RUN_TEST(test_one_step);
    RUN_TEST(test_one_step_bf16);
    RUN_TEST(test_aggregate);
    return gd_test_finish();
}
