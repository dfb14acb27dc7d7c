/* gonka-diloco plan's byte budget (trainer/plan.c): for every setting the
 * activations are what the trainer allocates, byte for byte, and a GPU's
 * whole figure is the high-water mark a step measures on device-like test
 * backends (a scaled-down model of the 32B shape, 1, 2, 3 and 8 ranks); parameter
 * counts match the published ones of the shapes docs/examples ships; each
 * rung of the ladder needs no more per GPU than the one before; the
 * optimizer-sharded trainer's 13.5 bytes a parameter at eight GPUs; the
 * rungs docs/hardware.md names for 32B and 50B on 8 x 80 GiB; and a plan
 * that would overflow is refused. */
#include <stdio.h>
#include <string.h>

#include "kernels/collective.h"
#include "tests/support/backend_copy.h"
#include "tests/support/testkit.h"
#include "trainer/config.h"
#include "trainer/data.h"
#include "trainer/train.h"
#include "trainer/layout.h"
#include "trainer/model.h"
#include "trainer/plan.h"

static void example(gd_model_config *c, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/../docs/examples/%s.json", gd_test_source_dir(), name);
    CHECK_OK(gd_model_config_load(c, path));
}

/* The plan's activations and logits for the settings the model has (naive
 * or flash attention, recomputing or not, fp32 or bf16) against the
 * trainer's own allocation. */
static void test_today_is_the_trainers(void) {
    static const struct {
        const char *model;
        size_t batch, seq;
    } cases[] = {{"tiny", 1, 16}, {"tiny", 4, 64}, {"tiny", 8, 256},
                 {"small", 2, 128}, {"base", 1, 64}};
    for (size_t i = 0; i < 8 * sizeof cases / sizeof cases[0]; i++) {
        const size_t at = i / 8;
        gd_model_settings ms = {i % 2 ? GD_RECOMPUTE_FULL : GD_RECOMPUTE_NONE,
                                i / 2 % 2 ? GD_ATTENTION_FLASH : GD_ATTENTION_NAIVE,
                                i / 4 % 2 ? GD_PRECISION_BF16 : GD_PRECISION_FP32};
        gd_plan_settings settings = gd_plan_ladder[0];
        settings.recompute = ms.recompute;
        settings.attention = ms.attention;
        settings.precision = ms.precision;
        gd_model_config c;
        CHECK_OK(gd_model_config_preset(&c, cases[at].model));
        gd_param_layout l;
        CHECK_OK(gd_param_layout_build(&l, &c));
        gd_model_f32 *m = NULL;
        CHECK_OK(gd_model_new_f32(&m, &l, cases[at].batch, cases[at].seq, &ms, NULL));
        /* The model counts its reals; its two int32 token arrays besides. */
        size_t rows = cases[at].batch * cases[at].seq;
        uint64_t want = m ? gd_model_activation_bytes_f32(m) + 8 * rows : 0;
        gd_plan_input in = {.model = c, .gpus = 1, .gpu_mem = 1ull << 40,
                            .seq = (uint32_t)cases[at].seq,
                            .micro_batch = (uint32_t)cases[at].batch,
                            .segments = 10};
        gd_plan p;
        CHECK_OK(gd_plan_compute(&p, &in, &settings));
        uint64_t got = p.activations + p.logits;
        fprintf(stderr, "  %s %zu x %zu, recompute %s, attention %s, precision %s: the trainer "
                        "%llu bytes, the plan %llu\n",
                cases[at].model, cases[at].batch, cases[at].seq,
                gd_setting_name(&gd_setting_recompute, (int)ms.recompute),
                gd_setting_name(&gd_setting_attention, (int)ms.attention),
                gd_setting_name(&gd_setting_precision, (int)ms.precision),
                (unsigned long long)want, (unsigned long long)got);
        CHECK(got == want);
        CHECK(p.params == l.total);
        gd_model_free_f32(m);
        gd_param_layout_free(&l);
    }
}

/* The 32B shape scaled down: GQA 5:1, FFN/d 5.4, untied, 8 layers; 1.04M
 * parameters, 16 chunks of the sum of squares to deal over the ranks. */
static gd_model_config scaled_32b(void) {
    gd_model_config c;
    example(&c, "qwen2.5-32b-like");
    c.hidden_size = 80;
    c.intermediate_size = 432;
    c.num_hidden_layers = 8;
    c.num_attention_heads = 10;
    c.num_key_value_heads = 2;
    c.vocab_size = 512;
    c.max_position_embeddings = 64;
    return c;
}

