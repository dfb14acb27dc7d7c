/* A validator's check (plugin/member/round_check.c) on what a worker served, as
 * the daemon fetches it: the transcript, the drawn segment's start state
 * without its residual, one chunk of the start and post states with their
 * proofs (from plugin/member/state_index.c, as served), and the payload. An honest
 * worker passes; every way of serving a chunk or state that is not the
 * committed one fails the check, never the validator. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain/wire/diloco_spec.h"
#include "common/file.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/global_file.h"
#include "plugin/member/round_engine.h"
#include "plugin/member/run_config.h"
#include "plugin/member/state_index.h"
#include "kernels/collective.h"
#include "tests/adversary/adversary.h"
#include "tests/support/backend_copy.h"
#include "tests/support/example_spec.h"
#include "tests/support/round_evidence.h"
#include "tests/support/testkit.h"

#define RUN 1
#define ROUND 0
#define WORKER "gonka1checkedworker"
#define CHUNK_ELEMS 16384 /* tiny's 115,008 values in 8 chunks */

static gd_engine g_engine;
static gd_global_state g_g0;
static gd_worker_state g_worker;
static gd_trained_round g_round;
static Gonka__Diloco__V1__Commitment g_commit;
static Gonka__Diloco__V1__RunSpec *g_spec;

static const gd_test_trained *g_trained(void) {
    static gd_test_trained tr;
    tr = (gd_test_trained){&g_engine, ROUND, &g_round, &g_worker};
    return &tr;
}

static void served_chunk(uint32_t leaf, uint32_t chunk, gd_buf *body, gd_buf *proof) {
    gd_test_served_chunk(g_trained(), leaf, chunk, body, proof);
}

/* The honest evidence for (segment, chunk). */
static void evidence(uint32_t segment, uint32_t chunk, gd_check_evidence *ev) {
    gd_test_evidence(g_trained(), segment, chunk, ev);
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

/* The segment's start read from the file it was fetched to, a window at a
 * time: an honest one passes and gives the in-memory check's digest; a
 * tampered one fails; a file the validator cannot read is its own error,
 * never a verdict against the target. */
static void test_state_read_from_its_file(void) {
    gd_check_evidence ev;
    evidence(1, 2, &ev);
    gd_check_answer want = check(1, 2, &ev);
    CHECK(want.verdict == GD_VERDICT_PASS);
    snprintf(ev.segment_state_path, sizeof ev.segment_state_path, "%s/segment-start.gdws",
             gd_test_tmpdir());
    CHECK_OK(gd_file_create_private(ev.segment_state_path, ev.segment_state.data,
                                    ev.segment_state.len));
    gd_buf kept = ev.segment_state;
    ev.segment_state = (gd_buf){0};
    gd_check_answer got = check(1, 2, &ev);
    CHECK(got.verdict == GD_VERDICT_PASS);
    CHECK(memcmp(got.digest, want.digest, sizeof want.digest) == 0);
    kept.data[GD_WORKER_DESC_BYTES + 4 * g_engine.n + 12] ^= 0x10; /* an exp_avg value */
    CHECK(unlink(ev.segment_state_path) == 0);
    CHECK_OK(gd_file_create_private(ev.segment_state_path, kept.data, kept.len));
    expect_fail(1, 2, &ev, "start state is not transcript leaf 1");
    CHECK(unlink(ev.segment_state_path) == 0);
    gd_check_input in = {.round = ROUND, .target = WORKER, .rank = 0, .commitment = &g_commit,
                         .segment = 1, .step = 3, .chunk = 2};
    gd_check_answer a;
    CHECK_STATUS(gd_engine_check(&g_engine, &in, &ev, &g_g0, &a), GD_ERR_IO);
    ev.segment_state = kept;
    gd_check_evidence_free(&ev);
}

/* G_r read from its file (a memory budget): the check reads only the drawn
 * chunk, passes with the in-memory check's digest, and is not disturbed
 * by a value the disk changed elsewhere; a value changed in the drawn
 * chunk is the validator's own failure (GD_ERR_IO), never a FAIL against
 * an honest worker. */
static void test_global_read_from_its_file(void) {
    gd_artifact_store store;
    char root[512];
    snprintf(root, sizeof root, "%s/global-store", gd_test_tmpdir());
    CHECK_OK(gd_artifact_store_open(&store, root));
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND,
                                gd_trainer_layout(g_engine.trainer)->digest, CHUNK_ELEMS, &g_g0));
    gd_global_state g;
    gd_global_desc d;
    CHECK_OK(gd_global_file_get(&store, NULL, RUN, ROUND, g_engine.n, CHUNK_ELEMS, false, false, NULL,
                                &g, &d));
    CHECK(g.params == NULL && g.momentum == NULL);
    gd_check_evidence ev;
    evidence(1, 2, &ev);
    gd_check_input in = {.round = ROUND, .target = WORKER, .rank = 0, .commitment = &g_commit,
                         .segment = 1, .step = 3, .chunk = 2};
    gd_check_answer want = check(1, 2, &ev), got;
    CHECK_OK(gd_engine_check(&g_engine, &in, &ev, &g, &got));
    CHECK(want.verdict == GD_VERDICT_PASS && got.verdict == GD_VERDICT_PASS);
    CHECK(memcmp(got.digest, want.digest, sizeof want.digest) == 0);
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_GLOBAL, RUN, ROUND, 0));
    uint32_t chunks[2] = {5, 2}; /* another chunk, then the drawn one */
    for (int k = 0; k < 2; k++) {
        uint64_t at = GD_GLOBAL_DESC_BYTES + 4 * ((uint64_t)chunks[k] * CHUNK_ELEMS + 7);
        FILE *f = fopen(path, "r+b");
        CHECK(f != NULL && fseek(f, (long)at, SEEK_SET) == 0);
        int c = fgetc(f);
        CHECK(c != EOF && fseek(f, (long)at, SEEK_SET) == 0 && fputc(c ^ 0x04, f) != EOF);
        fclose(f);
        if (k == 0) {
            CHECK_OK(gd_engine_check(&g_engine, &in, &ev, &g, &got));
            CHECK(got.verdict == GD_VERDICT_PASS);
        } else {
            CHECK_STATUS(gd_engine_check(&g_engine, &in, &ev, &g, &got), GD_ERR_IO);
            CHECK(strstr(gd_error_detail(), "changed on disk") != NULL);
        }
    }
    gd_global_state_free(&g);
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

