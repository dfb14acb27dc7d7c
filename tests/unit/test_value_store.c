/* trainer/value_store.h: a state array on disk by chunks gives the root and
 * proofs of the same array in memory, survives a reopen, refuses files and
 * sizes that are not its own, and addresses arrays past 2^36 values (a
 * sparse store of 2^37 values writes, reads and proves its last chunks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/bytes.h"
#include "common/file.h"
#include "common/hash.h"
#include "proofs/state_desc.h"
#include "proofs/state_hash.h"
#include "tests/support/testkit.h"
#include "trainer/state.h"
#include "trainer/value_store.h"

#define N 100003u
#define CHUNK 16384u /* 7 chunks, the last of 1,699 values */

static float *pattern(size_t n, uint32_t seed) {
    float *v = malloc(n * sizeof(float));
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)(int32_t)x / 2147483648.0f;
    }
    return v;
}

/* Written chunk by chunk, last first: the root and every proof are the
 * in-memory array's; a reopen reads the same leaves. */
static void test_same_root_as_memory(void) {
    const char *path = gd_test_path("g.values");
    float *all = pattern(N, 1);
    uint8_t want[32];
    CHECK_OK(gd_values_root(NULL, all, N, CHUNK, want));
    gd_value_store s;
    CHECK_OK(gd_value_store_create(&s, path, N, CHUNK));
    CHECK(s.chunks == 7 && s.written == 0);
    uint8_t root[32];
    CHECK_STATUS(gd_value_store_root(&s, root), GD_ERR_INVALID); /* not all written */
    for (uint32_t c = s.chunks; c-- > 0;) {
        uint64_t lo = 0;
        size_t count = 0;
        CHECK(gd_value_store_chunk_range(&s, c, &lo, &count));
        CHECK_OK(gd_value_store_write(&s, c, all + lo, count));
    }
    CHECK(s.written == 7);
    CHECK_OK(gd_value_store_sync(&s));
    CHECK_OK(gd_value_store_root(&s, root));
    CHECK(memcmp(root, want, 32) == 0);
    gd_value_store_close(&s);

    CHECK_OK(gd_value_store_open(&s, path, N, CHUNK));
    CHECK(s.written == 7);
    CHECK_OK(gd_value_store_root(&s, root));
    CHECK(memcmp(root, want, 32) == 0);
    float *chunk = malloc(CHUNK * sizeof(float));
    for (uint32_t c = 0; c < s.chunks; c++) {
        uint64_t lo = 0;
        size_t count = 0;
        CHECK(gd_value_store_chunk_range(&s, c, &lo, &count));
        CHECK_OK(gd_value_store_read(&s, c, chunk, count));
        CHECK(memcmp(chunk, all + lo, count * sizeof(float)) == 0);
        gd_mmr_proof proof;
        CHECK_OK(gd_value_store_prove(&s, c, &proof));
        CHECK(gd_values_verify_chunk(want, N, CHUNK, c, chunk, count, &proof));
        bool ok = false;
        CHECK_OK(gd_value_store_check(&s, c, chunk, &ok));
        CHECK(ok);
    }
    CHECK(!gd_value_store_chunk_range(&s, 7, &(uint64_t){0}, &(size_t){0}));
    CHECK_STATUS(gd_value_store_read(&s, 7, chunk, 1699), GD_ERR_INVALID);
    CHECK_STATUS(gd_value_store_read(&s, 6, chunk, CHUNK), GD_ERR_INVALID); /* its count */
    CHECK_STATUS(gd_value_store_write(&s, 0, chunk, 1699), GD_ERR_INVALID);
    gd_value_store_close(&s);
    free(chunk);
    free(all);
}

/* A byte changed on disk behind the store's back: its check says so. */
static void test_check_finds_a_changed_chunk(void) {
    const char *path = gd_test_path("c.values");
    float *all = pattern(N, 2);
    gd_value_store s;
    CHECK_OK(gd_value_store_create(&s, path, N, CHUNK));
    for (uint32_t c = 0; c < s.chunks; c++) {
        uint64_t lo = 0;
        size_t count = 0;
        CHECK(gd_value_store_chunk_range(&s, c, &lo, &count));
        if (c != 5) /* chunk 5 stays a hole */
            CHECK_OK(gd_value_store_write(&s, c, all + lo, count));
    }
    float flipped = all[3 * CHUNK + 7] + 1.0f;
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL && fseek(f, (long)((3 * CHUNK + 7) * sizeof(float)), SEEK_SET) == 0);
    CHECK(fwrite(&flipped, sizeof flipped, 1, f) == 1);
    fclose(f);
    float *scratch = malloc(CHUNK * sizeof(float));
    bool ok = true;
    CHECK_OK(gd_value_store_check(&s, 3, scratch, &ok));
    CHECK(!ok);
    CHECK_OK(gd_value_store_check(&s, 5, scratch, &ok)); /* unwritten */
    CHECK(!ok);
    CHECK_OK(gd_value_store_check(&s, 4, scratch, &ok));
    CHECK(ok);
    gd_mmr_proof proof;
    CHECK_STATUS(gd_value_store_prove(&s, 0, &proof), GD_ERR_INVALID);
    gd_value_store_close(&s);
    free(scratch);
    free(all);
}

