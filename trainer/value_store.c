/* A state array on disk by chunks (value_store.h). */
#include "trainer/value_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/file.h"
#include "proofs/state_desc.h"
#include "trainer/state.h"

#define GD_VALUE_STORE_VERSION 1

static const uint8_t gd_no_leaf[GD_MMR_HASH_LEN];

static gd_status gd_io_fail(const char *what, const char *path) {
    return gd_fail(GD_ERR_IO, "%s %s: %s", what, path, strerror(errno));
}

static void gd_header_encode(const gd_value_store *s, uint8_t out[GD_VALUE_STORE_HEADER_BYTES]) {
    memcpy(out, "GDVL", 4);
    gd_put_le32(out + 4, GD_VALUE_STORE_VERSION);
    gd_put_le64(out + 8, s->n);
    gd_put_le32(out + 16, s->chunk_elems);
    gd_put_le32(out + 20, s->chunks);
}

/* Sizes from the caller or a file, checked before anything is allocated. */
static gd_status gd_value_store_size(gd_value_store *s, uint64_t n, uint32_t chunk_elems) {
    if (n < 1 || n > GD_STATE_VALUES_MAX)
        return gd_fail(GD_ERR_INVALID, "a value store of %llu values (must be 1..2^40)",
                       (unsigned long long)n);
    if (chunk_elems < 1 || chunk_elems > GD_STATE_CHUNK_ELEMS_MAX)
        return gd_fail(GD_ERR_INVALID, "value store chunk size %u is not 1..2^28", chunk_elems);
    uint64_t chunks = n / chunk_elems + (n % chunk_elems != 0);
    if (chunks > GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_LIMIT, "%llu values are %llu chunks of %u (at most 2^30)",
                       (unsigned long long)n, (unsigned long long)chunks, chunk_elems);
    s->n = n;
    s->chunk_elems = chunk_elems;
    s->chunks = (uint32_t)chunks;
    s->leaves = calloc(s->chunks, GD_MMR_HASH_LEN);
    return s->leaves ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for %u leaves", s->chunks);
}

static gd_status gd_value_store_files(gd_value_store *s, const char *path, bool create,
                                      char *leaves_path, size_t cap) {
    int len = snprintf(leaves_path, cap, "%s.leaves", path);
    if (len < 0 || (size_t)len >= cap)
        return gd_fail(GD_ERR_LIMIT, "value store path too long");
    int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0);
    s->fd = open(path, flags, 0600);
    if (s->fd < 0)
        return errno == ENOENT ? gd_fail(GD_ERR_NOT_FOUND, "no value store %s", path)
                               : gd_io_fail("opening", path);
    s->leaves_fd = open(leaves_path, flags, 0600);
    if (s->leaves_fd < 0)
        return errno == ENOENT ? gd_fail(GD_ERR_NOT_FOUND, "no leaf table %s", leaves_path)
                               : gd_io_fail("opening", leaves_path);
    return GD_OK;
}

static void gd_value_store_reset(gd_value_store *s) {
    memset(s, 0, sizeof *s);
    s->fd = s->leaves_fd = -1;
}

/* What create and open do first: the sizes checked, both files opened. */
static gd_status gd_value_store_begin(gd_value_store *s, const char *path, uint64_t n,
                                      uint32_t chunk_elems, bool create, char *leaves_path,
                                      size_t cap) {
    gd_value_store_reset(s);
    gd_status st = gd_value_store_size(s, n, chunk_elems);
    return st == GD_OK ? gd_value_store_files(s, path, create, leaves_path, cap) : st;
}

