/* Training data: token shards (round trip, header rejection), which windows
 * training and eval batches hold, vocabulary checks, text sources, the
 * synthetic Markov source (determinism, exact entropies checked against a
 * long sampled stream) and malformed specs. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/testkit.h"
#include "trainer/data.h"
#include "trainer/markov.h"

/* Open file descriptors of this process (-1 where /proc is missing): shards
 * are mapped and their descriptors closed. */
static int open_fds(void) {
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL)
        return -1;
    int n = 0;
    while (readdir(dir) != NULL)
        n++;
    closedir(dir);
    return n;
}

static bool detail_has(const char *needle) {
    if (strstr(gd_error_detail(), needle) != NULL)
        return true;
    fprintf(stderr, "  detail '%s' lacks '%s'\n", gd_error_detail(), needle);
    return false;
}

/* A raw shard file: header fields, then count_written tokens of width bytes. */
static const char *raw_shard(const char *name, uint32_t magic, uint32_t version, int32_t count,
                             size_t count_written, size_t width) {
    size_t len = GD_SHARD_HEADER_BYTES + count_written * width;
    uint8_t *bytes = calloc(1, len);
    uint32_t fields[3] = {magic, version, (uint32_t)count};
    for (int f = 0; f < 3; f++)
        for (int b = 0; b < 4; b++)
            bytes[4 * f + b] = (uint8_t)(fields[f] >> (8 * b));
    const char *path = gd_test_write_file(name, bytes, len, 0644);
    free(bytes);
    return path;
}

static void test_shard_round_trip(void) {
    for (int wide = 0; wide < 2; wide++) {
        uint32_t width = wide ? 4 : 2;
        size_t n = 3001;
        uint32_t *tokens = malloc(n * sizeof *tokens);
        for (size_t i = 0; i < n; i++)
            tokens[i] = wide ? (uint32_t)(i * 7919 % 2000000) : (uint32_t)(i * 31 % 65536);
        const char *path = gd_test_path(wide ? "rt32.bin" : "rt16.bin");
        CHECK_OK(gd_shard_write(path, tokens, n, width));
        struct stat st;
        CHECK(stat(path, &st) == 0 && (size_t)st.st_size == GD_SHARD_HEADER_BYTES + n * width);
        gd_data *data = NULL;
        CHECK_OK(gd_data_open(&data, path));
        if (data == NULL) {
            free(tokens);
            continue;
        }
        CHECK(gd_data_kind_of(data) == GD_DATA_SHARDS);
        CHECK(gd_data_token_count(data) == n);
        CHECK(gd_data_vocab_bound(data) == (wide ? (uint64_t)1 << 32 : (uint64_t)1 << 16));
        CHECK(strstr(gd_data_describe(data), wide ? "uint32" : "uint16") != NULL);
        CHECK(gd_data_markov_entropies(data, NULL, 0) == 0);
        /* One eval window of the whole file gives every token back. */
        int32_t *out = malloc(n * sizeof *out);
        bool available = false;
        CHECK_OK(gd_data_eval_batch(data, out, 1, n - 1, (uint64_t)1 << 31, 0, &available));
        CHECK(available);
        size_t same = 0;
        for (size_t i = 0; i < n; i++)
            same += (uint32_t)out[i] == tokens[i];
        CHECK(same == n);
        gd_data_close(data);
        free(out);
        free(tokens);
    }
    /* The writer refuses what a shard cannot hold. */
    uint32_t big[2] = {1, 70000};
    CHECK_STATUS(gd_shard_write(gd_test_path("w.bin"), big, 2, 2), GD_ERR_INVALID);
    CHECK(detail_has("position 1"));
    CHECK_STATUS(gd_shard_write(gd_test_path("w.bin"), big, 2, 3), GD_ERR_INVALID);
    CHECK_STATUS(gd_shard_write(gd_test_path("w.bin"), big, 0, 4), GD_ERR_INVALID);
    CHECK_STATUS(gd_shard_write(gd_test_path("nodir/w.bin"), big, 2, 4), GD_ERR_NOT_FOUND);
    struct stat st;
    CHECK(stat(gd_test_path("w.bin"), &st) != 0);
}

static void expect_open_fails(const char *spec, gd_status expected, const char *needle) {
    gd_data *data = (gd_data *)1;
    CHECK_STATUS(gd_data_open(&data, spec), expected);
    CHECK(data == NULL);
    if (needle != NULL)
        CHECK(detail_has(needle));
}

