/* A validator's check (plugin/round_check.c) on what a worker served, as
 * the daemon fetches it: the transcript, the drawn segment's start state
 * without its residual, one chunk of the start and post states with their
 * proofs (from plugin/state_index.c, as served), and the payload. An honest
 * worker passes; every way of serving a chunk or state that is not the
 * committed one fails the check, never the validator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "chain/diloco_spec.h"
#include "plugin/round_engine.h"
#include "plugin/run_config.h"
#include "plugin/state_index.h"
#include "tests/testkit.h"
#include "tests/unit/example_spec.h"

#define RUN 1
#define ROUND 0
#define WORKER "gonka1checkedworker"
#define CHUNK_ELEMS 16384 /* tiny's 115,008 values in 8 chunks */

static gd_engine g_engine;
static gd_global_state g_g0;
static gd_worker_state g_worker;
static gd_trained_round g_round;
static Gonka__Diloco__V1__Commitment g_commit;

/* State leaf `leaf` of the trained round as the worker stores it. */
static void state_file(uint32_t leaf, gd_buf *out) {
    const gd_worker_state *st = leaf < g_round.segments ? &g_round.starts[leaf] : &g_worker;
    CHECK_OK(gd_engine_state_file(&g_engine, ROUND, st, leaf, g_round.segments, out));
}

/* Chunk `chunk` of state leaf `leaf` and its proof, as a member serves it. */
static void served_chunk(uint32_t leaf, uint32_t chunk, gd_buf *body, gd_buf *proof) {
    gd_buf file = {0};
    state_file(leaf, &file);
    char name[64];
    snprintf(name, sizeof name, "state-%u", leaf);
    const char *path = gd_test_write_file(name, file.data, file.len, 0600);
    gd_state_index x;
    gd_state_index_init(&x);
    CHECK_OK(gd_state_index_load(&x, path, false, g_engine.n, CHUNK_ELEMS));
    CHECK_OK(gd_state_index_chunk(&x, chunk, body, proof));
    gd_state_index_free(&x);
    gd_buf_free(&file);
}

/* The honest evidence for (segment, chunk). */
static void evidence(uint32_t segment, uint32_t chunk, gd_check_evidence *ev) {
    memset(ev, 0, sizeof *ev);
    CHECK_OK(gd_buf_append(&ev->transcript, g_round.transcript.data, g_round.transcript.len));
    state_file(segment, &ev->segment_state);
    ev->segment_state.len = GD_WORKER_DESC_BYTES + 12 * g_engine.n; /* the served prefix */
    served_chunk(0, chunk, &ev->start_chunk, &ev->start_proof);
    served_chunk(g_round.segments + 1, chunk, &ev->post_chunk, &ev->post_proof);
    ev->payload = g_round.payload.data;
    ev->payload_len = g_round.payload.len;
}

static gd_check_answer check(uint32_t segment, uint32_t chunk, const gd_check_evidence *ev) {
    gd_check_input in = {.round = ROUND, .target = WORKER, .rank = 0, .commitment = &g_commit,
                         .segment = segment, .step = 3, .chunk = chunk};
    gd_check_answer a;
    CHECK_OK(gd_engine_check(&g_engine, &in, ev, &g_g0, &a));
    return a;
}

static void expect_fail(uint32_t segment, uint32_t chunk, const gd_check_evidence *ev,
                        const char *why) {
    gd_check_answer a = check(segment, chunk, ev);
    if (a.verdict != GD_VERDICT_FAIL || strstr(a.why, why) == NULL) {
        fprintf(stderr, "expected a FAIL naming '%s', got verdict %d: '%s'\n", why,
                (int)a.verdict, a.why);
        gd_test_failures++;
    }
}

static void test_honest_passes(void) {
    for (uint32_t segment = 0; segment < g_round.segments; segment++) {
        uint32_t chunk = (segment * 3) % g_engine.chunks;
        gd_check_evidence ev;
        evidence(segment, chunk, &ev);
        gd_check_answer a = check(segment, chunk, &ev);
        if (a.verdict != GD_VERDICT_PASS) {
            fprintf(stderr, "segment %u chunk %u: %s\n", segment, chunk, a.why);
            gd_test_failures++;
        }
        gd_check_evidence_free(&ev);
    }
    /* The whole state file, residual included, is as good as its prefix. */
    gd_check_evidence ev;
    evidence(1, 2, &ev);
    ev.segment_state.len = GD_WORKER_DESC_BYTES + 16 * g_engine.n;
    CHECK(check(1, 2, &ev).verdict == GD_VERDICT_PASS);
    gd_check_evidence_free(&ev);
}