/* Offloaded moments staged 4,096 values at a time, well under a shard of
 * this model, so offloading shows in the figures. */
#define OFFLOAD_WINDOW 4096

/* A step on n device-like ranks with each combination of the memory
 * settings, in fp32 or bf16, the moments in fp32 or bf16 codes: each
 * rank's high-water mark, the largest exactly the plan's per-GPU figure
 * less its workspace (with optimizer sharding, rank 0's: it owns the
 * largest shard). */
static void test_plan_is_the_measured_high_water(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    static const size_t counts[] = {1, 2, 3, 8};
    for (size_t i = 0; i < 32 * sizeof counts / sizeof counts[0]; i++) {
        size_t n = counts[i / 32];
        gd_precision moments = i / 8 % 2 ? GD_PRECISION_BF16 : GD_PRECISION_FP32;
        gd_precision precision = i / 16 % 2 ? GD_PRECISION_BF16 : GD_PRECISION_FP32;
        gd_memory_settings memory = {i % 2 ? GD_SHARD_FULL : GD_SHARD_OPTIMIZER,
                                     i / 2 % 2 ? GD_RECOMPUTE_FULL : GD_RECOMPUTE_NONE,
                                     i / 4 % 2 ? GD_OFFLOAD_OPTIMIZER : GD_OFFLOAD_NONE};
        gd_backend be[8];
        gd_copy_backend *cbs[8];
        for (size_t r = 0; r < n; r++)
            CHECK((cbs[r] = gd_copy_backend_new(&be[r], NULL)) != NULL);
        gd_collective coll;
        CHECK_OK(gd_collective_host_open(&coll, be, n));
        gd_model_config c = scaled_32b();
        gd_train_options o;
        gd_train_options_default(&o);
        o.micro_batch = 2;
        o.batch = 2 * n; /* one micro-batch a rank */
        o.seq_len = 32;
        o.moments = moments;
        o.precision = precision;
        gd_trainer *t = NULL;
        CHECK_OK(gd_trainer_new_ranks(&t, &c, &o, 1,
                                      &(gd_trainer_host){be, n, &coll, memory, OFFLOAD_WINDOW}));
        gd_step_stats st;
        if (t != NULL)
            CHECK_OK(gd_trainer_step(t, data, &st));
        size_t peak = 0;
        for (size_t r = 0; r < n; r++) {
            size_t p = gd_copy_backend_peak_bytes(cbs[r]);
            peak = p > peak ? p : peak;
        }
        if (memory.shard == GD_SHARD_OPTIMIZER)
            CHECK(gd_copy_backend_peak_bytes(cbs[0]) == peak);
        gd_plan_input in = {.model = c, .gpus = (uint32_t)n, .gpu_mem = 1ull << 40, .seq = 32,
                            .micro_batch = 2, .segments = 10, .offload_window = OFFLOAD_WINDOW};
        gd_plan_settings settings = gd_plan_ladder[0];
        settings.shard = memory.shard;
        settings.recompute = memory.recompute;
        settings.offload = memory.offload;
        settings.moments = moments;
        settings.precision = precision;
        gd_plan p;
        CHECK_OK(gd_plan_compute(&p, &in, &settings));
        fprintf(stderr, "  %zu rank%s, shard %s, recompute %s, offload %s, moments %s, precision "
                        "%s: measured %zu bytes, the plan %llu\n",
                n, n > 1 ? "s" : "", gd_setting_name(&gd_setting_shard, (int)memory.shard),
                gd_setting_name(&gd_setting_recompute, (int)memory.recompute),
                gd_setting_name(&gd_setting_offload, (int)memory.offload),
                gd_setting_name(&gd_setting_moments, (int)moments),
                gd_setting_name(&gd_setting_precision, (int)precision), peak,
                (unsigned long long)(p.per_gpu - p.workspace));
        CHECK(peak == p.per_gpu - p.workspace);
        gd_trainer_free(t);
        gd_collective_close(&coll);
        for (size_t r = 0; r < n; r++)
            CHECK(gd_copy_backend_free(cbs[r]));
    }
    gd_data_close(data);
}