static void test_shard_header_rejection(void) {
    expect_open_fails(raw_shard("magic.bin", 20240521, 1, 4, 4, 2), GD_ERR_PARSE, "magic");
    expect_open_fails(raw_shard("ver16.bin", GD_SHARD_MAGIC_U16, 7, 4, 4, 2), GD_ERR_PARSE,
                      "version");
    expect_open_fails(raw_shard("ver32.bin", GD_SHARD_MAGIC_U32, 1, 4, 4, 4), GD_ERR_PARSE,
                      "version");
    expect_open_fails(raw_shard("zero.bin", GD_SHARD_MAGIC_U16, 1, 0, 0, 2), GD_ERR_PARSE,
                      "at least one token");
    expect_open_fails(raw_shard("neg.bin", GD_SHARD_MAGIC_U32, 7, -5, 0, 4), GD_ERR_PARSE,
                      "at least one token");
    expect_open_fails(raw_shard("short.bin", GD_SHARD_MAGIC_U16, 1, 10, 5, 2), GD_ERR_PARSE,
                      "truncated");
    expect_open_fails(raw_shard("long.bin", GD_SHARD_MAGIC_U16, 1, 3, 5, 2), GD_ERR_PARSE,
                      "trailing");
    /* A u32 header over u16-sized data is inconsistent too. */
    expect_open_fails(raw_shard("width.bin", GD_SHARD_MAGIC_U32, 7, 4, 4, 2), GD_ERR_PARSE,
                      "width.bin");
    uint8_t tiny[100] = {0};
    expect_open_fails(gd_test_write_file("tiny.bin", tiny, sizeof tiny, 0644), GD_ERR_PARSE,
                      "shorter than");
    expect_open_fails(gd_test_write_file("empty.bin", tiny, 0, 0644), GD_ERR_PARSE,
                      "empty.bin");
    const char *dir = gd_test_path("adir");
    CHECK(mkdir(dir, 0700) == 0);
    expect_open_fails(dir, GD_ERR_INVALID, "directory");
    expect_open_fails(gd_test_path("missing.bin"), GD_ERR_NOT_FOUND, "missing.bin");
    expect_open_fails(gd_test_path("nothing-*.bin"), GD_ERR_NOT_FOUND, "nothing-*.bin");
    /* A glob where one shard is bad fails naming that shard. */
    uint32_t ok[4] = {1, 2, 3, 4};
    CHECK_OK(gd_shard_write(gd_test_path("mix-a.bin"), ok, 4, 2));
    raw_shard("mix-b.bin", 1, 1, 4, 4, 2);
    expect_open_fails(gd_test_path("mix-*.bin"), GD_ERR_PARSE, "mix-b.bin");
    /* Mixed widths are refused. */
    CHECK_OK(gd_shard_write(gd_test_path("mix-b.bin"), ok, 4, 4));
    expect_open_fails(gd_test_path("mix-*.bin"), GD_ERR_INVALID, "uint32");

    /* The parser directly. */
    uint8_t header[GD_SHARD_HEADER_BYTES] = {0};
    uint32_t fields[3] = {GD_SHARD_MAGIC_U32, GD_SHARD_VERSION_U32, 6};
    for (int f = 0; f < 3; f++)
        for (int b = 0; b < 4; b++)
            header[4 * f + b] = (uint8_t)(fields[f] >> (8 * b));
    gd_shard_header h = {0};
    CHECK_OK(gd_shard_header_parse(&h, header, GD_SHARD_HEADER_BYTES + 24, "x"));
    CHECK(h.token_bytes == 4 && h.token_count == 6);
    CHECK_STATUS(gd_shard_header_parse(&h, header, GD_SHARD_HEADER_BYTES + 23, "x"),
                 GD_ERR_PARSE);
    CHECK_STATUS(gd_shard_header_parse(&h, header, 12, "x"), GD_ERR_PARSE);
    CHECK_STATUS(gd_shard_header_parse(&h, NULL, 0, NULL), GD_ERR_PARSE);
}

/* Two shards whose tokens encode where they are: file A holds 0..699,
 * file B holds 1000..1899 (token = 1000 * file + position). */
#define A_COUNT 700
#define B_COUNT 900

static gd_data *open_two_shards(void) {
    uint32_t a[A_COUNT], b[B_COUNT];
    for (uint32_t i = 0; i < A_COUNT; i++)
        a[i] = i;
    for (uint32_t i = 0; i < B_COUNT; i++)
        b[i] = 1000 + i;
    const char *dir = gd_test_path("two");
    mkdir(dir, 0700);
    CHECK_OK(gd_shard_write(gd_test_path("two/b-second.bin"), b, B_COUNT, 2));
    CHECK_OK(gd_shard_write(gd_test_path("two/a-first.bin"), a, A_COUNT, 2));
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, gd_test_path("two/*.bin")));
    return data;
}

/* Token at global position g of the concatenation (A then B). */
static int32_t two_shards_token(uint64_t g) {
    return g < A_COUNT ? (int32_t)g : (int32_t)(1000 + g - A_COUNT);
}

