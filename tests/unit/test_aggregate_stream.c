/* The round's aggregate streamed (plugin/member/round_engine.h's
 * gd_engine_aggregate_io, plugin/member/global_file.h): payloads read in
 * place a chunk at a time, G read and G' written a window at a time to its
 * file, its roots hashed as it is written. Over a model of several windows
 * whose payload chunks straddle the windows' edges, G' has the bits, the
 * state hash and the file bytes of the whole-array aggregate; a payload
 * that is not its commitment leaves no G' behind; and a process killed
 * (SIGKILL) while it aggregates leaves G' whole or absent, never torn, and
 * the aggregate run again over what it left writes the same file. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain/wire/diloco_spec.h"
#include "common/file.h"
#include "common/bytes.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/global_file.h"
#include "plugin/member/round_engine.h"
#include "tests/support/example_spec.h"
#include "tests/support/kill_child.h"
#include "tests/support/testkit.h"
#include "trainer/config.h"
#include "trainer/diloco.h"
#include "trainer/layout.h"

#define RUN 1
#define ROUND 4
#define W 3
/* Not a divisor or multiple of the aggregate's windows: chunks straddle. */
#define CHUNK_ELEMS 131072 /* whole sum-of-squares blocks: norms made as payloads are checked */

static gd_engine g_engine;
static gd_global_state g_g;        /* G_ROUND, with momentum */
static gd_global_state g_want;     /* G_{ROUND+1} by the whole-array aggregate */
static uint8_t g_want_hash[32];
static gd_buf g_payloads[W];
static uint8_t g_roots[W][32];
static uint32_t g_leaves[W];
static const char *const k_workers[W] = {"gonka1streamworker2", "gonka1streamworker0",
                                         "gonka1streamworker1"};
static const uint64_t k_tokens[W] = {4096, 3072, 4096};

static const uint8_t *layout(void) { return gd_trainer_layout(g_engine.trainer)->digest; }

/* Uniform in [-scale, scale): cheap (xorshift64), since every child of
 * the kill test makes the payloads again. */
static void random_values(float *out, size_t n, uint64_t seed, double scale) {
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out[i] = (float)(((double)(x >> 11) / 4503599627370496.0 - 1.0) * scale);
    }
}

/* Worker i's payload of a random Δ, as the engine expects it this round. */
static void make_payload(size_t i, float *delta) {
    const gd_diloco_config *c = &g_engine.rc.diloco;
    gd_payload_header h = {.run = c->run, .round = ROUND, .param_count = g_engine.n,
                           .codec = c->codec, .chunk_elems = c->chunk_elems};
    snprintf(h.participant, sizeof h.participant, "%s", k_workers[i]);
    memcpy(h.layout_digest, layout(), 32);
    memcpy(h.spec_digest, c->spec_digest, 32);
    random_values(delta, g_engine.n, 100 + i, i == 1 ? 0.05 : 0.002);
    gd_payload p;
    CHECK_OK(gd_payload_encode(&p, &h, delta, NULL, NULL));
    CHECK_OK(gd_payload_serialize(&p, &g_payloads[i]));
    CHECK_OK(gd_payload_root(&p, g_roots[i], &g_leaves[i]));
    CHECK_OK(gd_payload_decode(&p, delta, NULL)); /* what the aggregate adds */
    gd_payload_free(&p);
}

static void contributions(gd_engine_contribution *cs) {
    for (size_t i = 0; i < W; i++)
        cs[i] = (gd_engine_contribution){.address = k_workers[i], .tokens = k_tokens[i],
                                         .payload = g_payloads[i].data,
                                         .payload_len = g_payloads[i].len,
                                         .root = g_roots[i], .leaves = g_leaves[i]};
}

/* G_ROUND and the payloads; with `reference`, G_{ROUND+1} by
 * gd_diloco_aggregate over the decoded Δs (the whole-array reference). */
