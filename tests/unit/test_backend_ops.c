/* Cross-backend checks in the style of ggml's test-backend-ops: every op
 * forward and backward, the codecs' ops, a full training step, a DiLoCo
 * round and the aggregate, each run on the backend under test and on the CPU reference
 * from the same inputs, compared with a per-op error threshold (normalized
 * mean squared error), checked for NaN and Inf, with guard values around
 * every output buffer; and the same training run twice on the backend,
 * which must give the same bits.
 *
 * Usage: test_backend_ops BACKEND
 *   copy  the test backend of tests/support/backend_copy.h: memory that is not
 *         the host's and no op slot, so everything runs through the
 *         dispatcher's fallback; it must match the CPU bit for bit
 *   cuda  the CUDA backend: exit 77 (a CTest skip), with the reason, where it
 *         is not compiled in or no GPU is usable
 * An op without a slot in the backend runs through the fallback and is
 * reported as such; the round's outer step must match the CPU bit for bit
 * on every backend (kernels/backend.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "kernels/backend.h"
#include "kernels/backend_registry.h"
#include "kernels/cpu/ops.h"
#include "tests/support/backend_copy.h"
#include "tests/support/testkit.h"
#include "trainer/config.h"
#include "trainer/data.h"
#include "trainer/diloco.h"
#include "trainer/payload.h"
#include "trainer/train.h"

/* --- the backends ------------------------------------------------------------------ */

typedef struct backend_under_test {
    const char *name;
    gd_backend be;
    bool exact;               /* expected to match the CPU bit for bit */
    gd_copy_backend *copy;    /* the copy backend's state, for its guard checks */
    bool opened;              /* opened through the registry */
} backend_under_test;

/* 0 when opened, 77 when the backend is not usable here (said why). */
static int backend_open(backend_under_test *b, const char *name) {
    memset(b, 0, sizeof *b);
    b->name = name;
    if (strcmp(name, "copy") == 0) {
        b->copy = gd_copy_backend_new(&b->be, NULL);
        b->exact = true;
        return b->copy ? 0 : 1;
    }
    if (strcmp(name, "cuda") == 0) {
        char why[256];
        if (!gd_backend_usable("cuda", why, sizeof why)) {
            printf("skip: cuda: %s\n", why);
            return 77;
        }
        if (gd_backend_open(&b->be, "cuda", NULL) != GD_OK) {
            fprintf(stderr, "cuda: %s\n", gd_error_detail());
            return 1;
        }
        b->opened = true;
        return 0;
    }
    fprintf(stderr, "unknown backend '%s' (copy, cuda)\n", name);
    return 2;
}

static void backend_close(backend_under_test *b) {
    if (b->copy != NULL)
        CHECK(gd_copy_backend_free(b->copy));
    if (b->opened)
        gd_backend_close(&b->be);
}

/* --- buffers with guards -------------------------------------------------------------- */

/* Guard values around every buffer the harness hands a backend: a NaN with a
 * payload no op produces, so any write past the ends shows. */
#define GUARD 16
static const uint32_t k_guard_bits = 0x7fc0dead;

typedef struct guarded {
    float *base; /* backend buffer of count + 2 * GUARD values */
    size_t count;
} guarded;

static float guard_value(void) {
    float f;
    memcpy(&f, &k_guard_bits, sizeof f);
    return f;
}

/* A backend buffer holding host's count values between guards (host may be
 * NULL: zeros). Returns the pointer an op gets. */
static void *guarded_upload(const gd_backend *be, guarded *g, const void *host, size_t count) {
    g->count = count;
    g->base = gd_backend_alloc_f32(be, count + 2 * GUARD);
    CHECK(g->base != NULL);
    float *staging = calloc(count + 2 * GUARD, sizeof(float));
    CHECK(staging != NULL);
    for (size_t i = 0; i < GUARD; i++)
        staging[i] = staging[GUARD + count + i] = guard_value();
    if (host != NULL)
        memcpy(staging + GUARD, host, count * sizeof(float));
    gd_backend_upload(be, g->base, staging, (count + 2 * GUARD) * sizeof(float));
    free(staging);
    return g->base + GUARD;
}

/* Downloads the values into host (may be NULL), checks the guards, frees. */
static bool guarded_download(const gd_backend *be, guarded *g, void *host) {
    float *staging = malloc((g->count + 2 * GUARD) * sizeof(float));
    CHECK(staging != NULL);
    gd_backend_download(be, staging, g->base, (g->count + 2 * GUARD) * sizeof(float));
    bool intact = true;
    for (size_t i = 0; i < GUARD; i++) {
        uint32_t lo, hi;
        memcpy(&lo, &staging[i], 4);
        memcpy(&hi, &staging[GUARD + g->count + i], 4);
        intact = intact && lo == k_guard_bits && hi == k_guard_bits;
    }
    if (host != NULL)
        memcpy(host, staging + GUARD, g->count * sizeof(float));
    free(staging);
    gd_backend_free(be, g->base);
    g->base = NULL;
    return intact;
}

/* --- comparing ---------------------------------------------------------------------- */

/* sum (a - b)^2 / sum b^2 (0 when both are zero). */
static double nmse(const float *a, const float *ref, size_t n) {
    double err = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)ref[i];
        err += d * d;
        norm += (double)ref[i] * (double)ref[i];
    }
    return norm > 0 ? err / norm : err;
}

static bool all_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* Checks an output against the reference; prints one line. */
/* path: how the backend ran it ("native", "fallback"; "" for whole runs). */
static void compare(const backend_under_test *b, const char *what, const float *got,
                    const float *ref, size_t n, double max_nmse, const char *path) {
    double e = nmse(got, ref, n);
    bool finite = all_finite(got, n);
    bool same_bits = memcmp(got, ref, n * sizeof(float)) == 0;
    bool ok = finite && e <= max_nmse && (!b->exact || same_bits);
    printf("%-4s %-28s %-8s nmse %.3g (max %.3g)%s%s\n", ok ? "ok" : "FAIL", what,
           path, e, max_nmse, same_bits ? ", same bits" : "",
           finite ? "" : ", NOT FINITE");
    CHECK(ok);
}

/* --- op cases ----------------------------------------------------------------------- */