/* A payload that is the one its worker committed to, with a chunk no
 * decoder accepts (chunk 5), while the drawn chunk (2) is honest: the check
 * decodes the whole payload as it proves it and FAILs it, whichever chunk
 * is drawn. The same bytes under the honest commitment are not the
 * committed payload: a FAIL for that, and no decoding fault is claimed. */
static void test_malformed_payload_fails(void) {
    gd_buf file = {0}, bad = {0};
    gd_test_payload_file(&g_round, &file);
    gd_payload p;
    CHECK_OK(gd_payload_parse(&p, file.data, file.len, NULL));
    CHECK_OK(gd_adv_malform_payload(&p, 5));
    CHECK_OK(gd_payload_serialize(&p, &bad));
    uint8_t root[32];
    uint32_t leaves = 0;
    CHECK_OK(gd_payload_root(&p, root, &leaves));
    Gonka__Diloco__V1__Commitment committed = g_commit;
    committed.payload_root = (ProtobufCBinaryData){32, root};
    committed.payload_leaves = leaves;
    committed.payload_bytes = bad.len;
    const Gonka__Diloco__V1__Commitment *commits[2] = {&committed, &g_commit};
    const char *want[2] = {"payload: chunk 5 does not decode: int8 chunk: value -128",
                           "payload is not the one it committed"};
    for (int i = 0; i < 2; i++) {
        gd_check_evidence ev;
        evidence(1, 2, &ev);
        ev.payload = bad.data;
        ev.payload_len = bad.len;
        gd_check_input in = {.round = ROUND, .target = WORKER, .rank = 0,
                             .commitment = commits[i], .segment = 1, .step = 3, .chunk = 2};
        gd_check_answer a;
        CHECK_OK(gd_engine_check(&g_engine, &in, &ev, &g_g0, &a));
        bool ok = a.verdict == GD_VERDICT_FAIL && strstr(a.why, want[i]) != NULL;
        printf("%-4s malformed payload under %s commitment: %s\n", ok ? "ok" : "FAIL",
               i == 0 ? "its own" : "the honest", a.why);
        CHECK(ok);
        gd_check_evidence_free(&ev);
    }
    /* The payload kept as a member keeps it, checked where it lies: opened,
     * with the fault named; the honest one has none. */
    char path[512];
    snprintf(path, sizeof path, "%s/malformed.gdpl", gd_test_tmpdir());
    CHECK_OK(gd_file_create_private(path, bad.data, bad.len));
    gd_payload_view v;
    gd_payload_decoded d;
    CHECK_OK(gd_engine_payload_view_path_proved(&g_engine, &v, NULL, &d, ROUND, WORKER, path,
                                                root, leaves));
    CHECK(d.malformed && d.bad_chunk == 5 && strstr(d.why, "-128") != NULL && !d.has_norm);
    gd_payload_view_close(&v);
    CHECK(unlink(path) == 0);
    CHECK_OK(gd_file_create_private(path, file.data, file.len));
    CHECK_OK(gd_engine_payload_view_path_proved(&g_engine, &v, NULL, &d, ROUND, WORKER, path,
                                                g_commit.payload_root.data,
                                                g_commit.payload_leaves));
    CHECK(!d.malformed);
    gd_payload_view_close(&v);
    CHECK(unlink(path) == 0);
    gd_payload_free(&p);
    gd_buf_free(&file);
    gd_buf_free(&bad);
}

