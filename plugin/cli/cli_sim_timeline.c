/* `gonka-diloco sim --timeline`: a model of one round on one host
 * (trainer/timeline.h) for any model config, host count and link, without
 * training. Rates not given are measured here, briefly: SHA-256, writing
 * with fsync in the working directory, the codec's encoding, and the inner
 * step from this machine's sgemm rate at 6 FLOP a parameter a token. */
#include "plugin/cli/cli_sim_timeline.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/clock.h"
#include "common/hash.h"
#include "kernels/cpu/blas_bench.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "trainer/codec.h"
#include "trainer/layout.h"
#include "trainer/timeline.h"

/* What each measurement moves: enough to be past caches, short to run. */
#define GD_MEASURE_BYTES ((size_t)64 << 20)
#define GD_MEASURE_VALUES ((size_t)1 << 20)

/* SHA-256 over GD_MEASURE_BYTES, MB/s. */
static double gd_measure_hash(void) {
    uint8_t *buf = calloc(1, GD_MEASURE_BYTES), digest[GD_SHA256_LEN];
    if (buf == NULL)
        return 0;
    double t0 = gd_clock_seconds();
    gd_sha256(digest, buf, GD_MEASURE_BYTES);
    double s = gd_clock_seconds() - t0;
    free(buf);
    return s > 0 ? GD_MEASURE_BYTES / s / 1e6 : 0;
}

/* Writing GD_MEASURE_BYTES to a new file here, with fsync, MB/s (0 if the
 * directory cannot take it). */
static double gd_measure_disk(void) {
    char path[] = "./.gd-timeline-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    unlink(path);
    char *buf = calloc(1, 1 << 20);
    double t0 = gd_clock_seconds(), s = 0;
    bool ok = buf != NULL;
    for (size_t at = 0; ok && at < GD_MEASURE_BYTES; at += 1 << 20)
        ok = write(fd, buf, 1 << 20) == 1 << 20;
    ok = ok && fsync(fd) == 0;
    s = gd_clock_seconds() - t0;
    close(fd);
    free(buf);
    return ok && s > 0 ? GD_MEASURE_BYTES / s / 1e6 : 0;
}

/* The codec's encoding of one chunk, MB/s of fp32 input. */
static double gd_measure_code(const gd_codec *codec) {
    size_t n = GD_MEASURE_VALUES, cap = gd_codec_chunk_bound(codec, n);
    float *x = malloc(n * sizeof *x);
    uint8_t *out = malloc(cap);
    double rate = 0;
    if (x && out) {
        for (size_t i = 0; i < n; i++)
            x[i] = (float)((i * 2654435761u) % 2001) * 1e-3f - 1.0f;
        size_t len = 0, reps = 0;
        double t0 = gd_clock_seconds(), s = 0;
        while (s < 0.2 && gd_codec_encode_chunk(codec, out, cap, x, n, &len, NULL) == GD_OK) {
            reps++;
            s = gd_clock_seconds() - t0;
        }
        rate = reps && s > 0 ? (double)reps * n * sizeof(float) / s / 1e6 : 0;
    }
    free(x);
    free(out);
    return rate;
}

/* One worker's payload: its chunks at the codec's bound. */
static uint64_t gd_payload_bytes(const gd_codec *codec, uint64_t params, uint64_t chunk) {
    uint64_t full = params / chunk, rest = params % chunk;
    return full * gd_codec_chunk_bound(codec, chunk) +
           (rest ? gd_codec_chunk_bound(codec, rest) : 0);
}

static json_t *gd_timeline_json(const gd_timeline *t, const gd_timeline_input *in,
                                json_t *measured) {
    json_t *phases = json_array();
    for (int i = 0; i < GD_TIMELINE_PHASES; i++)
        json_array_append_new(phases, json_pack("{s:s,s:f,s:f}", "name", t->phases[i].name,
                                                "start_s", t->phases[i].start_s, "end_s",
                                                t->phases[i].end_s));
    return json_pack("{s:o,s:f,s:f,s:f,s:f,s:I,s:I,s:i,s:i,s:i,s:i,s:{s:f,s:f,s:f,s:f,s:f,"
                     "s:f,s:f},s:o}",
                     "phases", phases, "round_s", t->round_s, "bytes_up", t->bytes_up,
                     "bytes_down", t->bytes_down, "utilization", t->utilization, "params",
                     (json_int_t)in->params, "payload_bytes", (json_int_t)in->payload_bytes,
                     "workers", (int)in->workers, "inner_steps", (int)in->inner_steps,
                     "segment_steps", (int)in->segment_steps, "checks", (int)in->checks,
                     "rates", "step_s", in->step_s, "link_mbps", in->link_mbps, "rtt_ms",
                     in->rtt_ms, "disk_mbps", in->disk_mbps, "hash_mbps", in->hash_mbps,
                     "code_mbps", in->code_mbps, "block_s", in->block_s, "measured", measured);
}

