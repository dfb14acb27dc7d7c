/* The round engine (plugin/member/round_engine.h) on the CUDA backend, as a GPU
 * host's daemon runs it (node.yaml backend: cuda): two engines train the
 * same round to the same bytes (payload, transcript, commitment); a
 * validator on the same backend re-executes every segment of it to a PASS,
 * while one on the CPU, another hardware class, fails it, which is why a
 * segment is only ever checked within its class; and G_1 aggregated from
 * the round's payload on the GPU is the CPU's, bit for bit; and an engine
 * over two GPUs with full sharding (one GPU where there is only one)
 * trains the same round to the same bytes, so the one-GPU validator's
 * PASS holds for it. A CTest skip
 * (exit 77) where the CUDA backend is not built or no GPU is usable; the
 * CUDA emulator runs it without one (tests/cuda_emu). */
#include <stdio.h>
#include <string.h>

#include "chain/wire/diloco_spec.h"
#include "plugin/member/round_engine.h"
#include "tests/support/example_spec.h"
#include "tests/support/round_evidence.h"
#include "tests/support/testkit.h"

#define RUN 1
#define ROUND 0
#define WORKER "gonka1gpuworker"

static Gonka__Diloco__V1__RunSpec *g_spec;
static gd_engine g_gpu, g_gpu2, g_cpu;
static gd_global_state g_g0;
static gd_worker_state g_worker;
static gd_trained_round g_round;

static void open_engine(gd_engine *e, const char *backend) {
    CHECK_OK(gd_engine_open(e, g_spec, RUN, &(gd_engine_host){.threads = 1, .backend = backend}));
    /* The example names G_0's hash for its own chunk size, which the hash covers. */
    CHECK_OK(gd_run_config_initial_state(&e->rc, e->rc.initial_state_hash, 1));
}

static void train_on(gd_engine *e, gd_worker_state *w, gd_trained_round *t) {
    gd_global_state g0;
    CHECK_OK(gd_engine_initial_global(e, &g0));
    CHECK_OK(gd_engine_worker_init(e, w, WORKER, 0));
    CHECK_OK(gd_engine_train(e, t, ROUND, &g0, true, w));
    gd_global_state_free(&g0);
}

/* Trains the round on e and checks it is g_round, byte for byte. */
static void check_repeats_the_round(gd_engine *e) {
    gd_worker_state w;
    gd_trained_round t;
    train_on(e, &w, &t);
    CHECK(gd_test_same_payload(&t, &g_round));
    CHECK(t.transcript.len == g_round.transcript.len &&
          memcmp(t.transcript.data, g_round.transcript.data, t.transcript.len) == 0);
    CHECK(memcmp(t.commit.payload_root, g_round.commit.payload_root, 32) == 0);
    CHECK(memcmp(t.commit.transcript_root, g_round.commit.transcript_root, 32) == 0);
    CHECK(t.commit.payload_leaves == g_round.commit.payload_leaves &&
          t.commit.segment_count == g_round.commit.segment_count);
    gd_trained_round_free(&t);
    gd_worker_state_free(&w);
}

static void test_a_round_repeats_to_its_bytes(void) {
    check_repeats_the_round(&g_gpu2);
}

static gd_diloco_verdict check_on(gd_engine *validator, uint32_t segment, uint32_t chunk,
                                  char *why, size_t cap) {
    gd_test_trained tr = {&g_gpu, ROUND, &g_round, &g_worker};
    Gonka__Diloco__V1__Commitment c;
    gd_test_commitment(&g_round, WORKER, &c);
    gd_check_evidence ev;
    gd_test_evidence(&tr, segment, chunk, &ev);
    gd_check_input in = {.round = ROUND, .target = WORKER, .rank = 0, .commitment = &c,
                         .segment = segment, .step = 1, .chunk = chunk};
    gd_check_answer a = {.verdict = GD_VERDICT_UNAVAILABLE};
    CHECK_OK(gd_engine_check(validator, &in, &ev, &g_g0, &a));
    snprintf(why, cap, "%s", a.why);
    gd_check_evidence_free(&ev);
    return a.verdict;
}

static void test_a_fully_sharded_round_is_one_gpus(void) {
    gd_engine full;
    gd_engine_host host = {.threads = 1, .backend = "cuda", .gpus = 2,
                           .memory = {.shard = GD_SHARD_FULL}};
    if (gd_engine_open(&full, g_spec, RUN, &host) != GD_OK) {
        printf("  one GPU here: full sharding on one\n");
        host.gpus = 1;
        CHECK_OK(gd_engine_open(&full, g_spec, RUN, &host));
    }
    CHECK_OK(gd_run_config_initial_state(&full.rc, full.rc.initial_state_hash, 1));
    check_repeats_the_round(&full);
    gd_engine_close(&full);
}