/* The ops run at two shapes (k_shapes): a small one that still covers
 * grouped-query heads, several rows per position and a vocabulary that is
 * not a power of two; and a wide one whose rows (C, V, T) outgrow a block of
 * threads, so that every level of a kernel's reduction tree adds values
 * (a missing barrier there shows only then), with more positions (N) than
 * a kernel takes in one tile or chunk; and one whose heads (128 wide) take
 * the CUDA backend's tensor-core attention, over three blocks of 32 keys,
 * the last partial. */
typedef struct op_shape {
    const char *name;
    size_t b, t, heads, kv, hd, c, f, v;
} op_shape;
static const op_shape k_shapes[] = {
    {"small", 2, 8, 4, 2, 8, 32, 48, 50},
    {"wide", 32, 160, 4, 2, 8, 300, 48, 1000},
    {"heads", 2, 80, 4, 2, 128, 64, 48, 50},
};
/* The shape of the cases running now (test_ops). */
static size_t B, T, HEADS, KV, HD, C, F, V, N;
#define QD (HEADS * HD)
#define KVD (KV * HD)
#define SCORES (B * HEADS * T * T)

/* SCRATCH: workspace the op may use as it likes; guarded, not compared.
 * CAUSAL: an input of (B, HEADS, T, T) probabilities as the forward pass
 * leaves them, zero above the diagonal. */
typedef enum arg_kind { IN, TOKENS, OUT, INOUT, SCRATCH, CAUSAL } arg_kind;

typedef struct arg_spec {
    arg_kind kind;
    size_t count;
    float lo, hi; /* uniform range of random inputs */
} arg_spec;

#define MAX_ARGS 11

typedef struct op_case {
    const char *name;
    double max_nmse;
    size_t n_args;
    arg_spec args[MAX_ARGS];
    void (*call)(const gd_backend *be, void *const *a);
    bool (*native)(const gd_backend_iface *iface); /* the backend fills the slot */
} op_case;

#define F32(i) ((float *)a[i])
#define CF32(i) ((const float *)a[i])
#define I32(i) ((const int32_t *)a[i])

static void call_embedding_fwd(const gd_backend *be, void *const *a) {
    gd_backend_embedding_forward(be, F32(0), I32(1), CF32(2), N, C, V);
}
static void call_embedding_bwd(const gd_backend *be, void *const *a) {
    gd_backend_embedding_backward(be, F32(0), CF32(1), I32(2), N, C, V);
}
static void call_rmsnorm_fwd(const gd_backend *be, void *const *a) {
    gd_backend_rmsnorm_forward(be, F32(0), F32(1), CF32(2), CF32(3), N, C, 1e-5);
}
static void call_rmsnorm_bwd(const gd_backend *be, void *const *a) {
    gd_backend_rmsnorm_backward(be, F32(0), F32(1), CF32(2), CF32(3), CF32(4), CF32(5), N, C);
}
static void call_matmul_fwd(const gd_backend *be, void *const *a) {
    gd_backend_matmul_forward(be, F32(0), CF32(1), CF32(2), N, C, F);
}
static void call_matmul_bwd(const gd_backend *be, void *const *a) {
    gd_backend_matmul_backward(be, F32(0), F32(1), CF32(2), CF32(3), CF32(4), N, C, F);
}
static void call_rope_fwd(const gd_backend *be, void *const *a) {
    gd_backend_rope_forward(be, F32(0), CF32(1), CF32(2), CF32(3), B, T, HEADS, HD);
}
static void call_rope_bwd(const gd_backend *be, void *const *a) {
    gd_backend_rope_backward(be, F32(0), CF32(1), CF32(2), CF32(3), B, T, HEADS, HD);
}
static void call_attention_fwd(const gd_backend *be, void *const *a) {
    gd_backend_attention_forward(be, F32(0), F32(1), CF32(2), CF32(3), CF32(4), B, T, HEADS,
                                 KV, HD);
}
static void call_attention_bwd(const gd_backend *be, void *const *a) {
    gd_backend_attention_backward(be, F32(0), F32(1), F32(2), F32(3), CF32(4), CF32(5),
                                  CF32(6), CF32(7), CF32(8), B, T, HEADS, KV, HD);
}
static void call_flash_fwd(const gd_backend *be, void *const *a) {
    gd_backend_flash_attention_forward(be, F32(0), F32(1), CF32(2), CF32(3), CF32(4), B, T,
                                       HEADS, KV, HD);
}
static void call_flash_bwd(const gd_backend *be, void *const *a) {
    gd_backend_flash_attention_backward(be, F32(0), F32(1), F32(2), F32(3), CF32(4), CF32(5),
                                        CF32(6), CF32(7), CF32(8), CF32(9), B, T, HEADS, KV, HD);
}
static void call_swiglu_fwd(const gd_backend *be, void *const *a) {
    gd_backend_swiglu_forward(be, F32(0), CF32(1), CF32(2), N * F);
}
static void call_swiglu_bwd(const gd_backend *be, void *const *a) {
    gd_backend_swiglu_backward(be, F32(0), F32(1), CF32(2), CF32(3), CF32(4), N * F);
}
static void call_add(const gd_backend *be, void *const *a) {
    gd_backend_add(be, F32(0), CF32(1), CF32(2), N * C);
}
static void call_ce_fwd(const gd_backend *be, void *const *a) {
    gd_backend_cross_entropy_forward(be, F32(0), CF32(1), I32(2), N, V);
}
static void call_ce_bwd(const gd_backend *be, void *const *a) {
    gd_backend_cross_entropy_backward(be, F32(0), CF32(1), I32(2), 1.0 / N, N, V);
}
static void call_adamw(const gd_backend *be, void *const *a) {
    gd_backend_adamw(be, F32(0), CF32(1), F32(2), F32(3), N * C, 1e-3, 0.9, 0.95, 1e-8, 0.1,
                     0.19, 0.0975, 0.5);
}
static void call_pseudo_gradient(const gd_backend *be, void *const *a) {
    gd_backend_pseudo_gradient(be, F32(0), CF32(1), CF32(2), F32(3), N * C, 0.9f);
}
static void call_weighted_add(const gd_backend *be, void *const *a) {
    gd_backend_weighted_add(be, F32(0), CF32(1), 0.3f, N * C);
}
static void call_nesterov_step(const gd_backend *be, void *const *a) {
    gd_backend_nesterov_step(be, F32(0), F32(1), CF32(2), N * C, 0.7f, 0.9f);
}