static void setup(bool reference) {
    CHECK_OK(gd_global_state_init(&g_g, g_engine.n));
    random_values(g_g.params, g_g.n, 6, 0.05);
    random_values(g_g.momentum, g_g.n, 7, 0.001);
    g_g.round = 9;
    if (!reference) {
        float *delta = malloc(g_engine.n * sizeof(float));
        CHECK(delta != NULL);
        for (size_t i = 0; i < W; i++)
            make_payload(i, delta);
        free(delta);
        return;
    }
    float *deltas[W];
    gd_contribution held[W];
    for (size_t i = 0; i < W; i++) {
        deltas[i] = malloc(g_engine.n * sizeof(float));
        CHECK(deltas[i] != NULL);
        make_payload(i, deltas[i]);
        held[i] = (gd_contribution){.address = k_workers[i], .n = g_engine.n,
                                    .layout_digest = layout(), .delta = deltas[i],
                                    .tokens = k_tokens[i]};
    }
    CHECK_OK(gd_global_state_copy(&g_want, &g_g));
    gd_aggregate_stats st;
    CHECK_OK(gd_diloco_aggregate(NULL, &g_engine.rc.diloco, layout(), held, W, &g_want, &st));
    CHECK(st.clipped == 1); /* worker 1's Δ is far larger: the clip is on the path */
    CHECK_OK(gd_engine_global_hash(&g_engine, &g_want, g_want_hash));
    for (size_t i = 0; i < W; i++)
        free(deltas[i]);
}

static gd_artifact_store open_store(const char *name) {
    gd_artifact_store st;
    CHECK_OK(gd_artifact_store_open(&st, gd_test_path(name)));
    return st;
}

/* The aggregate's io: G read from g_g, G' written to a file, in pieces of
 * `piece` values with `pause_us` between them (a slow disk, so a kill
 * lands while the file is being written). */
typedef struct stream_io {
    gd_global_file *file;
    size_t piece;
    unsigned pause_us;
} stream_io;

static gd_status io_read(void *ctx, float *params, float *momentum, size_t lo, size_t count) {
    (void)ctx;
    memcpy(params, g_g.params + lo, count * sizeof(float));
    memcpy(momentum, g_g.momentum + lo, count * sizeof(float));
    return GD_OK;
}

static gd_status io_write(void *ctx, const float *params, const float *momentum, size_t lo,
                          size_t count) {
    const stream_io *x = ctx;
    for (size_t at = 0; at < count; at += x->piece) {
        size_t take = count - at < x->piece ? count - at : x->piece;
        GD_TRY(gd_global_file_write(x->file, params + at, momentum + at, lo + at, take));
        if (x->pause_us > 0)
            usleep(x->pause_us);
    }
    return GD_OK;
}

/* G_{ROUND+1} streamed into store; hash gets its state hash. */
static gd_status aggregate_to(const gd_artifact_store *store, gd_global_state *copy,
                              unsigned pause_us, uint8_t hash[32]) {
    gd_engine_contribution cs[W];
    contributions(cs);
    gd_global_file file;
    GD_TRY(gd_global_file_begin(&file, gd_trainer_pool(g_engine.trainer), store, RUN, ROUND + 1, g_g.round + 1, layout(),
                                g_engine.rc.diloco.chunk_elems, g_engine.n, copy));
    stream_io x = {.file = &file, .piece = pause_us ? 65536 : g_engine.n, .pause_us = pause_us};
    gd_global_io io = {.n = g_engine.n, .read = io_read, .write = io_write, .ctx = &x};
    gd_status s = gd_engine_aggregate_io(&g_engine, ROUND, cs, W, &io);
    if (s == GD_OK)
        return gd_global_file_commit(&file, hash, NULL);
    gd_global_file_abort(&file);
    return s;
}

static bool same_state(const gd_global_state *a, const gd_global_state *b) {
    return a->n == b->n && a->round == b->round &&
           memcmp(a->params, b->params, a->n * sizeof(float)) == 0 &&
           memcmp(a->momentum, b->momentum, a->n * sizeof(float)) == 0;
}

/* The file of G_round in store, whole (NOT_FOUND when absent). */
static gd_status read_file(const gd_artifact_store *store, gd_buf *out, uint64_t round) {
    out->len = 0;
    return gd_artifact_get(store, out, GD_ARTIFACT_GLOBAL, RUN, round,
                           0, GD_GLOBAL_DESC_BYTES + 8 * g_engine.n + 1);
}

