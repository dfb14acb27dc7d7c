/* A state array on disk, written and read a chunk at a time: n floats in
 * chunks of chunk_elems values, the chunks a state's sub-root and a
 * payload are cut into (trainer/state.h), so the array never has to be
 * whole in memory.
 *
 * Two files: PATH holds the values (n little-endian floats, a sparse file
 * until every chunk is written) and PATH.leaves each chunk's MMR leaf hash
 * (gd_mmr_hash_leaf of its index and bytes), recorded as the chunk is
 * written. The root and a chunk's proof then come from the leaves alone,
 * the same root gd_values_root computes over the whole array in memory, so
 * descriptors, roots and known answers do not change.
 *
 *   PATH.leaves: "GDVL" LE32 version (1) LE64 n LE32 chunk_elems LE32 chunks,
 *                then chunks x 32 bytes (all zero: not written yet).
 *
 * Durability: a killed process loses nothing it wrote (the kernel holds
 * it); past a power loss only what gd_value_store_sync covered is sure,
 * and a restart can rehash a chunk against its leaf (gd_value_store_check). */
#ifndef GD_TRAINER_VALUE_STORE_H
#define GD_TRAINER_VALUE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "proofs/mmr.h"

#define GD_VALUE_STORE_HEADER_BYTES 24

typedef struct gd_value_store {
    int fd, leaves_fd;
    uint64_t n;
    uint32_t chunk_elems, chunks;
    uint8_t (*leaves)[GD_MMR_HASH_LEN]; /* chunk i's leaf, all zero until written */
    uint32_t written;                   /* chunks whose leaf is known */
} gd_value_store;

/* A new store of n values (1..GD_STATE_VALUES_MAX) at path, replacing any:
 * a sparse values file of 4 n bytes and an empty leaf table, mode 0600. */
gd_status gd_value_store_create(gd_value_store *s, const char *path, uint64_t n,
                                uint32_t chunk_elems) GD_MUST_CHECK;
/* An existing store, which must be of n values in chunks of chunk_elems:
 * both files' sizes and the leaf table's header are checked before use. */
gd_status gd_value_store_open(gd_value_store *s, const char *path, uint64_t n,
                              uint32_t chunk_elems) GD_MUST_CHECK;
void gd_value_store_close(gd_value_store *s);

/* The [*lo, *lo + *count) values of chunk `chunk`; false past the last. */
bool gd_value_store_chunk_range(const gd_value_store *s, uint32_t chunk, uint64_t *lo,
                                size_t *count);

/* Writes chunk `chunk` (exactly its count of values) and records its leaf. */
gd_status gd_value_store_write(gd_value_store *s, uint32_t chunk, const float *values,
                               size_t count) GD_MUST_CHECK;
/* Reads chunk `chunk` (count must be its count) into values. */
gd_status gd_value_store_read(const gd_value_store *s, uint32_t chunk, float *values,
                              size_t count) GD_MUST_CHECK;
/* fsync of the values, then of the leaves. */
gd_status gd_value_store_sync(gd_value_store *s) GD_MUST_CHECK;
/* Whether chunk `chunk` on disk hashes to its recorded leaf (false for an
 * unwritten chunk); scratch holds chunk_elems values. */
gd_status gd_value_store_check(const gd_value_store *s, uint32_t chunk, float *scratch,
                               bool *ok) GD_MUST_CHECK;

/* The array's root (gd_values_root's) from the leaves; GD_ERR_INVALID
 * while a chunk is unwritten. */
gd_status gd_value_store_root(const gd_value_store *s,
                              uint8_t root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
/* Chunk `chunk`'s inclusion proof against that root, from the leaves. */
gd_status gd_value_store_prove(const gd_value_store *s, uint32_t chunk,
                               gd_mmr_proof *proof) GD_MUST_CHECK;

#endif