#define NATIVE(slot)                                                       \
    static bool native_##slot(const gd_backend_iface *iface) {             \
        return iface->slot != NULL;                                        \
    }
NATIVE(embedding_forward)
NATIVE(embedding_backward)
NATIVE(rmsnorm_forward)
NATIVE(rmsnorm_backward)
NATIVE(matmul_forward)
NATIVE(matmul_backward)
NATIVE(rope_forward)
NATIVE(rope_backward)
NATIVE(attention_forward)
NATIVE(attention_backward)
NATIVE(flash_attention_forward)
NATIVE(flash_attention_backward)
NATIVE(swiglu_forward)
NATIVE(swiglu_backward)
NATIVE(add)
NATIVE(cross_entropy_forward)
NATIVE(cross_entropy_backward)
NATIVE(adamw)
NATIVE(pseudo_gradient)
NATIVE(weighted_add)
NATIVE(nesterov_step)

/* Thresholds: matmuls and what feeds on them may run in bf16 with fp32
 * accumulation on a device (relative error ~2^-8 per product, far less
 * after accumulation); elementwise float work must agree to rounding; the
 * round's ops must agree exactly. */
/* The cases at the shape set now (a function: the counts depend on it). */
static size_t op_cases(op_case *out, size_t cap) {
    const op_case cases[] = {
    {"embedding_forward", 1e-12, 3, {{OUT, N * C}, {TOKENS, N}, {IN, V * C, -1, 1}},
     call_embedding_fwd, native_embedding_forward},
    {"embedding_backward", 1e-10, 3, {{INOUT, V * C, -1, 1}, {IN, N * C, -1, 1}, {TOKENS, N}},
     call_embedding_bwd, native_embedding_backward},
    {"rmsnorm_forward", 1e-10, 4,
     {{OUT, N * C}, {OUT, N}, {IN, N * C, -2, 2}, {IN, C, 0.5f, 1.5f}},
     call_rmsnorm_fwd, native_rmsnorm_forward},
    {"rmsnorm_backward", 1e-10, 6,
     {{INOUT, N * C, -1, 1}, {INOUT, C, -1, 1}, {IN, N * C, -1, 1}, {IN, N * C, -2, 2},
      {IN, C, 0.5f, 1.5f}, {IN, N, 0.5f, 2}},
     call_rmsnorm_bwd, native_rmsnorm_backward},
    {"matmul_forward", 1e-4, 3, {{OUT, N * F}, {IN, N * C, -1, 1}, {IN, F * C, -1, 1}},
     call_matmul_fwd, native_matmul_forward},
    {"matmul_backward", 1e-4, 5,
     {{INOUT, N * C, -1, 1}, {INOUT, F * C, -1, 1}, {IN, N * F, -1, 1}, {IN, N * C, -1, 1},
      {IN, F * C, -1, 1}},
     call_matmul_bwd, native_matmul_backward},
    {"rope_forward", 1e-10, 4,
     {{OUT, N * QD}, {IN, N * QD, -1, 1}, {IN, T * HD / 2, -1, 1}, {IN, T * HD / 2, -1, 1}},
     call_rope_fwd, native_rope_forward},
    {"rope_backward", 1e-10, 4,
     {{INOUT, N * QD, -1, 1}, {IN, N * QD, -1, 1}, {IN, T * HD / 2, -1, 1},
      {IN, T * HD / 2, -1, 1}},
     call_rope_bwd, native_rope_backward},
    {"attention_forward", 1e-4, 5,
     {{OUT, N * QD}, {OUT, SCORES}, {IN, N * QD, -1, 1}, {IN, N * KVD, -1, 1},
      {IN, N * KVD, -1, 1}},
     call_attention_fwd, native_attention_forward},
    {"attention_backward", 1e-4, 9,
     {{INOUT, N * QD, -1, 1}, {INOUT, N * KVD, -1, 1}, {INOUT, N * KVD, -1, 1},
      {SCRATCH, SCORES}, {IN, N * QD, -1, 1}, {CAUSAL, SCORES, 0, 0.25f}, {IN, N * QD, -1, 1},
      {IN, N * KVD, -1, 1}, {IN, N * KVD, -1, 1}},
     call_attention_bwd, native_attention_backward},
    /* Flash attention: rows of 8 and 160 positions, one key block and three
     * (the last partial). The backward's saved log-sum-exp is random but
     * above every score, so each recomputed probability stays below e. */
    {"flash_attention_forward", 1e-4, 5,
     {{OUT, N * QD}, {OUT, B * HEADS * T}, {IN, N * QD, -1, 1}, {IN, N * KVD, -1, 1},
      {IN, N * KVD, -1, 1}},
     call_flash_fwd, native_flash_attention_forward},
    {"flash_attention_backward", 1e-4, 10,
     {{INOUT, N * QD, -1, 1}, {INOUT, N * KVD, -1, 1}, {INOUT, N * KVD, -1, 1},
      {SCRATCH, B * HEADS * T}, {IN, N * QD, -1, 1}, {IN, N * QD, -1, 1},
      {IN, B * HEADS * T, 2, 4}, {IN, N * QD, -1, 1}, {IN, N * KVD, -1, 1},
      {IN, N * KVD, -1, 1}},
     call_flash_bwd, native_flash_attention_backward},
    {"swiglu_forward", 1e-10, 3, {{OUT, N * F}, {IN, N * F, -4, 4}, {IN, N * F, -1, 1}},
     call_swiglu_fwd, native_swiglu_forward},
    {"swiglu_backward", 1e-10, 5,
     {{INOUT, N * F, -1, 1}, {INOUT, N * F, -1, 1}, {IN, N * F, -1, 1}, {IN, N * F, -4, 4},
      {IN, N * F, -1, 1}},
     call_swiglu_bwd, native_swiglu_backward},
    {"add", 1e-12, 3, {{OUT, N * C}, {IN, N * C, -1, 1}, {IN, N * C, -1, 1}}, call_add,
     native_add},
    {"cross_entropy_forward", 1e-10, 3, {{OUT, N}, {IN, N * V, -4, 4}, {TOKENS, N}},
     call_ce_fwd, native_cross_entropy_forward},
    {"cross_entropy_backward", 1e-10, 3, {{OUT, N * V}, {IN, N * V, -4, 4}, {TOKENS, N}},
     call_ce_bwd, native_cross_entropy_backward},
    {"adamw", 1e-10, 4,
     {{INOUT, N * C, -1, 1}, {IN, N * C, -1, 1}, {INOUT, N * C, -0.1f, 0.1f},
      {INOUT, N * C, 0, 0.01f}},
     call_adamw, native_adamw},
    {"pseudo_gradient", 0, 4,
     {{OUT, N * C}, {IN, N * C, -1, 1}, {IN, N * C, -1, 1}, {INOUT, N * C, -0.1f, 0.1f}},
     call_pseudo_gradient, native_pseudo_gradient},
    {"weighted_add", 0, 2, {{INOUT, N * C, -0.01f, 0.01f}, {IN, N * C, -0.01f, 0.01f}},
     call_weighted_add, native_weighted_add},
    {"nesterov_step", 0, 3,
     {{INOUT, N * C, -1, 1}, {INOUT, N * C, -0.1f, 0.1f}, {IN, N * C, -0.01f, 0.01f}},
     call_nesterov_step, native_nesterov_step},
    };
    size_t n = sizeof cases / sizeof cases[0];
    CHECK(n <= cap);
    memcpy(out, cases, (n < cap ? n : cap) * sizeof cases[0]);
    return n;
}

