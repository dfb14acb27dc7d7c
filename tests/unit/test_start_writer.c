/* Segment-start states written as training reaches them
 * (plugin/member/start_writer.h through the round engine's job sink): a
 * round trained a segment at a time leaves each start, and the state after
 * encoding, on disk byte for byte as the whole-round path's copies
 * serialize, with the same payload and transcript, in the background and
 * in the foreground; the next round loads the worker's state from that
 * file and gives the whole path's bits, and a damaged file is refused as
 * the host's own failure; a write that
 * fails is reported, never lost, so the round cannot be committed; and a
 * process killed (SIGKILL) while its writer is busy, or while it encodes
 * its payload into place, leaves each start and the payload whole or
 * absent, never torn, and the round trained again after it leaves the
 * same files. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chain/wire/diloco_spec.h"
#include "common/file.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/round_engine.h"
#include "plugin/member/start_writer.h"
#include "tests/support/example_spec.h"
#include "tests/support/kill_child.h"
#include "tests/support/round_evidence.h"
#include "tests/support/testkit.h"

#define RUN 1
#define ROUND 2
#define WORKER "gonka1startwriter"

static gd_engine g_engine;
static gd_global_state g_g0;
static gd_trained_round g_whole; /* gd_engine_train's round, starts kept in memory */
static gd_worker_state g_post;    /* the worker's state after it */

/* Round `round` trained as a job from prev (NULL: fresh) whose states go
 * to writer; out receives it. */
static gd_status train_round(gd_start_writer *writer, gd_trained_round *out, uint64_t round,
                             const gd_state_file_view *prev) {
    gd_engine_job job;
    memset(&job, 0, sizeof job);
    gd_engine_start_sink sink = gd_start_writer_sink(writer);
    gd_status s =
        gd_engine_job_begin(&g_engine, round, &g_g0, NULL, prev, WORKER, 0, &sink, &job);
    bool done = false;
    while (s == GD_OK && !done)
        s = gd_engine_job_segment(&g_engine, &job, NULL, &done);
    if (s == GD_OK) {
        gd_engine_job_take(&job, out);
        s = gd_start_writer_drain(writer);
    }
    gd_engine_job_free(&job);
    return s;
}

static gd_status train_job(gd_start_writer *writer, gd_trained_round *out) {
    return train_round(writer, out, ROUND, NULL);
}

/* A job's payload went to its place in the writer's store as it was
 * encoded (none of it kept in memory), and that file is want's, byte for
 * byte, under the same commitment. */
static bool stored_payload_is(const gd_start_writer *writer, uint64_t round,
                              const gd_trained_round *t, const gd_trained_round *want) {
    gd_buf got = {0}, file = {0};
    gd_test_payload_file(want, &file);
    bool same = t->r.payload.in_file &&
                gd_artifact_get(writer->store, &got, GD_ARTIFACT_PAYLOAD, writer->run, round, 0,
                                file.len + 1) == GD_OK &&
                got.len == file.len && memcmp(got.data, file.data, file.len) == 0 &&
                memcmp(t->commit.payload_root, want->commit.payload_root, 32) == 0 &&
                t->commit.payload_bytes == want->commit.payload_bytes;
    gd_buf_free(&got);
    gd_buf_free(&file);
    return same;
}

static gd_artifact_store open_store(const char *name) {
    gd_artifact_store st;
    char root[512];
    snprintf(root, sizeof root, "%s/%s", gd_test_tmpdir(), name);
    CHECK_OK(gd_artifact_store_open(&st, root));
    return st;
}

/* Every start state in store is the whole round's copy, serialized, and
 * so is the state after encoding. */