static void test_segment_state_fails(void) {
    gd_check_evidence ev;
    evidence(1, 0, &ev);
    ev.segment_state.len -= 4; /* neither form's size */
    expect_fail(1, 0, &ev, "state 1");
    ev.segment_state.len += 4;
    /* Arrays that are not its descriptor's: the re-execution hashes what
     * it loads, and that is not the transcript's leaf. */
    ev.segment_state.data[GD_WORKER_DESC_BYTES + 100] ^= 0x01;
    expect_fail(1, 0, &ev, "start state is not transcript leaf 1");
    ev.segment_state.data[GD_WORKER_DESC_BYTES + 100] ^= 0x01;
    gd_check_evidence_free(&ev);
    /* Segment 2's start served for segment 1: not the transcript's leaf 1. */
    evidence(2, 0, &ev);
    expect_fail(1, 0, &ev, "not the transcript's leaf");
    gd_check_evidence_free(&ev);
}

/* Chunk `chunk` of a payload file and its proof, as a member serves it. */
static void payload_chunk(const gd_buf *file, uint32_t chunk, gd_buf *body, gd_buf *proof) {
    gd_payload p;
    CHECK_OK(gd_payload_parse(&p, file->data, file->len, NULL));
    gd_mmr_proof pr;
    CHECK_OK(gd_payload_prove_chunk(&p, &pr, chunk));
    CHECK_OK(gd_buf_append(body, p.chunks[chunk].raw, p.chunks[chunk].raw_len));
    CHECK_OK(gd_mmr_proof_encode(&pr, proof));
    gd_payload_free(&p);
}

/* The descriptor of this process's open file that has no name and was
 * made as a round's start file (start.tmp-*), or -1. */
