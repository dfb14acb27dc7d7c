/* A node's memory of its data files' hashes (plugin/member/data_memo.h): a known,
 * unchanged file is not read again; a file written, touched or replaced is;
 * a file changed just before it was hashed is not remembered; the run's
 * digest is the same with or without the memo; a memo file that does not
 * parse is ignored and replaced. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "plugin/member/data_memo.h"
#include "tests/support/testkit.h"
#include "trainer/data.h"

/* The memo's hooks, counted. */
typedef struct counted {
    gd_data_hash_memo inner;
    int hits, misses, records;
    bool ignored; /* the memo file was there but did not parse */
} counted;

static bool counted_lookup(void *ctx, const char *path, const gd_data_file_id *id,
                           uint8_t hash[32]) {
    counted *c = ctx;
    bool hit = c->inner.lookup(c->inner.ctx, path, id, hash);
    hit ? c->hits++ : c->misses++;
    return hit;
}

static void counted_record(void *ctx, const char *path, const gd_data_file_id *id,
                           const uint8_t hash[32]) {
    counted *c = ctx;
    c->records++;
    c->inner.record(c->inner.ctx, path, id, hash);
}

/* Digests the shards under dir with the memo of dir's state (loaded,
 * settled_offset added to its start time, saved); returns the counts. */
static counted digest_with_memo(const char *state_dir, int64_t settled_offset,
                                uint8_t digest[32]) {
    gd_data_memo memo;
    bool ignored = true;
    CHECK_OK(gd_data_memo_load(&memo, state_dir, &ignored));
    memo.began += settled_offset;
    counted c = {.inner = gd_data_memo_hooks(&memo), .ignored = ignored};
    gd_data_hash_memo hooks = {counted_lookup, counted_record, &c};
    gd_data *d = NULL;
    CHECK_OK(gd_data_open(&d, gd_test_path("dm-data/*.bin")));
    CHECK_OK(gd_data_digest(d, NULL, &hooks, digest));
    gd_data_close(d);
    CHECK_OK(gd_data_memo_save(&memo));
    gd_data_memo_free(&memo);
    return c;
}

static size_t memo_lines(const char *state_dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", state_dir, GD_DATA_MEMO_FILE);
    gd_buf b = {0};
    CHECK_OK(gd_file_read(&b, path, 1 << 20));
    size_t n = 0;
    for (size_t i = 0; i < b.len; i++)
        n += b.data[i] == '\n';
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    gd_buf_free(&b);
    return n;
}

static void test_known_files_are_not_read_again(void) {
    char state[600];
    snprintf(state, sizeof state, "%s", gd_test_path("dm-state"));
    CHECK(mkdir(gd_test_path("dm-data"), 0755) == 0 || errno == EEXIST);
    CHECK(mkdir(state, 0700) == 0 || errno == EEXIST);
    uint32_t tokens[3][100];
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 100; i++)
            tokens[f][i] = (uint32_t)(f * 1000 + i * 7);
    CHECK_OK(gd_shard_write(gd_test_path("dm-data/a.bin"), tokens[0], 100, 2));
    CHECK_OK(gd_shard_write(gd_test_path("dm-data/b.bin"), tokens[1], 100, 2));
    CHECK_OK(gd_shard_write(gd_test_path("dm-data/c.bin"), tokens[2], 100, 2));
    uint8_t plain[32], got[32];
    gd_data *d = NULL;
    CHECK_OK(gd_data_open(&d, gd_test_path("dm-data/*.bin")));
    CHECK_OK(gd_data_digest(d, NULL, NULL, plain));
    gd_data_close(d);

    /* First start, files just written: all hashed, none remembered. */
    counted c = digest_with_memo(state, 0, got);
    CHECK(memcmp(plain, got, 32) == 0);
    CHECK(!c.ignored && c.hits == 0 && c.misses == 3 && c.records == 3);
    CHECK(memo_lines(state) == 0);
    /* A start once they have settled: hashed again, remembered. */
    c = digest_with_memo(state, 10, got);
    CHECK(memcmp(plain, got, 32) == 0);
    CHECK(c.hits == 0 && c.records == 3);
    CHECK(memo_lines(state) == 3);
    /* The next start reads none of them. */
    c = digest_with_memo(state, 0, got);
    CHECK(memcmp(plain, got, 32) == 0);
    CHECK(c.hits == 3 && c.misses == 0 && c.records == 0);
    CHECK(memo_lines(state) == 3);

    /* b rewritten in place with other tokens of the same size: not known.
     * (A pause first: file times tick in milliseconds.) */
    usleep(20000);
    uint16_t narrow[100];
    for (int i = 0; i < 100; i++)
        narrow[i] = (uint16_t)(tokens[1][i] ^ (i == 50)); /* little-endian host */
    int fd = open(gd_test_path("dm-data/b.bin"), O_WRONLY);
    CHECK(fd >= 0);
    CHECK(pwrite(fd, narrow, sizeof narrow, GD_SHARD_HEADER_BYTES) == (ssize_t)sizeof narrow);
    close(fd);
    CHECK_OK(gd_data_open(&d, gd_test_path("dm-data/*.bin")));
    CHECK_OK(gd_data_digest(d, NULL, NULL, plain));
    gd_data_close(d);
    c = digest_with_memo(state, 0, got);
    CHECK(memcmp(plain, got, 32) == 0);
    CHECK(c.hits == 2 && c.misses == 1);
    CHECK(memo_lines(state) == 2); /* b changed a moment ago: not remembered yet */
    /* c replaced by another file (a new inode) with the same bytes, and a
     * touched to its own times (its change time still moves). */
    usleep(20000);
    CHECK(rename(gd_test_path("dm-data/c.bin"), gd_test_path("dm-data/c.old")) == 0);
    CHECK_OK(gd_shard_write(gd_test_path("dm-data/c.bin"), tokens[2], 100, 2));
    CHECK(unlink(gd_test_path("dm-data/c.old")) == 0);
    struct stat st;
    CHECK(stat(gd_test_path("dm-data/a.bin"), &st) == 0);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    CHECK(utimensat(AT_FDCWD, gd_test_path("dm-data/a.bin"), times, 0) == 0);
    c = digest_with_memo(state, 10, got);
    CHECK(memcmp(plain, got, 32) == 0);
    CHECK(c.hits == 0 && c.misses == 3 && c.records == 3);
    c = digest_with_memo(state, 0, got);
    CHECK(c.hits == 3 && memcmp(plain, got, 32) == 0);
}