static void gd_timeline_print(gd_cli *cli, const gd_timeline *t, const gd_timeline_input *in,
                              const json_t *measured) {
    fprintf(cli->out,
            "one round on one host: %.2fB parameters, W %u, H %u, K %u, %u segment check%s\n"
            "rates: step %.3g s, link %.4g Mbit/s (rtt %.0f ms), disk %.0f MB/s, hash %.0f MB/s, "
            "coding %.0f MB/s, block %.3g s",
            in->params / 1e9, in->workers, in->inner_steps, in->segment_steps, in->checks,
            in->checks == 1 ? "" : "s", in->step_s, in->link_mbps, in->rtt_ms, in->disk_mbps,
            in->hash_mbps, in->code_mbps, in->block_s);
    if (json_array_size(measured) > 0) {
        fprintf(cli->out, " (measured here:");
        for (size_t i = 0; i < json_array_size(measured); i++)
            fprintf(cli->out, " %s", json_string_value(json_array_get(measured, i)));
        fprintf(cli->out, ")");
    }
    fprintf(cli->out, "\n");
    for (int i = 0; i < GD_TIMELINE_PHASES; i++)
        fprintf(cli->out, "  %-10s %12.1f s .. %12.1f s  (%.1f s)\n", t->phases[i].name,
                t->phases[i].start_s, t->phases[i].end_s,
                t->phases[i].end_s - t->phases[i].start_s);
    fprintf(cli->out, "round %.1f s (%.2f h); sent %.3g GB, received %.3g GB; training %.1f%% "
                      "of the round\n",
            t->round_s, t->round_s / 3600, t->bytes_up / 1e9, t->bytes_down / 1e9,
            100 * t->utilization);
}

/* A rate option: given (> 0), or measured by measure and named in
 * measured. */
static int gd_rate_opt(gd_cli *cli, gd_args *args, double *out, const char *name,
                       double measure_value, json_t *measured) {
    *out = 0;
    int rc = gd_cli_real_opt(cli, args, out, name, 1e-9, 1e15);
    if (rc != GD_CLI_CONTINUE || gd_arg(args, name) != NULL)
        return rc;
    *out = measure_value;
    json_array_append_new(measured, json_string(name));
    return GD_CLI_CONTINUE;
}

int gd_sim_timeline(gd_cli *cli, gd_args *args) {
    gd_model_config config;
    int rc = gd_cli_model_config(cli, args, &config);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_param_layout layout;
    gd_status s = gd_param_layout_build(&layout, &config);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    uint64_t params = layout.total;
    gd_param_layout_free(&layout);
    gd_codec codec = {GD_CODEC_INT8, 0};
    if (gd_arg(args, "codec") && gd_codec_parse(&codec, gd_arg(args, "codec")) != GD_OK)
        return gd_cli_usage(cli, args, "%s", gd_error_detail());
    uint64_t workers = 4, inner = 50, segment = 0, checks = 1, batch = 8, seq = 64;
    uint64_t chunk = 1u << 20;
    gd_timeline_input in = {.rtt_ms = 50, .block_s = 6, .link_mbps = 100};
    if ((rc = gd_cli_u64_opt(cli, args, &workers, "workers")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &inner, "inner-steps")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &segment, "segment-steps")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &checks, "checks")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &batch, "batch")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &seq, "seq")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &chunk, "chunk-elems")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &in.link_mbps, "link-mbps", 1e-6, 1e9)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &in.rtt_ms, "rtt-ms", 0, 1e7)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &in.block_s, "block-s", 1e-3, 1e6)) != GD_CLI_CONTINUE)
        return rc;
    if (segment == 0)
        segment = inner % 10 == 0 ? 10 : inner;
    if (workers < 1 || workers > 100000 || inner < 1 || inner > 1000000 || segment < 1 ||
        inner % segment != 0 || checks > 1000 || batch < 1 || batch > 1u << 20 || seq < 1 ||
        seq > 1u << 24 || chunk < 1 || chunk > 1u << 28)
        return gd_cli_usage(cli, args, "--workers 1..100000, --inner-steps 1..1000000, "
                                       "--segment-steps dividing it, --checks 0..1000, --batch "
                                       "and --seq at least 1, --chunk-elems 1..2^28");
    in.params = params;
    in.payload_bytes = gd_payload_bytes(&codec, params, chunk);
    in.workers = (uint32_t)workers;
    in.inner_steps = (uint32_t)inner;
    in.segment_steps = (uint32_t)segment;
    in.checks = (uint32_t)checks;
    json_t *measured = json_array();
    /* Measured only when not given: each takes a fraction of a second. */
    bool step_given = gd_arg(args, "step-s") != NULL;
    double gflops = step_given ? 0 : gd_cpu_sgemm_gflops(1, 512, 512, 512, 0.3);
    double tokens = (double)batch * (double)seq;
    if ((rc = gd_rate_opt(cli, args, &in.step_s, "step-s",
                          gflops > 0 ? 6.0 * (double)params * tokens / (gflops * 1e9) : 0,
                          measured)) != GD_CLI_CONTINUE ||
        (rc = gd_rate_opt(cli, args, &in.disk_mbps, "disk",
                          gd_arg(args, "disk") ? 0 : gd_measure_disk(), measured)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_rate_opt(cli, args, &in.hash_mbps, "hash",
                          gd_arg(args, "hash") ? 0 : gd_measure_hash(), measured)) !=
            GD_CLI_CONTINUE) {
        json_decref(measured);
        return rc;
    }
    in.code_mbps = gd_measure_code(&codec);
    json_array_append_new(measured, json_string("coding"));
    gd_timeline t;
    if ((s = gd_timeline_compute(&t, &in)) != GD_OK) {
        json_decref(measured);
        return gd_cli_fail(cli, s);
    }
    if (gd_flag(args, "json")) {
        json_t *j = gd_timeline_json(&t, &in, measured);
        if (j == NULL)
            return gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
        return gd_cli_print_json(cli, j);
    }
    gd_timeline_print(cli, &t, &in, measured);
    json_decref(measured);
    return GD_EXIT_OK;
}
