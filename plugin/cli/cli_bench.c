/* bench train: training throughput on a backend, beside the matmul library's
 * own GEMM on the same shape (OpenBLAS's sgemm on the CPU, cuBLAS on a GPU). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/clock.h"
#include "kernels/backend_profile.h"
#include "kernels/cpu/blas_bench.h"
#include "plugin/cli/cli_profile.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "trainer/owned_read.h"
#include "trainer/payload.h"
#include "trainer/plan.h"
#include "trainer/state.h"
#include "trainer/train.h"

/* Training FLOPs per token in the usual accounting (Chowdhery et al.,
 * PaLM, appendix B): 6 per weight of every matmul (forward 2, backward 4;
 * the tied embedding counts once, as the output layer) plus 12 * layers *
 * seq_len * (heads * head_dim) for the attention scores and their values
 * over the full T x T square (the kernels skip most of its masked half, so
 * this slightly overstates the work done, as it does for any causal model). */
static double gd_train_flops_per_token(const gd_model_config *c, size_t seq_len) {
    double h = c->hidden_size, f = c->intermediate_size, v = c->vocab_size;
    double q = (double)c->num_attention_heads * (double)gd_model_head_dim(c);
    double kv = (double)c->num_key_value_heads * (double)gd_model_head_dim(c);
    double per_layer = h * q + 2 * h * kv + q * h + 3 * h * f;
    double matmul_weights = c->num_hidden_layers * per_layer + v * h;
    return 6 * matmul_weights + 12.0 * c->num_hidden_layers * (double)seq_len * q;
}

/* A segment boundary's read of the trainer's state (parameters and both
 * moments, hashed into their roots in payload-sized chunks): by the ranks
 * that own the shards, at once, into their backends' host memory (what a
 * round does), and in order through one window of ordinary memory, one
 * rank after another (the peer). Seconds of each. */
typedef struct gd_boundary_read {
    double by_ranks_s, in_order_s;
    bool same; /* both gave the same roots */
} gd_boundary_read;

static gd_status gd_bench_boundary_read(gd_trainer *t, gd_boundary_read *out) {
    uint32_t chunk = GD_PAYLOAD_CHUNK_ELEMS;
    size_t n = gd_trainer_layout(t)->total;
    uint8_t by_ranks[3][GD_MMR_HASH_LEN], in_order[3][GD_MMR_HASH_LEN];
    double t0 = gd_clock_seconds();
    GD_TRY(gd_trainer_read_owned(t, by_ranks, chunk, NULL));
    out->by_ranks_s = gd_clock_seconds() - t0;
    size_t window = gd_values_window_of(chunk, n);
    float *buf = malloc(3 * window * sizeof(float));
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a window");
    gd_values_stream streams[3];
    int begun = 0;
    t0 = gd_clock_seconds();
    gd_status s = GD_OK;
    for (; s == GD_OK && begun < 3; begun++)
        s = gd_values_stream_begin(&streams[begun], gd_trainer_pool(t), n, chunk);
    for (size_t lo = 0; s == GD_OK && lo < n; lo += window) {
        size_t count = n - lo < window ? n - lo : window;
        gd_trainer_get_range(t, buf, buf + window, buf + 2 * window, lo, count);
        for (int a = 0; s == GD_OK && a < 3; a++)
            s = gd_values_stream_add(&streams[a], buf + (size_t)a * window, count);
    }
    for (int a = 0; s == GD_OK && a < 3; a++)
        s = gd_values_stream_root(&streams[a], in_order[a]);
    out->in_order_s = gd_clock_seconds() - t0;
    for (int a = 0; a < begun; a++)
        gd_values_stream_end(&streams[a]);
    free(buf);
    out->same = memcmp(by_ranks, in_order, sizeof by_ranks) == 0;
    return s;
}

/* Dense bf16 peaks (TFLOP/s, without sparsity) of the GPUs Gonka hosts run,
 * from NVIDIA's datasheets: H100 SXM and H200 SXM 989, B200 2250. MFU is
 * model FLOP/s over this peak; 0 when the GPU is not one of them. */
static double gd_bf16_peak_tflops(const char *identity) {
    static const struct {
        const char *name;
        double tflops;
    } peaks[] = {{"H100", 989.4}, {"H200", 989.4}, {"B200", 2250.0}};
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(identity, peaks[i].name) != NULL)
            return peaks[i].tflops;
    return 0;
}

