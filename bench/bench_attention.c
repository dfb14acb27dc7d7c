/* Flash attention's throughput on one backend, forward and backward, at a
 * transformer's head shape (default: the 32B shape's, 40 query heads and 8
 * key/value heads of 128 at T = 4,096), and whether every run gives the
 * first run's bits. The FLOPs are the useful ones of a causal mask, as
 * FlashAttention's papers count them (forward 2 B H T^2 hd, backward 2.5
 * times that); the kernels do more (the CUDA ones recompute the scores),
 * so the rate is a model-FLOP rate, comparable across implementations.
 * Usage: gd-bench-attention [--backend cpu|cuda] [--batch B] [--seq T] [--heads H]
 *          [--kv-heads KV] [--head-dim D] [--repeat R] [--threads N] [--json]
 * Exit 1 if a run's bits differ from the first's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/args.h"
#include "bench/timer.h"
#include "common/pool.h"
#include "common/rng.h"
#include "kernels/backend_registry.h"
#include "kernels/cpu/ops.h"

typedef struct bench_opts {
    const char *backend;
    uint32_t batch, seq, heads, kv_heads, head_dim, repeat, threads;
    bool json;
} bench_opts;

static int usage(const char *why) {
    fprintf(stderr,
            "error: %s\nusage: gd-bench-attention [--backend cpu|cuda] [--batch B] [--seq T] "
            "[--heads H] [--kv-heads KV] [--head-dim D] [--repeat R] [--threads N] [--json]\n",
            why);
    return 2;
}

/* -1 when the options are good, else the exit code. */
static int parse(int argc, char **argv, bench_opts *o) {
    *o = (bench_opts){.backend = "cpu", .batch = 1, .seq = 4096, .heads = 40, .kv_heads = 8,
                      .head_dim = 128, .repeat = 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (v == NULL)
            return usage("every option but --json takes a value");
        i++;
        if (strcmp(a, "--backend") == 0) {
            o->backend = v;
            continue;
        }
        uint32_t x = 0;
        if (!gd_bench_count(&x, v))
            return usage("numbers must be 1..100000");
        if (strcmp(a, "--batch") == 0)
            o->batch = x;
        else if (strcmp(a, "--seq") == 0)
            o->seq = x;
        else if (strcmp(a, "--heads") == 0)
            o->heads = x;
        else if (strcmp(a, "--kv-heads") == 0)
            o->kv_heads = x;
        else if (strcmp(a, "--head-dim") == 0)
            o->head_dim = x;
        else if (strcmp(a, "--repeat") == 0)
            o->repeat = x;
        else if (strcmp(a, "--threads") == 0)
            o->threads = x;
        else
            return usage("unknown option");
    }
    if (o->heads % o->kv_heads != 0)
        return usage("--heads must be a multiple of --kv-heads");
    if (o->head_dim > GD_CPU_FLASH_HEAD_MAX)
        return usage("--head-dim is over flash attention's 512");
    /* Each array at most 2^31 floats (8 GiB): a bench's, not a model's, bound. */
    if ((uint64_t)o->batch * o->seq * o->heads * o->head_dim > ((uint64_t)1 << 31))
        return usage("batch x seq x heads x head-dim is over 2^31 values");
    if (o->threads == 0)
        o->threads = gd_bench_cores();
    return -1;
}

/* One array on the backend and its host copy of each run's result. */
typedef struct bench_array {
    const char *name;
    size_t count;
    float *dev, *first, *now;
} bench_array;

enum { A_Q, A_K, A_V, A_DOUT, A_OUT, A_LSE, A_DQ, A_DK, A_DV, A_SCRATCH, A_COUNT };
enum { FIRST_OUTPUT = A_OUT, LAST_OUTPUT = A_DV };

typedef struct bench_run {
    double forward_s, backward_s;
} bench_run;

static void run_once(const gd_backend *be, const bench_opts *o, bench_array *a, bench_run *r) {
    for (int i = A_DQ; i <= A_DV; i++) /* the backward adds into its gradients */
        gd_backend_zero(be, a[i].dev, a[i].count * sizeof(float));
    gd_backend_synchronize(be);
    double t0 = gd_bench_now();
    gd_backend_flash_attention_forward(be, a[A_OUT].dev, a[A_LSE].dev, a[A_Q].dev, a[A_K].dev,
                                       a[A_V].dev, o->batch, o->seq, o->heads, o->kv_heads,
                                       o->head_dim);
    gd_backend_synchronize(be);
    double t1 = gd_bench_now();
    gd_backend_flash_attention_backward(be, a[A_DQ].dev, a[A_DK].dev, a[A_DV].dev,
                                        a[A_SCRATCH].dev, a[A_DOUT].dev, a[A_OUT].dev,
                                        a[A_LSE].dev, a[A_Q].dev, a[A_K].dev, a[A_V].dev,
                                        o->batch, o->seq, o->heads, o->kv_heads, o->head_dim);
    gd_backend_synchronize(be);
    r->forward_s = t1 - t0;
    r->backward_s = gd_bench_now() - t1;
}