/* Files in G_{ROUND+1}'s round directory other than G' itself. */
static size_t others_in_round_dir(const gd_artifact_store *store) {
    char dir[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_round_dir(store, dir, sizeof dir, RUN, ROUND + 1));
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t others = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "global.gdgs") != 0) {
            /* Only a killed write's temporary file may be left. */
            CHECK(strncmp(e->d_name, "global.gdgs.tmp-", 16) == 0);
            others++;
        }
    closedir(d);
    return others;
}

static void test_streamed_is_whole(void) {
    CHECK(g_engine.n > 3 * ((size_t)1 << 20)); /* several windows */
    /* In memory, in place. */
    gd_engine_contribution cs[W];
    contributions(cs);
    gd_global_state in_place;
    CHECK_OK(gd_global_state_copy(&in_place, &g_g));
    CHECK_OK(gd_engine_aggregate(&g_engine, ROUND, cs, W, &in_place));
    CHECK(same_state(&in_place, &g_want));
    /* Streamed to the store, with and without a copy in memory. */
    gd_artifact_store store = open_store("streamed");
    gd_global_state copy;
    CHECK_OK(gd_global_state_init(&copy, g_engine.n));
    uint8_t hash[32];
    CHECK_OK(aggregate_to(&store, &copy, 0, hash));
    CHECK(memcmp(hash, g_want_hash, 32) == 0);
    CHECK(same_state(&copy, &g_want));
    gd_buf streamed = {0}, whole = {0};
    CHECK_OK(read_file(&store, &streamed, ROUND + 1));
    CHECK_OK(aggregate_to(&store, NULL, 0, hash));
    CHECK(memcmp(hash, g_want_hash, 32) == 0);
    /* The file is the one a whole G in memory stores, byte for byte. */
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND + 2, layout(),
                                g_engine.rc.diloco.chunk_elems, &g_want));
    CHECK_OK(read_file(&store, &whole, ROUND + 2));
    CHECK(streamed.len == GD_GLOBAL_DESC_BYTES + 8 * g_engine.n);
    CHECK(streamed.len == whole.len && memcmp(streamed.data, whole.data, whole.len) == 0);
    /* Read back: the state and its descriptor. */
    gd_global_state back;
    gd_global_desc d;
    CHECK_OK(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, true,
                                true, NULL, &back, &d));
    CHECK(back.file == NULL); /* both arrays in memory: nothing read from the file later */
    CHECK(same_state(&back, &g_want));
    uint8_t desc_hash[32];
    gd_global_desc_hash(&d, desc_hash);
    CHECK(memcmp(desc_hash, g_want_hash, 32) == 0);
    CHECK_OK(gd_global_file_desc(&store, RUN, ROUND + 1, g_engine.n, &d));
    gd_global_desc_hash(&d, desc_hash);
    CHECK(memcmp(desc_hash, g_want_hash, 32) == 0);
    CHECK(others_in_round_dir(&store) == 0);
    gd_global_state_free(&back);
    gd_global_state_free(&copy);
    gd_global_state_free(&in_place);
    gd_buf_free(&streamed);
    gd_buf_free(&whole);
}