static int gd_run_bench_train(gd_cli *cli, gd_args *args) {
    gd_model_config config;
    int threads = 1, rc;
    if (!gd_arg(args, "model") && !gd_arg(args, "model-config")) {
        if (gd_model_config_preset(&config, "small") != GD_OK)
            return gd_cli_fail(cli, GD_ERR_INVALID);
        uint64_t vocab = config.vocab_size;
        if ((rc = gd_cli_u64_opt(cli, args, &vocab, "vocab")) != GD_CLI_CONTINUE)
            return rc;
        config.vocab_size = (uint32_t)vocab;
        if (vocab < 1 || vocab > INT32_MAX || gd_model_config_validate(&config) != GD_OK)
            return gd_cli_usage(cli, args, "--vocab must be 1..%d", INT32_MAX);
    } else if ((rc = gd_cli_model_config(cli, args, &config)) != GD_CLI_CONTINUE) {
        return rc;
    }
    /* A stack of L of the model's layers: a big shape's step profiled on
     * what one host can hold, and the whole model's step projected. */
    uint64_t model_layers = config.num_hidden_layers, layers = model_layers;
    if ((rc = gd_cli_u64_opt(cli, args, &layers, "layers")) != GD_CLI_CONTINUE)
        return rc;
    if (layers < 1 || layers > model_layers)
        return gd_cli_usage(cli, args, "--layers must be 1..%" PRIu64 " (the model's)",
                            model_layers);
    config.num_hidden_layers = (uint32_t)layers;
    gd_train_options o;
    gd_train_options_default(&o);
    uint64_t batch = o.batch, seq = o.seq_len, micro = 0, steps = 3, warmup = 1;
    if ((rc = gd_cli_u64_opt(cli, args, &batch, "batch")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &seq, "seq")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &micro, "micro-batch")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &steps, "steps")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &warmup, "warmup")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_threads(cli, args, &threads)) != GD_CLI_CONTINUE)
        return rc;
    if (batch < 1 || batch > 4096 || seq < 1 || seq > (1u << 20) || steps < 1 || steps > 10000)
        return gd_cli_usage(cli, args, "--batch 1..4096, --seq >= 1, --steps 1..10000");
    o.batch = (size_t)batch;
    o.seq_len = (size_t)seq;
    o.micro_batch = micro ? (size_t)micro : o.batch;
    if ((rc = gd_cli_run_settings(cli, args, &o)) != GD_CLI_CONTINUE)
        return rc;
    o.optim.schedule_steps = steps + warmup;
    const char *spec = gd_arg(args, "data") ? gd_arg(args, "data") : "synthetic:markov:1";
    gd_trainer_host host;
    if ((rc = gd_cli_trainer_host(cli, args, &host)) != GD_CLI_CONTINUE)
        return rc;
    gd_backend_group backends;
    if ((rc = gd_cli_backend_group(cli, args, &backends)) != GD_CLI_CONTINUE)
        return rc;
    const gd_backend *backend = &backends.ranks[0];
    /* The profile watches rank 0 (the trainer copies the handle, so it is
     * set before the trainer is made) and counts only once switched on. */
    gd_backend_profile profile = {0};
    bool profiling = gd_flag(args, "profile");
    if (profiling)
        backends.ranks[0].profile = &profile;
    gd_data *data = NULL;
    gd_trainer *t = NULL;
    gd_status s = gd_data_open(&data, spec);
    host.be = backends.ranks;
    host.n = backends.n;
    host.coll = &backends.coll;
    if (s == GD_OK)
        s = gd_trainer_new_ranks(&t, &config, &o, threads, &host);
    for (uint64_t i = 0; s == GD_OK && i < warmup; i++)
        s = gd_trainer_step(t, data, NULL);
    double t0 = gd_clock_seconds();
    for (uint64_t i = 0; s == GD_OK && i < steps; i++)
        s = gd_trainer_step(t, data, NULL);
    for (size_t r = 0; s == GD_OK && r < backends.n; r++)
        gd_backend_synchronize(&backends.ranks[r]);
    double step_s = (gd_clock_seconds() - t0) / (double)steps;
    /* Every step gathers the same units: full sharding's bytes a step. */
    double gathered = t != NULL && warmup + steps > 0
                          ? (double)gd_trainer_gathered_bytes(t) / (double)(warmup + steps)
                          : 0;
    uint64_t units_now = 0, units_ahead = 0; /* the units gathered on demand and ahead */
    if (t != NULL)
        gd_trainer_gather_counts(t, &units_now, &units_ahead);
    double per_step = warmup + steps > 0 ? 1.0 / (double)(warmup + steps) : 0;
    /* Then as many steps again, profiled: their time is not the figure. */
    double profiled_step_s = 0;
    if (s == GD_OK && profiling) {
        gd_backend_profile_on(&profile);
        double p0 = gd_clock_seconds();
        for (uint64_t i = 0; s == GD_OK && i < steps; i++)
            s = gd_trainer_step(t, data, NULL);
        for (size_t r = 0; s == GD_OK && r < backends.n; r++)
            gd_backend_synchronize(&backends.ranks[r]);
        profiled_step_s = (gd_clock_seconds() - p0) / (double)steps;
        gd_backend_profile_off(&profile);
        gd_backend_profile_sort(&profile);
    }
    gd_boundary_read boundary = {0};
    bool have_boundary = false;
    if (s == GD_OK && gd_trainer_read_owned_fits(gd_trainer_layout(t)->total,
                                                 GD_PAYLOAD_CHUNK_ELEMS)) {
        s = gd_bench_boundary_read(t, &boundary);
        have_boundary = s == GD_OK;
        if (s == GD_OK && !boundary.same)
            s = gd_fail(GD_ERR_IO, "the ranks' read of the state is not the ordered "
                                         "read's");
    }
    if (s != GD_OK) {
        gd_trainer_free(t);
        gd_backend_group_close(&backends);
        gd_data_close(data);
        return gd_cli_fail(cli, s);
    }
    /* The whole model's step from the stack's: per layer, times the
     * model's layers (the embeddings and the head counted once per layer:
     * an upper bound for a stack of few layers). */
    double layer_ms = step_s * 1e3 / (double)layers;
    double projected_ms = layer_ms * (double)model_layers;
    double tokens = (double)o.batch * (double)o.seq_len;
    double tok_s = tokens / step_s;
    double gflops = gd_train_flops_per_token(&config, o.seq_len) * tok_s * 1e-9;
    /* The ceiling, on the MLP's shape: OpenBLAS's sgemm with its own
     * threads on the CPU; on a GPU, cuBLAS with the backend's operands and
     * with bf16 ones. */
    size_t m = o.micro_batch * o.seq_len;
    bool on_cpu = strcmp(backend->iface->name, "cpu") == 0;
    double sgemm = 0;
    gd_gemm_ceiling gemm = {0};
    bool have_gemm = false;
    if (on_cpu)
        sgemm = gd_cpu_sgemm_gflops(threads, m, config.intermediate_size, config.hidden_size,
                                    1.0);
    else
        have_gemm = gd_backend_gemm_ceiling(backend, &gemm, m, config.intermediate_size,
                                            config.hidden_size, 0.5) == GD_OK;
    /* Model FLOP utilization, on a GPU whose peak is known. */
    double peak = 0;
    char identity[1024] = "";
    if (!on_cpu && gd_backend_identity(identity, sizeof identity, backend->iface->name) == GD_OK)
        peak = gd_bf16_peak_tflops(identity);
    double mfu = peak > 0 ? gflops / (peak * 1e3 * (double)backends.n) : 0; /* every GPU's */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double peak_mib = (double)ru.ru_maxrss / 1024.0;
    size_t params = gd_trainer_layout(t)->total;
    /* What plan budgets a GPU for this stack and these settings, less the
     * workspace: the trainer's high-water mark on the rank that holds the
     * most (test_plan). */
    gd_plan_input plan_in = {.model = config, .gpus = (uint32_t)backends.n,
                             .gpu_mem = UINT64_MAX / 4, .seq = (uint32_t)o.seq_len,
                             .micro_batch = (uint32_t)o.micro_batch, .segments = 1};
    gd_plan_settings plan_settings = gd_plan_ladder[0];
    plan_settings.shard = host.memory.shard;
    plan_settings.recompute = host.memory.recompute;
    plan_settings.offload = host.memory.offload;
    plan_settings.attention = o.attention;
    plan_settings.precision = o.precision;
    plan_settings.moments = o.moments;
    gd_plan plan;
    bool have_plan = gd_plan_compute(&plan, &plan_in, &plan_settings) == GD_OK;
    double plan_gib = have_plan ? (double)(plan.per_gpu - plan.workspace) / 1073741824.0 : 0;
    const char *model = gd_arg(args, "model-config") ? "config"
                        : gd_arg(args, "model")      ? gd_arg(args, "model")
                                                     : "small";
    if (gd_flag(args, "json")) {
        json_t *j = json_pack("{s:s,s:s,s:I,s:o,s:f,s:I,s:i,s:I,s:I,s:I,s:f,s:f,s:o,s:o,s:f,s:I}",
                              "model", model, "backend", backend->iface->name, "gpus",
                              (json_int_t)backends.n, "mfu",
                              peak > 0 ? json_real(mfu) : json_null(),
                              "tokens_per_s", tok_s, "params", (json_int_t)params, "threads",
                              threads, "batch", (json_int_t)o.batch, "seq", (json_int_t)o.seq_len,
                              "micro_batch", (json_int_t)o.micro_batch, "step_ms", step_s * 1e3,
                              "gflops", gflops, "sgemm_gflops", on_cpu ? json_real(sgemm) : json_null(),
                              "gemm_tflops",
                              have_gemm ? json_pack("{s:f,s:f}", "fp32_operands",
                                                    gemm.fp32_operands_tflops, "bf16_operands",
                                                    gemm.bf16_operands_tflops)
                                        : json_null(),
                              "peak_rss_mib", peak_mib,
                              "steps", (json_int_t)steps);
        if (j != NULL) {
            json_object_set_new(j, "attention", json_string(gd_setting_name(
                                                    &gd_setting_attention, (int)o.attention)));
            json_object_set_new(j, "precision", json_string(gd_setting_name(
                                                    &gd_setting_precision, (int)o.precision)));
            json_object_set_new(j, "moments", json_string(gd_setting_name(
                                                  &gd_setting_moments, (int)o.moments)));
            json_object_set_new(j, "shard", json_string(gd_setting_name(
                                                &gd_setting_shard, (int)host.memory.shard)));
            json_object_set_new(j, "recompute", json_string(gd_setting_name(
                                                    &gd_setting_recompute,
                                                    (int)host.memory.recompute)));
            json_object_set_new(j, "offload", json_string(gd_setting_name(
                                                  &gd_setting_offload,
                                                  (int)host.memory.offload)));
            json_object_set_new(j, "plan_gpu_bytes",
                                have_plan ? json_integer((json_int_t)(plan.per_gpu -
                                                                      plan.workspace))
                                          : json_null());
            json_object_set_new(j, "gathered_bytes_per_step", json_real(gathered));
            json_object_set_new(j, "units_gathered_ahead_per_step",
                                json_real((double)units_ahead * per_step));
            json_object_set_new(j, "units_gathered_on_demand_per_step",
                                json_real((double)units_now * per_step));
            json_object_set_new(
                j, "boundary_read",
                have_boundary ? json_pack("{s:I,s:f,s:f}", "bytes",
                                          (json_int_t)(12 * (uint64_t)params), "by_ranks_s",
                                          boundary.by_ranks_s, "in_order_s",
                                          boundary.in_order_s)
                              : json_null());
            json_object_set_new(j, "layers", json_integer((json_int_t)layers));
            json_object_set_new(j, "model_layers", json_integer((json_int_t)model_layers));
            json_object_set_new(j, "ms_per_layer", json_real(layer_ms));
            json_object_set_new(j, "projected_step_ms",
                                layers < model_layers ? json_real(projected_ms) : json_null());
        }
        if (j != NULL && profiling)
            json_object_set_new(j, "profile", gd_profile_json(&profile, steps, profiled_step_s));
        rc = gd_cli_print_json(cli, j);
    } else {
        fprintf(cli->out,
                "bench train: %s, %zu parameters, batch %zu x %zu tokens, %d thread%s, "
                "backend %s x %zu\n"
                "  step time       %.1f ms (mean of %" PRIu64 " steps after %" PRIu64
                " warm-up)\n"
                "  tokens/s        %.0f\n"
                "  model FLOP/s    %.1f GFLOP/s (6 x matmul weights + attention, per token)\n",
                model, params, o.batch, o.seq_len, threads, threads == 1 ? "" : "s",
                backend->iface->name, backends.n, step_s * 1e3, steps, warmup, tok_s, gflops);
        if (on_cpu)
            fprintf(cli->out,
                    "  OpenBLAS sgemm  %.1f GFLOP/s on %zu x %u x %u with %d thread%s "
                    "(trainer/sgemm %.2f)\n",
                    sgemm, m, config.intermediate_size, config.hidden_size, threads,
                    threads == 1 ? "" : "s", sgemm > 0 ? gflops / sgemm : 0.0);
        else if (have_gemm)
            fprintf(cli->out,
                    "  cuBLAS GEMM     %.1f TFLOP/s with fp32 operands (bf16 products, as the "
                    "backend runs), %.1f with bf16 operands, on %zu x %u x %u (trainer/GEMM "
                    "%.2f)\n",
                    gemm.fp32_operands_tflops, gemm.bf16_operands_tflops, m,
                    config.intermediate_size, config.hidden_size,
                    gemm.fp32_operands_tflops > 0
                        ? gflops / (double)backends.n / (gemm.fp32_operands_tflops * 1e3)
                        : 0.0);
        fprintf(cli->out, "  peak memory     %.0f MiB of the process\n", peak_mib);
        if (host.memory.shard == GD_SHARD_FULL && backends.n > 1)
            fprintf(cli->out,
                    "  gathered        %.1f MiB a step into the ranks' windows (%s); units a "
                    "step: %.0f ahead, beside the ops, %.0f on demand\n",
                    gathered / 1048576.0,
                    o.precision == GD_PRECISION_BF16 ? "bf16 codes" : "fp32 values",
                    (double)units_ahead * per_step, (double)units_now * per_step);
        if (have_boundary)
            fprintf(cli->out,
                    "  boundary read   %.3f s by the ranks owning the shards, at once (%.2f "
                    "GB/s), %.3f s in order (x%.2f): parameters and moments, %.0f MB, hashed\n",
                    boundary.by_ranks_s, 12.0 * (double)params / boundary.by_ranks_s / 1e9,
                    boundary.in_order_s,
                    boundary.by_ranks_s > 0 ? boundary.in_order_s / boundary.by_ranks_s : 0.0,
                    12.0 * (double)params / 1e6);
        if (have_plan)
            fprintf(cli->out,
                    "  a GPU's share   %.2f GiB planned with shard %s, recompute %s, offload %s "
                    "(gonka-diloco plan, arithmetic)\n",
                    plan_gib, gd_setting_name(&gd_setting_shard, (int)host.memory.shard),
                    gd_setting_name(&gd_setting_recompute, (int)host.memory.recompute),
                    gd_setting_name(&gd_setting_offload, (int)host.memory.offload));
        if (layers < model_layers)
            fprintf(cli->out,
                    "  layers          %" PRIu64 " of the model's %" PRIu64 ": %.1f ms a layer; "
                    "the whole model's step projected at %.0f ms (not measured)\n",
                    layers, model_layers, layer_ms, projected_ms);
        if (peak > 0)
            fprintf(cli->out, "  MFU             %.1f%% of %zu x %.0f TFLOP/s bf16 (%s)\n",
                    100 * mfu, backends.n, peak, identity);
        if (profiling)
            gd_profile_print(cli->out, &profile, steps, profiled_step_s);
        rc = GD_EXIT_OK;
    }
    gd_trainer_free(t);
    gd_backend_group_close(&backends);
    gd_data_close(data);
    return rc;
}