static int bench(const bench_opts *o, const gd_backend *be) {
    size_t n = (size_t)o->batch * o->seq, qd = (size_t)o->heads * o->head_dim,
           kvd = (size_t)o->kv_heads * o->head_dim, rows = (size_t)o->batch * o->heads * o->seq;
    bench_array a[A_COUNT] = {
        [A_Q] = {"q", n * qd},         [A_K] = {"k", n * kvd},
        [A_V] = {"v", n * kvd},        [A_DOUT] = {"dout", n * qd},
        [A_OUT] = {"out", n * qd},     [A_LSE] = {"lse", rows},
        [A_DQ] = {"dq", n * qd},       [A_DK] = {"dk", n * kvd},
        [A_DV] = {"dv", n * kvd},      [A_SCRATCH] = {"scratch", rows},
    };
    int rc = 0;
    bool ok = true;
    for (int i = 0; i < A_COUNT && ok; i++) {
        a[i].dev = gd_backend_alloc_f32(be, a[i].count);
        a[i].first = malloc(a[i].count * sizeof(float));
        a[i].now = malloc(a[i].count * sizeof(float));
        ok = a[i].dev != NULL && a[i].first != NULL && a[i].now != NULL;
    }
    if (!ok) {
        fprintf(stderr, "error: out of memory for the arrays\n");
        rc = 2;
        goto done;
    }
    gd_rng rng;
    gd_rng_init(&rng, 7, (const uint32_t[4]){0x617474, 0, 0, 0});
    for (int i = A_Q; i <= A_DOUT; i++) {
        for (size_t j = 0; j < a[i].count; j++)
            a[i].first[j] = (float)(2 * gd_rng_uniform(&rng) - 1);
        gd_backend_upload(be, a[i].dev, a[i].first, a[i].count * sizeof(float));
    }
    bench_run best = {0}, r;
    bool same = true;
    for (uint32_t k = 0; k <= o->repeat; k++) { /* run 0 warms up and gives the bits */
        run_once(be, o, a, &r);
        for (int i = FIRST_OUTPUT; i <= LAST_OUTPUT; i++) {
            gd_backend_download(be, k == 0 ? a[i].first : a[i].now, a[i].dev,
                                a[i].count * sizeof(float));
            if (k > 0 && memcmp(a[i].first, a[i].now, a[i].count * sizeof(float)) != 0) {
                fprintf(stderr, "run %u: %s differs from the first run's bits\n", k, a[i].name);
                same = false;
            }
        }
        if (k == 1 || (k > 1 && r.forward_s < best.forward_s))
            best.forward_s = r.forward_s;
        if (k == 1 || (k > 1 && r.backward_s < best.backward_s))
            best.backward_s = r.backward_s;
    }
    double fwd_flops = 2.0 * o->batch * o->heads * (double)o->seq * o->seq * o->head_dim;
    double fwd_tflops = fwd_flops / best.forward_s / 1e12,
           bwd_tflops = 2.5 * fwd_flops / best.backward_s / 1e12;
    if (o->json)
        printf("{\"backend\":\"%s\",\"batch\":%u,\"seq\":%u,\"heads\":%u,\"kv_heads\":%u,"
               "\"head_dim\":%u,\"repeat\":%u,\"forward_ms\":%.3f,\"backward_ms\":%.3f,"
               "\"forward_tflops\":%.4f,\"backward_tflops\":%.4f,\"same_bits\":%s}\n",
               be->iface->name, o->batch, o->seq, o->heads, o->kv_heads, o->head_dim,
               o->repeat, 1e3 * best.forward_s, 1e3 * best.backward_s, fwd_tflops, bwd_tflops,
               same ? "true" : "false");
    else
        printf("flash attention on %s: B %u, T %u, heads %u/%u x %u; best of %u runs\n"
               "  forward  %10.3f ms  %8.3f TFLOP/s (useful FLOPs of a causal mask)\n"
               "  backward %10.3f ms  %8.3f TFLOP/s\n"
               "  every run gives the first run's bits: %s\n",
               be->iface->name, o->batch, o->seq, o->heads, o->kv_heads, o->head_dim, o->repeat,
               1e3 * best.forward_s, fwd_tflops, 1e3 * best.backward_s, bwd_tflops,
               same ? "yes" : "NO");
    rc = same ? 0 : 1;
done:
    for (int i = 0; i < A_COUNT; i++) {
        gd_backend_free(be, a[i].dev);
        free(a[i].first);
        free(a[i].now);
    }
    return rc;
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    gd_pool *pool = NULL;
    gd_backend be;
    gd_status s = gd_pool_new(&pool, (int)o.threads);
    if (s == GD_OK)
        s = gd_backend_open(&be, o.backend, pool);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        gd_pool_free(pool);
        return 2;
    }
    rc = bench(&o, &be);
    gd_backend_close(&be);
    gd_pool_free(pool);
    return rc;
}