static void test_refusals(void) {
    gd_artifact_store store = open_store("refused");
    /* A payload that is not the one committed: nothing is stepped or left. */
    gd_engine_contribution cs[W];
    contributions(cs);
    uint8_t other[32];
    memcpy(other, g_roots[2], 32);
    other[5] ^= 1;
    cs[2].root = other;
    gd_global_file file;
    CHECK_OK(gd_global_file_begin(&file, NULL, &store, RUN, ROUND + 1, g_g.round + 1, layout(),
                                  g_engine.rc.diloco.chunk_elems, g_engine.n, NULL));
    stream_io x = {.file = &file, .piece = g_engine.n};
    gd_global_io io = {.n = g_engine.n, .read = io_read, .write = io_write, .ctx = &x};
    CHECK_STATUS(gd_engine_aggregate_io(&g_engine, ROUND, cs, W, &io), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "not the one it committed") != NULL);
    CHECK(file.next == 0);
    gd_global_file_abort(&file);
    gd_buf b = {0};
    CHECK_STATUS(read_file(&store, &b, ROUND + 1), GD_ERR_NOT_FOUND);
    CHECK(others_in_round_dir(&store) == 0);
    /* Windows out of order, and a commit before every value. */
    CHECK_OK(gd_global_file_begin(&file, NULL, &store, RUN, ROUND + 1, 1, layout(),
                                  g_engine.rc.diloco.chunk_elems, g_engine.n, NULL));
    CHECK_STATUS(gd_global_file_write(&file, g_g.params + 10, g_g.momentum + 10, 10, 5),
                 GD_ERR_INVALID);
    CHECK_OK(gd_global_file_write(&file, g_g.params, g_g.momentum, 0, 1000));
    CHECK_STATUS(gd_global_file_write(&file, g_g.params, g_g.momentum, 1000, g_engine.n),
                 GD_ERR_INVALID);
    CHECK_STATUS(gd_global_file_commit(&file, NULL, NULL), GD_ERR_INVALID);
    CHECK_STATUS(read_file(&store, &b, ROUND + 1), GD_ERR_NOT_FOUND);
    CHECK(others_in_round_dir(&store) == 0);
    /* A cut file, and one of another model's size, are refused on reading. */
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND + 1, layout(),
                                g_engine.rc.diloco.chunk_elems, &g_want));
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_GLOBAL, RUN, ROUND + 1, 0));
    CHECK(truncate(path, GD_GLOBAL_DESC_BYTES + 8 * (off_t)g_engine.n - 4) == 0);
    gd_global_state back;
    gd_global_desc d;
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, true,
                                    true, NULL, &back, &d),
                 GD_ERR_PARSE);
    CHECK_STATUS(gd_global_file_desc(&store, RUN, ROUND + 1, g_engine.n - 1, &d),
                 GD_ERR_PARSE);
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 7, g_engine.n, CHUNK_ELEMS, true,
                                    true, NULL, &back, &d),
                 GD_ERR_NOT_FOUND);
    /* A file in chunks of another size is refused before it is read. */
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND + 1, layout(), CHUNK_ELEMS / 2,
                                &g_want));
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, true,
                                    false, NULL, &back, &d),
                 GD_ERR_PARSE);
    gd_buf_free(&b);
}

/* The aggregate's io whose first read of G (the step, after every
 * payload was checked) flips a byte of one payload's file, as a failing
 * disk would. */
typedef struct flip_io {
    stream_io stream;
    const char *path; /* or NULL: nothing flipped */
    uint64_t at;
    bool flipped;
} flip_io;

static gd_status flip_read(void *ctx, float *params, float *momentum, size_t lo, size_t count) {
    flip_io *x = ctx;
    if (x->path != NULL && !x->flipped) {
        FILE *f = fopen(x->path, "r+b");
        CHECK(f != NULL && fseek(f, (long)x->at, SEEK_SET) == 0);
        int c = fgetc(f);
        CHECK(c != EOF && fseek(f, (long)x->at, SEEK_SET) == 0 && fputc(c ^ 0x21, f) != EOF);
        fclose(f);
        x->flipped = true;
    }
    return io_read(ctx, params, momentum, lo, count);
}

static gd_status flip_write(void *ctx, const float *params, const float *momentum, size_t lo,
                            size_t count) {
    return io_write(&((flip_io *)ctx)->stream, params, momentum, lo, count);
}

/* The payloads kept in files, as a member keeps them: read in place, they
 * aggregate to the whole-array G'. A byte of one of them the disk changes
 * after it was checked is caught as the step reads it: this node's own
 * failure (GD_ERR_IO), and no G' is left, rather than a G' made of bytes
 * the committer never sent (before, the step decoded them silently). */