static const gd_opt_spec gd_bench_train_opts[] = {
    {"model", "NAME", "model preset (default small)"},
    {"model-config", "FILE", "model shape from a Hugging Face config.json instead"},
    {"vocab", "N", "override the vocabulary size"},
    {"layers", "L", "a stack of L of the model's layers; the whole model's step projected"},
    {"batch", "B", "sequences per step (default 8)"},
    {"seq", "T", "tokens per sequence (default 256)"},
    {"micro-batch", "M", "sequences per forward/backward pass (default B)"},
    {"threads", "N", "worker threads (default: all cores)"},
    {"backend", "NAME", "cpu, cuda or auto (default auto: cuda where a GPU is usable)"},
    {"gpus", "N", "data parallel over GPUs 0..N-1 (cuda; default 1)"},
    GD_TRAINER_HOST_OPTS,
    GD_RUN_SETTINGS_OPTS,
    {"steps", "N", "timed steps (default 3)"},
    {"warmup", "N", "untimed steps first (default 1)"},
    {"data", "SPEC", "data source (default synthetic:markov:1)"},
    {"profile", NULL, "then as many steps again with each op timed: where a step's time goes"},
    {"json", NULL, "print {\"tokens_per_s\", \"params\", \"threads\", \"batch\", \"seq\", ...}"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_bench_train = {
    "bench train", "", 0, 0,
    "Training throughput on a backend: tokens/s, step time, GFLOP/s, MFU on a GPU, peak memory.",
    "Also measures the matmul library's own GEMM on the MLP's matrix shape, the ceiling\n"
    "the trainer's matmuls work against: OpenBLAS's multi-threaded sgemm with the same\n"
    "thread count on the CPU, cuBLAS with fp32 and with bf16 operands on a GPU.\n"
    "bench/compare_torch runs the same model in PyTorch for a side-by-side figure.",
    gd_bench_train_opts, gd_run_bench_train,
};