static int unnamed_start_fd(void) {
    DIR *d = opendir("/proc/self/fd");
    int found = -1;
    struct dirent *ent;
    while (d != NULL && found < 0 && (ent = readdir(d)) != NULL) {
        char link[64], target[1024];
        snprintf(link, sizeof link, "/proc/self/fd/%s", ent->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (strstr(target, "/start.tmp-") != NULL && strstr(target, "(deleted)") != NULL)
            found = atoi(ent->d_name);
    }
    if (d != NULL)
        closedir(d);
    return found;
}

/* S_r kept in a file of its own (what a tight memory budget asks): the
 * values in memory, read back a chunk at a time, with nothing left in the
 * directory by name. A chunk the disk changes once it was written is this
 * host's failure (GD_ERR_IO) when read, never another start; the other
 * chunks still read; the file goes with the state. */
static void check_start_in_its_file(gd_engine *e, const gd_global_state *s1,
                                    const gd_global_state *g0, const char *payload_path,
                                    const uint8_t root[32], uint32_t leaves) {
    gd_global_state s1f;
    CHECK_OK(gd_engine_overlap_start_path(e, &s1f, 1, WORKER, g0, payload_path, root, leaves,
                                          gd_test_tmpdir()));
    CHECK(s1f.params == NULL && s1f.momentum == NULL && s1f.file != NULL && s1f.round == 1);
    float *back = malloc(e->n * sizeof(float));
    CHECK_OK(gd_global_state_read(&s1f, back, NULL, 0, e->n));
    CHECK(memcmp(back, s1->params, e->n * sizeof(float)) == 0);
    DIR *d = opendir(gd_test_tmpdir());
    struct dirent *ent;
    while (d != NULL && (ent = readdir(d)) != NULL)
        CHECK(strncmp(ent->d_name, "start.tmp-", 10) != 0);
    if (d != NULL)
        closedir(d);
    int fd = unnamed_start_fd();
    CHECK(fd >= 0);
    uint8_t byte = 0;
    off_t at = 4 * (off_t)CHUNK_ELEMS + 13;
    CHECK(pread(fd, &byte, 1, at) == 1);
    byte ^= 0x10;
    CHECK(pwrite(fd, &byte, 1, at) == 1);
    CHECK_STATUS(gd_global_state_read(&s1f, back, NULL, 0, e->n), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "changed on disk") != NULL);
    CHECK_OK(gd_global_state_read(&s1f, back, NULL, 0, CHUNK_ELEMS));
    gd_values_reader r = gd_global_params_reader(&s1f);
    CHECK_STATUS(r.read(r.ctx, back, CHUNK_ELEMS, CHUNK_ELEMS), GD_ERR_IO);
    gd_global_state_free(&s1f);
    CHECK(unnamed_start_fd() < 0);
    free(back);
}

/* An overlap run: the worker committed round 0, so round 1 starts from
 * S_1 = G_0 - Δ̂_0 (gd_engine_overlap_start_path), not G_1, and a check of it
 * proves the drawn chunk of leaf 0 against G_0's chunk and the chunk of the
 * round 0 payload the target serves. Honest evidence passes at every
 * chunk; a round trained from G_1 (the rule without overlap), a previous
 * payload chunk that is not the drawn one, and a wrong G_0 chunk fail; a
 * validator that brings no G_0 chunk is a local error, not a verdict. */