static void test_payload_files_changed(void) {
    gd_artifact_store store = open_store("payload_files");
    char paths[W][600];
    gd_engine_contribution cs[W];
    contributions(cs);
    for (size_t i = 0; i < W; i++) {
        snprintf(paths[i], sizeof paths[i], "%s", gd_test_path(k_workers[i]));
        CHECK_OK(gd_file_create_private(paths[i], g_payloads[i].data, g_payloads[i].len));
    }
    /* Norms known: as a member aggregates payloads it checked when they
     * arrived (gd_payload_decoded), each read once, by the step, which
     * learns their leaves as it goes. */
    double norms[W];
    for (size_t i = 0; i < W; i++) {
        gd_payload_view v;
        gd_payload_decoded d;
        CHECK_OK(gd_engine_payload_view_path_proved(&g_engine, &v, NULL, &d, ROUND, cs[i].address,
                                                    paths[i], cs[i].root, cs[i].leaves));
        gd_payload_view_close(&v);
        CHECK(d.has_norm && !d.malformed);
        norms[i] = d.sum_squares;
    }
    for (int pass = 0; pass < 4; pass++) {
        int flip = pass % 2;
        bool known = pass >= 2;
        for (size_t i = 0; i < W; i++) { /* as checked: the last pass's flip undone */
            CHECK(unlink(paths[i]) == 0);
            CHECK_OK(gd_file_create_private(paths[i], g_payloads[i].data, g_payloads[i].len));
            cs[i].payload = NULL;
            cs[i].fd = open(paths[i], O_RDONLY);
            cs[i].sum_squares = known ? &norms[i] : NULL;
            CHECK(cs[i].fd >= 0);
        }
        gd_global_file file;
        CHECK_OK(gd_global_file_begin(&file, NULL, &store, RUN, ROUND + 1, g_g.round + 1,
                                      layout(), CHUNK_ELEMS, g_engine.n, NULL));
        /* A byte of worker 0's chunk 10: in the step's second window, read
         * after G's first (the step reads each window's payloads first). */
        const uint8_t *entry = g_payloads[0].data + GD_PAYLOAD_HEADER_BYTES + 10 * 24;
        uint64_t at = 0;
        for (int b = 7; b >= 0; b--)
            at = at << 8 | entry[b];
        flip_io x = {.stream = {.file = &file, .piece = g_engine.n},
                     .path = flip ? paths[0] : NULL, .at = at + 1000};
        gd_global_io io = {.n = g_engine.n, .read = flip_read, .write = flip_write, .ctx = &x};
        gd_status s = gd_engine_aggregate_io(&g_engine, ROUND, cs, W, &io);
        uint8_t hash[32];
        if (flip) {
            CHECK(x.flipped);
            CHECK_STATUS(s, GD_ERR_IO);
            CHECK(strstr(gd_error_detail(), "changed on disk") != NULL);
            gd_global_file_abort(&file);
            gd_buf b = {0};
            CHECK_STATUS(read_file(&store, &b, ROUND + 1), GD_ERR_NOT_FOUND);
            gd_buf_free(&b);
        } else {
            CHECK_OK(s);
            CHECK_OK(gd_global_file_commit(&file, hash, NULL));
            CHECK(memcmp(hash, g_want_hash, 32) == 0);
        }
        for (size_t i = 0; i < W; i++)
            close(cs[i].fd);
        if (!flip) { /* so that the next pass shows it leaves none */
            char g_path[GD_ARTIFACT_PATH_MAX];
            CHECK_OK(gd_artifact_path(&store, g_path, sizeof g_path, GD_ARTIFACT_GLOBAL, RUN,
                                      ROUND + 1, 0));
            CHECK(remove(g_path) == 0);
        }
    }
    CHECK(others_in_round_dir(&store) == 0);
}

/* G_{ROUND+1} aggregated from `from` (in memory or its file) into store
 * under `round`; hash gets its state hash. */
static gd_status aggregate_from(const gd_artifact_store *store, const gd_global_state *from,
                                uint64_t round, uint8_t hash[32]) {
    gd_engine_contribution cs[W];
    contributions(cs);
    gd_global_file file;
    GD_TRY(gd_global_file_begin(&file, NULL, store, RUN, round, from->round + 1, layout(),
                                CHUNK_ELEMS, g_engine.n, NULL));
    gd_global_file_io x = {.from = {.from = from}, .to = &file};
    gd_global_io io = gd_global_file_io_of(&x);
    gd_status s = gd_engine_aggregate_io(&g_engine, ROUND, cs, W, &io);
    if (s == GD_OK)
        return gd_global_file_commit(&file, hash, NULL);
    gd_global_file_abort(&file);
    return s;
}