static void fill(const arg_spec *s, void *host, gd_rng *rng) {
    if (s->kind == TOKENS) {
        int32_t *t = host;
        for (size_t i = 0; i < s->count; i++)
            t[i] = (int32_t)gd_rng_below(rng, V);
    } else if (s->kind == IN || s->kind == INOUT || s->kind == CAUSAL) {
        float *x = host;
        for (size_t i = 0; i < s->count; i++) {
            size_t row = i / T % T, col = i % T;
            x[i] = s->kind == CAUSAL && col > row
                       ? 0.0f
                       : s->lo + (s->hi - s->lo) * (float)gd_rng_uniform(rng);
        }
    }
}

static void run_case(const backend_under_test *b, const op_case *oc, uint64_t seed) {
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, NULL);
    gd_rng rng;
    gd_rng_init(&rng, seed, (const uint32_t[4]){0, 0, 0, 0});
    void *init[MAX_ARGS], *ref[MAX_ARGS], *dev[MAX_ARGS], *got[MAX_ARGS];
    guarded g[MAX_ARGS];
    for (size_t i = 0; i < oc->n_args; i++) {
        size_t bytes = oc->args[i].count * 4; /* float and int32 alike */
        init[i] = calloc(1, bytes);
        ref[i] = calloc(1, bytes);
        got[i] = calloc(1, bytes);
        CHECK(init[i] && ref[i] && got[i]);
        fill(&oc->args[i], init[i], &rng);
        memcpy(ref[i], init[i], bytes);
        dev[i] = guarded_upload(&b->be, &g[i], init[i], oc->args[i].count);
    }
    oc->call(&cpu, ref);
    oc->call(&b->be, dev);
    bool guards = true;
    for (size_t i = 0; i < oc->n_args; i++)
        guards = guarded_download(&b->be, &g[i], got[i]) && guards;
    if (!guards)
        printf("FAIL %-28s guard values around a buffer were overwritten\n", oc->name);
    CHECK(guards);
    for (size_t i = 0; i < oc->n_args; i++) {
        if (oc->args[i].kind == OUT || oc->args[i].kind == INOUT) {
            char what[64];
            snprintf(what, sizeof what, "%s[%zu]", oc->name, i);
            compare(b, what, got[i], ref[i], oc->args[i].count, oc->max_nmse,
                    oc->native(b->be.iface) ? "native" : "fallback");
        }
        /* Inputs stay untouched. */
        if (oc->args[i].kind == IN || oc->args[i].kind == TOKENS || oc->args[i].kind == CAUSAL)
            CHECK(memcmp(got[i], init[i], oc->args[i].count * 4) == 0);
    }
    for (size_t i = 0; i < oc->n_args; i++) {
        free(init[i]);
        free(ref[i]);
        free(got[i]);
    }
}

static void test_ops(const backend_under_test *b) {
    for (size_t k = 0; k < sizeof k_shapes / sizeof k_shapes[0]; k++) {
        const op_shape *sh = &k_shapes[k];
        B = sh->b, T = sh->t, HEADS = sh->heads, KV = sh->kv, HD = sh->hd, C = sh->c;
        F = sh->f, V = sh->v, N = B * T;
        printf("shape %s: B %zu, T %zu, heads %zu/%zu x %zu, C %zu, F %zu, V %zu\n", sh->name,
               B, T, HEADS, KV, HD, C, F, V);
        op_case cases[32];
        size_t n = op_cases(cases, 32);
        for (size_t i = 0; i < n; i++)
            run_case(b, &cases[i], 1000 + 100 * k + i);
    }
    /* Flash attention alone at every head dim a tensor-core kernel is built
     * for (16 runs in test_train_gpu, 128 in the shapes above), with a
     * partial last block of keys. */
    static const size_t head_dims[] = {32, 48, 64, 80, 96, 112};
    for (size_t k = 0; k < sizeof head_dims / sizeof head_dims[0]; k++) {
        B = 1, T = 40, HEADS = 2, KV = 1, HD = head_dims[k], C = 8, F = 8, V = 8, N = B * T;
        printf("flash attention: B %zu, T %zu, heads %zu/%zu x %zu\n", B, T, HEADS, KV, HD);
        op_case cases[32];
        size_t n = op_cases(cases, 32);
        for (size_t i = 0; i < n; i++)
            if (strncmp(cases[i].name, "flash_attention", 15) == 0)
                run_case(b, &cases[i], 2000 + 100 * k + i);
    }
    /* sum_squares returns a double: compared on its own. */
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, NULL);
    size_t n = 200003; /* several of the op's fixed chunks, and a ragged end */
    float *x = malloc(n * sizeof *x);
    CHECK(x != NULL);
    gd_rng rng;
    gd_rng_init(&rng, 77, (const uint32_t[4]){0, 0, 0, 0});
    for (size_t i = 0; i < n; i++)
        x[i] = (float)gd_rng_uniform(&rng) - 0.5f;
    guarded gx;
    const float *dx = guarded_upload(&b->be, &gx, x, n);
    double want = gd_backend_sum_squares(&cpu, x, n), have = gd_backend_sum_squares(&b->be, dx, n);
    CHECK(guarded_download(&b->be, &gx, NULL));
    double rel = fabs(have - want) / want;
    bool ok = rel <= 1e-6 && (!b->exact || have == want);
    printf("%-4s %-28s %-8s relative error %.3g\n", ok ? "ok" : "FAIL", "sum_squares",
           b->be.iface->sum_squares ? "native" : "fallback", rel);
    CHECK(ok);
    free(x);
}