static void test_train_windows(void) {
    int fds = open_fds();
    gd_data *data = open_two_shards();
    if (data == NULL)
        return;
    CHECK(open_fds() == fds);
    CHECK(gd_data_token_count(data) == A_COUNT + B_COUNT);
    CHECK_STR_EQ(gd_data_describe(data), "2 shards, 1600 uint16 tokens");
    enum { BATCH = 8, SEQ = 63, LEN = SEQ + 1 };
    static int32_t x[BATCH * LEN], y[BATCH * LEN];
    size_t from_a = 0, windows = 0;
    int32_t min_a = 1 << 30, max_a = -1, min_b = 1 << 30, max_b = -1;
    for (uint32_t worker = 0; worker < 4; worker++)
        for (uint64_t step = 0; step < 25; step++)
            for (uint32_t micro = 0; micro < 2; micro++) {
                CHECK_OK(gd_data_train_batch(data, x, BATCH, SEQ, 2000, 99, worker, step, micro));
                for (int j = 0; j < BATCH; j++) {
                    const int32_t *w = x + j * LEN;
                    /* Consecutive tokens of one file: never across a boundary. */
                    bool consecutive = true;
                    for (int k = 1; k < LEN; k++)
                        consecutive = consecutive && w[k] == w[k - 1] + 1;
                    CHECK(consecutive);
                    bool in_a = w[0] < 1000;
                    CHECK(in_a ? w[LEN - 1] < A_COUNT : w[LEN - 1] < 1000 + B_COUNT);
                    from_a += in_a;
                    windows++;
                    if (in_a) {
                        min_a = w[0] < min_a ? w[0] : min_a;
                        max_a = w[0] > max_a ? w[0] : max_a;
                    } else {
                        min_b = w[0] < min_b ? w[0] : min_b;
                        max_b = w[0] > max_b ? w[0] : max_b;
                    }
                }
            }
    /* Starts are uniform over the 637 + 837 windows: about 43% in A, and
     * both ends of each file are reached. */
    double share_a = (double)from_a / (double)windows;
    CHECK(share_a > 0.36 && share_a < 0.50);
    CHECK(min_a < 30 && max_a > A_COUNT - LEN - 30 && max_a <= A_COUNT - LEN);
    CHECK(min_b < 1030 && max_b > 1000 + B_COUNT - LEN - 30 && max_b <= 1000 + B_COUNT - LEN);

    /* Pure: the same arguments give the same batch... */
    CHECK_OK(gd_data_train_batch(data, x, BATCH, SEQ, 2000, 7, 3, 11, 1));
    CHECK_OK(gd_data_train_batch(data, y, BATCH, SEQ, 2000, 7, 3, 11, 1));
    CHECK(memcmp(x, y, sizeof x) == 0);
    /* ... and window micro * batch + j does not depend on how it is split. */
    static int32_t half[BATCH / 2 * LEN];
    CHECK_OK(gd_data_train_batch(data, y, BATCH, SEQ, 2000, 7, 3, 11, 0));
    CHECK_OK(gd_data_train_batch(data, half, BATCH / 2, SEQ, 2000, 7, 3, 11, 1));
    CHECK(memcmp(half, y + BATCH / 2 * LEN, sizeof half) == 0);
    /* Another seed, worker, step or micro gives other windows. */
    struct { uint64_t seed; uint32_t worker; uint64_t step; uint32_t micro; } other[] = {
        {8, 3, 11, 1}, {7, 4, 11, 1}, {7, 3, 12, 1}, {7, 3, 11, 2}, {7, 3, 11 + (1ull << 32), 1},
    };
    CHECK_OK(gd_data_train_batch(data, x, BATCH, SEQ, 2000, 7, 3, 11, 1));
    for (size_t o = 0; o < sizeof other / sizeof other[0]; o++) {
        CHECK_OK(gd_data_train_batch(data, y, BATCH, SEQ, 2000, other[o].seed, other[o].worker,
                                     other[o].step, other[o].micro));
        int same = 0;
        for (int j = 0; j < BATCH; j++)
            same += x[j * LEN] == y[j * LEN];
        CHECK(same < 3);
    }
    /* Windows of seq_len + 1 = 901 tokens fit in no file. */
    int32_t *big = malloc(2 * 901 * sizeof *big);
    CHECK_STATUS(gd_data_train_batch(data, big, 2, 900, 2000, 1, 0, 0, 0), GD_ERR_INVALID);
    CHECK(detail_has("900"));
    /* 900 fits B only. */
    CHECK_OK(gd_data_train_batch(data, big, 2, 899, 2000, 1, 0, 0, 0));
    CHECK(big[0] == 1000 && big[900] == 1000);
    free(big);
    CHECK_STATUS(gd_data_train_batch(data, x, 0, SEQ, 2000, 1, 0, 0, 0), GD_ERR_INVALID);
    CHECK_STATUS(gd_data_train_batch(data, x, BATCH, 0, 2000, 1, 0, 0, 0), GD_ERR_INVALID);
    CHECK_STATUS(gd_data_train_batch(data, x, SIZE_MAX / 2, SIZE_MAX / 2, 2000, 1, 0, 0, 0),
                 GD_ERR_LIMIT);
    gd_data_close(data);
}

/* Eval window k of the two shards (M = 1599 / 63 = 25 windows at a stride
 * of 63): the rule of data.h worked by hand. floor(25 / golden ratio) = 15
 * shares 5 with 25, so the stride is 16, and window k starts at
 * ((16 k) mod 25) * 63. */
static uint64_t two_shards_eval_start(uint64_t k) { return (k * 16 % 25) * 63; }

static void test_eval_windows(void) {
    gd_data *data = open_two_shards();
    if (data == NULL)
        return;
    enum { BATCH = 4, SEQ = 63, LEN = SEQ + 1 };
    int32_t x[BATCH * LEN];
    uint64_t index = 0;
    bool seen[25] = {false}, crosses = false;
    for (;; index++) {
        bool available = false;
        for (int i = 0; i < BATCH * LEN; i++)
            x[i] = -7;
        CHECK_OK(gd_data_eval_batch(data, x, BATCH, SEQ, 2000, index, &available));
        if (!available) {
            bool untouched = true;
            for (int i = 0; i < BATCH * LEN; i++)
                untouched = untouched && x[i] == -7;
            CHECK(untouched);
            break;
        }
        for (int j = 0; j < BATCH; j++) {
            uint64_t start = two_shards_eval_start(index * BATCH + (uint64_t)j);
            bool match = true;
            for (int k = 0; k < LEN; k++)
                match = match && x[j * LEN + k] == two_shards_token(start + (uint64_t)k);
            CHECK(match);
            CHECK(!seen[start / SEQ]);
            seen[start / SEQ] = true;
            crosses = crosses || (start < A_COUNT && start + LEN > A_COUNT);
        }
    }
    /* 6 batches of 4 use 24 of the 25 windows; one of them (at 693) runs
     * from A into B. */
    CHECK(index == 6);
    CHECK(crosses);
    /* Window k does not depend on the batch size: batch 1 of 4 is eval
     * windows 4..7, and window 24, the last, is batch 24 of 1. */
    int32_t one[LEN];
    bool available = false;
    CHECK_OK(gd_data_eval_batch(data, x, BATCH, SEQ, 2000, 1, &available));
    for (int j = 0; j < BATCH; j++) {
        CHECK_OK(gd_data_eval_batch(data, one, 1, SEQ, 2000, 4 + (uint64_t)j, &available));
        CHECK(available && memcmp(one, x + j * LEN, sizeof one) == 0);
    }
    CHECK_OK(gd_data_eval_batch(data, one, 1, SEQ, 2000, 24, &available));
    CHECK(available && one[0] == two_shards_token(two_shards_eval_start(24)));
    CHECK_OK(gd_data_eval_batch(data, one, 1, SEQ, 2000, 25, &available));
    CHECK(!available);
    CHECK_OK(gd_data_eval_batch(data, x, BATCH, SEQ, 2000, UINT64_MAX, &available));
    CHECK(!available);
    CHECK_OK(gd_data_eval_batch(data, x, BATCH, SEQ, 2000, UINT64_MAX / BATCH, &available));
    CHECK(!available);
    /* Deterministic: another opening of the same files gives the same batch. */
    gd_data *again = open_two_shards();
    int32_t y[BATCH * LEN];
    CHECK_OK(gd_data_eval_batch(data, x, BATCH, SEQ, 2000, 3, &available));
    CHECK_OK(gd_data_eval_batch(again, y, BATCH, SEQ, 2000, 3, &available));
    CHECK(available && memcmp(x, y, sizeof x) == 0);
    gd_data_close(again);
    /* Exactly fitting: one window of all 1600 tokens. */
    int32_t *all = malloc(1600 * sizeof *all);
    CHECK_OK(gd_data_eval_batch(data, all, 1, 1599, 2000, 0, &available));
    CHECK(available && all[699] == 699 && all[700] == 1000 && all[1599] == 1899);
    CHECK_OK(gd_data_eval_batch(data, all, 1, 1599, 2000, 1, &available));
    CHECK(!available);
    free(all);
    /* The probe a run makes before it trains: batch 0 must exist. */
    CHECK_OK(gd_data_eval_check(data, BATCH, SEQ, 2000));
    CHECK_STATUS(gd_data_eval_check(data, 26, SEQ, 2000), GD_ERR_INVALID);
    CHECK(detail_has("2 shards, 1600 uint16 tokens") && detail_has("26 windows of 64 tokens"));
    CHECK_STATUS(gd_data_eval_check(data, BATCH, SEQ, 1500), GD_ERR_INVALID);
    CHECK(detail_has("vocabulary of 1500"));
    gd_data_close(data);
}