static void expect_starts(const gd_artifact_store *store) {
    for (uint32_t leaf = 0; leaf <= g_whole.segments + 1; leaf++) {
        if (leaf == g_whole.segments)
            continue; /* never stored */
        const gd_worker_state *w = leaf < g_whole.segments ? &g_whole.starts[leaf] : &g_post;
        gd_buf want = {0}, got = {0};
        CHECK_OK(gd_engine_state_file(&g_engine, &want, ROUND, w, leaf, g_whole.segments));
        CHECK_OK(gd_artifact_get(store, &got, GD_ARTIFACT_STATE, RUN, ROUND, leaf, want.len));
        if (got.len != want.len || memcmp(got.data, want.data, want.len) != 0) {
            fprintf(stderr, "leaf %u: the file written is not the state's file\n", leaf);
            gd_test_failures++;
        }
        gd_buf_free(&want);
        gd_buf_free(&got);
    }
}

static void written_as_reached(bool background) {
    gd_artifact_store store = open_store(background ? "back" : "fore");
    gd_start_writer writer;
    CHECK_OK(gd_start_writer_open(&writer, &store, RUN, background));
    gd_trained_round t;
    CHECK_OK(train_job(&writer, &t));
    CHECK(t.starts == NULL);                       /* none kept in memory */
    CHECK(writer.written == g_whole.segments + 1);
    CHECK(stored_payload_is(&writer, ROUND, &t, &g_whole));
    CHECK(t.transcript.len == g_whole.transcript.len &&
          memcmp(t.transcript.data, g_whole.transcript.data, t.transcript.len) == 0);
    expect_starts(&store);
    gd_trained_round_free(&t);
    gd_start_writer_close(&writer);
}

static void test_background(void) { written_as_reached(true); }
static void test_foreground(void) { written_as_reached(false); }

/* A store whose run directory cannot be made: a file is in its way. */
static void test_failed_write_is_reported(void) {
    for (int background = 0; background < 2; background++) {
        gd_artifact_store store = open_store(background ? "blocked-back" : "blocked-fore");
        char in_the_way[600];
        snprintf(in_the_way, sizeof in_the_way, "%s/run-%d", store.root, RUN);
        CHECK_OK(gd_file_write_atomic(in_the_way, &(gd_bytes_part){"x", 1}, 1, 0600));
        gd_start_writer writer;
        CHECK_OK(gd_start_writer_open(&writer, &store, RUN, background != 0));
        gd_trained_round t;
        memset(&t, 0, sizeof t);
        CHECK_STATUS(train_job(&writer, &t), GD_ERR_IO);
        CHECK(strstr(gd_error_detail(), "state of round 2, leaf 0") != NULL);
        CHECK(strstr(gd_error_detail(), "a file is in the way") != NULL);
        CHECK(writer.written == 0);
        /* Given up and the way cleared, the next round's writes go through. */
        gd_start_writer_forget(&writer);
        CHECK(remove(in_the_way) == 0);
        CHECK_OK(train_job(&writer, &t));
        expect_starts(&store);
        gd_trained_round_free(&t);
        gd_start_writer_close(&writer);
    }
}

/* The state file at path as a view (read through the file returned). */
static FILE *open_view(gd_state_file_view *v, const char *path) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    struct stat st;
    CHECK(fstat(fileno(f), &st) == 0);
    CHECK_OK(gd_state_file_view_open_file(v, fileno(f), (uint64_t)st.st_size, &g_engine.tag,
                                          g_engine.n));
    return f;
}

static void flip_byte(const char *path, long at) {
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    CHECK(fseek(f, at, SEEK_SET) == 0);
    int c = fgetc(f);
    CHECK(fseek(f, at, SEEK_SET) == 0);
    fputc(c ^ 0x10, f);
    CHECK(fclose(f) == 0);
}

/* The round after reads the residual it began with from the previous
 * post state's file a window at a time, whenever it needs it: damaged on
 * disk while the round trains, the encoding refuses it as this host's
 * failure (GD_ERR_IO) rather than commit a payload no check reproduces. */
