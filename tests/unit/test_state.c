/* State descriptors and files (trainer/state.h): the byte layout field by
 * field, strict decoding, sub-roots over payload-aligned chunks (equal to
 * hashing the chunks by hand, independent of the thread count), chunk
 * proofs, the zero root, the root of an array fed in pieces, and a state
 * file built independently of this code (the fuzz corpus's seeds are
 * written by a script from the documented format) parsing as documented. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/hash.h"
#include "tests/support/testkit.h"
#include "trainer/state.h"

static gd_state_tag sample_tag(void) {
    gd_state_tag t = {.run = 0x0102030405060708ull, .chunk_elems = 8};
    for (int i = 0; i < 32; i++) {
        t.spec_digest[i] = (uint8_t)(0xa0 + i);
        t.layout_digest[i] = (uint8_t)i;
    }
    return t;
}

static void fill(gd_worker_state *w) {
    for (size_t i = 0; i < w->n; i++) {
        w->params[i] = (float)i * 0.5f;
        w->exp_avg[i] = (float)i * -0.25f;
        w->exp_avg_sq[i] = (float)i * 0.125f;
        w->residual[i] = 1.0f / (float)(i + 1);
    }
}

/* The descriptor's bytes at the documented offsets. */
static void test_worker_desc_layout(void) {
    gd_state_tag tag = sample_tag();
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 9, 20));
    snprintf(w.address, sizeof w.address, "gonka1abc");
    w.step = 0x1122334455667788ull;
    fill(&w);
    gd_worker_desc d;
    CHECK_OK(gd_worker_state_describe(NULL, &tag, &d, 42, GD_STAGE_ENCODED, &w));
    uint8_t b[GD_WORKER_DESC_BYTES];
    gd_worker_desc_encode(&d, b);
    CHECK(memcmp(b, "GDWS\x02\0\0\0", 8) == 0);
    CHECK(memcmp(b + 8, tag.spec_digest, 32) == 0 && memcmp(b + 40, tag.layout_digest, 32) == 0);
    CHECK(gd_get_le64(b + 72) == tag.run && gd_get_le64(b + 80) == 42);
    CHECK(memcmp(b + 88, "gonka1abc\0", 10) == 0);
    CHECK(gd_get_le32(b + 152) == 9 && gd_get_le32(b + 156) == 1);
    CHECK(gd_get_le64(b + 160) == w.step && gd_get_le64(b + 168) == 20);
    CHECK(gd_get_le32(b + 176) == 8 && gd_get_le32(b + 180) == 0);
    /* Sub-roots: 3 chunks of 8, 8, 4 values, leaves hashed by hand, peaks
     * (2 + 1) bagged right to left. */
    uint8_t l[3][32], n01[32], root[32];
    for (uint32_t i = 0; i < 3; i++)
        gd_mmr_hash_leaf(l[i], i, w.params + 8 * i, (i < 2 ? 8 : 4) * sizeof(float));
    gd_mmr_hash_node(n01, l[0], l[1]);
    gd_mmr_hash_node(root, n01, l[2]);
    CHECK(memcmp(b + 184, root, 32) == 0);
    uint8_t hash[32], by_hand[32];
    gd_worker_desc_hash(&d, hash);
    gd_sha256(by_hand, b, sizeof b);
    CHECK(memcmp(hash, by_hand, 32) == 0);
    /* decode gives the same descriptor back */
    gd_worker_desc back;
    CHECK_OK(gd_worker_desc_decode(&back, b, sizeof b));
    CHECK(memcmp(&back, &d, sizeof d) == 0);
    /* strictness */
    struct {
        size_t at;
        const char *bytes;
        size_t len;
    } bad[] = {
        {0, "GDWX", 4},     {4, "\x01", 1},     {156, "\x02", 1}, {180, "\x01", 1},
        {88, "\x01", 1},    {88 + 20, "x", 1},  {88, "\0", 1},    {168, "\0\0\0\0\0\0\0\0", 8},
        {168 + 5, "\x01", 1}, {176, "\0\0\0\0", 4}, {176 + 3, "\x10", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t m[GD_WORKER_DESC_BYTES];
        memcpy(m, b, sizeof m);
        memcpy(m + bad[i].at, bad[i].bytes, bad[i].len);
        CHECK_STATUS(gd_worker_desc_decode(&back, m, sizeof m), GD_ERR_PARSE);
    }
    CHECK_STATUS(gd_worker_desc_decode(&back, b, sizeof b - 1), GD_ERR_PARSE);
    gd_worker_state_free(&w);
}

