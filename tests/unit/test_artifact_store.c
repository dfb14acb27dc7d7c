/* The node's artifact store (plugin/member/artifact_store.c): artifacts written
 * durably and read back, private modes, replacement, absent artifacts, a
 * payload chunk whose proof checks against the committed root, pruning of
 * settled rounds only, and the journal (round trip, absent, malformed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/member/artifact_store.h"
#include "tests/support/testkit.h"
#include "trainer/payload.h"

static char g_dir[256];

static void fresh_dir(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/gd-artifacts-XXXXXX");
    CHECK(mkdtemp(g_dir) != NULL);
}

static void remove_tree(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static mode_t mode_of(const char *path) {
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return st.st_mode & 0777;
}

static void test_put_get(void) {
    fresh_dir();
    char root[300];
    snprintf(root, sizeof root, "%s/state/node", g_dir); /* parents created too */
    gd_artifact_store s;
    CHECK_OK(gd_artifact_store_open(&s, root));
    CHECK(mode_of(root) == 0700);
    CHECK_OK(gd_artifact_put(&s, GD_ARTIFACT_STATE, 3, 17, 5, "leaf five", 9));
    gd_buf b = {0};
    CHECK_OK(gd_artifact_get(&s, &b, GD_ARTIFACT_STATE, 3, 17, 5, 100));
    CHECK(b.len == 9 && memcmp(b.data, "leaf five", 9) == 0);
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&s, path, sizeof path, GD_ARTIFACT_STATE, 3, 17, 5));
    CHECK(strstr(path, "/run-3/round-17/state-5.gdws") != NULL);
    CHECK(mode_of(path) == 0600);
    /* Replaced whole. */
    CHECK_OK(gd_artifact_put(&s, GD_ARTIFACT_STATE, 3, 17, 5, "six", 3));
    CHECK_OK(gd_artifact_get(&s, &b, GD_ARTIFACT_STATE, 3, 17, 5, 100));
    CHECK(b.len == 3 && memcmp(b.data, "six", 3) == 0);
    /* Absent, and over the size asked for. */
    CHECK(gd_artifact_get(&s, &b, GD_ARTIFACT_GLOBAL, 3, 17, 0, 100) == GD_ERR_NOT_FOUND);
    CHECK(gd_artifact_get(&s, &b, GD_ARTIFACT_STATE, 3, 17, 5, 2) == GD_ERR_LIMIT);
    gd_buf_free(&b);
    /* A file where the root should be. */
    char file[300];
    snprintf(file, sizeof file, "%s/afile", g_dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    fclose(f);
    CHECK(gd_artifact_store_open(&s, file) == GD_ERR_IO);
    CHECK(gd_artifact_store_open(&s, "") == GD_ERR_INVALID);
    remove_tree(g_dir);
}

static void test_payload_chunk(void) {
    fresh_dir();
    gd_artifact_store s;
    CHECK_OK(gd_artifact_store_open(&s, g_dir));
    gd_payload_header h;
    memset(&h, 0, sizeof h);
    h.run = 1;
    h.round = 4;
    snprintf(h.participant, sizeof h.participant, "gonka1someone");
    h.param_count = 5000;
    CHECK_OK(gd_codec_parse(&h.codec, "int8"));
    h.chunk_elems = 256;
    float *v = malloc(h.param_count * sizeof(float));
    for (size_t i = 0; i < h.param_count; i++)
        v[i] = (float)((int)(i * 7919 % 201) - 100) * 1e-3f;
    gd_payload p;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    free(v);
    gd_buf file = {0};
    CHECK_OK(gd_payload_serialize(&p, &file));
    CHECK_OK(gd_artifact_put(&s, GD_ARTIFACT_PAYLOAD, 1, 4, 0, file.data, file.len));
    gd_buf_free(&file);
    uint8_t root[GD_MMR_HASH_LEN];
    uint32_t leaves = 0;
    CHECK_OK(gd_payload_root(&p, root, &leaves));
    CHECK(leaves == p.header.chunk_count + 1);
    gd_buf raw = {0}, proof = {0};
    for (uint32_t c = 0; c < p.header.chunk_count; c += 7) {
        CHECK_OK(gd_artifact_payload_chunk(&s, 1, 4, c, &raw, &proof));
        gd_mmr_proof pr;
        CHECK_OK(gd_mmr_proof_decode(&pr, proof.data, proof.len));
        CHECK(gd_payload_verify_chunk(root, c, raw.data, raw.len, &pr));
        CHECK(!gd_payload_verify_chunk(root, c + 1, raw.data, raw.len, &pr));
    }
    CHECK(gd_artifact_payload_chunk(&s, 1, 4, p.header.chunk_count, &raw, &proof) ==
          GD_ERR_NOT_FOUND);
    CHECK(gd_artifact_payload_chunk(&s, 1, 5, 0, &raw, &proof) == GD_ERR_NOT_FOUND);
    gd_buf_free(&raw);
    gd_buf_free(&proof);
    gd_payload_free(&p);
    remove_tree(g_dir);
}