static void test_residual_damaged_while_training(void) {
    gd_artifact_store store = open_store("residual");
    gd_start_writer writer;
    CHECK_OK(gd_start_writer_open(&writer, &store, RUN, false));
    gd_trained_round t;
    CHECK_OK(train_job(&writer, &t));
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_STATE, RUN, ROUND,
                              t.segments + 1));
    gd_state_file_view prev;
    FILE *f = open_view(&prev, path);
    gd_engine_start_sink sink = gd_start_writer_sink(&writer);
    gd_engine_job job;
    memset(&job, 0, sizeof job);
    CHECK_OK(gd_engine_job_begin(&g_engine, ROUND + 1, &g_g0, NULL, &prev, WORKER, 0, &sink,
                                 &job));
    fclose(f); /* the job reads through its own descriptor */
    bool done = false;
    CHECK_OK(gd_engine_job_segment(&g_engine, &job, NULL, &done));
    flip_byte(path, GD_WORKER_DESC_BYTES + 12 * (long)g_engine.n + 4 * 77 + 1);
    gd_status s = GD_OK;
    while (s == GD_OK && !done)
        s = gd_engine_job_segment(&g_engine, &job, NULL, &done);
    CHECK_STATUS(s, GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "residual read back") != NULL);
    /* leaf S + 1 of the failed round was given up, not put in place */
    char post[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, post, sizeof post, GD_ARTIFACT_STATE, RUN, ROUND + 1,
                              t.segments + 1));
    CHECK(access(post, F_OK) != 0);
    gd_engine_job_free(&job);
    gd_trained_round_free(&t);
    gd_start_writer_forget(&writer);
    gd_start_writer_close(&writer);
}

/* The round after: loaded from the state file the job left, it gives the
 * whole path's round from the worker's state in memory; a file whose
 * moments were damaged on disk is this host's failure (GD_ERR_IO), the
 * round does not start and its first start is not stored. */
static void next_round_from_file(bool background) {
    gd_artifact_store store = open_store(background ? "next-back" : "next-fore");
    gd_start_writer writer;
    CHECK_OK(gd_start_writer_open(&writer, &store, RUN, background));
    gd_trained_round t, next, whole_next;
    CHECK_OK(train_job(&writer, &t));
    gd_worker_state w;
    CHECK_OK(gd_worker_state_copy(&w, &g_post));
    CHECK_OK(gd_engine_train(&g_engine, &whole_next, ROUND + 1, &g_g0, false, &w));
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_STATE, RUN, ROUND,
                              t.segments + 1));
    char leaf0[GD_ARTIFACT_PATH_MAX]; /* the next round's first start */
    CHECK_OK(gd_artifact_path(&store, leaf0, sizeof leaf0, GD_ARTIFACT_STATE, RUN, ROUND + 1, 0));
    for (int damaged = 0; damaged < 2; damaged++) {
        if (damaged) { /* one byte of exp_avg flipped */
            flip_byte(path, GD_WORKER_DESC_BYTES + 4 * (long)g_engine.n + 123);
            CHECK(unlink(leaf0) == 0);
        }
        gd_state_file_view prev;
        FILE *f = open_view(&prev, path);
        memset(&next, 0, sizeof next);
        gd_status s = train_round(&writer, &next, ROUND + 1, &prev);
        fclose(f);
        if (damaged) {
            CHECK_STATUS(s, GD_ERR_IO);
            CHECK(strstr(gd_error_detail(), "does not match its descriptor") != NULL);
            CHECK(access(leaf0, F_OK) != 0); /* a start from a damaged file is never stored */
            continue;
        }
        CHECK_OK(s);
        CHECK(stored_payload_is(&writer, ROUND + 1, &next, &whole_next));
        CHECK(next.transcript.len == whole_next.transcript.len &&
              memcmp(next.transcript.data, whole_next.transcript.data, next.transcript.len) == 0);
        gd_trained_round_free(&next);
    }
    gd_trained_round_free(&whole_next);
    gd_trained_round_free(&t);
    gd_worker_state_free(&w);
    gd_start_writer_close(&writer);
}

static void test_next_round_from_file(void) {
    next_round_from_file(false);
    next_round_from_file(true);
}

/* A borrowed start that changes while the round trains (a bug that would
 * commit a Δ from no start the transcript names) fails the round; taken
 * over, the start is the job's and gives the borrowed round's bits. */