static void test_tampered_chunks_fail(void) {
    gd_check_evidence ev;
    evidence(1, 5, &ev);
    /* θ_H's chunk with one value changed: its proof no longer holds. */
    ev.post_chunk.data[17] ^= 0x01;
    expect_fail(1, 5, &ev, "trained parameters is not proved");
    ev.post_chunk.data[17] ^= 0x01;
    /* The new residual changed. */
    ev.post_chunk.data[3 * 4 * CHUNK_ELEMS + 8] ^= 0x40;
    expect_fail(1, 5, &ev, "new residual is not proved");
    ev.post_chunk.data[3 * 4 * CHUNK_ELEMS + 8] ^= 0x40;
    /* The starting residual changed. */
    ev.start_chunk.data[3 * 4 * CHUNK_ELEMS] ^= 0x01;
    expect_fail(1, 5, &ev, "starting residual is not proved");
    ev.start_chunk.data[3 * 4 * CHUNK_ELEMS] ^= 0x01;
    CHECK(check(1, 5, &ev).verdict == GD_VERDICT_PASS);
    gd_check_evidence_free(&ev);

    /* Another chunk than the drawn one, with its own valid proofs. */
    evidence(1, 5, &ev);
    gd_buf body = {0}, proof = {0};
    served_chunk(g_round.segments + 1, 4, &body, &proof);
    gd_buf_free(&ev.post_chunk);
    gd_buf_free(&ev.post_proof);
    ev.post_chunk = body;
    ev.post_proof = proof;
    expect_fail(1, 5, &ev, "not proved");
    gd_check_evidence_free(&ev);

    /* The post state's chunk served as the start state's: its residual is
     * e_out, not e_in. */
    evidence(1, 5, &ev);
    gd_buf_free(&ev.start_chunk);
    gd_buf_free(&ev.start_proof);
    served_chunk(g_round.segments + 1, 5, &ev.start_chunk, &ev.start_proof);
    expect_fail(1, 5, &ev, "starting residual is not proved");
    gd_check_evidence_free(&ev);
}

static void test_malformed_chunks_fail(void) {
    gd_check_evidence ev;
    evidence(0, 1, &ev);
    ev.start_chunk.len -= 4; /* one value short */
    expect_fail(0, 1, &ev, "not four arrays");
    ev.start_chunk.len += 4;
    uint8_t extra = 0;
    CHECK_OK(gd_buf_append(&ev.post_proof, &extra, 1)); /* a byte after the proofs */
    expect_fail(0, 1, &ev, "bytes after its proofs");
    ev.post_proof.len -= 2; /* the last proof cut short */
    expect_fail(0, 1, &ev, "chunk 1 of state");
    ev.post_proof.len = 0; /* no proof at all */
    expect_fail(0, 1, &ev, "chunk 1 of state");
    gd_check_evidence_free(&ev);
}

static void test_segment_state_fails(void) {
    gd_check_evidence ev;
    evidence(1, 0, &ev);
    ev.segment_state.len -= 4; /* neither form's size */
    expect_fail(1, 0, &ev, "state 1");
    ev.segment_state.len += 4;
    ev.segment_state.data[GD_WORKER_DESC_BYTES + 100] ^= 0x01;
    expect_fail(1, 0, &ev, "state 1");
    ev.segment_state.data[GD_WORKER_DESC_BYTES + 100] ^= 0x01;
    gd_check_evidence_free(&ev);
    /* Segment 2's start served for segment 1: not the transcript's leaf 1. */
    evidence(2, 0, &ev);
    expect_fail(1, 0, &ev, "not the transcript's leaf");
    gd_check_evidence_free(&ev);
}

int main(void) {
    json_t *spec_json = gd_test_example_spec_json();
    json_object_set_new(spec_json, "chunk_elems", json_integer(CHUNK_ELEMS));
    json_object_set_new(spec_json, "h_min", json_integer(30));
    json_object_set_new(spec_json, "h_max", json_integer(30));
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, spec_json));
    json_decref(spec_json);
    CHECK_OK(gd_engine_open(&g_engine, spec, RUN, &(gd_engine_host){.threads = 1}));
    /* The example names G_0's hash for its own chunk size, which the hash covers. */
    CHECK_OK(gd_run_config_initial_state(&g_engine.rc, 1, g_engine.rc.initial_state_hash));
    CHECK_OK(gd_engine_initial_global(&g_engine, &g_g0));
    CHECK_OK(gd_engine_worker_init(&g_engine, &g_worker, WORKER, 0));
    CHECK_OK(gd_engine_train(&g_engine, ROUND, &g_g0, true, &g_worker, &g_round));
    CHECK(g_round.segments == 3 && g_engine.chunks == 8);
    gonka__diloco__v1__commitment__init(&g_commit);
    const gd_diloco_commit *m = &g_round.commit;
    g_commit.run = m->run;
    g_commit.round = m->round;
    g_commit.participant = (char *)WORKER;
    g_commit.payload_root = (ProtobufCBinaryData){32, (uint8_t *)m->payload_root};
    g_commit.payload_leaves = m->payload_leaves;
    g_commit.payload_bytes = m->payload_bytes;
    g_commit.transcript_root = (ProtobufCBinaryData){32, (uint8_t *)m->transcript_root};
    g_commit.segment_count = m->segment_count;
    g_commit.tokens = g_round.r.tokens;
    RUN_TEST(test_honest_passes);
    RUN_TEST(test_tampered_chunks_fail);
    RUN_TEST(test_malformed_chunks_fail);
    RUN_TEST(test_segment_state_fails);
    gd_trained_round_free(&g_round);
    gd_worker_state_free(&g_worker);
    gd_global_state_free(&g_g0);
    gd_engine_close(&g_engine);
    gd_diloco_spec_free(spec);
    return gd_test_finish();
}