/* For every number of windows M from 1000 tokens (seq_len 1..300): eval
 * windows 0..M-1 are the M windows at a stride of seq_len, each once, and
 * window M does not exist. Over 14285 windows, the first n of them leave
 * no gap wider than 3 M / n windows (golden-ratio order: about 2.4 M / n
 * at worst; the first n of any order cannot beat M / n). */
static void test_eval_windows_permute(void) {
    enum { N = 1000, BIG = 100000 };
    uint32_t *tokens = malloc(BIG * sizeof *tokens);
    for (uint32_t i = 0; i < BIG; i++)
        tokens[i] = i;
    CHECK_OK(gd_shard_write(gd_test_path("positions.bin"), tokens, N, 4));
    CHECK_OK(gd_shard_write(gd_test_path("positions-big.bin"), tokens, BIG, 4));
    gd_data *data = NULL, *big = NULL;
    CHECK_OK(gd_data_open(&data, gd_test_path("positions.bin")));
    CHECK_OK(gd_data_open(&big, gd_test_path("positions-big.bin")));
    if (data == NULL || big == NULL) {
        gd_data_close(data);
        free(tokens);
        return;
    }
    int32_t window[302];
    bool seen[N], all_once = true;
    for (size_t seq = 1; seq <= 300; seq++) {
        uint64_t m = (N - 1) / seq;
        memset(seen, 0, sizeof seen);
        bool available = false;
        for (uint64_t k = 0; k < m; k++) {
            CHECK_OK(gd_data_eval_batch(data, window, 1, seq, (uint64_t)1 << 31, k, &available));
            uint64_t start = (uint64_t)window[0];
            bool ok = available && start % seq == 0 && start / seq < m && !seen[start / seq] &&
                      window[seq] == (int32_t)(start + seq);
            all_once = all_once && ok;
            seen[start / seq] = true;
        }
        CHECK_OK(gd_data_eval_batch(data, window, 1, seq, (uint64_t)1 << 31, m, &available));
        all_once = all_once && !available;
    }
    CHECK(all_once);
    enum { SEQ = 7, M = (BIG - 1) / SEQ, FIRST = 64 };
    uint64_t starts[FIRST];
    bool spread = true;
    for (size_t n = 1; n <= FIRST; n++) {
        bool available = false;
        CHECK_OK(gd_data_eval_batch(big, window, 1, SEQ, (uint64_t)1 << 31, n - 1, &available));
        /* insertion into the sorted starts so far */
        size_t at = n - 1;
        while (at > 0 && starts[at - 1] > (uint64_t)window[0] / SEQ) {
            starts[at] = starts[at - 1];
            at--;
        }
        starts[at] = (uint64_t)window[0] / SEQ;
        uint64_t widest = starts[0] + M - starts[n - 1];
        for (size_t i = 1; i < n; i++)
            widest = starts[i] - starts[i - 1] > widest ? starts[i] - starts[i - 1] : widest;
        if (n >= 2 && widest * n >= 3 * (uint64_t)M) {
            fprintf(stderr, "  the first %zu windows leave a gap of %llu of %d\n", n,
                    (unsigned long long)widest, M);
            spread = false;
        }
    }
    CHECK(spread);
    gd_data_close(data);
    gd_data_close(big);
    free(tokens);
}

/* Ten text files, the bytes of file i all 'a' + i: the first batch of 8
 * eval windows comes from across the whole source, not its first file. */
static void test_eval_windows_text(void) {
    CHECK(mkdir(gd_test_path("ten"), 0700) == 0);
    enum { FILES = 10 };
    char *bytes = malloc(2000);
    uint64_t total = 0, file_start[FILES];
    for (int i = 0; i < FILES; i++) {
        size_t n = 800 + 100 * (size_t)i;
        memset(bytes, 'a' + i, n);
        char name[32];
        snprintf(name, sizeof name, "ten/part-%02d.txt", i);
        gd_test_write_file(name, bytes, n, 0644);
        file_start[i] = total;
        total += n;
    }
    free(bytes);
    char spec[700];
    snprintf(spec, sizeof spec, "text:%s", gd_test_path("ten/part-*.txt"));
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, spec));
    if (data == NULL)
        return;
    enum { BATCH = 8, SEQ = 32, LEN = SEQ + 1 };
    int32_t x[BATCH * LEN];
    bool available = false, files[FILES] = {false};
    CHECK_OK(gd_data_eval_batch(data, x, BATCH, SEQ, 256, 0, &available));
    CHECK(available);
    int touched = 0;
    for (int j = 0; j < BATCH; j++)
        for (int k = 0; k < LEN; k++) {
            int f = x[j * LEN + k] - 'a';
            CHECK(f >= 0 && f < FILES);
            if (f >= 0 && f < FILES && !files[f]) {
                files[f] = true;
                touched++;
            }
        }
    /* The first window starts in the first file; the windows reach a file
     * that starts beyond half the tokens (in the first files' order they
     * would all lie in the first file). */
    int first = x[0] - 'a', last_file = 0;
    for (int f = 0; f < FILES; f++)
        last_file = files[f] ? f : last_file;
    fprintf(stderr, "  the first %d eval windows touch %d of %d files (%d..%d)\n", BATCH,
            touched, FILES, first, last_file);
    CHECK(first == 0 && touched > FILES / 2 && file_start[last_file] > total / 2);
    CHECK(total == gd_data_token_count(data));
    gd_data_close(data);
}