/* --- the codec ops: bit for bit on every backend ------------------------------------------ */

/* Equal bits, or both NaN (a NaN's payload after arithmetic is the
 * hardware's: a NaN block's scale is only required to be NaN). */
static bool same_or_nan(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i])))
            return false;
    return true;
}

static void report_exact(const char *what, const char *path, bool ok) {
    printf("%-4s %-28s %-8s %s\n", ok ? "ok" : "FAIL", what, path,
           ok ? "same bits" : "bits differ from the CPU");
    CHECK(ok);
}

/* Values that reach every branch of the quantiser and of bf16 rounding: a
 * magnitude per block from 1e-42 (subnormal) through 2^-64 (the tiny path)
 * to FLT_MAX, all-zero blocks, halves that tie, and one block each holding
 * +Inf and a NaN. */
static void codec_inputs(float *x, size_t n, size_t block, gd_rng *rng) {
    static const float mags[] = {1.0f, 1e-3f, 3e-20f, 1e-30f, 1e-42f, 1e30f, 3.4e38f, 0.0f};
    for (size_t b = 0; b * block < n; b++) {
        float mag = mags[b % (sizeof mags / sizeof mags[0])];
        for (size_t i = b * block; i < n && i < (b + 1) * block; i++)
            x[i] = mag * (2.0f * (float)gd_rng_uniform(rng) - 1.0f);
        if (b % 11 == 5) /* exact halves against a max of 127 (int8) or 7 (int4) */
            for (size_t i = b * block; i < n && i < (b + 1) * block; i++)
                x[i] = (i == b * block) ? 127.0f : (float)((int)(i % 13) - 6) + 0.5f;
    }
    x[3 * block + 1] = INFINITY;
    x[9 * block + 2] = NAN;
    x[12 * block] = -3.4028235e38f;
}

static void test_quantize(const backend_under_test *b, const gd_backend *cpu, size_t block,
                          float limit, const char *name) {
    size_t n = 70000 + 37; /* more than one pool task and a short last block */
    size_t nb = (n + block - 1) / block, qwords = (n + 3) / 4;
    float *x = malloc(n * sizeof *x), *dec = malloc(n * sizeof *dec);
    float *scales = malloc(nb * sizeof *scales), *got_scales = malloc(nb * sizeof *got_scales);
    float *got_dec = malloc(n * sizeof *got_dec), *y = malloc(n * sizeof *y);
    float *got_y = malloc(n * sizeof *got_y);
    int8_t *q = calloc(qwords, 4), *got_q = calloc(qwords, 4);
    CHECK(x && dec && scales && got_scales && got_dec && y && got_y && q && got_q);
    gd_rng rng;
    gd_rng_init(&rng, 4242 + block, (const uint32_t[4]){0, 0, 0, 0});
    codec_inputs(x, n, block, &rng);
    gd_backend_quantize_blocks(cpu, q, scales, dec, x, n, block, limit);
    gd_backend_dequantize_blocks(cpu, y, q, scales, n, block);
    const char *path = b->be.iface->quantize_blocks ? "native" : "fallback";

    /* Separate outputs, then decoded in place over x. */
    for (int in_place = 0; in_place < 2; in_place++) {
        guarded gx, gq, gs, gd;
        float *dx = guarded_upload(&b->be, &gx, x, n);
        int8_t *dq = guarded_upload(&b->be, &gq, NULL, qwords);
        float *ds = guarded_upload(&b->be, &gs, NULL, nb);
        float *dd = in_place ? dx : guarded_upload(&b->be, &gd, NULL, n);
        gd_backend_quantize_blocks(&b->be, dq, ds, dd, dx, n, block, limit);
        bool guards = guarded_download(&b->be, &gx, in_place ? got_dec : NULL);
        guards = guarded_download(&b->be, &gq, got_q) && guards;
        guards = guarded_download(&b->be, &gs, got_scales) && guards;
        if (!in_place)
            guards = guarded_download(&b->be, &gd, got_dec) && guards;
        char what[64];
        snprintf(what, sizeof what, "quantize_blocks %s%s", name, in_place ? " in place" : "");
        report_exact(what, path,
                     guards && memcmp(got_q, q, n) == 0 && same_or_nan(got_scales, scales, nb) &&
                         same_or_nan(got_dec, dec, n));
    }
    guarded gy, gq, gs;
    float *dy = guarded_upload(&b->be, &gy, NULL, n);
    const int8_t *dq = guarded_upload(&b->be, &gq, q, qwords);
    const float *ds = guarded_upload(&b->be, &gs, scales, nb);
    gd_backend_dequantize_blocks(&b->be, dy, dq, ds, n, block);
    bool guards = guarded_download(&b->be, &gy, got_y);
    guards = guarded_download(&b->be, &gq, NULL) && guarded_download(&b->be, &gs, NULL) && guards;
    char what[64];
    snprintf(what, sizeof what, "dequantize_blocks %s", name);
    report_exact(what, b->be.iface->dequantize_blocks ? "native" : "fallback",
                 guards && same_or_nan(got_y, y, n));
    free(x), free(dec), free(scales), free(got_scales), free(got_dec), free(y), free(got_y);
    free(q), free(got_q);
}