static void test_memo_file_that_does_not_parse_is_ignored(void) {
    char state[600];
    snprintf(state, sizeof state, "%s", gd_test_path("dm-state"));
    char path[700];
    snprintf(path, sizeof path, "%s/%s", state, GD_DATA_MEMO_FILE);
    static const char junk[] = "not a memo\n";
    gd_bytes_part part = {junk, sizeof junk - 1};
    CHECK_OK(gd_file_write_atomic(path, &part, 1, 0600));
    gd_data_memo memo;
    bool ignored = false;
    CHECK_OK(gd_data_memo_load(&memo, state, &ignored));
    CHECK(ignored && memo.n_known == 0);
    CHECK(strstr(gd_error_detail(), "line 1") != NULL);
    gd_data_memo_free(&memo);
    uint8_t plain[32];
    counted c = digest_with_memo(state, 10, plain);
    CHECK(c.ignored && c.misses == 3 && memo_lines(state) == 3); /* replaced */
    c = digest_with_memo(state, 0, plain);
    CHECK(!c.ignored && c.hits == 3);
    /* No file at all: an empty memo, not an error. */
    CHECK(unlink(path) == 0);
    CHECK_OK(gd_data_memo_load(&memo, state, &ignored));
    CHECK(!ignored && memo.n_known == 0);
    gd_data_memo_free(&memo);
}

/* A data set naming one file twice: saved once, and the memo reads back. */
static void test_file_named_twice(void) {
    char state[600], a[600];
    snprintf(state, sizeof state, "%s", gd_test_path("dm-state"));
    snprintf(a, sizeof a, "%s", gd_test_path("dm-data/a.bin"));
    const char *paths[2] = {a, a};
    for (int start = 0; start < 2; start++) {
        gd_data_memo memo;
        bool ignored = true;
        CHECK_OK(gd_data_memo_load(&memo, state, &ignored));
        CHECK(!ignored);
        memo.began += 10;
        gd_data_hash_memo hooks = gd_data_memo_hooks(&memo);
        gd_data *d = NULL;
        uint8_t digest[32];
        CHECK_OK(gd_data_open_files(&d, gd_test_path("dm-data/*.bin"), paths, 2));
        CHECK_OK(gd_data_digest(d, NULL, &hooks, digest));
        gd_data_close(d);
        CHECK_OK(gd_data_memo_save(&memo));
        gd_data_memo_free(&memo);
        CHECK(memo_lines(state) == 1);
    }
}

static gd_status parse_text(const char *text, size_t *n) {
    gd_data_memo_entry *es = NULL;
    gd_status s = gd_data_memo_parse(&es, (const uint8_t *)text, strlen(text), n);
    gd_data_memo_entries_free(es, *n);
    return s;
}

#define HASH "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void test_parse(void) {
    size_t n = 9;
    CHECK_OK(parse_text("", &n));
    CHECK(n == 0);
    CHECK_OK(parse_text(HASH " 1 2 3 4 5 6 7 /data/a b.bin\n" HASH " 1 3 3 4 5 6 7 /b\n", &n));
    CHECK(n == 2);
    const char *bad[] = {
        HASH " 1 2 3 4 5 6 7 /a",                       /* last line cut short */
        HASH " 1 2 3 4 5 6 7 \n",                       /* no path */
        HASH " 1 2 3 4 5 6 /a\n",                       /* a field missing */
        "0011 1 2 3 4 5 6 7 /a\n",                      /* short hash */
        HASH " 1 2 -3 4 5 6 7 /a\n",                    /* negative size */
        HASH " 1 2 3 4 1000000000 6 7 /a\n",            /* nanoseconds out of range */
        HASH " 1 2 3 4 5 6 -7 /a\n",
        HASH " 1  2 3 4 5 6 7 /a\n",                    /* two spaces */
        HASH " 1 2 3 4 5 6 7 /a\n" HASH " 9 9 9 9 9 9 9 /a\n", /* one path twice */
        HASH " 1 2 3 4 5 6 18446744073709551616 /a\n",  /* over 64 bits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_STATUS(parse_text(bad[i], &n), GD_ERR_PARSE);
    /* A NUL inside a line. */
    static const char nul[] = HASH " 1 2 3 4 5 6 7 /a\0b\n";
    gd_data_memo_entry *es = NULL;
    CHECK_STATUS(gd_data_memo_parse(&es, (const uint8_t *)nul, sizeof nul - 1, &n),
                 GD_ERR_PARSE);
}

int main(void) {
    RUN_TEST(test_parse);
    RUN_TEST(test_known_files_are_not_read_again);
    RUN_TEST(test_memo_file_that_does_not_parse_is_ignored);
    RUN_TEST(test_file_named_twice);
    return gd_test_finish();
}