static void test_global_desc_layout(void) {
    gd_global_state g;
    CHECK_OK(gd_global_state_init(&g, 10));
    g.round = 3;
    for (size_t i = 0; i < 10; i++)
        g.params[i] = (float)i, g.momentum[i] = -(float)i;
    uint8_t layout[32] = {7};
    gd_global_desc d;
    CHECK_OK(gd_global_state_describe(NULL, &d, layout, 1000, &g));
    uint8_t b[GD_GLOBAL_DESC_BYTES];
    gd_global_desc_encode(&d, b);
    CHECK(memcmp(b, "GDGS\x02\0\0\0", 8) == 0 && b[8] == 7);
    CHECK(gd_get_le64(b + 40) == 3 && gd_get_le64(b + 48) == 10 && gd_get_le32(b + 56) == 1000);
    uint8_t leaf[32];
    gd_mmr_hash_leaf(leaf, 0, g.params, 10 * sizeof(float)); /* one chunk: its own root */
    CHECK(memcmp(b + 64, leaf, 32) == 0);
    uint8_t h1[32], h2[32];
    CHECK_OK(gd_global_state_hash(NULL, h1, layout, 1000, &g));
    gd_sha256(h2, b, sizeof b);
    CHECK(memcmp(h1, h2, 32) == 0);
    gd_global_desc back;
    CHECK_OK(gd_global_desc_decode(&back, b, sizeof b));
    CHECK(memcmp(&back, &d, sizeof d) == 0);
    b[60] = 1;
    CHECK_STATUS(gd_global_desc_decode(&back, b, sizeof b), GD_ERR_PARSE);
    gd_global_state_free(&g);
}

/* Roots do not depend on the thread count; the zero root is the root of
 * zeros; every chunk proves and only its own values verify. */
static void test_roots_and_proofs(void) {
    size_t n = 100003;
    uint32_t C = 4096;
    float *v = malloc(n * sizeof(float));
    float *z = calloc(n, sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % 977) * 1e-3f;
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 3));
    uint8_t r1[32], r3[32], zr[32], zh[32];
    CHECK_OK(gd_values_root(NULL, v, n, C, r1));
    CHECK_OK(gd_values_root(pool, v, n, C, r3));
    CHECK(memcmp(r1, r3, 32) == 0);
    CHECK_OK(gd_zero_values_root(pool, n, C, zr));
    CHECK_OK(gd_values_root(NULL, z, n, C, zh));
    CHECK(memcmp(zr, zh, 32) == 0);
    uint32_t chunks = gd_values_chunks(n, C);
    CHECK(chunks == 25);
    for (uint32_t c = 0; c < chunks; c += 6) {
        size_t lo = 0, count = 0;
        CHECK(gd_values_chunk_range(n, C, c, &lo, &count));
        gd_mmr_proof proof;
        CHECK_OK(gd_values_prove(pool, v, n, C, c, &proof));
        CHECK(gd_values_verify_chunk(r1, n, C, c, v + lo, count, &proof));
        CHECK(!gd_values_verify_chunk(r1, n, C, c, z + lo, count, &proof));
        CHECK(!gd_values_verify_chunk(r1, n, C, c, v + lo, count - 1, &proof));
        CHECK(!gd_values_verify_chunk(r1, n + C, C, c, v + lo, count, &proof)); /* 26 chunks */
        CHECK(!gd_values_verify_chunk(r1, n, C, c + 1, v + lo, count, &proof));
    }
    size_t lo = 0, count = 0;
    CHECK(gd_values_chunk_range(n, C, 24, &lo, &count) && count == n - 24 * (size_t)C);
    CHECK(!gd_values_chunk_range(n, C, 25, &lo, &count));
    CHECK_STATUS(gd_values_root(NULL, v, n, 0, r1), GD_ERR_INVALID);
    gd_pool_free(pool);
    free(v);
    free(z);
}

/* gd_values_stream gives gd_values_root's root however the values are
 * cut: one piece, a value at a time, pieces that end inside and on chunk
 * edges; fewer values have no root, more are refused. */
static void test_values_stream(void) {
    size_t n = 100003;
    uint32_t C = 4096;
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % 991) * -2e-3f;
    uint8_t want[32], got[32];
    CHECK_OK(gd_values_root(NULL, v, n, C, want));
    const size_t pieces[] = {n, 1, 7, C - 1, C, C + 1, 65536};
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 3));
    for (size_t k = 0; k < 2 * (sizeof pieces / sizeof pieces[0]); k++) {
        /* Each cut hashed on one thread and on the pool. */
        gd_values_stream s;
        CHECK_OK(gd_values_stream_begin(&s, k % 2 ? pool : NULL, n, C));
        for (size_t lo = 0; lo < n; lo += pieces[k / 2]) {
            size_t piece = pieces[k / 2];
            size_t count = n - lo < piece ? n - lo : piece;
            if (lo + count == n)
                CHECK_STATUS(gd_values_stream_root(&s, got), GD_ERR_INVALID);
            CHECK_OK(gd_values_stream_add(&s, v + lo, count));
        }
        CHECK_OK(gd_values_stream_root(&s, got));
        CHECK(memcmp(got, want, 32) == 0);
        CHECK_STATUS(gd_values_stream_add(&s, v, 1), GD_ERR_INVALID);
        gd_values_stream_end(&s);
    }
    /* Ended halfway through a chunk: the open hash is let go. */
    gd_values_stream s;
    CHECK_OK(gd_values_stream_begin(&s, pool, n, C));
    CHECK_OK(gd_values_stream_add(&s, v, C + 5));
    gd_values_stream_end(&s);
    CHECK_STATUS(gd_values_stream_begin(&s, NULL, n, 0), GD_ERR_INVALID);
    gd_pool_free(pool);
    free(v);
}