static void test_bf16(const backend_under_test *b, const gd_backend *cpu) {
    size_t n = 70000 + 37, hwords = (n + 1) / 2;
    float *x = malloc(n * sizeof *x), *dec = malloc(n * sizeof *dec);
    float *got_dec = malloc(n * sizeof *got_dec), *y = malloc(n * sizeof *y);
    float *got_y = malloc(n * sizeof *got_y);
    uint16_t *h = calloc(hwords, 4), *got_h = calloc(hwords, 4);
    CHECK(x && dec && got_dec && y && got_y && h && got_h);
    gd_rng rng;
    gd_rng_init(&rng, 4343, (const uint32_t[4]){0, 0, 0, 0});
    codec_inputs(x, n, 64, &rng);
    for (size_t i = 0; i < n; i += 97) { /* exact ties: the dropped half is 0x8000 */
        uint32_t u;
        memcpy(&u, &x[i], 4);
        u = (u & 0xffff0000u) | 0x8000u;
        memcpy(&x[i], &u, 4);
    }
    x[5] = 3.4028235e38f; /* rounds past bf16's max: saturates */
    gd_backend_bf16_quantize(cpu, h, dec, x, n);
    gd_backend_bf16_dequantize(cpu, y, h, n);
    guarded gx, gh, gd, gy;
    float *dx = guarded_upload(&b->be, &gx, x, n);
    uint16_t *dh = guarded_upload(&b->be, &gh, NULL, hwords);
    float *dd = guarded_upload(&b->be, &gd, NULL, n);
    gd_backend_bf16_quantize(&b->be, dh, dd, dx, n);
    bool guards = guarded_download(&b->be, &gx, NULL);
    guards = guarded_download(&b->be, &gh, got_h) && guards;
    guards = guarded_download(&b->be, &gd, got_dec) && guards;
    report_exact("bf16_quantize", b->be.iface->bf16_quantize ? "native" : "fallback",
                 guards && memcmp(got_h, h, n * 2) == 0 && memcmp(got_dec, dec, n * 4) == 0);
    /* The rounding alone (no 16-bit codes: a bf16 run's stores), out of
     * place and in place. */
    dx = guarded_upload(&b->be, &gx, x, n);
    float *dd2 = guarded_upload(&b->be, &gd, NULL, n);
    gd_backend_bf16_round(&b->be, dd2, dx, n);
    guards = guarded_download(&b->be, &gx, NULL);
    guards = guarded_download(&b->be, &gd, got_dec) && guards;
    bool rounded = guards && memcmp(got_dec, dec, n * 4) == 0;
    dx = guarded_upload(&b->be, &gx, x, n);
    gd_backend_bf16_round(&b->be, dx, dx, n);
    guards = guarded_download(&b->be, &gx, got_dec);
    report_exact("bf16_round", b->be.iface->bf16_quantize ? "native" : "fallback",
                 rounded && guards && memcmp(got_dec, dec, n * 4) == 0);
    const uint16_t *dh2 = guarded_upload(&b->be, &gh, h, hwords);
    float *dy = guarded_upload(&b->be, &gy, NULL, n);
    gd_backend_bf16_dequantize(&b->be, dy, dh2, n);
    guards = guarded_download(&b->be, &gh, NULL);
    guards = guarded_download(&b->be, &gy, got_y) && guards;
    report_exact("bf16_dequantize", b->be.iface->bf16_dequantize ? "native" : "fallback",
                 guards && memcmp(got_y, y, n * 4) == 0);
    free(x), free(dec), free(got_dec), free(y), free(got_y), free(h), free(got_h);
}

/* AdamW with bf16 moments: on the CPU exactly AdamW on the decoded moments
 * then their codes (its definition); on the backend, AdamW's bound against
 * the CPU for the parameters and the decoded moments. */
static void test_adamw_bf16(const backend_under_test *b, const gd_backend *cpu) {
    size_t n = 50000 + 3, hwords = (n + 1) / 2;
    float *p = malloc(n * 4), *g = malloc(n * 4), *m = malloc(n * 4), *v = malloc(n * 4);
    float *p_want = malloc(n * 4), *p_got = malloc(n * 4), *dm = malloc(n * 4);
    float *dv = malloc(n * 4), *gm = malloc(n * 4), *gv = malloc(n * 4);
    uint16_t *hm = calloc(hwords, 4), *hv = calloc(hwords, 4);
    uint16_t *got_m = calloc(hwords, 4), *got_v = calloc(hwords, 4);
    CHECK(p && g && m && v && p_want && p_got && dm && dv && gm && gv && hm && hv && got_m &&
          got_v);
    gd_rng rng;
    gd_rng_init(&rng, 5151, (const uint32_t[4]){0, 0, 0, 0});
    for (size_t i = 0; i < n; i++) {
        p[i] = (float)(2 * gd_rng_uniform(&rng) - 1);
        g[i] = (float)(2 * gd_rng_uniform(&rng) - 1);
        m[i] = (float)(0.2 * gd_rng_uniform(&rng) - 0.1);
        v[i] = (float)(0.01 * gd_rng_uniform(&rng));
    }
    gd_backend_bf16_quantize(cpu, hm, m, m, n); /* m, v: the codes' values */
    gd_backend_bf16_quantize(cpu, hv, v, v, n);
    memcpy(p_want, p, n * 4);
    gd_backend_adamw(cpu, p_want, g, m, v, n, 1e-3, 0.9, 0.95, 1e-8, 0.1, 0.19, 0.0975, 0.5);
    uint16_t *want_m = calloc(hwords, 4), *want_v = calloc(hwords, 4);
    CHECK(want_m && want_v);
    gd_backend_bf16_quantize(cpu, want_m, NULL, m, n);
    gd_backend_bf16_quantize(cpu, want_v, NULL, v, n);
    memcpy(p_got, p, n * 4);
    memcpy(got_m, hm, n * 2);
    memcpy(got_v, hv, n * 2);
    gd_backend_adamw_bf16(cpu, p_got, g, got_m, got_v, n, 1e-3, 0.9, 0.95, 1e-8, 0.1, 0.19,
                          0.0975, 0.5);
    bool defined = memcmp(p_got, p_want, n * 4) == 0 && memcmp(got_m, want_m, n * 2) == 0 &&
                   memcmp(got_v, want_v, n * 2) == 0;
    printf("%-4s %-28s %-8s %s\n", defined ? "ok" : "FAIL", "adamw_bf16 (cpu)", "",
           defined ? "adamw, then the moments' codes" : "not adamw then rounding");
    CHECK(defined);
    guarded gp, gg, gmm, gvv;
    float *d_p = guarded_upload(&b->be, &gp, p, n);
    float *d_g = guarded_upload(&b->be, &gg, g, n);
    uint16_t *d_m = guarded_upload(&b->be, &gmm, hm, hwords);
    uint16_t *d_v = guarded_upload(&b->be, &gvv, hv, hwords);
    gd_backend_adamw_bf16(&b->be, d_p, d_g, d_m, d_v, n, 1e-3, 0.9, 0.95, 1e-8, 0.1, 0.19,
                          0.0975, 0.5);
    bool guards = guarded_download(&b->be, &gp, p_got);
    guards = guarded_download(&b->be, &gg, NULL) && guards;
    guards = guarded_download(&b->be, &gmm, got_m) && guards;
    guards = guarded_download(&b->be, &gvv, got_v) && guards;
    CHECK(guards);
    const char *path = b->be.iface->adamw_bf16 ? "native" : "fallback";
    gd_backend_bf16_dequantize(cpu, gm, got_m, n);
    gd_backend_bf16_dequantize(cpu, gv, got_v, n);
    gd_backend_bf16_dequantize(cpu, dm, want_m, n);
    gd_backend_bf16_dequantize(cpu, dv, want_v, n);
    compare(b, "adamw_bf16[param]", p_got, p_want, n, 1e-10, path);
    compare(b, "adamw_bf16[m]", gm, dm, n, 1e-4, path);
    compare(b, "adamw_bf16[v]", gv, dv, n, 1e-4, path);
    free(p), free(g), free(m), free(v), free(p_want), free(p_got), free(dm), free(dv);
    free(gm), free(gv), free(hm), free(hv), free(got_m), free(got_v), free(want_m);
    free(want_v);
}

