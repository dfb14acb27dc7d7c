/* What a round leaves under state_dir, by tier (plugin/member/artifact_tiers.h):
 * a round that is over loses its segment starts and what killed writes
 * left, never its post state, G, payload or transcript; rounds leaving the
 * hot tier are removed, every N-th one's G moved to the archive first (by
 * rename, or by a streamed copy onto another file system); the bytes of
 * each tier are counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/file.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/artifact_tiers.h"
#include "tests/support/testkit.h"

#define RUN 3

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static const char *path_of(const gd_artifact_store *s, gd_artifact_kind kind, uint64_t round,
                           uint32_t leaf) {
    static char path[8][GD_ARTIFACT_PATH_MAX];
    static int next;
    char *p = path[next++ % 8];
    CHECK_OK(gd_artifact_path(s, p, GD_ARTIFACT_PATH_MAX, kind, RUN, round, leaf));
    return p;
}

/* A stored round of 3 segments: starts 0..2, the post state 4, G, the
 * payload and transcript, two peers' payloads fetched in the round, a
 * check's fetched segment start, and a temporary file a killed write
 * left. */
static void store_round(const gd_artifact_store *s, uint64_t round) {
    static const char bytes[1000];
    for (uint32_t leaf = 0; leaf <= 4; leaf++)
        if (leaf != 3)
            CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_STATE, RUN, round, leaf, bytes, 100));
    CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_GLOBAL, RUN, round, 0, bytes, 1000));
    CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_CHECKPOINT, RUN, round, 0, bytes, 500));
    CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_PAYLOAD, RUN, round, 0, bytes, 10));
    CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_TRANSCRIPT, RUN, round, 0, bytes, 10));
    CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_PEER_PAYLOAD, RUN, round, 0, bytes, 20));
    CHECK_OK(gd_artifact_put(s, GD_ARTIFACT_PEER_PAYLOAD, RUN, round, 11, bytes, 20));
    char check[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_check_state_place(s, check, RUN, round, 3, 1));
    CHECK_OK(gd_file_write_atomic(check, &(gd_bytes_part){bytes, 30}, 1, 0600));
    char left[GD_ARTIFACT_PATH_MAX + 16];
    snprintf(left, sizeof left, "%s.tmp-AbC123", path_of(s, GD_ARTIFACT_STATE, round, 1));
    CHECK_OK(gd_file_write_atomic(left, &(gd_bytes_part){bytes, 7}, 1, 0600));
}

static gd_artifact_store open_store(const char *name) {
    gd_artifact_store s;
    CHECK_OK(gd_artifact_store_open(&s, gd_test_path(name)));
    return s;
}

static void test_settle_keeps_the_post_state(void) {
    gd_artifact_store s = open_store("settle");
    store_round(&s, 5);
    gd_tier_bytes b;
    CHECK_OK(gd_artifact_tier_bytes(&s, &b, RUN, NULL));
    CHECK(b.temporary == 3 * 100 + 2 * 20 + 30 + 7 && b.hot == 100 + 1000 + 500 + 10 + 10 &&
          b.archive == 0);
    CHECK_OK(gd_artifact_settle(&s, RUN, 5));
    for (uint32_t leaf = 0; leaf < 3; leaf++)
        CHECK(!exists(path_of(&s, GD_ARTIFACT_STATE, 5, leaf)));
    CHECK(exists(path_of(&s, GD_ARTIFACT_STATE, 5, 4)));
    CHECK(!exists(path_of(&s, GD_ARTIFACT_PEER_PAYLOAD, 5, 0)));
    CHECK(!exists(path_of(&s, GD_ARTIFACT_PEER_PAYLOAD, 5, 11)));
    char check[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_check_state_place(&s, check, RUN, 5, 3, 1));
    CHECK(!exists(check));
    CHECK(exists(path_of(&s, GD_ARTIFACT_GLOBAL, 5, 0)));
    CHECK(exists(path_of(&s, GD_ARTIFACT_PAYLOAD, 5, 0)));
    CHECK(exists(path_of(&s, GD_ARTIFACT_TRANSCRIPT, 5, 0)));
    CHECK_OK(gd_artifact_tier_bytes(&s, &b, RUN, NULL));
    CHECK(b.temporary == 0 && b.hot == 1620);
    CHECK_OK(gd_artifact_settle(&s, RUN, 5));  /* again: nothing to do */
    CHECK_OK(gd_artifact_settle(&s, RUN, 77)); /* a round it never had */
}