static void test_vocab_check(void) {
    uint32_t tokens[20];
    for (int i = 0; i < 20; i++)
        tokens[i] = (uint32_t)i;
    tokens[17] = 5000;
    const char *path = gd_test_path("vocab.bin");
    CHECK_OK(gd_shard_write(path, tokens, 20, 4));
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, path));
    if (data == NULL)
        return;
    int32_t x[20];
    CHECK_STATUS(gd_data_train_batch(data, x, 1, 19, 4096, 1, 0, 0, 0), GD_ERR_INVALID);
    CHECK(detail_has("position 17") && detail_has("vocab.bin") && detail_has("5000"));
    bool available = false;
    CHECK_STATUS(gd_data_eval_batch(data, x, 1, 19, 4096, 0, &available), GD_ERR_INVALID);
    CHECK(detail_has("position 17"));
    CHECK(!available);
    CHECK_OK(gd_data_train_batch(data, x, 1, 19, 5001, 1, 0, 0, 0));
    CHECK(x[17] == 5000);
    gd_data_close(data);
    /* Tokens that do not fit int32 are refused whatever the vocabulary. */
    tokens[17] = 0x80000000u;
    CHECK_OK(gd_shard_write(path, tokens, 20, 4));
    CHECK_OK(gd_data_open(&data, path));
    CHECK_STATUS(gd_data_train_batch(data, x, 1, 19, (uint64_t)1 << 32, 1, 0, 0, 0),
                 GD_ERR_INVALID);
    CHECK(detail_has("position 17"));
    gd_data_close(data);
}

static void test_text(void) {
    CHECK(mkdir(gd_test_path("text"), 0700) == 0);
    const char *parts[] = {"text/t-b.txt", "bravo\n", "text/t-a.txt", "alpha ",
                           "text/t-c.txt", "charlie", "text/t-0.txt", ""};
    for (int i = 0; i < 8; i += 2)
        gd_test_write_file(parts[i], parts[i + 1], strlen(parts[i + 1]), 0644);
    char spec[700];
    snprintf(spec, sizeof spec, "text:%s", gd_test_path("text/t-*.txt"));
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, spec));
    if (data == NULL)
        return;
    const char *expect = "alpha bravo\ncharlie";
    size_t n = strlen(expect);
    CHECK(gd_data_kind_of(data) == GD_DATA_TEXT);
    CHECK(gd_data_vocab_bound(data) == 256);
    CHECK(gd_data_token_count(data) == n);
    CHECK_STR_EQ(gd_data_describe(data), "4 text files, 19 bytes");
    int32_t x[32];
    bool available = false;
    CHECK_OK(gd_data_eval_batch(data, x, 1, n - 1, 256, 0, &available));
    CHECK(available);
    bool same = true;
    for (size_t i = 0; i < n; i++)
        same = same && x[i] == (unsigned char)expect[i];
    CHECK(same);
    /* Training windows of 6 bytes stay inside "alpha " or "charlie". */
    for (uint64_t step = 0; step < 40; step++) {
        CHECK_OK(gd_data_train_batch(data, x, 4, 5, 256, 3, 0, step, 0));
        for (int j = 0; j < 4; j++) {
            char w[7] = {0};
            for (int k = 0; k < 6; k++)
                w[k] = (char)x[j * 6 + k];
            CHECK(strcmp(w, "alpha ") == 0 || strcmp(w, "bravo\n") == 0 ||
                  strcmp(w, "charli") == 0 || strcmp(w, "harlie") == 0);
        }
    }
    /* A vocabulary below 256 fails on the first byte above it. */
    CHECK_STATUS(gd_data_eval_batch(data, x, 1, n - 1, 100, 0, &available), GD_ERR_INVALID);
    CHECK(detail_has("byte 108 at offset 1") && detail_has("t-a.txt"));
    gd_data_close(data);

    snprintf(spec, sizeof spec, "text:%s", gd_test_path("text/t-0.txt"));
    expect_open_fails(spec, GD_ERR_INVALID, "empty");
    snprintf(spec, sizeof spec, "text:%s", gd_test_path("text/none-*.txt"));
    expect_open_fails(spec, GD_ERR_NOT_FOUND, "none-*.txt");
    expect_open_fails("text:", GD_ERR_INVALID, "text:");
    snprintf(spec, sizeof spec, "text:%s", gd_test_path("text"));
    expect_open_fails(spec, GD_ERR_INVALID, "directory");
}

/* Plug-in estimate of H(X_t | previous k symbols) from a symbol stream made
 * of independent windows (contexts never span two windows). */
static double empirical_conditional_entropy(const int32_t *x, size_t windows, size_t len,
                                            uint32_t alphabet, uint32_t k) {
    size_t contexts = 1;
    for (uint32_t i = 0; i < k; i++)
        contexts *= alphabet;
    double *joint = calloc(contexts * alphabet, sizeof *joint);
    double *ctx = calloc(contexts, sizeof *ctx);
    double total = 0;
    for (size_t w = 0; w < windows; w++) {
        const int32_t *s = x + w * len;
        for (size_t t = k; t < len; t++) {
            size_t c = 0;
            for (uint32_t i = 0; i < k; i++)
                c = c * alphabet + (size_t)s[t - k + i];
            joint[c * alphabet + (size_t)s[t]] += 1;
            ctx[c] += 1;
            total += 1;
        }
    }
    double h = 0;
    for (size_t c = 0; c < contexts; c++)
        for (uint32_t a = 0; a < alphabet; a++) {
            double n = joint[c * alphabet + a];
            if (n > 0)
                h -= n / total * log(n / ctx[c]);
        }
    free(joint);
    free(ctx);
    return h;
}