static void test_codec_ops(const backend_under_test *b) {
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, NULL);
    test_quantize(b, &cpu, GD_QUANT_BLOCK_INT8, 127.0f, "int8");
    test_quantize(b, &cpu, GD_QUANT_BLOCK_INT4, 7.0f, "int4");
    test_bf16(b, &cpu);
    test_adamw_bf16(b, &cpu);
}

/* --- a training step, a round and the aggregate ----------------------------------------- */

typedef struct pair {
    gd_model_config model;
    gd_diloco_config c;
    gd_data *data;
    gd_trainer *cpu, *dev;
    size_t n;
} pair;

static void pair_open(pair *p, const backend_under_test *b) {
    memset(p, 0, sizeof *p);
    gd_diloco_config_default(&p->c);
    p->c.workers = 2;
    p->c.inner_steps = 4;
    p->c.segment_steps = 2;
    p->c.chunk_elems = 5000;
    p->c.inner.batch = 4;
    p->c.inner.micro_batch = 2;
    p->c.inner.seq_len = 16;
    p->c.inner.optim.lr = 3e-3;
    p->c.inner.optim.schedule_steps = 40;
    CHECK_OK(gd_model_config_preset(&p->model, "tiny"));
    p->model.vocab_size = 32;
    CHECK_OK(gd_diloco_config_validate(&p->c, &p->model));
    CHECK_OK(gd_data_open(&p->data, "synthetic:markov:5"));
    CHECK_OK(gd_trainer_new(&p->cpu, &p->model, &p->c.inner, 1));
    CHECK_OK(gd_trainer_new_on(&p->dev, &p->model, &p->c.inner, 1, &b->be));
    p->n = gd_trainer_layout(p->cpu)->total;
}

static void pair_close(pair *p) {
    gd_trainer_free(p->cpu);
    gd_trainer_free(p->dev);
    gd_data_close(p->data);
}

static float *state_of(const gd_trainer *t, size_t n) {
    float *s = malloc(3 * n * sizeof(float));
    CHECK(s != NULL);
    gd_trainer_get_state(t, s, s + n, s + 2 * n, NULL);
    return s;
}

static void test_training_step(const backend_under_test *b) {
    pair p;
    pair_open(&p, b);
    float *a = state_of(p.cpu, p.n), *d = state_of(p.dev, p.n);
    compare(b, "initial weights", d, a, p.n, 0, "");
    free(a);
    free(d);
    gd_step_stats sa, sd;
    for (int k = 0; k < 2; k++) {
        CHECK_OK(gd_trainer_step(p.cpu, p.data, &sa));
        CHECK_OK(gd_trainer_step(p.dev, p.data, &sd));
    }
    double loss_err = fabs(sa.loss - sd.loss) / sa.loss;
    printf("%-4s %-28s          loss %.6f vs %.6f\n",
           loss_err < 1e-3 && (!b->exact || sa.loss == sd.loss) ? "ok" : "FAIL",
           "training step loss", sd.loss, sa.loss);
    CHECK(loss_err < 1e-3 && (!b->exact || sa.loss == sd.loss));
    a = state_of(p.cpu, p.n);
    d = state_of(p.dev, p.n);
    compare(b, "training step state", d, a, 3 * p.n, 1e-4, "");
    free(a);
    free(d);
    /* A checkpoint written from the backend reads back as its state. */
    char path[700];
    snprintf(path, sizeof path, "%s/backend.safetensors", gd_test_tmpdir());
    CHECK_OK(gd_trainer_save(p.dev, path, "synthetic:markov:5"));
    gd_trainer *back = NULL;
    CHECK_OK(gd_trainer_resume_on(&back, path, 1, &b->be));
    if (back != NULL) {
        float *r = state_of(back, p.n);
        d = state_of(p.dev, p.n);
        CHECK(memcmp(r, d, 3 * p.n * sizeof(float)) == 0);
        free(r);
        free(d);
        double eval_a = 0, eval_b = 0;
        uint64_t ta = 0, tb = 0;
        CHECK_OK(gd_trainer_evaluate(back, p.data, 2, 4, 16, 2, &eval_a, &ta, NULL, NULL));
        CHECK_OK(gd_trainer_evaluate(p.dev, p.data, 2, 4, 16, 2, &eval_b, &tb, NULL, NULL));
        CHECK(ta == tb && ta > 0 && eval_a == eval_b);
    }
    gd_trainer_free(back);
    pair_close(&p);
}