static void test_prune(void) {
    fresh_dir();
    gd_artifact_store s;
    CHECK_OK(gd_artifact_store_open(&s, g_dir));
    for (uint64_t r = 0; r < 12; r++) {
        CHECK_OK(gd_artifact_put(&s, GD_ARTIFACT_PAYLOAD, 2, r, 0, "p", 1));
        CHECK_OK(gd_artifact_put(&s, GD_ARTIFACT_STATE, 2, r, 1, "s", 1));
    }
    CHECK_OK(gd_artifact_put(&s, GD_ARTIFACT_PAYLOAD, 3, 1, 0, "other run", 9));
    /* Something of its own in the run's directory is left alone. */
    char stray[300];
    snprintf(stray, sizeof stray, "%s/run-2/round-x", g_dir);
    CHECK(mkdir(stray, 0700) == 0);
    CHECK_OK(gd_artifact_prune(&s, 2, 10));
    gd_buf b = {0};
    for (uint64_t r = 0; r < 12; r++)
        CHECK((gd_artifact_get(&s, &b, GD_ARTIFACT_PAYLOAD, 2, r, 0, 10) == GD_OK) == (r >= 10));
    CHECK_OK(gd_artifact_get(&s, &b, GD_ARTIFACT_PAYLOAD, 3, 1, 0, 10));
    CHECK(access(stray, F_OK) == 0);
    CHECK_OK(gd_artifact_prune(&s, 9, 100)); /* a run with nothing stored */
    gd_buf_free(&b);
    remove_tree(g_dir);
}