static void test_markov(void) {
    gd_data *a = NULL, *b = NULL;
    CHECK_OK(gd_data_open(&a, "synthetic:markov:42"));
    CHECK_OK(gd_data_open(&b, "synthetic:markov:42:16:2"));
    if (a == NULL || b == NULL) {
        gd_data_close(a);
        gd_data_close(b);
        return;
    }
    CHECK(gd_data_kind_of(a) == GD_DATA_MARKOV);
    CHECK(gd_data_vocab_bound(a) == 16);
    CHECK(gd_data_token_count(a) == 0);
    fprintf(stderr, "  %s\n", gd_data_describe(a));
    double h[5] = {0}, hb[5] = {0};
    CHECK(gd_data_markov_entropies(a, h, 2) == 0);
    CHECK(gd_data_markov_entropies(a, h, 5) == 3);
    CHECK(gd_data_markov_entropies(b, hb, 3) == 3);
    CHECK(memcmp(h, hb, sizeof h) == 0);
    fprintf(stderr, "  H_0 %.6f  H_1 %.6f  H_2 %.6f nats (ln 16 = %.6f)\n", h[0], h[1], h[2],
            log(16.0));
    CHECK(h[0] <= log(16.0) + 1e-12 && h[0] >= h[1] && h[1] >= h[2] && h[2] > 0);
    CHECK(h[1] - h[2] > 0.3);

    /* Same seed, same windows; the default spec equals the explicit one. */
    enum { BATCH = 4, SEQ = 99, LEN = SEQ + 1 };
    int32_t x[BATCH * LEN], y[BATCH * LEN];
    CHECK_OK(gd_data_train_batch(a, x, BATCH, SEQ, 16, 5, 1, 2, 3));
    CHECK_OK(gd_data_train_batch(b, y, BATCH, SEQ, 16, 5, 1, 2, 3));
    CHECK(memcmp(x, y, sizeof x) == 0);
    bool in_range = true;
    for (int i = 0; i < BATCH * LEN; i++)
        in_range = in_range && x[i] >= 0 && x[i] < 16;
    CHECK(in_range);
    CHECK(memcmp(x, x + LEN, LEN * sizeof *x) != 0);
    CHECK_OK(gd_data_train_batch(a, y, BATCH, SEQ, 16, 5, 1, 2, 4));
    CHECK(memcmp(x, y, sizeof x) != 0);
    /* Eval windows: deterministic, unbounded, not training windows. */
    bool available = false;
    CHECK_OK(gd_data_eval_batch(a, x, BATCH, SEQ, 16, 1000000, &available));
    CHECK(available);
    CHECK_OK(gd_data_eval_batch(b, y, BATCH, SEQ, 16, 1000000, &available));
    CHECK(memcmp(x, y, sizeof x) == 0);
    CHECK_OK(gd_data_eval_batch(a, y, BATCH, SEQ, 16, 1000001, &available));
    CHECK(memcmp(x, y, sizeof x) != 0);
    /* The alphabet must fit the model's vocabulary. */
    CHECK_STATUS(gd_data_train_batch(a, x, BATCH, SEQ, 15, 5, 1, 2, 3), GD_ERR_INVALID);
    CHECK(detail_has("alphabet"));
    CHECK_STATUS(gd_data_eval_batch(a, x, BATCH, SEQ, 15, 0, &available), GD_ERR_INVALID);

    /* A long stream: the plug-in conditional entropies of orders 2, 1, 0
     * match the exact H_2, H_1, H_0 (sampler and entropy maths agree). */
    enum { WINDOWS = 4, WLEN = 500000 };
    int32_t *stream = malloc((size_t)WINDOWS * WLEN * sizeof *stream);
    CHECK_OK(gd_data_train_batch(a, stream, WINDOWS, WLEN - 1, 16, 1, 0, 0, 0));
    for (uint32_t k = 0; k <= 2; k++) {
        double e = empirical_conditional_entropy(stream, WINDOWS, WLEN, 16, k);
        fprintf(stderr, "  empirical H_%u %.6f (exact %.6f)\n", k, e, h[k]);
        CHECK(fabs(e - h[k]) < 0.01);
    }
    free(stream);
    gd_data_close(a);
    gd_data_close(b);

    /* Another seed is another table. */
    gd_markov *m1 = NULL, *m2 = NULL, *m3 = NULL;
    CHECK_OK(gd_markov_new(&m1, 42, 16, 2));
    CHECK_OK(gd_markov_new(&m2, 42, 16, 2));
    CHECK_OK(gd_markov_new(&m3, 43, 16, 2));
    if (m1 != NULL && m2 != NULL && m3 != NULL) {
        int differ = 0;
        bool same = true, sums = true;
        for (uint32_t c = 0; c < 256; c++) {
            double sum = 0;
            for (uint32_t s = 0; s < 16; s++) {
                double p = gd_markov_prob(m1, c, s);
                same = same && p == gd_markov_prob(m2, c, s);
                differ += p != gd_markov_prob(m3, c, s);
                sum += p;
            }
            sums = sums && fabs(sum - 1) < 1e-12;
        }
        CHECK(same && sums && differ > 1000);
    }
    gd_markov_free(m1);
    gd_markov_free(m2);
    gd_markov_free(m3);

    /* Other shapes: entropies ordered, within ln(ALPHABET). */
    const char *specs[] = {"synthetic:markov:1:2:4", "synthetic:markov:2:256:2",
                           "synthetic:markov:3:3:1", "synthetic:markov:18446744073709551615:16:4"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gd_data *d = NULL;
        CHECK_OK(gd_data_open(&d, specs[i]));
        if (d == NULL)
            continue;
        double e[5];
        size_t n = gd_data_markov_entropies(d, e, 5);
        bool ordered = n >= 2 && e[0] <= log((double)gd_data_vocab_bound(d)) + 1e-12;
        for (size_t j = 1; j < n; j++)
            ordered = ordered && e[j] <= e[j - 1] + 1e-9 && e[j] > 0;
        CHECK(ordered);
        fprintf(stderr, "  %s\n", gd_data_describe(d));
        int32_t w[3 * 10];
        CHECK_OK(gd_data_train_batch(d, w, 3, 9, 256, 1, 2, 3, 4));
        CHECK_OK(gd_data_train_batch(d, w, 1, 1, 256, 1, 2, 3, 4)); /* shorter than ORDER */
        gd_data_close(d);
    }
}