gd_status gd_value_store_create(gd_value_store *s, const char *path, uint64_t n,
                                uint32_t chunk_elems) {
    char leaves_path[4096];
    gd_status st = gd_value_store_begin(s, path, n, chunk_elems, true, leaves_path,
                                        sizeof leaves_path);
    /* Holes read as zeros and cost no disk until written. */
    if (st == GD_OK && ftruncate(s->fd, (off_t)(n * sizeof(float))) != 0)
        st = gd_io_fail("sizing", path);
    uint64_t table = GD_VALUE_STORE_HEADER_BYTES + (uint64_t)s->chunks * GD_MMR_HASH_LEN;
    if (st == GD_OK && ftruncate(s->leaves_fd, (off_t)table) != 0)
        st = gd_io_fail("sizing", leaves_path);
    uint8_t header[GD_VALUE_STORE_HEADER_BYTES];
    gd_header_encode(s, header);
    if (st == GD_OK)
        st = gd_file_write_at(s->leaves_fd, header, sizeof header, 0, leaves_path);
    if (st != GD_OK)
        gd_value_store_close(s);
    return st;
}

gd_status gd_value_store_open(gd_value_store *s, const char *path, uint64_t n,
                              uint32_t chunk_elems) {
    char leaves_path[4096];
    gd_status st = gd_value_store_begin(s, path, n, chunk_elems, false, leaves_path,
                                        sizeof leaves_path);
    struct stat vs, ls;
    uint64_t table = GD_VALUE_STORE_HEADER_BYTES + (uint64_t)s->chunks * GD_MMR_HASH_LEN;
    if (st == GD_OK && (fstat(s->fd, &vs) != 0 || fstat(s->leaves_fd, &ls) != 0))
        st = gd_io_fail("examining", path);
    if (st == GD_OK && ((uint64_t)vs.st_size != n * sizeof(float) ||
                        (uint64_t)ls.st_size != table))
        st = gd_fail(GD_ERR_PARSE, "value store %s is %lld + %lld bytes, not %llu + %llu for "
                                   "%llu values",
                     path, (long long)vs.st_size, (long long)ls.st_size,
                     (unsigned long long)(n * sizeof(float)), (unsigned long long)table,
                     (unsigned long long)n);
    uint8_t header[GD_VALUE_STORE_HEADER_BYTES], want[GD_VALUE_STORE_HEADER_BYTES];
    if (st == GD_OK)
        st = gd_file_read_at(s->leaves_fd, header, sizeof header, 0, leaves_path);
    gd_header_encode(s, want);
    if (st == GD_OK && memcmp(header, want, sizeof want) != 0)
        st = gd_fail(GD_ERR_PARSE, "leaf table of %s is not version 1 of %llu values in chunks "
                                   "of %u",
                     path, (unsigned long long)n, chunk_elems);
    if (st == GD_OK)
        st = gd_file_read_at(s->leaves_fd, s->leaves, (size_t)s->chunks * GD_MMR_HASH_LEN,
                             GD_VALUE_STORE_HEADER_BYTES, leaves_path);
    for (uint32_t i = 0; st == GD_OK && i < s->chunks; i++)
        s->written += memcmp(s->leaves[i], gd_no_leaf, GD_MMR_HASH_LEN) != 0;
    if (st != GD_OK)
        gd_value_store_close(s);
    return st;
}

void gd_value_store_close(gd_value_store *s) {
    if (s->fd >= 0)
        close(s->fd);
    if (s->leaves_fd >= 0)
        close(s->leaves_fd);
    free(s->leaves);
    gd_value_store_reset(s);
}

bool gd_value_store_chunk_range(const gd_value_store *s, uint32_t chunk, uint64_t *lo,
                                size_t *count) {
    if (chunk >= s->chunks)
        return false;
    *lo = (uint64_t)chunk * s->chunk_elems;
    uint64_t left = s->n - *lo;
    *count = left < s->chunk_elems ? (size_t)left : s->chunk_elems;
    return true;
}

