/* State hashes: the MMR root (proofs/mmr.h) over fixed-size chunks of a
 * state's canonical bytes. Leaf i hashes chunk i (the last one may be
 * shorter). The bytes are given as a list of parts (a header, then the
 * parameter array, then the optimizer moments, ...) that are hashed as if
 * concatenated, so no copy of a multi-gigabyte state is made; chunk leaves
 * are hashed in parallel on the pool and combined in order, so the root
 * does not depend on the thread count. Chunk boundaries depend only on the
 * concatenated length, so the hash does not depend on how a state is split
 * into parts, or (later) sharded across devices. A chunk can be proved
 * (gd_state_prove) and checked alone (gd_state_verify_chunk). */
#ifndef GD_PROOFS_STATE_HASH_H
#define GD_PROOFS_STATE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/pool.h"
#include "common/status.h"
#include "proofs/mmr.h"

/* The root over the concatenation of parts in chunk_bytes chunks (the
 * trainer hashes each state array in chunks of a payload chunk's values,
 * trainer/state.h, so state chunks line up with payload chunks). An empty
 * state (total length 0) is one empty
 * chunk. pool may be NULL. *leaf_count receives the chunk count if not
 * NULL. */
gd_status gd_state_hash(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                        size_t chunk_bytes, uint8_t root[GD_MMR_HASH_LEN],
                        uint32_t *leaf_count) GD_MUST_CHECK;

/* Appends the leaves of data's consecutive chunk_bytes chunks to peaks,
 * hashed in parallel on the pool (may be NULL): a state that arrives a
 * window at a time (trainer/state.h, gd_values_stream) is hashed as fast as
 * a whole one. len > 0; only a state's last chunk may be shorter, so a
 * window that does not end the state holds whole chunks. kept (or NULL)
 * receives each leaf too, leaf i (counted from the peaks' first) at
 * kept + 32 i: the caller sizes it for every leaf it appends. */
gd_status gd_state_peaks_append(gd_pool *pool, gd_mmr_peaks *peaks, const void *data, size_t len,
                                size_t chunk_bytes, uint8_t *kept) GD_MUST_CHECK;

/* The whole MMR of the same concatenation's chunks (*mmr initialised here;
 * the caller frees it): every chunk's proof then comes from gd_mmr_prove
 * without hashing the state again, for a side that serves many chunks. */
gd_status gd_state_mmr(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                       size_t chunk_bytes, gd_mmr *mmr) GD_MUST_CHECK;

/* The inclusion proof of chunk `chunk` of the same concatenation (every
 * chunk is hashed: O(total) work; gd_state_mmr once serves every chunk). */
gd_status gd_state_prove(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                         size_t chunk_bytes, uint32_t chunk, gd_mmr_proof *proof) GD_MUST_CHECK;

/* The chunk count of a state of `total` bytes (at least 1), or 0 if
 * chunk_bytes is 0 or the count exceeds GD_MMR_MAX_LEAVES. */
uint32_t gd_state_chunk_count(uint64_t total, size_t chunk_bytes);

/* True if `data` (len bytes) is chunk `chunk` of a state of `total` bytes
 * hashed in chunk_bytes chunks under root: len must be exactly that chunk's
 * length, and the proof's index and leaf count must be that chunk's and
 * the state's (the root alone does not bind the count). */
bool gd_state_verify_chunk(const uint8_t root[GD_MMR_HASH_LEN], uint64_t total,
                           size_t chunk_bytes, uint32_t chunk, const void *data, size_t len,
                           const gd_mmr_proof *proof);

#endif