/* Sizes and files that are not the store's are refused before use. */
static void test_refusals(void) {
    const char *path = gd_test_path("r.values");
    gd_value_store s;
    CHECK_STATUS(gd_value_store_create(&s, path, 0, CHUNK), GD_ERR_INVALID);
    CHECK_STATUS(gd_value_store_create(&s, path, GD_STATE_VALUES_MAX + 1, CHUNK),
                 GD_ERR_INVALID);
    CHECK_STATUS(gd_value_store_create(&s, path, N, 0), GD_ERR_INVALID);
    CHECK_STATUS(gd_value_store_create(&s, path, N, GD_STATE_CHUNK_ELEMS_MAX + 1),
                 GD_ERR_INVALID);
    /* 2^40 values in chunks of 1 are 2^40 leaves: past the MMR's 2^30. */
    CHECK_STATUS(gd_value_store_create(&s, path, GD_STATE_VALUES_MAX, 1), GD_ERR_LIMIT);
    CHECK_STATUS(gd_value_store_open(&s, gd_test_path("absent.values"), N, CHUNK),
                 GD_ERR_NOT_FOUND);
    CHECK_OK(gd_value_store_create(&s, path, N, CHUNK));
    gd_value_store_close(&s);
    CHECK_STATUS(gd_value_store_open(&s, path, N + 1, CHUNK), GD_ERR_PARSE);
    CHECK_STATUS(gd_value_store_open(&s, path, N, CHUNK / 2), GD_ERR_PARSE);
    /* A leaf table of another version, then one cut short. */
    char leaves[1024];
    snprintf(leaves, sizeof leaves, "%s.leaves", path);
    gd_buf b = {0};
    CHECK_OK(gd_file_read(&b, leaves, 1 << 20));
    b.data[4] = 2;
    CHECK_OK(gd_file_write_atomic(leaves, &(gd_bytes_part){b.data, b.len}, 1, 0600));
    CHECK_STATUS(gd_value_store_open(&s, path, N, CHUNK), GD_ERR_PARSE);
    b.data[4] = 1;
    CHECK_OK(gd_file_write_atomic(leaves, &(gd_bytes_part){b.data, b.len - 1}, 1, 0600));
    CHECK_STATUS(gd_value_store_open(&s, path, N, CHUNK), GD_ERR_PARSE);
    CHECK_OK(gd_file_write_atomic(leaves, &(gd_bytes_part){b.data, b.len}, 1, 0600));
    CHECK_OK(gd_value_store_open(&s, path, N, CHUNK));
    gd_value_store_close(&s);
    gd_buf_free(&b);
}

/* 2^37 values (512 GiB as a sparse file): the last two chunks written,
 * read back and proved; the other chunks' leaves are stood in for in the
 * leaf table (as a reopened store reads them), so only the offsets are
 * exercised, not 512 GiB of I/O. */
static void test_past_two_to_the_36(void) {
    const uint64_t n = (uint64_t)1 << 37;
    const uint32_t chunk_elems = (uint32_t)1 << 20;
    const char *path = gd_test_path("big.values");
    gd_value_store s;
    CHECK_OK(gd_value_store_create(&s, path, n, chunk_elems));
    const uint32_t chunks = 131072;
    CHECK(s.chunks == chunks);
    float *values = pattern(chunk_elems, 3);
    for (uint32_t c = chunks - 2; c < chunks; c++) {
        values[0] = (float)c;
        CHECK_OK(gd_value_store_write(&s, c, values, chunk_elems));
    }
    gd_value_store_close(&s);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == n * sizeof(float));
    CHECK((uint64_t)st.st_blocks * 512 < ((uint64_t)64 << 20)); /* holes cost no disk */

    char leaves[1024];
    snprintf(leaves, sizeof leaves, "%s.leaves", path);
    gd_buf b = {0};
    CHECK_OK(gd_file_read(&b, leaves, 8 << 20));
    CHECK(b.len == GD_VALUE_STORE_HEADER_BYTES + (size_t)131072 * 32);
    for (uint32_t c = 0; c < chunks - 2; c++) {
        uint8_t seed[4];
        gd_put_le32(seed, c);
        gd_sha256(b.data + GD_VALUE_STORE_HEADER_BYTES + (size_t)c * 32, seed, sizeof seed);
    }
    CHECK_OK(gd_file_write_atomic(leaves, &(gd_bytes_part){b.data, b.len}, 1, 0600));
    gd_buf_free(&b);

    CHECK_OK(gd_value_store_open(&s, path, n, chunk_elems));
    CHECK(s.written == chunks);
    uint8_t root[32];
    CHECK_OK(gd_value_store_root(&s, root));
    float *back = malloc((size_t)chunk_elems * sizeof(float));
    for (uint32_t c = chunks - 2; c < chunks; c++) {
        uint64_t lo = 0;
        size_t count = 0;
        CHECK(gd_value_store_chunk_range(&s, c, &lo, &count));
        CHECK(lo == (uint64_t)c << 20 && count == chunk_elems);
        CHECK_OK(gd_value_store_read(&s, c, back, count));
        values[0] = (float)c;
        CHECK(memcmp(back, values, count * sizeof(float)) == 0);
        gd_mmr_proof proof;
        CHECK_OK(gd_value_store_prove(&s, c, &proof));
        CHECK(proof.leaf_index == c && proof.leaf_count == 131072);
        /* The verifier's side: 2^39 bytes in 4 MiB chunks. */
        CHECK(gd_state_verify_chunk(root, n * sizeof(float), (size_t)chunk_elems * 4, c, back,
                                    count * sizeof(float), &proof));
        CHECK(!gd_state_verify_chunk(root, n * sizeof(float), (size_t)chunk_elems * 4, c ^ 1,
                                     back, count * sizeof(float), &proof));
    }
    CHECK(((uint64_t)(chunks - 1) << 20) + chunk_elems == n); /* the last ends the array */
    gd_value_store_close(&s);
    CHECK(remove(path) == 0);
    free(back);
    free(values);
}

int main(void) {
    RUN_TEST(test_same_root_as_memory);
    RUN_TEST(test_check_finds_a_changed_chunk);
    RUN_TEST(test_refusals);
    RUN_TEST(test_past_two_to_the_36);
    return gd_test_finish();
}
