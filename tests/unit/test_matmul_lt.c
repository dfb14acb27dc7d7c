/* The CUDA backend's GEMMs through cuBLASLt with the algorithm pinned per
 * shape (kernels/cuda/matmul_lt.h); label gpu, a CTest skip (exit 77) where
 * no GPU is usable, and run on the CUDA emulator everywhere:
 *  - every form the backend calls (transposes, leading dimensions wider than
 *    the rows, beta 0 and 1, strided batches) against a host reference of
 *    bf16 products summed in double, within a float sum's error;
 *  - bf16 operands, as kept in 16 bits, against the same reference;
 *  - the same GEMM twice gives the same bits, and the algorithm is chosen
 *    once per shape: a repeat adds no plan, another shape or another
 *    alignment of an operand adds one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/rng.h"
#include "kernels/backend_registry.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/matmul_lt.h"
#include "tests/support/testkit.h"

#define WORKSPACE ((size_t)4 << 20)

static cudaStream_t g_stream;

static float bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void *device_copy(const void *host, size_t bytes) {
    void *d = NULL;
    GD_CUDA_CHECK(cudaMalloc(&d, bytes + 64));
    GD_CUDA_CHECK(cudaMemcpyAsync(d, host, bytes, cudaMemcpyHostToDevice, g_stream));
    GD_CUDA_CHECK(cudaStreamSynchronize(g_stream));
    return d;
}

static void host_copy(void *host, const void *dev, size_t bytes) {
    GD_CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, g_stream));
    GD_CUDA_CHECK(cudaStreamSynchronize(g_stream));
}

/* Element (r, c) of a column-major matrix, op applied. */
static double at(const float *x, int ld, bool trans, int r, int c) {
    return trans ? x[(size_t)r * ld + c] : x[(size_t)c * ld + r];
}

/* The columns' span of a column-major (rows x cols) matrix. */
static size_t span(int rows, int cols, int ld) {
    return (size_t)ld * (size_t)(cols - 1) + (size_t)rows;
}

typedef struct gemm_case {
    const char *name;
    gd_lt_gemm g;
    float beta;
} gemm_case;

/* Runs c on the GPU from random operands (bf16 values, so fp32 and bf16
 * storage hold the same numbers) and compares with the reference; returns
 * the result's bits (malloc'd) for run-to-run checks. */
static float *run_case(gd_lt *lt, const gemm_case *c, gd_rng *rng, uint64_t seed,
                       size_t offset_a) {
    const gd_lt_gemm *g = &c->g;
    bool ta = g->ta != CUBLAS_OP_N, tb = g->tb != CUBLAS_OP_N;
    int ar = ta ? g->k : g->m, ac = ta ? g->m : g->k, br = tb ? g->n : g->k, bc = tb ? g->k : g->n;
    size_t na = (size_t)(g->batch - 1) * (size_t)g->stride_a + span(ar, ac, g->lda);
    size_t nb = (size_t)(g->batch - 1) * (size_t)g->stride_b + span(br, bc, g->ldb);
    size_t nc = (size_t)(g->batch - 1) * (size_t)g->stride_c + span(g->m, g->n, g->ldc);
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
    float *c0 = malloc(nc * sizeof *c0), *out = malloc(nc * sizeof *out);
    CHECK(a && b && c0 && out);
    gd_rng_init(rng, seed, (const uint32_t[4]){0});
    for (size_t i = 0; i < na; i++)
        a[i] = bf16_round((float)gd_rng_normal12(rng));
    for (size_t i = 0; i < nb; i++)
        b[i] = bf16_round((float)gd_rng_normal12(rng));
    for (size_t i = 0; i < nc; i++)
        c0[i] = (float)gd_rng_normal12(rng);
    const void *da, *db;
    void *a_dev, *b_dev;
    if (g->ab_type == CUDA_R_16BF) {
        uint16_t *a16 = malloc(na * 2), *b16 = malloc(nb * 2);
        CHECK(a16 && b16);
        for (size_t i = 0; i < na; i++) {
            uint32_t u;
            memcpy(&u, &a[i], 4);
            a16[i] = (uint16_t)(u >> 16);
        }
        for (size_t i = 0; i < nb; i++) {
            uint32_t u;
            memcpy(&u, &b[i], 4);
            b16[i] = (uint16_t)(u >> 16);
        }
        a_dev = device_copy(a16, na * 2);
        b_dev = device_copy(b16, nb * 2);
        free(a16);
        free(b16);
        da = a_dev;
        db = b_dev;
    } else {
        /* offset_a floats in: another alignment of the same operand */
        float *shifted = calloc(na + offset_a, sizeof *shifted);
        CHECK(shifted != NULL);
        memcpy(shifted + offset_a, a, na * sizeof *a);
        a_dev = device_copy(shifted, (na + offset_a) * sizeof *a);
        free(shifted);
        da = (const float *)a_dev + offset_a;
        b_dev = device_copy(b, nb * sizeof *b);
        db = b_dev;
    }
    float *dc = device_copy(c0, nc * sizeof *c0);
    gd_lt_run(lt, g_stream, g, 1.0f, da, db, c->beta, dc);
    host_copy(out, dc, nc * sizeof *out);
    /* bf16 products are exact in float; what is left is the float sum's
     * rounding: at most (k + 1) 2^-24 of the sum of the terms' magnitudes
     * in any order, a bound a wrong element (transpose, stride) far exceeds */
    double worst = 0; /* the largest error as a fraction of its bound */
    for (int s = 0; s < g->batch; s++) {
        const float *as = a + (size_t)s * g->stride_a, *bs = b + (size_t)s * g->stride_b;
        for (int j = 0; j < g->n; j++)
            for (int i = 0; i < g->m; i++) {
                double ref = 0, mag = 0;
                for (int l = 0; l < g->k; l++) {
                    double t = at(as, g->lda, ta, i, l) * at(bs, g->ldb, tb, l, j);
                    ref += t;
                    mag += fabs(t);
                }
                size_t ci = (size_t)s * g->stride_c + (size_t)j * g->ldc + (size_t)i;
                ref += c->beta * c0[ci];
                mag += fabs(c->beta * c0[ci]);
                double bound = (g->k + 2) * ldexp(mag, -24) + 1e-30;
                worst = fmax(worst, fabs(out[ci] - ref) / bound);
            }
    }
    /* Rows of C past the m rows a column holds are left as they were. */
    bool untouched = true;
    for (int s = 0; s < g->batch; s++)
        for (int j = 0; j < g->n; j++)
            for (int i = g->m; i < g->ldc; i++) {
                size_t ci = (size_t)s * g->stride_c + (size_t)j * g->ldc + (size_t)i;
                if (ci < nc && memcmp(&out[ci], &c0[ci], 4) != 0)
                    untouched = false;
            }
    bool ok = worst <= 1.0 && untouched;
    printf("%-4s %-34s error at most %.3g of the float sum's bound%s\n", ok ? "ok" : "FAIL",
           c->name, worst, untouched ? "" : ", padding written");
    CHECK(ok);
    GD_CUDA_CHECK(cudaFree(a_dev));
    GD_CUDA_CHECK(cudaFree(b_dev));
    GD_CUDA_CHECK(cudaFree(dc));
    free(a);
    free(b);
    free(c0);
    return out;
}

