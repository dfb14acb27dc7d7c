/* Merkle mountain ranges with the hashing of Gonka's PoC v2 artifact store
 * (gonka-ai/gonka, decentralized-api, package artifacts, mmr.go):
 *
 *   leaf  = SHA256(0x00 || LE32(index) || bytes)
 *   node  = SHA256(0x01 || left || right)
 *   root  = the peaks (largest mountain first) bagged right to left:
 *           acc = last peak; acc = node(peak_i, acc) for i from the
 *           second-to-last down to the first; one peak is its own root.
 *
 * (Gonka's PoC leaves carry LE32(nonce) in the same position; ours carry
 * the leaf's index, so a leaf cannot be replayed at another position.)
 *
 * A proof for leaf i of an MMR of `count` leaves lists, like Gonka's, the
 * sibling hashes from the leaf up to its mountain's peak (bottom-up), then
 * the other peaks from left to right. Only (root, count) needs to be
 * published; proofs are served off chain. */
#ifndef GD_PROOFS_MMR_H
#define GD_PROOFS_MMR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "common/status.h"

#define GD_MMR_HASH_LEN 32
/* At most 2^30 leaves (as Gonka): a proof holds at most 30 siblings and 30
 * other peaks. */
#define GD_MMR_MAX_LEAVES ((uint32_t)1 << 30)
#define GD_MMR_PROOF_MAX 64

void gd_mmr_hash_leaf(uint8_t out[GD_MMR_HASH_LEN], uint32_t index, const void *data,
                      size_t len);
/* A leaf whose data arrives in pieces: gd_sha256_update the pieces into
 * *ctx, then gd_sha256_finish gives gd_mmr_hash_leaf of their
 * concatenation. */
gd_status gd_mmr_leaf_begin(gd_sha256_ctx **ctx, uint32_t index) GD_MUST_CHECK;
void gd_mmr_hash_node(uint8_t out[GD_MMR_HASH_LEN], const uint8_t left[GD_MMR_HASH_LEN],
                      const uint8_t right[GD_MMR_HASH_LEN]);

/* An MMR that keeps every node, to serve proofs. Zero-initialise or
 * gd_mmr_init; free with gd_mmr_free. */
typedef struct gd_mmr {
    uint8_t (*nodes)[GD_MMR_HASH_LEN]; /* post-order, as Gonka stores them */
    size_t n_nodes;
    size_t cap;
    uint32_t n_leaves;
} gd_mmr;

void gd_mmr_init(gd_mmr *mmr);
void gd_mmr_free(gd_mmr *mmr);

/* Appends a leaf given its leaf hash (hash leaves in parallel, append in
 * order). GD_ERR_LIMIT past GD_MMR_MAX_LEAVES, GD_ERR_NOMEM. */
gd_status gd_mmr_append(gd_mmr *mmr, const uint8_t leaf_hash[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

/* The bagged root; GD_ERR_INVALID for an empty MMR. */
gd_status gd_mmr_root(const gd_mmr *mmr, uint8_t root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

typedef struct gd_mmr_proof {
    uint32_t leaf_index;
    uint32_t leaf_count; /* the MMR's size the proof is against */
    uint32_t n_hashes;
    uint8_t hashes[GD_MMR_PROOF_MAX][GD_MMR_HASH_LEN];
} gd_mmr_proof;

gd_status gd_mmr_prove(const gd_mmr *mmr, gd_mmr_proof *out,
                       uint32_t leaf_index) GD_MUST_CHECK;

/* True if leaf_hash sits at proof->leaf_index of an MMR of
 * proof->leaf_count leaves with this root. Checks the proof's length is
 * exactly what that position needs; never reads past n_hashes.
 * The root does not bind the leaf count (leaf 0 of 5 and of 6 leaves have
 * the same equation), nor does a bare leaf hash bind its index across
 * counts: compare proof->leaf_count with the published count, and hash the
 * leaf from its data at proof->leaf_index. */
bool gd_mmr_verify(const uint8_t root[GD_MMR_HASH_LEN], const gd_mmr_proof *proof,
                   const uint8_t leaf_hash[GD_MMR_HASH_LEN]);

/* Wire form of a proof: LE32 leaf_index, LE32 leaf_count, LE32 n_hashes,
 * then n_hashes * 32 bytes; nothing after. */
gd_status gd_mmr_proof_encode(const gd_mmr_proof *proof, gd_buf *out) GD_MUST_CHECK;
/* Strict: wrong length, n_hashes > GD_MMR_PROOF_MAX, leaf_index >=
 * leaf_count, leaf_count 0 or > GD_MMR_MAX_LEAVES are GD_ERR_PARSE. */
gd_status gd_mmr_proof_decode(gd_mmr_proof *out, const uint8_t *bytes,
                              size_t len) GD_MUST_CHECK;

/* Root only, in O(log n) memory: the running peaks. */
typedef struct gd_mmr_peaks {
    uint8_t peak[32][GD_MMR_HASH_LEN]; /* peak[h]: the mountain of height h, if present */
    uint32_t n_leaves;                 /* bit h set <=> a mountain of height h exists */
} gd_mmr_peaks;

void gd_mmr_peaks_init(gd_mmr_peaks *p);
gd_status gd_mmr_peaks_append(gd_mmr_peaks *p,
                              const uint8_t leaf_hash[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
gd_status gd_mmr_peaks_root(const gd_mmr_peaks *p,
                            uint8_t root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

#endif