static gd_status gd_chunk_at(const gd_value_store *s, uint32_t chunk, size_t count,
                             uint64_t *offset) {
    uint64_t lo = 0;
    size_t want = 0;
    if (!gd_value_store_chunk_range(s, chunk, &lo, &want))
        return gd_fail(GD_ERR_INVALID, "chunk %u of a value store of %u chunks", chunk,
                       s->chunks);
    if (count != want)
        return gd_fail(GD_ERR_INVALID, "chunk %u holds %zu values, not %zu", chunk, want, count);
    *offset = lo * sizeof(float);
    return GD_OK;
}

gd_status gd_value_store_write(gd_value_store *s, uint32_t chunk, const float *values,
                               size_t count) {
    uint64_t at = 0;
    GD_TRY(gd_chunk_at(s, chunk, count, &at));
    GD_TRY(gd_file_write_at(s->fd, values, count * sizeof(float), at, "a value store"));
    uint8_t leaf[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(leaf, chunk, values, count * sizeof(float));
    /* An all-zero leaf means unwritten; SHA-256 never gives one in practice. */
    GD_TRY(gd_file_write_at(s->leaves_fd, leaf, sizeof leaf,
                            GD_VALUE_STORE_HEADER_BYTES + (uint64_t)chunk * GD_MMR_HASH_LEN,
                            "a value store's leaf table"));
    s->written += memcmp(s->leaves[chunk], gd_no_leaf, GD_MMR_HASH_LEN) == 0;
    memcpy(s->leaves[chunk], leaf, sizeof leaf);
    return GD_OK;
}

gd_status gd_value_store_read(const gd_value_store *s, uint32_t chunk, float *values,
                              size_t count) {
    uint64_t at = 0;
    GD_TRY(gd_chunk_at(s, chunk, count, &at));
    return gd_file_read_at(s->fd, values, count * sizeof(float), at, "a value store");
}

gd_status gd_value_store_sync(gd_value_store *s) {
    if (fsync(s->fd) != 0 || fsync(s->leaves_fd) != 0)
        return gd_fail(GD_ERR_IO, "syncing a value store: %s", strerror(errno));
    return GD_OK;
}

gd_status gd_value_store_check(const gd_value_store *s, uint32_t chunk, float *scratch,
                               bool *ok) {
    *ok = false;
    uint64_t lo = 0;
    size_t count = 0;
    if (!gd_value_store_chunk_range(s, chunk, &lo, &count))
        return gd_fail(GD_ERR_INVALID, "chunk %u of a value store of %u chunks", chunk,
                       s->chunks);
    GD_TRY(gd_value_store_read(s, chunk, scratch, count));
    *ok = memcmp(s->leaves[chunk], gd_no_leaf, GD_MMR_HASH_LEN) != 0 &&
          gd_values_chunk_has_leaf(scratch, count, chunk, s->leaves[chunk]);
    return GD_OK;
}

static gd_status gd_value_store_complete(const gd_value_store *s) {
    if (s->written == s->chunks)
        return GD_OK;
    return gd_fail(GD_ERR_INVALID, "%u of the value store's %u chunks are unwritten",
                   s->chunks - s->written, s->chunks);
}

gd_status gd_value_store_root(const gd_value_store *s, uint8_t root[GD_MMR_HASH_LEN]) {
    GD_TRY(gd_value_store_complete(s));
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    for (uint32_t i = 0; i < s->chunks; i++)
        GD_TRY(gd_mmr_peaks_append(&peaks, s->leaves[i]));
    return gd_mmr_peaks_root(&peaks, root);
}

gd_status gd_value_store_prove(const gd_value_store *s, uint32_t chunk, gd_mmr_proof *proof) {
    GD_TRY(gd_value_store_complete(s));
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    gd_status st = GD_OK;
    for (uint32_t i = 0; st == GD_OK && i < s->chunks; i++)
        st = gd_mmr_append(&mmr, s->leaves[i]);
    if (st == GD_OK)
        st = gd_mmr_prove(&mmr, proof, chunk);
    gd_mmr_free(&mmr);
    return st;
}