/* The same run twice on the backend gives the same bits: what lets a
 * validator of the same hardware class replay a worker's segment. */
static void test_run_to_run(const backend_under_test *b) {
    pair p;
    pair_open(&p, b);
    gd_trainer *again = NULL;
    CHECK_OK(gd_trainer_new_on(&again, &p.model, &p.c.inner, 1, &b->be));
    for (int k = 0; k < 3 && again != NULL; k++) {
        CHECK_OK(gd_trainer_step(p.dev, p.data, NULL));
        CHECK_OK(gd_trainer_step(again, p.data, NULL));
    }
    if (again != NULL) {
        float *x = state_of(p.dev, p.n), *y = state_of(again, p.n);
        bool same = memcmp(x, y, 3 * p.n * sizeof(float)) == 0;
        printf("%-4s %-28s          %s\n", same ? "ok" : "FAIL", "run to run (3 steps)",
               same ? "same bits" : "bits differ between two runs");
        CHECK(same);
        free(x);
        free(y);
    }
    gd_trainer_free(again);
    pair_close(&p);
}

static void test_round_and_aggregate(const backend_under_test *b) {
    pair p;
    pair_open(&p, b);
    float *g0 = malloc(p.n * sizeof(float));
    CHECK(g0 != NULL);
    gd_trainer_get_state(p.cpu, g0, NULL, NULL, NULL);
    gd_worker_state wa, wd;
    CHECK_OK(gd_worker_state_init(&wa, 0, p.n));
    CHECK_OK(gd_worker_state_init(&wd, 0, p.n));
    snprintf(wa.address, sizeof wa.address, "worker-00000");
    snprintf(wd.address, sizeof wd.address, "worker-00000");
    gd_worker_round ra, rd;
    CHECK_OK(gd_diloco_worker_round(p.cpu, &p.c, p.data, &ra, 0, g0, p.n, &wa, NULL));
    CHECK_OK(gd_diloco_worker_round(p.dev, &p.c, p.data, &rd, 0, g0, p.n, &wd, NULL));
    /* Four inner steps of bf16 matmuls move Δ further from the CPU's than
     * one step moves the state: AdamW's first updates are about lr * sign(g),
     * so a gradient near zero may flip. The residual is the coding error,
     * which jumps with any change of Δ: off the exact backends what must
     * hold is the device's own error feedback, residual + decoded = Δ. */
    /* Δ = start - θ_H, each backend's. */
    float *da = malloc(p.n * sizeof(float)), *dd = malloc(p.n * sizeof(float));
    CHECK(da != NULL && dd != NULL);
    for (size_t i = 0; i < p.n; i++) {
        da[i] = g0[i] - wa.params[i];
        dd[i] = g0[i] - wd.params[i];
    }
    compare(b, "round pseudo-gradient", dd, da, p.n, b->exact ? 1e-4 : 1e-2, "");
    if (b->exact) {
        compare(b, "round residual", wd.residual, wa.residual, p.n, 0, "");
    } else {
        float *fed = malloc(p.n * sizeof(float));
        CHECK(fed != NULL);
        CHECK_OK(gd_payload_decode(&rd.payload, fed, NULL));
        for (size_t i = 0; i < p.n; i++)
            fed[i] += wd.residual[i];
        compare(b, "round error feedback", fed, dd, p.n, 1e-12, "");
        free(fed);
    }
    if (b->exact) {
        CHECK(memcmp(ra.transcript_root, rd.transcript_root, 32) == 0);
        CHECK(memcmp(ra.payload_root, rd.payload_root, 32) == 0);
    }
    /* The aggregate of the CPU's contributions, on each backend: the same
     * bits everywhere. */
    float *other = malloc(p.n * sizeof(float));
    CHECK(other != NULL);
    for (size_t i = 0; i < p.n; i++)
        other[i] = 0.5f * da[i] - 1e-4f;
    uint8_t layout[32];
    memcpy(layout, gd_trainer_layout(p.cpu)->digest, 32);
    gd_contribution contribs[2] = {
        {.address = "worker-00001", .n = p.n, .layout_digest = layout, .delta = other,
         .tokens = 700},
        {.address = "worker-00000", .n = p.n, .layout_digest = layout, .delta = da,
         .tokens = ra.tokens},
    };
    gd_global_state ga, gb;
    CHECK_OK(gd_global_state_init(&ga, p.n));
    CHECK_OK(gd_global_state_init(&gb, p.n));
    memcpy(ga.params, g0, p.n * sizeof(float));
    memcpy(gb.params, g0, p.n * sizeof(float));
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, NULL);
    for (int round = 0; round < 2; round++) {
        CHECK_OK(gd_diloco_aggregate(&cpu, &p.c, layout, contribs, 2, &ga, NULL));
        CHECK_OK(gd_diloco_aggregate(&b->be, &p.c, layout, contribs, 2, &gb, NULL));
    }
    bool same = memcmp(ga.params, gb.params, p.n * sizeof(float)) == 0 &&
                memcmp(ga.momentum, gb.momentum, p.n * sizeof(float)) == 0 &&
                ga.round == gb.round;
    printf("%-4s %-28s %-8s %s\n", same ? "ok" : "FAIL", "aggregate (two rounds)",
           b->be.iface->weighted_add ? "native" : "fallback",
           same ? "same bits" : "bits differ from the CPU");
    CHECK(same);
    gd_global_state_free(&ga);
    gd_global_state_free(&gb);
    gd_worker_round_free(&ra);
    gd_worker_round_free(&rd);
    gd_worker_state_free(&wa);
    gd_worker_state_free(&wd);
    free(other);
    free(da);
    free(dd);
    free(g0);
    pair_close(&p);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_backend_ops BACKEND   (copy, cuda)\n");
        return 2;
    }
    backend_under_test b;
    int opened = backend_open(&b, argv[1]);
    if (opened != 0)
        return opened;
    printf("backend %s\n", b.name);
    test_ops(&b);
    test_codec_ops(&b);
    test_training_step(&b);
    test_run_to_run(&b);
    test_round_and_aggregate(&b);
    if (b.copy != NULL)
        printf("copy backend: %zu bytes moved\n", gd_copy_backend_bytes_moved(b.copy));
    backend_close(&b);
    return gd_test_failures ? 1 : 0;
}