static void test_bad_specs(void) {
    expect_open_fails("synthetic:markov:", GD_ERR_INVALID, "SEED");
    expect_open_fails("synthetic:markov", GD_ERR_INVALID, "SEED");
    expect_open_fails("synthetic:markov:abc", GD_ERR_INVALID, "abc");
    expect_open_fails("synthetic:markov:-1", GD_ERR_INVALID, "SEED");
    expect_open_fails("synthetic:markov:18446744073709551616", GD_ERR_INVALID, "SEED");
    expect_open_fails("synthetic:markov:1:1", GD_ERR_INVALID, "ALPHABET");
    expect_open_fails("synthetic:markov:1:300", GD_ERR_INVALID, "ALPHABET");
    expect_open_fails("synthetic:markov:1:", GD_ERR_INVALID, "ALPHABET");
    expect_open_fails("synthetic:markov:1:16:0", GD_ERR_INVALID, "ORDER");
    expect_open_fails("synthetic:markov:1:16:9", GD_ERR_INVALID, "ORDER");
    expect_open_fails("synthetic:markov:1:16:x", GD_ERR_INVALID, "ORDER");
    expect_open_fails("synthetic:markov:1:32:4", GD_ERR_INVALID, "65536");
    expect_open_fails("synthetic:markov:1:16:2:5", GD_ERR_INVALID, "too many");
    expect_open_fails("synthetic:gauss:1", GD_ERR_INVALID, "unknown");
    expect_open_fails("synthetic:mixture:1", GD_ERR_INVALID, "COMPONENTS");
    expect_open_fails("synthetic:mixture:1:0", GD_ERR_INVALID, "COMPONENTS");
    expect_open_fails("synthetic:mixture:1:5000", GD_ERR_INVALID, "COMPONENTS");
    expect_open_fails("synthetic:mixture:1:4:1", GD_ERR_INVALID, "ALPHABET");
    expect_open_fails("synthetic:mixture:1:4:16:2:9", GD_ERR_INVALID, "too many");
    expect_open_fails("foo:bar", GD_ERR_INVALID, "foo:");
    expect_open_fails("", GD_ERR_INVALID, NULL);
    expect_open_fails(NULL, GD_ERR_INVALID, NULL);
    gd_markov *m = NULL;
    CHECK_STATUS(gd_markov_new(&m, 1, 300, 2), GD_ERR_INVALID);
    CHECK_STATUS(gd_markov_new(&m, 1, 16, 5), GD_ERR_INVALID);
    CHECK(m == NULL);
}

/* A mixture: worker w trains on component w mod C (exactly that chain's
 * windows), evaluation cycles through the components, and the entropies
 * are the components' means. */
static void test_mixture(void) {
    gd_data *mix = NULL, *c1 = NULL, *c2 = NULL;
    CHECK_OK(gd_data_open(&mix, "synthetic:mixture:7:3"));
    CHECK_OK(gd_data_open(&c1, "synthetic:markov:8"));
    CHECK_OK(gd_data_open(&c2, "synthetic:markov:9"));
    int32_t a[2 * 17], b[2 * 17];
    /* worker 4 -> component 1 (seed 8): the same windows as that chain on its own */
    CHECK_OK(gd_data_train_batch(mix, a, 2, 16, 256, 3, 4, 10, 0));
    CHECK_OK(gd_data_train_batch(c1, b, 2, 16, 256, 3, 4, 10, 0));
    CHECK(memcmp(a, b, sizeof a) == 0);
    /* evaluation window k comes from component k mod 3: batch 0, window 2 is component 2 */
    bool available = false;
    int32_t e[3 * 17], f[3 * 17];
    CHECK_OK(gd_data_eval_batch(mix, e, 3, 16, 256, 0, &available));
    CHECK(available);
    CHECK_OK(gd_data_eval_batch(c2, f, 3, 16, 256, 0, &available));
    CHECK(memcmp(e + 2 * 17, f + 2 * 17, 17 * sizeof(int32_t)) == 0);
    double hm[3], h[3], mean[3] = {0, 0, 0};
    CHECK(gd_data_markov_entropies(mix, hm, 3) == 3);
    for (int seed = 7; seed <= 9; seed++) {
        char spec[40];
        snprintf(spec, sizeof spec, "synthetic:markov:%d", seed);
        gd_data *one = NULL;
        CHECK_OK(gd_data_open(&one, spec));
        CHECK(gd_data_markov_entropies(one, h, 3) == 3);
        for (int j = 0; j < 3; j++)
            mean[j] += h[j] / 3;
        gd_data_close(one);
    }
    for (int j = 0; j < 3; j++)
        CHECK(fabs(hm[j] - mean[j]) < 1e-12);
    CHECK(strstr(gd_data_describe(mix), "mixture of 3") != NULL);
    gd_data_close(mix);
    gd_data_close(c1);
    gd_data_close(c2);
}

/* The data digest a run spec records: a function of the tokens and their
 * order only. The same shards kept in another directory (opened from local
 * paths) digest alike; one token changed, the files in another order, a
 * file left out or another source digest differently; a synthetic source
 * digests its parameters (defaults spelled out or not) and takes no paths. */