static void test_overlapped_start(void) {
    json_t *j = gd_test_example_spec_json();
    json_object_set_new(j, "chunk_elems", json_integer(CHUNK_ELEMS));
    json_object_set_new(j, "h_min", json_integer(30));
    json_object_set_new(j, "h_max", json_integer(30));
    json_object_set_new(j, "overlap", json_true());
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, j));
    json_decref(j);
    gd_engine e;
    CHECK_OK(gd_engine_open(&e, spec, RUN, &(gd_engine_host){.threads = 1}));
    CHECK_OK(gd_run_config_initial_state(&e.rc, e.rc.initial_state_hash, 1));
    gd_global_state g0, g1, s1;
    CHECK_OK(gd_engine_initial_global(&e, &g0));
    gd_worker_state w, after0;
    CHECK_OK(gd_engine_worker_init(&e, &w, WORKER, 0));
    gd_trained_round t0, t1;
    CHECK_OK(gd_engine_train(&e, &t0, 0, &g0, true, &w));
    CHECK_OK(gd_worker_state_copy(&after0, &w));
    gd_buf file0; /* round 0's payload file */
    gd_test_payload_file(&t0, &file0);
    /* G_1 from the round's one payload. */
    CHECK_OK(gd_global_state_copy(&g1, &g0));
    gd_engine_contribution c = {.address = WORKER, .tokens = t0.r.tokens,
                                .payload = file0.data, .payload_len = file0.len,
                                .root = t0.commit.payload_root,
                                .leaves = t0.commit.payload_leaves};
    CHECK_OK(gd_engine_aggregate(&e, 0, &c, 1, &g1));
    /* S_1 from the payload's file, read a chunk at a time: G_0 minus the
     * whole payload decoded at once, with no momentum. */
    char path[600];
    snprintf(path, sizeof path, "%s/own-payload.gdpl", gd_test_tmpdir());
    CHECK_OK(gd_file_create_private(path, file0.data, file0.len));
    CHECK_OK(gd_engine_overlap_start_path(&e, &s1, 1, WORKER, &g0, path,
                                          t0.commit.payload_root, t0.commit.payload_leaves,
                                          NULL));
    CHECK(memcmp(s1.params, g1.params, e.n * sizeof(float)) != 0);
    gd_payload whole;
    CHECK_OK(gd_payload_parse(&whole, file0.data, file0.len, NULL));
    float *decoded = malloc(e.n * sizeof(float));
    CHECK_OK(gd_payload_decode(&whole, decoded, NULL));
    bool same = s1.momentum == NULL;
    for (size_t i = 0; i < e.n; i++)
        same = same && s1.params[i] == g0.params[i] - decoded[i];
    CHECK(same);
    free(decoded);
    gd_payload_free(&whole);
    check_start_in_its_file(&e, &s1, &g0, path, t0.commit.payload_root,
                            t0.commit.payload_leaves);
    /* Its own payload under another root is not its start. */
    uint8_t other_root[32];
    memcpy(other_root, t0.commit.payload_root, 32);
    other_root[0] ^= 1;
    gd_global_state bad;
    CHECK_STATUS(gd_engine_overlap_start_path(&e, &bad, 1, WORKER, &g0, path, other_root,
                                              t0.commit.payload_leaves, NULL),
                 GD_ERR_INVALID);
    CHECK(unlink(path) == 0);
    CHECK(gd_engine_overlap_start_path(&e, &bad, 1, WORKER, &g0, path, t0.commit.payload_root,
                                       t0.commit.payload_leaves, NULL) != GD_OK);
    CHECK_OK(gd_engine_train(&e, &t1, 1, &s1, false, &w));
    Gonka__Diloco__V1__Commitment c0, c1;
    gd_test_commitment(&t0, WORKER, &c0);
    gd_test_commitment(&t1, WORKER, &c1);
    gd_test_trained tr1 = {&e, 1, &t1, &w};

    for (int variant = 0; variant < 2; variant++) {
        /* variant 1: the same worker's round 1 trained from G_1 instead */
        gd_worker_state w1b;
        gd_trained_round t1b;
        const gd_trained_round *t = &t1;
        gd_test_trained tr = tr1;
        Gonka__Diloco__V1__Commitment cm = c1;
        if (variant == 1) {
            CHECK_OK(gd_worker_state_copy(&w1b, &after0));
            CHECK_OK(gd_engine_train(&e, &t1b, 1, &g1, false, &w1b));
            t = &t1b;
            tr = (gd_test_trained){&e, 1, &t1b, &w1b};
            gd_test_commitment(&t1b, WORKER, &cm);
        }
        for (uint32_t chunk = 0; chunk < e.chunks; chunk++) {
            uint32_t segment = chunk % t->segments;
            size_t lo = 0, count = 0;
            CHECK(gd_values_chunk_range(e.n, CHUNK_ELEMS, chunk, &lo, &count));
            gd_check_evidence ev;
            memset(&ev, 0, sizeof ev);
            CHECK_OK(gd_buf_append(&ev.transcript, t->transcript.data, t->transcript.len));
            CHECK_OK(gd_buf_append(&ev.prev_transcript, t0.transcript.data, t0.transcript.len));
            gd_test_state_file(&tr, &ev.segment_state, segment);
            gd_test_served_chunk(&tr, 0, chunk, &ev.start_chunk, &ev.start_proof);
            gd_test_served_chunk(&tr, t->segments + 1, chunk, &ev.post_chunk, &ev.post_proof);
            payload_chunk(&file0, chunk, &ev.prev_payload_chunk, &ev.prev_payload_proof);
            gd_buf file;
            gd_test_payload_file(t, &file);
            ev.payload = file.data;
            ev.payload_len = file.len;
            gd_check_input in = {.round = 1, .target = WORKER, .rank = 0, .commitment = &cm,
                                 .prev = &c0, .segment = segment, .step = 1, .chunk = chunk,
                                 .prev_global_chunk = g0.params + lo};
            gd_check_answer a;
            CHECK_OK(gd_engine_check(&e, &in, &ev, &g1, &a));
            if (variant == 0 && a.verdict != GD_VERDICT_PASS) {
                fprintf(stderr, "overlapped chunk %u: %s\n", chunk, a.why);
                gd_test_failures++;
            }
            if (variant == 1)
                CHECK(a.verdict == GD_VERDICT_FAIL && strstr(a.why, "start chunk") != NULL);
            if (variant == 0 && chunk == 1) {
                /* the round 0 payload's chunk 2 served for chunk 1 */
                gd_check_evidence other = ev;
                gd_buf body = {0}, proof = {0};
                payload_chunk(&file0, 2, &body, &proof);
                other.prev_payload_chunk = body;
                other.prev_payload_proof = proof;
                CHECK_OK(gd_engine_check(&e, &in, &other, &g1, &a));
                CHECK(a.verdict == GD_VERDICT_FAIL &&
                      strstr(a.why, "previous payload chunk") != NULL);
                gd_buf_free(&body);
                gd_buf_free(&proof);
                /* a G_0 chunk that is not G_0's (the validator's own) */
                in.prev_global_chunk = g1.params + lo;
                CHECK_OK(gd_engine_check(&e, &in, &ev, &g1, &a));
                CHECK(a.verdict == GD_VERDICT_FAIL && strstr(a.why, "start chunk") != NULL);
                in.prev_global_chunk = NULL;
                CHECK_STATUS(gd_engine_check(&e, &in, &ev, &g1, &a), GD_ERR_INVALID);
            }
            gd_check_evidence_free(&ev);
            gd_buf_free(&file);
        }
        if (variant == 1) {
            gd_trained_round_free(&t1b);
            gd_worker_state_free(&w1b);
        }
    }
    gd_buf_free(&file0);
    gd_trained_round_free(&t0);
    gd_trained_round_free(&t1);
    gd_worker_state_free(&w);
    gd_worker_state_free(&after0);
    gd_global_state_free(&g0);
    gd_global_state_free(&g1);
    gd_global_state_free(&s1);
    gd_engine_close(&e);
    gd_diloco_spec_free(spec);
}