static void test_example_shapes(void) {
    gd_model_config c;
    gd_param_layout l;
    /* Published counts: Llama 3.2 1B 1,235,814,400 (tied embeddings) and
     * Llama 2 7B 6,738,415,616 (Hugging Face model cards' configs). */
    example(&c, "llama-1b-like");
    CHECK_OK(gd_param_layout_build(&l, &c));
    CHECK(l.total == 1235814400u);
    gd_param_layout_free(&l);
    example(&c, "llama-7b-like");
    CHECK_OK(gd_param_layout_build(&l, &c));
    CHECK(l.total == 6738415616u);
    gd_param_layout_free(&l);
    example(&c, "qwen2.5-32b-like");
    CHECK_OK(gd_param_layout_build(&l, &c));
    fprintf(stderr, "  qwen2.5-32b-like: %zu parameters\n", l.total);
    CHECK(l.total > 32000000000u && l.total < 33000000000u);
    gd_param_layout_free(&l);
    example(&c, "llama-50b-like");
    CHECK_OK(gd_param_layout_build(&l, &c));
    CHECK(l.total > 49000000000u && l.total < 52000000000u);
    gd_param_layout_free(&l);
}

static gd_plan_input host_of(const char *name, uint32_t gpus) {
    gd_plan_input in = {.gpus = gpus, .gpu_mem = 80ull << 30, .seq = 4096, .micro_batch = 1,
                        .segments = 10};
    example(&in.model, name);
    return in;
}

static void test_ladder(void) {
    gd_plan_input in = host_of("qwen2.5-32b-like", 8);
    gd_plan prev;
    int first_fit = -1;
    for (int i = 0; i < GD_PLAN_LADDER; i++) {
        gd_plan p;
        CHECK_OK(gd_plan_compute(&p, &in, &gd_plan_ladder[i]));
        if (i > 0)
            CHECK(p.per_gpu <= prev.per_gpu);
        if (p.fits && first_fit < 0)
            first_fit = i;
        if (i == 0) {
            /* Today's trainer: fp32 weights, gradient and inbox whole on
             * every rank, the accumulator and moments in eighths. */
            double per = (double)(p.weights + p.gradients + p.moments) / (double)p.params;
            fprintf(stderr, "  32B today: %.3f bytes a parameter before activations\n", per);
            CHECK(per > 13.49 && per < 13.51);
        }
        prev = p;
    }
    /* docs/hardware.md: 32B at 4,096 tokens on 8 x 80 GiB needs full
     * sharding, bf16, flash attention, recomputation and bf16 moments
     * (rung 5: rung 4 misses by a fraction of a GiB, its backward's scratch
     * being fp32). */
    CHECK(first_fit == 4);
    in = host_of("llama-50b-like", 8);
    first_fit = -1;
    for (int i = 0; i < GD_PLAN_LADDER && first_fit < 0; i++) {
        gd_plan p;
        CHECK_OK(gd_plan_compute(&p, &in, &gd_plan_ladder[i]));
        if (p.fits)
            first_fit = i;
    }
    CHECK(first_fit == 5); /* and 50B the moments in host memory */
    in.gpu_mem = 141ull << 30; /* an H200 */
    gd_plan p;
    CHECK_OK(gd_plan_compute(&p, &in, &gd_plan_ladder[3]));
    CHECK(p.fits);
    /* The host's part: 8 bytes a parameter of outer state (G and its
     * momentum; the residual stays in its files); a host of too little
     * memory does not fit. */
    CHECK(p.outer_state == 8 * p.params);
    in.host_mem = 256ull << 30;
    CHECK_OK(gd_plan_compute(&p, &in, &gd_plan_ladder[3]));
    CHECK(!p.fits);
}

static void test_refused(void) {
    gd_plan_input in = host_of("llama-7b-like", 0);
    gd_plan p;
    CHECK(gd_plan_compute(&p, &in, &gd_plan_ladder[0]) == GD_ERR_INVALID);
    in = host_of("llama-7b-like", 8);
    in.seq = 8192; /* over max_position_embeddings */
    CHECK(gd_plan_compute(&p, &in, &gd_plan_ladder[0]) == GD_ERR_INVALID);
    in.seq = 4096;
    in.micro_batch = 4000000000u; /* (b, H, T, T) past 64 bits */
    CHECK(gd_plan_compute(&p, &in, &gd_plan_ladder[0]) == GD_ERR_LIMIT);
}

int main(void) {
    RUN_TEST(test_today_is_the_trainers);
    RUN_TEST(test_plan_is_the_measured_high_water);
    RUN_TEST(test_example_shapes);
    RUN_TEST(test_ladder);
    RUN_TEST(test_refused);
    return gd_test_finish();
}