static void digest_of(gd_data *d, uint8_t out[32]) {
    memset(out, 0, 32);
    if (d != NULL) {
        CHECK_OK(gd_data_digest(d, NULL, NULL, out));
        /* Files hashed on three threads: the same digest. */
        gd_pool *pool = NULL;
        uint8_t pooled[32];
        CHECK_OK(gd_pool_new(&pool, 3));
        CHECK_OK(gd_data_digest(d, pool, NULL, pooled));
        CHECK(memcmp(out, pooled, 32) == 0);
        gd_pool_free(pool);
    }
    gd_data_close(d);
}

static void test_digest(void) {
    uint32_t a[300], b[200];
    for (int i = 0; i < 300; i++)
        a[i] = (uint32_t)(i * 13 % 1000);
    for (int i = 0; i < 200; i++)
        b[i] = (uint32_t)(i * 7 % 1000);
    CHECK(mkdir(gd_test_path("dg-run"), 0755) == 0 || errno == EEXIST);
    CHECK(mkdir(gd_test_path("dg-host"), 0755) == 0 || errno == EEXIST);
    CHECK_OK(gd_shard_write(gd_test_path("dg-run/a.bin"), a, 300, 2));
    CHECK_OK(gd_shard_write(gd_test_path("dg-run/b.bin"), b, 200, 2));
    CHECK_OK(gd_shard_write(gd_test_path("dg-host/part-1.bin"), a, 300, 2));
    CHECK_OK(gd_shard_write(gd_test_path("dg-host/part-2.bin"), b, 200, 2));
    uint8_t run[32], host[32], other[32];
    gd_data *d = NULL;
    CHECK_OK(gd_data_open(&d, gd_test_path("dg-run/*.bin")));
    digest_of(d, run);
    char part1[600], part2[600], host_glob[600];
    snprintf(part1, sizeof part1, "%s", gd_test_path("dg-host/part-1.bin"));
    snprintf(part2, sizeof part2, "%s", gd_test_path("dg-host/part-2.bin"));
    snprintf(host_glob, sizeof host_glob, "%s", gd_test_path("dg-host/part-*.bin"));
    const char *host_paths[2] = {part1, part2};
    CHECK_OK(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), host_paths, 2));
    digest_of(d, host);
    CHECK(memcmp(run, host, 32) == 0);
    const char *glob_path[1] = {host_glob};
    CHECK_OK(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), glob_path, 1));
    digest_of(d, host);
    CHECK(memcmp(run, host, 32) == 0);
    /* Another order, one file, one token changed, another width. */
    const char *swapped[2] = {host_paths[1], host_paths[0]};
    CHECK_OK(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), swapped, 2));
    digest_of(d, other);
    CHECK(memcmp(run, other, 32) != 0);
    CHECK_OK(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), host_paths, 1));
    digest_of(d, other);
    CHECK(memcmp(run, other, 32) != 0);
    b[199] ^= 1;
    CHECK_OK(gd_shard_write(gd_test_path("dg-host/part-2.bin"), b, 200, 2));
    CHECK_OK(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), host_paths, 2));
    digest_of(d, other);
    CHECK(memcmp(run, other, 32) != 0);
    b[199] ^= 1;
    CHECK_OK(gd_shard_write(gd_test_path("dg-host/part-1.bin"), a, 300, 4));
    CHECK_OK(gd_shard_write(gd_test_path("dg-host/part-2.bin"), b, 200, 4));
    CHECK_OK(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), host_paths, 2));
    digest_of(d, other);
    CHECK(memcmp(run, other, 32) != 0);
    /* Text: the same bytes as text and elsewhere. */
    const char *t1 = gd_test_write_file("dg-t1.txt", "hello world\n", 12, 0644);
    char spec[700];
    snprintf(spec, sizeof spec, "text:%s", t1);
    CHECK_OK(gd_data_open(&d, spec));
    digest_of(d, run);
    const char *t2 = gd_test_write_file("dg-t2.txt", "hello world\n", 12, 0644);
    CHECK_OK(gd_data_open_files(&d, spec, &t2, 1));
    digest_of(d, host);
    CHECK(memcmp(run, host, 32) == 0);
    /* Synthetic: parameters, with defaults spelled out or not. */
    CHECK_OK(gd_data_open(&d, "synthetic:markov:1"));
    digest_of(d, run);
    char markov[64];
    snprintf(markov, sizeof markov, "synthetic:markov:1:%d:%d", GD_MARKOV_DEFAULT_ALPHABET,
             GD_MARKOV_DEFAULT_ORDER);
    CHECK_OK(gd_data_open(&d, markov));
    digest_of(d, host);
    CHECK(memcmp(run, host, 32) == 0);
    CHECK_OK(gd_data_open(&d, "synthetic:markov:2"));
    digest_of(d, other);
    CHECK(memcmp(run, other, 32) != 0);
    CHECK_OK(gd_data_open(&d, "synthetic:mixture:1:1"));
    digest_of(d, other);
    CHECK(memcmp(run, other, 32) == 0); /* a mixture of one is that one chain */
    CHECK_STATUS(gd_data_open_files(&d, "synthetic:markov:1", host_paths, 1), GD_ERR_INVALID);
    CHECK(d == NULL && detail_has("not read from files"));
    const char *empty[1] = {""};
    CHECK_STATUS(gd_data_open_files(&d, gd_test_path("dg-run/*.bin"), empty, 1), GD_ERR_INVALID);
}

int main(void) {
    RUN_TEST(test_mixture);
    RUN_TEST(test_shard_round_trip);
    RUN_TEST(test_shard_header_rejection);
    RUN_TEST(test_train_windows);
    RUN_TEST(test_eval_windows);
    RUN_TEST(test_eval_windows_permute);
    RUN_TEST(test_eval_windows_text);
    RUN_TEST(test_vocab_check);
    RUN_TEST(test_text);
    RUN_TEST(test_markov);
    RUN_TEST(test_bad_specs);
    RUN_TEST(test_digest);
    return gd_test_finish();
}
