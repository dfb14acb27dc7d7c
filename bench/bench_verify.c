/* What verification costs against what it checks: for a model, one
 * worker's DiLoCo round (H inner steps, the transcript's state hashes, the
 * payload) against one validator's check of it (the links, one payload
 * chunk, one re-executed segment of K steps), as
 *   compute: validator seconds per check / worker seconds per round;
 *   download: validator bytes per check / payload bytes.
 * Everything runs through the real engine (trainer/diloco.h, verify.h).
 * The bytes a check downloads are counted from what it reads: the served
 * descriptors and proofs, three state chunks, and the segment-start state
 * without its residual (the payload itself every participant fetches
 * anyway, to aggregate).
 *
 * A base-sized round takes minutes on a CPU, so by default the worker runs
 * two segments and its round time is extended to H steps from the measured
 * per-step, per-state-hash and encoding times (printed as such); --full runs
 * all H steps.
 * Usage: gd-bench-verify [--model tiny|small|base] [--inner-steps H]
 *                        [--segment-steps K] [--batch B] [--seq T]
 *                        [--codec C] [--threads N] [--full] [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/args.h"
#include "bench/timer.h"
#include "common/pool.h"
#include "trainer/config.h"
#include "trainer/diloco.h"
#include "trainer/verify.h"

typedef struct bench_opts {
    const char *model;
    uint32_t inner_steps, segment_steps, batch, seq, threads;
    const char *codec;
    bool full, json;
} bench_opts;

typedef struct bench_result {
    size_t params;
    uint32_t steps_run;          /* worker steps actually run */
    double step_s, hash_s, encode_s;
    double worker_round_s;       /* H steps (measured or extended) */
    double check_links_s, check_chunk_s, check_segment_s, check_s;
    uint64_t payload_bytes;
    uint64_t download_links, download_chunk, download_segment, download;
} bench_result;

static int usage(const char *why) {
    fprintf(stderr, "error: %s\nusage: gd-bench-verify [--model tiny|small|base] [--inner-steps H] "
                    "[--segment-steps K] [--batch B] [--seq T] [--codec C] [--threads N] [--full] "
                    "[--json]\n",
            why);
    return 2;
}

static int parse(int argc, char **argv, bench_opts *o) {
    *o = (bench_opts){.model = "small", .inner_steps = 50, .segment_steps = 10, .batch = 8,
                      .seq = 64, .threads = 0, .codec = "int8"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--full") == 0) {
            o->full = true;
            continue;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (v == NULL)
            return usage("every option but --full and --json takes a value");
        i++;
        if (strcmp(a, "--model") == 0)
            o->model = v;
        else if (strcmp(a, "--codec") == 0)
            o->codec = v;
        else {
            uint32_t x = 0;
            if (!gd_bench_count(&x, v))
                return usage("numbers must be 1..100000");
            if (strcmp(a, "--inner-steps") == 0)
                o->inner_steps = x;
            else if (strcmp(a, "--segment-steps") == 0)
                o->segment_steps = x;
            else if (strcmp(a, "--batch") == 0)
                o->batch = x;
            else if (strcmp(a, "--seq") == 0)
                o->seq = x;
            else if (strcmp(a, "--threads") == 0)
                o->threads = x;
            else
                return usage("unknown option");
        }
    }
    if (o->threads == 0)
        o->threads = gd_bench_cores();
    if (o->inner_steps % o->segment_steps != 0 || o->inner_steps / o->segment_steps < 2)
        return usage("--segment-steps must divide --inner-steps into at least two segments");
    return -1;
}

/* Bytes of a proof on the wire (proofs/mmr.h). */
static uint64_t proof_bytes(const gd_mmr_proof *p) { return 12 + 32 * (uint64_t)p->n_hashes; }