static void test_start_borrowed_or_taken(void) {
    gd_artifact_store store = open_store("start");
    gd_start_writer writer;
    CHECK_OK(gd_start_writer_open(&writer, &store, RUN, false));
    gd_engine_start_sink sink = gd_start_writer_sink(&writer);
    gd_global_state g;
    CHECK_OK(gd_global_state_copy(&g, &g_g0));
    gd_engine_job job;
    memset(&job, 0, sizeof job);
    CHECK_STATUS(gd_engine_job_begin(&g_engine, ROUND, &g, &g, NULL, WORKER, 0, &sink, &job),
                 GD_ERR_INVALID);
    CHECK_OK(gd_engine_job_begin(&g_engine, ROUND, &g, NULL, NULL, WORKER, 0, &sink, &job));
    bool done = false;
    CHECK_OK(gd_engine_job_segment(&g_engine, &job, NULL, &done));
    float kept = g.params[g_engine.n / 2];
    g.params[g_engine.n / 2] += 1.0f;
    gd_status s = GD_OK;
    while (s == GD_OK && !done)
        s = gd_engine_job_segment(&g_engine, &job, NULL, &done);
    CHECK_STATUS(s, GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "start changed while the round trained") != NULL);
    gd_engine_job_free(&job);
    gd_start_writer_forget(&writer);
    g.params[g_engine.n / 2] = kept;
    CHECK(memcmp(g.params, g_g0.params, g_engine.n * sizeof(float)) == 0);
    CHECK_OK(gd_engine_job_begin(&g_engine, ROUND, NULL, &g, NULL, WORKER, 0, &sink, &job));
    CHECK(g.params == NULL); /* the job's now */
    done = false;
    while (!done)
        CHECK_OK(gd_engine_job_segment(&g_engine, &job, NULL, &done));
    gd_trained_round t;
    gd_engine_job_take(&job, &t);
    CHECK(stored_payload_is(&writer, ROUND, &t, &g_whole));
    gd_trained_round_free(&t);
    gd_engine_job_free(&job);
    CHECK_OK(gd_start_writer_drain(&writer));
    gd_start_writer_close(&writer);
}

/* The child of test_killed_while_writing: the round trained as a job with
 * a background writer into the store at root, as a member does. */
static int child_main(const char *root, int ready) {
    gd_artifact_store store;
    gd_start_writer writer;
    gd_trained_round t;
    gd_test_child_ready(ready);
    if (gd_artifact_store_open(&store, root) != GD_OK ||
        gd_start_writer_open(&writer, &store, RUN, true) != GD_OK || train_job(&writer, &t) != GD_OK)
        return 1;
    gd_trained_round_free(&t);
    gd_start_writer_close(&writer);
    return 0;
}

/* The states in store (leaves below S and the post state S + 1): each
 * whole (the round's file) or absent. */
static size_t starts_present(const gd_artifact_store *store) {
    size_t present = 0;
    for (uint32_t leaf = 0; leaf <= g_whole.segments + 1; leaf++) {
        if (leaf == g_whole.segments)
            continue; /* never stored */
        const gd_worker_state *w = leaf < g_whole.segments ? &g_whole.starts[leaf] : &g_post;
        gd_buf want = {0}, got = {0};
        CHECK_OK(gd_engine_state_file(&g_engine, &want, ROUND, w, leaf, g_whole.segments));
        gd_status s = gd_artifact_get(store, &got, GD_ARTIFACT_STATE, RUN, ROUND, leaf,
                                      want.len + 1);
        if (s == GD_OK) {
            present++;
            if (got.len != want.len || memcmp(got.data, want.data, want.len) != 0) {
                fprintf(stderr, "leaf %u: a torn or wrong file (%zu bytes)\n", leaf, got.len);
                gd_test_failures++;
            }
        } else if (s != GD_ERR_NOT_FOUND) {
            CHECK_OK(s);
        }
        gd_buf_free(&want);
        gd_buf_free(&got);
    }
    return present;
}

/* Whether store holds the round's payload, which must then be the whole
 * round's file, byte for byte (encoded into place as the round made it). */