/* The corpus's state file written by a script from the documented format,
 * and its descriptor. */
static void read_script_state(gd_buf *file, gd_worker_desc *d) {
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/corpus/worker_state/state_three_chunks",
             gd_test_source_dir());
    CHECK_OK(gd_file_read(file, path, (size_t)1 << 20));
    CHECK_OK(gd_worker_desc_decode(d, file->data, GD_WORKER_DESC_BYTES));
}

/* A state file written by a script from the documented format parses, and
 * its serialization is the file. */
static void test_independent_state_file(void) {
    gd_buf file = {0};
    gd_worker_desc d;
    read_script_state(&file, &d);
    CHECK(d.n == 20 && d.tag.chunk_elems == 8 && d.rank == 3 && d.step == 40 && d.round == 2);
    gd_worker_state w;
    gd_worker_desc got;
    CHECK_OK(gd_worker_state_parse(NULL, &w, &got, file.data, file.len, &d.tag, 20));
    CHECK(w.params[3] == (float)((3 * 7 + 0 + 3) % 11 - 5) * 0.125f);
    CHECK_STR_EQ(w.address, "gonka1worker");
    gd_buf again = {0};
    CHECK_OK(gd_worker_state_serialize(NULL, &d.tag, &again, d.round, d.stage, &w));
    CHECK(again.len == file.len && memcmp(again.data, file.data, file.len) == 0);
    gd_buf_free(&again);
    gd_worker_state_free(&w);
    gd_buf_free(&file);
}

/* The in-place view of a state file: its arrays are the file's bytes, it
 * refuses what the parser refuses (a flipped value, the wrong run), it
 * copies when the arrays would be misaligned, and freeing it leaves the
 * bytes alone. */
static void test_state_view(void) {
    gd_buf file = {0};
    gd_worker_desc d, got;
    read_script_state(&file, &d);
    gd_worker_state v;
    CHECK_OK(gd_worker_state_view(NULL, &v, &got, file.data, file.len, &d.tag, 20));
    CHECK(v.borrowed && (const uint8_t *)v.params == file.data + GD_WORKER_DESC_BYTES);
    CHECK((const uint8_t *)v.residual == file.data + GD_WORKER_DESC_BYTES + 3 * 20 * 4);
    CHECK(v.n == 20 && v.rank == 3 && v.step == 40);
    CHECK_STR_EQ(v.address, "gonka1worker");
    gd_worker_state_free(&v); /* forgets the arrays; file.data stays ours */
    CHECK(v.params == NULL && !v.borrowed);

    /* Without the residual. */
    CHECK_OK(gd_worker_state_view(NULL, &v, &got, file.data, file.len - 20 * 4, &d.tag, 20));
    CHECK(v.residual == NULL);
    gd_worker_state_free(&v);

    /* A flipped value, another run's tag, another size: refused. */
    file.data[GD_WORKER_DESC_BYTES + 5] ^= 1;
    CHECK(gd_worker_state_view(NULL, &v, &got, file.data, file.len, &d.tag, 20) ==
          GD_ERR_INVALID);
    CHECK(v.params == NULL);
    file.data[GD_WORKER_DESC_BYTES + 5] ^= 1;
    gd_state_tag other = d.tag;
    other.run++;
    CHECK(gd_worker_state_view(NULL, &v, &got, file.data, file.len, &other, 20) ==
          GD_ERR_INVALID);
    CHECK(gd_worker_state_view(NULL, &v, &got, file.data, file.len, &d.tag, 21) ==
          GD_ERR_INVALID);

    /* Misaligned bytes are copied, and the copy is owned. */
    uint8_t *odd = malloc(file.len + 1);
    CHECK(odd != NULL);
    memcpy(odd + 1, file.data, file.len);
    CHECK_OK(gd_worker_state_view(NULL, &v, &got, odd + 1, file.len, &d.tag, 20));
    CHECK(!v.borrowed && memcmp(v.params, file.data + GD_WORKER_DESC_BYTES, 20 * 4) == 0);
    gd_worker_state_free(&v);
    free(odd);
    gd_buf_free(&file);
}

int main(void) {
    RUN_TEST(test_worker_desc_layout);
    RUN_TEST(test_global_desc_layout);
    RUN_TEST(test_roots_and_proofs);
    RUN_TEST(test_values_stream);
    RUN_TEST(test_independent_state_file);
    RUN_TEST(test_state_view);
    return gd_test_finish();
}