/* Flips one bit of byte `at` of path. */
static void flip_byte_at(const char *path, uint64_t at) {
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t byte = 0;
    CHECK(pread(fd, &byte, 1, (off_t)at) == 1);
    byte ^= 0x10;
    CHECK(pwrite(fd, &byte, 1, (off_t)at) == 1);
    close(fd);
}

/* G whose momentum stays in its file (a memory budget): it hashes, copies,
 * reads across chunk edges and aggregates to the bits of G in memory. A
 * momentum value the disk changes after G was opened is caught when it is
 * read: the aggregate fails as this node's own failure (GD_ERR_IO) and
 * leaves no G', rather than attesting a G' with other bits. Opened again,
 * the file no longer proves against its descriptor. */
static void test_momentum_in_file(void) {
    gd_artifact_store store = open_store("in_file");
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND, layout(), CHUNK_ELEMS, &g_g));
    gd_global_state g, copy;
    gd_global_desc d;
    CHECK_OK(gd_global_file_get(&store, gd_trainer_pool(g_engine.trainer), RUN, ROUND,
                                g_engine.n, CHUNK_ELEMS, true, false, NULL, &g, &d));
    CHECK(g.params != NULL && g.momentum == NULL && g.file != NULL && g.round == g_g.round);
    uint8_t got[32], want[32];
    CHECK_OK(gd_engine_global_hash(&g_engine, &g, got));
    CHECK_OK(gd_engine_global_hash(&g_engine, &g_g, want));
    CHECK(memcmp(got, want, 32) == 0);
    CHECK_OK(gd_global_state_copy(&copy, &g));
    CHECK(same_state(&copy, &g_g));
    gd_global_state_free(&copy);
    float piece[10];
    CHECK_OK(gd_global_state_read(&g, NULL, piece, 2 * CHUNK_ELEMS - 5, 10));
    CHECK(memcmp(piece, g_g.momentum + 2 * CHUNK_ELEMS - 5, sizeof piece) == 0);
    CHECK_STATUS(gd_global_state_read(&g, NULL, piece, g_engine.n - 5, 10), GD_ERR_INVALID);
    CHECK_OK(aggregate_from(&store, &g, ROUND + 1, got));
    CHECK(memcmp(got, g_want_hash, 32) == 0);
    /* Stored again from the file (a void round relabels G): the same bytes. */
    gd_buf a = {0}, b = {0};
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND + 2, layout(), CHUNK_ELEMS, &g));
    CHECK_OK(read_file(&store, &a, ROUND));
    CHECK_OK(read_file(&store, &b, ROUND + 2));
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    /* One momentum bit flipped on disk, in the third chunk. */
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_GLOBAL, RUN, ROUND, 0));
    flip_byte_at(path,
                 GD_GLOBAL_DESC_BYTES + 4 * (uint64_t)g_engine.n + 4 * (2 * CHUNK_ELEMS + 3));
    CHECK_STATUS(aggregate_from(&store, &g, ROUND + 3, got), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "changed on disk") != NULL);
    CHECK_STATUS(read_file(&store, &b, ROUND + 3), GD_ERR_NOT_FOUND);
    gd_global_state_free(&g);
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND, g_engine.n, CHUNK_ELEMS, true,
                                    false, NULL, &g, &d),
                 GD_ERR_INVALID);
    gd_buf_free(&a);
    gd_buf_free(&b);
}

/* A G file this node wrote opens again with no pass over it: the leaves
 * it hashed as it wrote (gd_global_leaves) stand in for reading it whole,
 * and every chunk read later is still checked against them. That it is
 * not read shows in a chunk changed on disk before the opening: the pass
 * would refuse the file at once; without it the opening succeeds and the
 * chunk fails when it is read. */