static bool payload_present(const gd_artifact_store *store) {
    gd_buf want = {0}, got = {0};
    gd_test_payload_file(&g_whole, &want);
    gd_status s = gd_artifact_get(store, &got, GD_ARTIFACT_PAYLOAD, RUN, ROUND, 0, want.len + 1);
    if (s != GD_ERR_NOT_FOUND)
        CHECK_OK(s);
    if (s == GD_OK && (got.len != want.len || memcmp(got.data, want.data, want.len) != 0)) {
        fprintf(stderr, "the payload: a torn or wrong file (%zu bytes)\n", got.len);
        gd_test_failures++;
    }
    gd_buf_free(&want);
    gd_buf_free(&got);
    return s == GD_OK;
}

/* SIGKILL at spread-out moments of a child training the round: what it
 * left (the states and the payload) is never torn, and the round trained
 * again completes it. */
static void test_killed_while_writing(void) {
    gd_artifact_store store = open_store("killed");
    char clear[4200];
    snprintf(clear, sizeof clear, "rm -rf '%s/run-%d'", store.root, RUN);
    long whole_ns = 0;
    int killed = 0;
    for (int i = 0; i < 9; i++) {
        CHECK(system(clear) == 0); /* each child starts from an empty store */
        pid_t pid;
        gd_test_child_start(&pid, store.root);
        if (i == 0) {
            /* How long an uninterrupted child takes, to spread the kills over it. */
            CHECK(gd_test_child_wait(pid, &whole_ns));
            CHECK(starts_present(&store) == g_whole.segments + 1);
            CHECK(payload_present(&store));
            continue;
        }
        /* 0.1 .. 0.9 of an uninterrupted child's time. */
        killed += gd_test_child_kill_after(pid, whole_ns / 10 * i);
        starts_present(&store);
        payload_present(&store);
    }
    CHECK(killed > 0); /* at least one kill landed before the child was done */
    /* Trained again, uninterrupted, over what the last kill left. */
    gd_start_writer writer;
    CHECK_OK(gd_start_writer_open(&writer, &store, RUN, true));
    gd_trained_round t;
    CHECK_OK(train_job(&writer, &t));
    CHECK(starts_present(&store) == g_whole.segments + 1);
    CHECK(payload_present(&store));
    gd_trained_round_free(&t);
    gd_start_writer_close(&writer);
}

int main(int argc, char **argv) {
    json_t *spec_json = gd_test_example_spec_json();
    json_object_set_new(spec_json, "chunk_elems", json_integer(16384));
    json_object_set_new(spec_json, "h_min", json_integer(30));
    json_object_set_new(spec_json, "h_max", json_integer(30));
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, spec_json));
    json_decref(spec_json);
    CHECK_OK(gd_engine_open(&g_engine, spec, RUN, &(gd_engine_host){.threads = 1}));
    CHECK_OK(gd_run_config_initial_state(&g_engine.rc, g_engine.rc.initial_state_hash, 1));
    CHECK_OK(gd_engine_initial_global(&g_engine, &g_g0));
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        int rc = child_main(argv[2], atoi(argv[3]));
        gd_global_state_free(&g_g0);
        gd_engine_close(&g_engine);
        gd_diloco_spec_free(spec);
        return rc;
    }
    gd_worker_state w;
    CHECK_OK(gd_engine_worker_init(&g_engine, &w, WORKER, 0));
    CHECK_OK(gd_engine_train(&g_engine, &g_whole, ROUND, &g_g0, true, &w));
    CHECK(g_whole.segments == 3 && g_whole.starts != NULL);
    g_post = w;
    RUN_TEST(test_background);
    RUN_TEST(test_foreground);
    RUN_TEST(test_failed_write_is_reported);
    RUN_TEST(test_next_round_from_file);
    RUN_TEST(test_start_borrowed_or_taken);
    RUN_TEST(test_residual_damaged_while_training);
    RUN_TEST(test_killed_while_writing);
    gd_trained_round_free(&g_whole);
    gd_worker_state_free(&g_post);
    gd_global_state_free(&g_g0);
    gd_engine_close(&g_engine);
    gd_diloco_spec_free(spec);
    return gd_test_finish();
}