/* Rounds 0..5, retired below 4 with G archived every 2 rounds. */
static void retire_into(const char *store_name, const char *archive_dir) {
    gd_artifact_store s = open_store(store_name);
    for (uint64_t r = 0; r <= 5; r++)
        store_round(&s, r);
    gd_retention keep = {.hot_rounds = 2, .archive_every = 2, .archive_dir = archive_dir};
    CHECK_OK(gd_artifact_retire(&s, RUN, 4, &keep));
    for (uint64_t r = 0; r <= 5; r++) {
        char dir[GD_ARTIFACT_PATH_MAX];
        CHECK_OK(gd_artifact_round_dir(&s, dir, sizeof dir, RUN, r));
        CHECK(exists(dir) == (r >= 4));
        char g[GD_ARTIFACT_PATH_MAX + 64], ckpt[GD_ARTIFACT_PATH_MAX + 64];
        snprintf(g, sizeof g, "%s/run-%d/round-%llu/global.gdgs", archive_dir, RUN,
                 (unsigned long long)r);
        snprintf(ckpt, sizeof ckpt, "%s/run-%d/round-%llu/checkpoint.safetensors", archive_dir,
                 RUN, (unsigned long long)r);
        bool archived = r < 4 && r % 2 == 0;
        CHECK(exists(g) == archived && exists(ckpt) == archived);
        if (archived) {
            gd_buf b = {0};
            CHECK_OK(gd_file_read(&b, g, 4096));
            CHECK(b.len == 1000);
            gd_buf_free(&b);
        }
    }
    gd_tier_bytes b;
    CHECK_OK(gd_artifact_tier_bytes(&s, &b, RUN, archive_dir));
    CHECK(b.archive == 2 * 1500 && b.temporary == 2 * 377 && b.hot == 2 * 1620);
    /* Without an archive the rounds simply go. */
    CHECK_OK(gd_artifact_retire(&s, RUN, 5, &(gd_retention){.hot_rounds = 2}));
    char dir[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_round_dir(&s, dir, sizeof dir, RUN, 4));
    CHECK(!exists(dir));
}

static void test_retire_archives_by_rename(void) {
    retire_into("retire", gd_test_path("archive"));
}

/* /dev/shm is another file system than the scratch directory here: the
 * archive's G are copied there, streamed, and the originals removed. */
static void test_retire_archives_across_file_systems(void) {
    struct statfs a, b;
    if (statfs("/dev/shm", &a) != 0 || statfs(gd_test_tmpdir(), &b) != 0 ||
        a.f_type == b.f_type) {
        fprintf(stderr, "  (no second file system: the rename case stands for it)\n");
        return;
    }
    char archive[128];
    snprintf(archive, sizeof archive, "/dev/shm/gd-archive-%d", (int)getpid());
    retire_into("retire-xdev", archive);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", archive);
    CHECK(system(cmd) == 0);
}

static void test_archive_refusals(void) {
    gd_artifact_store s = open_store("refused");
    store_round(&s, 0);
    /* A file where the archive's directory should be. */
    const char *blocked = gd_test_write_file("blocked", "x", 1, 0600);
    gd_retention keep = {.hot_rounds = 2, .archive_every = 1, .archive_dir = blocked};
    CHECK_STATUS(gd_artifact_retire(&s, RUN, 1, &keep), GD_ERR_IO);
    /* Nothing was removed that was not archived. */
    CHECK(exists(path_of(&s, GD_ARTIFACT_GLOBAL, 0, 0)));
}

int main(void) {
    RUN_TEST(test_settle_keeps_the_post_state);
    RUN_TEST(test_retire_archives_by_rename);
    RUN_TEST(test_retire_archives_across_file_systems);
    RUN_TEST(test_archive_refusals);
    return gd_test_finish();
}