static void test_written_file_opens_without_a_pass(void) {
    gd_artifact_store store = open_store("written");
    gd_global_arrays arrays = {.from = &g_want};
    gd_global_io from = gd_global_io_arrays(&arrays);
    gd_global_leaves known = {0};
    uint8_t hash[32];
    CHECK_OK(gd_global_file_put_from(&store, NULL, RUN, ROUND + 1, g_want.round, layout(),
                                     CHUNK_ELEMS, &from, hash, &known));
    CHECK(memcmp(hash, g_want_hash, 32) == 0);
    CHECK(known.round == ROUND + 1 && memcmp(known.hash, hash, 32) == 0);
    CHECK(known.params != NULL && known.momentum != NULL);
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_GLOBAL, RUN, ROUND + 1, 0));
    flip_byte_at(path, GD_GLOBAL_DESC_BYTES + 4 * ((uint64_t)CHUNK_ELEMS + 3));
    gd_global_state g;
    gd_global_desc d;
    /* Not known (nothing, another round's, or leaves that do not make the
     * root): the pass, which finds the change. */
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, false,
                                    false, NULL, &g, &d),
                 GD_ERR_INVALID);
    known.round = ROUND + 2;
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, false,
                                    false, &known, &g, &d),
                 GD_ERR_INVALID);
    known.round = ROUND + 1;
    known.momentum[GD_MMR_HASH_LEN] ^= 1;
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, false,
                                    false, &known, &g, &d),
                 GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "leaves known") != NULL);
    known.momentum[GD_MMR_HASH_LEN] ^= 1;
    /* Known: opened at once; the changed chunk fails when read, the others
     * read as written. */
    CHECK_OK(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, false,
                                false, &known, &g, &d));
    CHECK(g.params == NULL && g.momentum == NULL);
    float *params = malloc(CHUNK_ELEMS * sizeof(float));
    float *momentum = malloc(CHUNK_ELEMS * sizeof(float));
    CHECK(params != NULL && momentum != NULL);
    CHECK_OK(gd_global_state_read(&g, params, momentum, 0, CHUNK_ELEMS));
    CHECK(memcmp(params, g_want.params, CHUNK_ELEMS * sizeof(float)) == 0);
    CHECK(memcmp(momentum, g_want.momentum, CHUNK_ELEMS * sizeof(float)) == 0);
    CHECK_OK(gd_global_state_read(&g, NULL, momentum, CHUNK_ELEMS, CHUNK_ELEMS));
    CHECK(memcmp(momentum, g_want.momentum + CHUNK_ELEMS, CHUNK_ELEMS * sizeof(float)) == 0);
    CHECK_STATUS(gd_global_state_read(&g, params, NULL, CHUNK_ELEMS, CHUNK_ELEMS), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "changed on disk") != NULL);
    gd_global_state_free(&g);
    /* An array kept in memory is read whole all the same: the change is
     * found at the opening. */
    CHECK_STATUS(gd_global_file_get(&store, NULL, RUN, ROUND + 1, g_engine.n, CHUNK_ELEMS, true,
                                    false, &known, &g, &d),
                 GD_ERR_INVALID);
    free(params);
    free(momentum);
    gd_global_leaves_free(&known);
    CHECK(known.params == NULL && known.momentum == NULL);
}

/* The child of test_killed_while_aggregating: the aggregate into root,
 * a byte on fd `ready` once it starts. */
static int child_main(const char *root, int ready) {
    gd_artifact_store store;
    uint8_t hash[32];
    if (gd_artifact_store_open(&store, root) != GD_OK)
        return 1;
    gd_test_child_ready(ready);
    return aggregate_to(&store, NULL, 200, hash) == GD_OK ? 0 : 1;
}

/* What a child left: G' whole and right, or nothing; true if G' is there. */
static bool left_whole_or_nothing(const gd_artifact_store *store, const gd_buf *want) {
    gd_buf got = {0};
    gd_status s = read_file(store, &got, ROUND + 1);
    if (s == GD_OK && (got.len != want->len || memcmp(got.data, want->data, want->len) != 0)) {
        fprintf(stderr, "a torn or wrong G' (%zu bytes)\n", got.len);
        gd_test_failures++;
    } else if (s != GD_OK && s != GD_ERR_NOT_FOUND) {
        CHECK_OK(s);
    }
    gd_buf_free(&got);
    return s == GD_OK;
}