/* The round engine on a fully sharded trainer (trainer/train_full.c): a
 * worker that trains over two device-like ranks, each holding a shard of
 * the model, makes the one-rank round byte for byte, and a validator's
 * re-execution on one rank passes every segment of it; a sharded worker
 * that trained with another learning rate than the run's, committing
 * states that describe themselves as the run's, fails the re-execution. */
static void test_sharded_worker_checked_by_one_rank(void) {
    gd_engine e;
    CHECK_OK(gd_engine_open(&e, g_spec, RUN, &(gd_engine_host){.threads = 1}));
    CHECK_OK(gd_run_config_initial_state(&e.rc, e.rc.initial_state_hash, 1));
    gd_backend be[2];
    gd_copy_backend *cbs[2];
    for (int r = 0; r < 2; r++)
        CHECK((cbs[r] = gd_copy_backend_new(&be[r], NULL)) != NULL);
    gd_collective coll;
    CHECK_OK(gd_collective_host_open(&coll, be, 2));
    gd_trainer_free(e.trainer);
    e.trainer = NULL;
    CHECK_OK(gd_trainer_new_ranks(&e.trainer, &e.rc.model, &e.rc.diloco.inner, 1,
                                  &(gd_trainer_host){be, 2, &coll, {GD_SHARD_FULL}}));
    gd_worker_state w, cheat_w;
    gd_trained_round t, cheat;
    CHECK_OK(gd_engine_worker_init(&e, &w, WORKER, 0));
    CHECK_OK(gd_engine_train(&e, &t, ROUND, &g_g0, true, &w));
    CHECK(gd_test_same_payload(&t, &g_round));
    CHECK(t.transcript.len == g_round.transcript.len &&
          memcmp(t.transcript.data, g_round.transcript.data, t.transcript.len) == 0);
    CHECK(memcmp(t.commit.transcript_root, g_round.commit.transcript_root, 32) == 0);
    gd_test_trained tr = {&e, ROUND, &t, &w};
    for (uint32_t segment = 0; segment < t.segments; segment++) {
        gd_check_evidence ev;
        gd_test_evidence(&tr, segment, (segment * 5) % g_engine.chunks, &ev);
        gd_check_answer a = check(segment, (segment * 5) % g_engine.chunks, &ev);
        if (a.verdict != GD_VERDICT_PASS) {
            fprintf(stderr, "sharded segment %u: %s\n", segment, a.why);
            gd_test_failures++;
        }
        gd_check_evidence_free(&ev);
    }
    /* The cheat: twice the run's learning rate. */
    CHECK_OK(gd_engine_worker_init(&e, &cheat_w, WORKER, 0));
    e.rc.diloco.inner.optim.lr *= 2;
    CHECK_OK(gd_engine_train(&e, &cheat, ROUND, &g_g0, true, &cheat_w));
    Gonka__Diloco__V1__Commitment c;
    gd_test_commitment(&cheat, WORKER, &c);
    gd_test_trained ctr = {&e, ROUND, &cheat, &cheat_w};
    gd_check_evidence ev;
    gd_test_evidence(&ctr, 1, 3, &ev);
    gd_check_input in = {.round = ROUND, .target = WORKER, .rank = 0, .commitment = &c,
                         .segment = 1, .step = 3, .chunk = 3};
    gd_check_answer a;
    CHECK_OK(gd_engine_check(&g_engine, &in, &ev, &g_g0, &a));
    CHECK(a.verdict == GD_VERDICT_FAIL);
    fprintf(stderr, "  the cheat: %s\n", a.why);
    gd_check_evidence_free(&ev);
    gd_trained_round_free(&cheat);
    gd_worker_state_free(&cheat_w);
    gd_trained_round_free(&t);
    gd_worker_state_free(&w);
    gd_engine_close(&e);
    gd_collective_close(&coll);
    for (int r = 0; r < 2; r++)
        CHECK(gd_copy_backend_free(cbs[r]));
}