static void test_journal(void) {
    fresh_dir();
    gd_artifact_store s;
    CHECK_OK(gd_artifact_store_open(&s, g_dir));
    gd_member_journal j;
    CHECK_OK(gd_journal_load(&s, &j)); /* none yet: empty */
    CHECK(j.round == 0 && !j.trained && !j.aggregated && !j.join_sent && !j.leave_wanted);
    gd_member_journal w = {.round = 18446744073709551615ull, .trained = true, .join_sent = true,
                         .sealed_upto = 7};
    CHECK_OK(gd_journal_save(&s, &w));
    CHECK_OK(gd_journal_load(&s, &j));
    CHECK(j.round == w.round && j.trained && !j.aggregated && j.join_sent && !j.leave_wanted);
    CHECK(j.sealed_upto == 7 && !j.ahead);
    w.ahead = true;
    w.bonded = 18446744073709551615ull;
    CHECK_OK(gd_journal_save(&s, &w));
    CHECK_OK(gd_journal_load(&s, &j));
    CHECK(j.ahead && j.trained && j.bonded == w.bonded);
    /* The wish to leave is a file of its own, beside the journal. */
    CHECK(!gd_leave_requested(&s));
    CHECK_OK(gd_leave_request_save(&s));
    CHECK(gd_leave_requested(&s));
    CHECK_OK(gd_journal_load(&s, &j));
    CHECK(!j.leave_wanted);
    char path[300];
    snprintf(path, sizeof path, "%s/journal.json", g_dir);
    CHECK(mode_of(path) == 0600);
    /* A journal of the version before (no "ahead") still reads. */
    {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fputs("{\"version\":2,\"round\":\"5\",\"trained\":true,\"aggregated\":true,"
              "\"join_sent\":false,\"leave_wanted\":false,\"sealed_upto\":\"6\"}",
              f);
        fclose(f);
        CHECK_OK(gd_journal_load(&s, &j));
        CHECK(j.round == 5 && j.trained && j.aggregated && !j.ahead && j.sealed_upto == 6 &&
              j.bonded == 0);
    }
    /* Every key of a good journal, so each entry below breaks exactly one thing. */
#define J_REST "\"aggregated\":false,\"join_sent\":false,\"leave_wanted\":false"
    const char *bad[] = {
        "not json",
        "{\"version\":1,\"round\":\"1\",\"trained\":true," J_REST ",\"sealed_upto\":\"2\"}",
        "{\"version\":2,\"round\":1,\"trained\":true," J_REST ",\"sealed_upto\":\"2\"}",
        "{\"version\":2,\"round\":\"-1\",\"trained\":true," J_REST ",\"sealed_upto\":\"2\"}",
        "{\"version\":2,\"round\":\"1\",\"trained\":1," J_REST ",\"sealed_upto\":\"2\"}",
        "{\"version\":2,\"round\":\"1\",\"trained\":true," J_REST ",\"sealed_upto\":\"2\","
        "\"extra\":1}",
        "{\"version\":2,\"round\":\"1\",\"trained\":true," J_REST "}",
        "{\"version\":2,\"round\":\"1\",\"trained\":true," J_REST
        ",\"sealed_upto\":\"18446744073709551616\"}",
        "{\"version\":2,\"round\":\"1\",\"trained\":true}",
        /* version 3 needs "ahead"; version 2 has none; no version 4 */
        "{\"version\":3,\"round\":\"1\",\"trained\":true," J_REST ",\"sealed_upto\":\"2\"}",
        "{\"version\":3,\"round\":\"1\",\"trained\":true,\"ahead\":false," J_REST
        ",\"sealed_upto\":\"2\"}",
        "{\"version\":3,\"round\":\"1\",\"trained\":true,\"ahead\":false," J_REST
        ",\"sealed_upto\":\"2\",\"bonded\":5}",
        "{\"version\":2,\"round\":\"1\",\"trained\":true," J_REST
        ",\"sealed_upto\":\"2\",\"bonded\":\"5\"}",
        "{\"version\":2,\"round\":\"1\",\"trained\":true,\"ahead\":false," J_REST
        ",\"sealed_upto\":\"2\"}",
        "{\"version\":4,\"round\":\"1\",\"trained\":true,\"ahead\":false," J_REST
        ",\"sealed_upto\":\"2\",\"bonded\":\"5\"}",
        "{\"version\":3,\"round\":\"1\",\"trained\":true,\"ahead\":0," J_REST
        ",\"sealed_upto\":\"2\",\"bonded\":\"5\"}",
    };
#undef J_REST
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fputs(bad[i], f);
        fclose(f);
        j.trained = true;
        CHECK(gd_journal_load(&s, &j) == GD_ERR_PARSE);
        CHECK(!j.trained); /* nothing half-read */
        CHECK(strstr(gd_error_detail(), "journal.json") != NULL);
    }
    remove_tree(g_dir);
}

/* One member per state_dir: a second lock is refused naming the holder's
 * pid, taken once the first is released; a directory the lock cannot be
 * written in is refused before anything else. */
static void test_lock(void) {
    fresh_dir();
    gd_artifact_store s;
    CHECK_OK(gd_artifact_store_open(&s, g_dir));
    int first = -1, second = -1;
    CHECK_OK(gd_artifact_store_lock(&s, &first));
    CHECK(first >= 0);
    CHECK(gd_artifact_store_lock(&s, &second) == GD_ERR_EXISTS && second == -1);
    char pid[32];
    snprintf(pid, sizeof pid, "process %ld ", (long)getpid());
    CHECK(strstr(gd_error_detail(), pid) != NULL);
    gd_artifact_store_unlock(first);
    CHECK_OK(gd_artifact_store_lock(&s, &second));
    gd_artifact_store_unlock(second);
    char lock[512];
    snprintf(lock, sizeof lock, "%s/lock", g_dir);
    CHECK(unlink(lock) == 0 && mkdir(lock, 0700) == 0); /* cannot be opened for writing */
    CHECK(gd_artifact_store_lock(&s, &first) == GD_ERR_IO && first == -1);
    CHECK(strstr(gd_error_detail(), "cannot be written") != NULL);
    remove_tree(g_dir);
}

int main(void) {
    RUN_TEST(test_put_get);
    RUN_TEST(test_lock);
    RUN_TEST(test_payload_chunk);
    RUN_TEST(test_prune);
    RUN_TEST(test_journal);
    return gd_test_finish();
}