/* SIGKILL at spread-out moments of a child aggregating: G' is whole or
 * absent, and the aggregate run again over the leftovers completes it with
 * the same bytes (the member's journal records the aggregate only after
 * this, so a restart aggregates again and attests the same hash). */
static void test_killed_while_aggregating(void) {
    gd_artifact_store store = open_store("killed");
    gd_buf want = {0};
    CHECK_OK(gd_global_file_put(&store, NULL, RUN, ROUND + 1, layout(),
                                g_engine.rc.diloco.chunk_elems, &g_want));
    CHECK_OK(read_file(&store, &want, ROUND + 1));
    char clear[4200];
    snprintf(clear, sizeof clear, "rm -rf '%s/run-%d'", store.root, RUN);
    long whole_ns = 0;
    int killed = 0, partial = 0;
    for (int i = 0; i < 5; i++) {
        CHECK(system(clear) == 0); /* each child starts from an empty store */
        pid_t pid;
        gd_test_child_start(&pid, store.root);
        if (i == 0) {
            CHECK(gd_test_child_wait(pid, &whole_ns));
            CHECK(left_whole_or_nothing(&store, &want));
            continue;
        }
        /* 0.2 .. 0.8 of an uninterrupted child's aggregate. */
        killed += gd_test_child_kill_after(pid, whole_ns / 5 * i);
        bool whole = left_whole_or_nothing(&store, &want);
        partial += !whole && others_in_round_dir(&store) > 0;
    }
    CHECK(killed > 0); /* at least one kill landed before the child was done */
    fprintf(stderr, "  %d of 4 children killed, %d while writing G' (%.0f ms an aggregate)\n",
            killed, partial, (double)whole_ns / 1e6);
    /* Run again, uninterrupted, over what the last kill left. */
    uint8_t hash[32];
    CHECK_OK(aggregate_to(&store, NULL, 0, hash));
    CHECK(memcmp(hash, g_want_hash, 32) == 0);
    CHECK(left_whole_or_nothing(&store, &want));
    gd_buf_free(&want);
}

int main(int argc, char **argv) {
    json_t *spec_json = gd_test_example_spec_json();
    json_object_set_new(spec_json, "model", json_string("small"));
    gd_model_config mc;
    gd_param_layout pl;
    CHECK_OK(gd_model_config_preset(&mc, "small"));
    CHECK_OK(gd_param_layout_build(&pl, &mc));
    char hex[65];
    gd_hex_encode(hex, pl.digest, 32, false);
    gd_param_layout_free(&pl);
    json_object_set_new(spec_json, "layout_digest", json_string(hex));
    json_object_set_new(spec_json, "chunk_elems", json_integer(CHUNK_ELEMS));
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, spec_json));
    json_decref(spec_json);
    CHECK_OK(gd_engine_open(&g_engine, spec, RUN, &(gd_engine_host){.threads = 1}));
    CHECK_OK(gd_run_config_initial_state(&g_engine.rc, g_engine.rc.initial_state_hash, 1));
    bool child = argc == 4 && strcmp(argv[1], "child") == 0;
    setup(!child);
    int rc;
    if (child) {
        rc = child_main(argv[2], atoi(argv[3]));
    } else {
        RUN_TEST(test_streamed_is_whole);
        RUN_TEST(test_refusals);
        RUN_TEST(test_payload_files_changed);
        RUN_TEST(test_momentum_in_file);
        RUN_TEST(test_written_file_opens_without_a_pass);
        RUN_TEST(test_killed_while_aggregating);
        rc = gd_test_finish();
    }
    for (size_t i = 0; i < W; i++)
        gd_buf_free(&g_payloads[i]);
    gd_global_state_free(&g_g);
    gd_global_state_free(&g_want);
    gd_engine_close(&g_engine);
    gd_diloco_spec_free(spec);
    return rc;
}