int main(void) {
    char why[256];
    if (!gd_backend_usable("cuda", why, sizeof why)) {
        printf("skip: cuda: %s\n", why);
        return 77;
    }
    const gd_cublaslt_api *api = gd_cublaslt_load(why, sizeof why);
    if (api == NULL) {
        printf("skip: cuBLASLt: %s\n", why);
        return 77;
    }
    GD_CUDA_CHECK(cudaSetDevice(0));
    GD_CUDA_CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    void *workspace = NULL;
    GD_CUDA_CHECK(cudaMalloc(&workspace, WORKSPACE));
    gd_lt *lt = NULL;
    CHECK_OK(gd_lt_open(&lt, api, workspace, WORKSPACE));
    gd_rng rng;

    /* The backend's forms: matmul forward (T, N), its input gradient (N, N,
     * beta 1), its weight gradient (N, T, beta 1), and attention's strided
     * batches over sequences with rows wider than a head. */
    const gemm_case cases[] = {
        {"forward (T, N), C wider than m",
         {CUBLAS_OP_T, CUBLAS_OP_N, 37, 19, 53, 53, 53, 40, 1, CUDA_R_32F}, 0},
        {"input gradient (N, N), beta 1",
         {CUBLAS_OP_N, CUBLAS_OP_N, 53, 19, 37, 53, 37, 53, 1, CUDA_R_32F}, 1},
        {"weight gradient (N, T), beta 1",
         {CUBLAS_OP_N, CUBLAS_OP_T, 53, 37, 19, 53, 37, 53, 1, CUDA_R_32F}, 1},
        {"wide rows, batch of 3 (T, N)",
         {CUBLAS_OP_T, CUBLAS_OP_N, 24, 24, 8, 32, 32, 24, 3, CUDA_R_32F, 24 * 32, 24 * 32, 24 * 24},
         0},
        {"bf16 operands (T, N)", {CUBLAS_OP_T, CUBLAS_OP_N, 37, 19, 53, 53, 53, 37, 1, CUDA_R_16BF},
         0},
    };
    size_t n_cases = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n_cases; i++) {
        size_t before = gd_lt_plans(lt);
        free(run_case(lt, &cases[i], &rng, 100 + i, 0));
        CHECK(gd_lt_plans(lt) == before + 1);
    }

    /* Run to run, and pinned: the same shape again adds no plan and gives
     * the same bits. */
    const gemm_case *batched = &cases[3];
    size_t plans = gd_lt_plans(lt);
    float *first = run_case(lt, batched, &rng, 7, 0);
    float *again = run_case(lt, batched, &rng, 7, 0);
    size_t nc = 2 * (size_t)batched->g.stride_c + span(24, 24, 24);
    bool same = memcmp(first, again, nc * sizeof(float)) == 0;
    printf("%-4s the same GEMM twice: %s, plans %zu -> %zu\n",
           same && gd_lt_plans(lt) == plans ? "ok" : "FAIL", same ? "same bits" : "bits differ",
           plans, gd_lt_plans(lt));
    CHECK(same);
    CHECK(gd_lt_plans(lt) == plans);
    free(first);
    free(again);

    /* A less aligned A (one float in; its rows and strides are 16-byte
     * multiples) is another plan: the algorithm chosen for 16-byte operands
     * may not run on 4-byte ones. */
    float *shifted = run_case(lt, batched, &rng, 7, 1);
    printf("%-4s an operand 4 bytes off its alignment: plans %zu -> %zu\n",
           gd_lt_plans(lt) == plans + 1 ? "ok" : "FAIL", plans, gd_lt_plans(lt));
    CHECK(gd_lt_plans(lt) == plans + 1);
    free(shifted);

    gd_lt_close(lt);
    GD_CUDA_CHECK(cudaFree(workspace));
    GD_CUDA_CHECK(cudaStreamDestroy(g_stream));
    return gd_test_failures ? 1 : 0;
}