static gd_status run(const bench_opts *o, bench_result *r) {
    memset(r, 0, sizeof *r);
    gd_diloco_config c;
    gd_diloco_config_default(&c);
    c.inner_steps = o->full ? o->inner_steps : 2 * o->segment_steps;
    c.segment_steps = o->segment_steps;
    c.inner.batch = o->batch;
    c.inner.micro_batch = o->batch;
    c.inner.seq_len = o->seq;
    c.inner.optim.schedule_steps = 10 * o->inner_steps;
    memset(c.spec_digest, 0x42, 32);
    GD_TRY(gd_codec_parse(&c.codec, o->codec));
    gd_model_config model;
    GD_TRY(gd_model_config_preset(&model, o->model));
    GD_TRY(gd_diloco_config_validate(&c, &model));
    gd_data *data = NULL;
    gd_trainer *t = NULL;
    GD_TRY(gd_data_open(&data, "synthetic:markov:1:64"));
    gd_status s = gd_trainer_new(&t, &model, &c.inner, (int)o->threads);
    size_t n = s == GD_OK ? gd_trainer_layout(t)->total : 0;
    r->params = n;
    gd_global_state g = {0};
    gd_worker_state w = {0};
    uint32_t S = c.inner_steps / c.segment_steps;
    gd_worker_state *segs = calloc(S, sizeof *segs);
    gd_worker_round res = {0};
    float *start_values = malloc((size_t)c.chunk_elems * sizeof(float));
    if (s == GD_OK && (segs == NULL || start_values == NULL))
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK)
        s = gd_global_state_init(&g, n);
    if (s == GD_OK) {
        gd_trainer_get_state(t, g.params, NULL, NULL, NULL);
        s = gd_worker_state_init(&w, 0, n);
    }
    gd_pool *pool = s == GD_OK ? gd_trainer_pool(t) : NULL;
    const uint8_t *layout = s == GD_OK ? gd_trainer_layout(t)->digest : NULL;

    /* The worker's round, and what its parts cost. */
    double t0 = gd_bench_now();
    if (s == GD_OK)
        s = gd_diloco_worker_round(t, &c, data, &res, 0, g.params, n, &w, segs);
    double round_s = gd_bench_now() - t0;
    if (s == GD_OK) {
        r->steps_run = res.steps;
        r->step_s = res.seconds / res.steps;
        uint8_t h[32];
        t0 = gd_bench_now();
        s = gd_worker_state_hash(pool, &(gd_state_tag){.chunk_elems = c.chunk_elems}, h,
                                 0, GD_STAGE_TRAIN, &w);
        r->hash_s = gd_bench_now() - t0;
        /* What is not steps or leaf hashes is the encoding (and copies). */
        r->encode_s = round_s - res.seconds - (S + 2) * r->hash_s;
        if (r->encode_s < 0)
            r->encode_s = 0;
        uint32_t full_S = o->inner_steps / o->segment_steps;
        r->worker_round_s = o->full ? round_s
                                    : o->inner_steps * r->step_s + (full_S + 2) * r->hash_s +
                                          r->encode_s;
        r->payload_bytes = gd_payload_wire_bytes(&res.payload);
    }

    /* The validator's check: links, one chunk, one segment. */
    gd_global_desc gd = {0};
    uint8_t g_hash[32];
    gd_leaf_evidence start, final, post, a, b;
    gd_check_result check = {0};
    if (s == GD_OK)
        s = gd_global_state_describe(pool, &gd, layout, c.chunk_elems, &g);
    gd_global_desc_hash(&gd, g_hash);
    gd_commitment_view cv = {.round = 0, .address = w.address, .rank = 0, .segments = S,
                             .transcript_root = res.transcript_root,
                             .payload_root = res.payload_root,
                             .payload_leaves = res.payload_leaves, .start_state_hash = g_hash};
    if (s == GD_OK)
        s = gd_worker_round_leaf(&res, &start, 0);
    if (s == GD_OK)
        s = gd_worker_round_leaf(&res, &final, S);
    if (s == GD_OK)
        s = gd_worker_round_leaf(&res, &post, S + 1);
    t0 = gd_bench_now();
    if (s == GD_OK)
        s = gd_diloco_check_links(pool, &c, layout, n, &cv, &gd, NULL, NULL, &start, &final,
                                  &post, &check);
    r->check_links_s = gd_bench_now() - t0;
    if (s == GD_OK && !check.pass)
        s = gd_fail(GD_ERR_INVALID, "links: %s", check.why);
    r->download_links = 3 * (GD_WORKER_DESC_BYTES + proof_bytes(&start.proof));
    gd_chunk_evidence ev;
    uint32_t chunk = gd_values_chunks(n, c.chunk_elems) / 2;
    if (s == GD_OK)
        s = gd_worker_round_chunk(pool, &c, &res, &w, &ev, segs[0].residual, chunk);
    size_t lo = 0, count = 0;
    (void)gd_values_chunk_range(n, c.chunk_elems, chunk, &lo, &count);
    if (s == GD_OK)
        memcpy(start_values, g.params + lo, count * sizeof(float));
    t0 = gd_bench_now();
    if (s == GD_OK)
        s = gd_diloco_check_payload_chunk(&c, n, &cv, &final, &post, &ev, start_values, &check);
    r->check_chunk_s = gd_bench_now() - t0;
    if (s == GD_OK && !check.pass)
        s = gd_fail(GD_ERR_INVALID, "payload chunk: %s", check.why);
    r->download_chunk = 3 * (4 * (uint64_t)count) + proof_bytes(&ev.params_proof) +
                        proof_bytes(&ev.residual_in_proof) + proof_bytes(&ev.residual_out_proof);
    uint32_t seg = S - 1;
    if (s == GD_OK)
        s = gd_worker_round_leaf(&res, &a, seg);
    if (s == GD_OK)
        s = gd_worker_round_leaf(&res, &b, seg + 1);
    gd_segment_claim claim = {.cv = &cv, .segment = seg,
                              .first_step = 0, .residual_root = start.desc.residual_root,
                              .start = gd_worker_state_source_of(segs ? &segs[seg] : NULL), .start_proof = &a.proof,
                              .end_leaf = res.leaves ? res.leaves[seg + 1] : NULL,
                              .end_proof = &b.proof};
    t0 = gd_bench_now();
    if (s == GD_OK)
        s = gd_diloco_verify_segment(t, &c, data, &claim, &check);
    r->check_segment_s = gd_bench_now() - t0;
    if (s == GD_OK && !check.pass)
        s = gd_fail(GD_ERR_INVALID, "segment: %s", check.why);
    r->download_segment = GD_WORKER_DESC_BYTES + 12 * (uint64_t)n + 2 * proof_bytes(&a.proof) + 32;
    r->check_s = r->check_links_s + r->check_chunk_s + r->check_segment_s;
    r->download = r->download_links + r->download_chunk + r->download_segment;

    free(start_values);
    gd_worker_round_free(&res);
    for (uint32_t i = 0; segs && i < S; i++)
        gd_worker_state_free(&segs[i]);
    free(segs);
    gd_worker_state_free(&w);
    gd_global_state_free(&g);
    gd_trainer_free(t);
    gd_data_close(data);
    return s;
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    bench_result r;
    gd_status s = run(&o, &r);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        return 1;
    }
    double compute = r.check_s / r.worker_round_s;
    double download = (double)r.download / (double)r.payload_bytes;
    if (o.json) {
        printf("{\"model\":\"%s\",\"params\":%zu,\"inner_steps\":%u,\"segment_steps\":%u,"
               "\"codec\":\"%s\",\"batch\":%u,\"seq\":%u,\"measured_steps\":%u,"
               "\"step_s\":%.6f,\"state_hash_s\":%.6f,\"encode_s\":%.6f,"
               "\"worker_round_s\":%.6f,\"check_s\":%.6f,\"check_links_s\":%.6f,"
               "\"check_chunk_s\":%.6f,\"check_segment_s\":%.6f,\"payload_bytes\":%llu,"
               "\"check_download_bytes\":%llu,\"compute_ratio\":%.5f,\"download_ratio\":%.4f}\n",
               o.model, r.params, o.inner_steps, o.segment_steps, o.codec, o.batch, o.seq,
               r.steps_run, r.step_s, r.hash_s, r.encode_s, r.worker_round_s, r.check_s,
               r.check_links_s, r.check_chunk_s, r.check_segment_s,
               (unsigned long long)r.payload_bytes, (unsigned long long)r.download, compute,
               download);
        return 0;
    }
    printf("model %s: %zu parameters; H = %u, K = %u, %s payloads, batch %u x %u tokens\n", o.model,
           r.params, o.inner_steps, o.segment_steps, o.codec, o.batch, o.seq);
    printf("worker round    %9.3f s  (%s; step %.3f s, state hash %.3f s, encoding and copies "
           "%.3f s)\n",
           r.worker_round_s,
           o.full ? "measured" : "extended from 2 measured segments to H", r.step_s, r.hash_s,
           r.encode_s);
    printf("validator check %9.3f s  (links %.4f s, payload chunk %.4f s, segment %.3f s)\n",
           r.check_s, r.check_links_s, r.check_chunk_s, r.check_segment_s);
    printf("compute  per check / per round  = %.3f\n", compute);
    printf("payload         %12llu bytes\n", (unsigned long long)r.payload_bytes);
    printf("check download  %12llu bytes  (links %llu, chunk %llu, segment-start state %llu)\n",
           (unsigned long long)r.download, (unsigned long long)r.download_links,
           (unsigned long long)r.download_chunk, (unsigned long long)r.download_segment);
    printf("download per check / payload    = %.2f\n", download);
    return 0;
}