int main(void) {
    json_t *spec_json = gd_test_example_spec_json();
    json_object_set_new(spec_json, "chunk_elems", json_integer(CHUNK_ELEMS));
    json_object_set_new(spec_json, "h_min", json_integer(30));
    json_object_set_new(spec_json, "h_max", json_integer(30));
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, spec_json));
    g_spec = spec;
    json_decref(spec_json);
    CHECK_OK(gd_engine_open(&g_engine, spec, RUN, &(gd_engine_host){.threads = 1}));
    /* The example names G_0's hash for its own chunk size, which the hash covers. */
    CHECK_OK(gd_run_config_initial_state(&g_engine.rc, g_engine.rc.initial_state_hash, 1));
    CHECK_OK(gd_engine_initial_global(&g_engine, &g_g0));
    CHECK_OK(gd_engine_worker_init(&g_engine, &g_worker, WORKER, 0));
    CHECK_OK(gd_engine_train(&g_engine, &g_round, ROUND, &g_g0, true, &g_worker));
    CHECK(g_round.segments == 3 && g_engine.chunks == 8);
    gd_test_commitment(&g_round, WORKER, &g_commit);
    RUN_TEST(test_honest_passes);
    RUN_TEST(test_state_read_from_its_file);
    RUN_TEST(test_global_read_from_its_file);
    RUN_TEST(test_tampered_chunks_fail);
    RUN_TEST(test_malformed_chunks_fail);
    RUN_TEST(test_malformed_payload_fails);
    RUN_TEST(test_segment_state_fails);
    RUN_TEST(test_overlapped_start);
    RUN_TEST(test_sharded_worker_checked_by_one_rank);
    gd_trained_round_free(&g_round);
    gd_worker_state_free(&g_worker);
    gd_global_state_free(&g_g0);
    gd_engine_close(&g_engine);
    gd_diloco_spec_free(spec);
    return gd_test_finish();
}