static void test_checked_within_its_class(void) {
    char why[256];
    for (uint32_t segment = 0; segment < g_round.segments; segment++) {
        uint32_t chunk = segment % g_gpu.chunks;
        if (check_on(&g_gpu2, segment, chunk, why, sizeof why) != GD_VERDICT_PASS) {
            fprintf(stderr, "segment %u on the GPU: %s\n", segment, why);
            gd_test_failures++;
        }
    }
    /* The CPU's re-execution of a GPU's segment does not give its bits. */
    CHECK(check_on(&g_cpu, 0, 0, why, sizeof why) == GD_VERDICT_FAIL);
    fprintf(stderr, "    on the CPU: %s\n", why);
}

static void test_the_aggregate_is_the_cpus(void) {
    gd_buf file;
    gd_test_payload_file(&g_round, &file);
    gd_engine_contribution c = {.address = WORKER, .tokens = g_round.r.tokens,
                                .payload = file.data, .payload_len = file.len,
                                .root = g_round.commit.payload_root,
                                .leaves = g_round.commit.payload_leaves};
    gd_global_state on_gpu, on_cpu;
    CHECK_OK(gd_global_state_copy(&on_gpu, &g_g0));
    CHECK_OK(gd_global_state_copy(&on_cpu, &g_g0));
    CHECK_OK(gd_engine_aggregate(&g_gpu, ROUND, &c, 1, &on_gpu));
    CHECK_OK(gd_engine_aggregate(&g_cpu, ROUND, &c, 1, &on_cpu));
    size_t bytes = g_gpu.n * sizeof(float);
    CHECK(memcmp(on_gpu.params, on_cpu.params, bytes) == 0);
    CHECK(memcmp(on_gpu.momentum, on_cpu.momentum, bytes) == 0);
    CHECK(memcmp(on_gpu.params, g_g0.params, bytes) != 0); /* it did step */
    uint8_t h_gpu[32], h_cpu[32];
    CHECK_OK(gd_engine_global_hash(&g_gpu, &on_gpu, h_gpu));
    CHECK_OK(gd_engine_global_hash(&g_cpu, &on_cpu, h_cpu));
    CHECK(memcmp(h_gpu, h_cpu, 32) == 0);
    gd_global_state_free(&on_gpu);
    gd_global_state_free(&on_cpu);
    gd_buf_free(&file);
}

int main(void) {
    char why[256];
    if (!gd_backend_usable("cuda", why, sizeof why)) {
        printf("skip: the cuda backend: %s\n", why);
        return 77;
    }
    /* A short round of the tiny model: four inner steps in two segments of
     * 64 tokens, eight chunks. */
    json_t *j = gd_test_example_spec_json();
    json_object_set_new(j, "chunk_elems", json_integer(16384));
    json_object_set_new(j, "h_min", json_integer(4));
    json_object_set_new(j, "h_max", json_integer(4));
    json_object_set_new(j, "segment_steps", json_integer(2));
    json_object_set_new(j, "batch", json_integer(2));
    json_object_set_new(j, "micro_batch", json_integer(2));
    json_object_set_new(j, "seq_len", json_integer(32));
    json_object_set_new(j, "tokens_per_step", json_string("64"));
    CHECK_OK(gd_diloco_spec_from_json(&g_spec, j));
    json_decref(j);
    open_engine(&g_gpu, "cuda");
    open_engine(&g_gpu2, "cuda");
    open_engine(&g_cpu, "cpu");
    CHECK_OK(gd_engine_initial_global(&g_gpu, &g_g0));
    train_on(&g_gpu, &g_worker, &g_round);
    CHECK(g_round.segments == 2 && g_gpu.chunks == 8);
    RUN_TEST(test_a_round_repeats_to_its_bytes);
    RUN_TEST(test_a_fully_sharded_round_is_one_gpus);
    RUN_TEST(test_checked_within_its_class);
    RUN_TEST(test_the_aggregate_is_the_cpus);
    gd_trained_round_free(&g_round);
    gd_worker_state_free(&g_worker);
    gd_global_state_free(&g_g0);
    gd_engine_close(&g_gpu);
    gd_engine_close(&g_gpu2);
    gd_engine_close(&g_cpu);
    gd_diloco_spec_free(g_spec);
    return gd_test_finish();
}
