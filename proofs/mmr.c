/* Merkle mountain ranges (see mmr.h). Why it is built this way:
 * - The node array is post-order, as Gonka's artifact store keeps it, so a
 *   mountain of height h is a contiguous run of 2^(h+1)-1 nodes ending in its
 *   peak and every position follows from the leaf count alone: proving needs
 *   no pointers, and verifying needs nothing but (root, count).
 * - Verification recomputes the exact proof length a (leaf_index, count)
 *   needs and rejects anything else, so a proof cannot smuggle extra hashes
 *   or claim a different mountain layout; it only reads hashes[0..n_hashes).
 * - The streaming peaks keep one hash per set bit of the leaf count, so a
 *   state of any size is committed in O(log n) memory with the same root. */
#include "proofs/mmr.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define GD_MMR_LEAF_TAG 0x00
#define GD_MMR_NODE_TAG 0x01
#define GD_MMR_WIRE_HEADER 12
/* Leaf data up to this size is hashed from one stack copy (the common case:
 * chunk leaves are hashed by state_hash.c with its own streaming). */
#define GD_MMR_LEAF_STACK 1024

static unsigned gd_popcount32(uint32_t v) {
    unsigned n = 0;
    for (; v != 0; v &= v - 1)
        n++;
    return n;
}

gd_status gd_mmr_leaf_begin(gd_sha256_ctx **ctx, uint32_t index) {
    uint8_t prefix[5] = {GD_MMR_LEAF_TAG};
    gd_put_le32(prefix + 1, index);
    GD_TRY(gd_sha256_begin(ctx));
    gd_sha256_update(*ctx, prefix, 5);
    return GD_OK;
}

void gd_mmr_hash_leaf(uint8_t out[GD_MMR_HASH_LEN], uint32_t index, const void *data,
                      size_t len) {
    uint8_t prefix[5] = {GD_MMR_LEAF_TAG};
    gd_put_le32(prefix + 1, index);
    if (len <= GD_MMR_LEAF_STACK) {
        uint8_t buf[5 + GD_MMR_LEAF_STACK];
        memcpy(buf, prefix, 5);
        if (len > 0)
            memcpy(buf + 5, data, len);
        gd_sha256(out, buf, 5 + len);
        return;
    }
    gd_sha256_ctx *ctx = NULL;
    if (gd_mmr_leaf_begin(&ctx, index) == GD_OK) {
        gd_sha256_update(ctx, data, len);
        gd_sha256_finish(ctx, out);
        return;
    }
    /* Only out of memory for a SHA-256 context gets here (this function
     * cannot report it): try one contiguous copy. If even that fails, write
     * all zeros, which fails closed: a root over it matches no honest
     * recomputation, so it can never prove anything false. */
    uint8_t *copy = malloc(5 + len);
    if (copy == NULL) {
        memset(out, 0, GD_MMR_HASH_LEN);
        return;
    }
    memcpy(copy, prefix, 5);
    memcpy(copy + 5, data, len);
    gd_sha256(out, copy, 5 + len);
    free(copy);
}

void gd_mmr_hash_node(uint8_t out[GD_MMR_HASH_LEN], const uint8_t left[GD_MMR_HASH_LEN],
                      const uint8_t right[GD_MMR_HASH_LEN]) {
    uint8_t buf[1 + 2 * GD_MMR_HASH_LEN];
    buf[0] = GD_MMR_NODE_TAG;
    memcpy(buf + 1, left, GD_MMR_HASH_LEN);
    memcpy(buf + 1 + GD_MMR_HASH_LEN, right, GD_MMR_HASH_LEN);
    gd_sha256(out, buf, sizeof buf);
}

/* Bags peaks given left to right (largest mountain first): right to left,
 * acc = node(peak_i, acc). n >= 1. */
static void gd_mmr_bag(uint8_t root[GD_MMR_HASH_LEN], const uint8_t *const *peaks, unsigned n) {
    uint8_t acc[GD_MMR_HASH_LEN];
    memcpy(acc, peaks[n - 1], GD_MMR_HASH_LEN);
    for (unsigned i = n - 1; i-- > 0;)
        gd_mmr_hash_node(acc, peaks[i], acc);
    memcpy(root, acc, GD_MMR_HASH_LEN);
}

/* Where leaf `index` of an MMR of `count` leaves lives: its mountain's
 * height, its index within the mountain, the mountain's ordinal (0 = left)
 * and the mountain's first node in the post-order array. index < count. */
typedef struct gd_mmr_pos {
    unsigned height;
    uint32_t local;
    unsigned mountain;
    size_t node_offset;
} gd_mmr_pos;

static gd_mmr_pos gd_mmr_locate(uint32_t count, uint32_t index) {
    gd_mmr_pos pos = {0, 0, 0, 0};
    uint32_t start = 0;
    for (unsigned h = 32; h-- > 0;) {
        if (!(count >> h & 1))
            continue;
        uint32_t size = (uint32_t)1 << h;
        if (index - start < size) {
            pos.height = h;
            pos.local = index - start;
            return pos;
        }
        start += size;
        pos.node_offset += 2 * (size_t)size - 1;
        pos.mountain++;
    }
    return pos; /* unreachable for index < count */
}

void gd_mmr_init(gd_mmr *mmr) {
    memset(mmr, 0, sizeof *mmr);
}

void gd_mmr_free(gd_mmr *mmr) {
    free(mmr->nodes);
    gd_mmr_init(mmr);
}

gd_status gd_mmr_append(gd_mmr *mmr, const uint8_t leaf_hash[GD_MMR_HASH_LEN]) {
    if (mmr->n_leaves >= GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_LIMIT, "MMR is full (%u leaves)", (unsigned)GD_MMR_MAX_LEAVES);
    /* The new leaf closes one mountain per trailing one bit of the old count
     * (two of height h merge into one of height h+1). Reserve first so a
     * failed append leaves the MMR unchanged. */
    unsigned merges = 0;
    while (mmr->n_leaves >> merges & 1)
        merges++;
    size_t need = mmr->n_nodes + 1 + merges;
    if (need > mmr->cap) {
        size_t cap = mmr->cap ? mmr->cap : 64;
        while (cap < need)
            cap *= 2;
        if (cap > SIZE_MAX / GD_MMR_HASH_LEN)
            return gd_fail(GD_ERR_NOMEM, "MMR node array too large");
        void *nodes = realloc(mmr->nodes, cap * GD_MMR_HASH_LEN);
        if (nodes == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for %zu MMR nodes", cap);
        mmr->nodes = nodes;
        mmr->cap = cap;
    }
    size_t pos = mmr->n_nodes;
    memcpy(mmr->nodes[pos], leaf_hash, GD_MMR_HASH_LEN);
    for (unsigned h = 0; h < merges; h++) {
        /* The right child (height h) is at pos; the left one is the peak
         * just before its 2^(h+1)-1 nodes. */
        size_t left = pos - (((size_t)2 << h) - 1);
        gd_mmr_hash_node(mmr->nodes[pos + 1], mmr->nodes[left], mmr->nodes[pos]);
        pos++;
    }
    mmr->n_nodes = pos + 1;
    mmr->n_leaves++;
    return GD_OK;
}

/* Peak node positions, left to right; returns how many. */
static unsigned gd_mmr_peak_positions(uint32_t count, size_t pos[32]) {
    unsigned n = 0;
    size_t offset = 0;
    for (unsigned h = 32; h-- > 0;) {
        if (!(count >> h & 1))
            continue;
        size_t nodes = ((size_t)2 << h) - 1;
        pos[n++] = offset + nodes - 1;
        offset += nodes;
    }
    return n;
}

gd_status gd_mmr_root(const gd_mmr *mmr, uint8_t root[GD_MMR_HASH_LEN]) {
    if (mmr->n_leaves == 0)
        return gd_fail(GD_ERR_INVALID, "the root of an empty MMR is undefined");
    size_t pos[32];
    const uint8_t *peaks[32];
    unsigned n = gd_mmr_peak_positions(mmr->n_leaves, pos);
    for (unsigned i = 0; i < n; i++)
        peaks[i] = mmr->nodes[pos[i]];
    gd_mmr_bag(root, peaks, n);
    return GD_OK;
}

gd_status gd_mmr_prove(const gd_mmr *mmr, gd_mmr_proof *out, uint32_t leaf_index) {
    if (leaf_index >= mmr->n_leaves)
        return gd_fail(GD_ERR_INVALID, "leaf %u is outside an MMR of %u leaves",
                       (unsigned)leaf_index, (unsigned)mmr->n_leaves);
    gd_mmr_pos at = gd_mmr_locate(mmr->n_leaves, leaf_index);
    memset(out, 0, sizeof *out);
    out->leaf_index = leaf_index;
    out->leaf_count = mmr->n_leaves;
    /* Walk down from the mountain's peak: a subtree of height k rooted at p
     * has its right child at p-1 and its left child at p-2^k. The sibling
     * met at height k is the proof's (k-1)-th hash (bottom-up order). */
    size_t p = at.node_offset + ((size_t)2 << at.height) - 2;
    for (unsigned k = at.height; k > 0; k--) {
        size_t left = p - ((size_t)1 << k), right = p - 1;
        bool go_right = at.local >> (k - 1) & 1;
        memcpy(out->hashes[k - 1], mmr->nodes[go_right ? left : right], GD_MMR_HASH_LEN);
        p = go_right ? right : left;
    }
    size_t pos[32];
    unsigned n_peaks = gd_mmr_peak_positions(mmr->n_leaves, pos);
    uint32_t n = at.height;
    for (unsigned i = 0; i < n_peaks; i++)
        if (i != at.mountain)
            memcpy(out->hashes[n++], mmr->nodes[pos[i]], GD_MMR_HASH_LEN);
    out->n_hashes = n;
    return GD_OK;
}

bool gd_mmr_verify(const uint8_t root[GD_MMR_HASH_LEN], const gd_mmr_proof *proof,
                   const uint8_t leaf_hash[GD_MMR_HASH_LEN]) {
    uint32_t count = proof->leaf_count;
    if (count == 0 || count > GD_MMR_MAX_LEAVES || proof->leaf_index >= count)
        return false;
    gd_mmr_pos at = gd_mmr_locate(count, proof->leaf_index);
    unsigned n_peaks = gd_popcount32(count);
    /* Exactly the siblings up to the peak plus every other peak: at most
     * 30 + 29 < GD_MMR_PROOF_MAX, so only hashes[0..n_hashes) are read. */
    if (proof->n_hashes != at.height + n_peaks - 1)
        return false;
    uint8_t acc[GD_MMR_HASH_LEN];
    memcpy(acc, leaf_hash, GD_MMR_HASH_LEN);
    for (unsigned k = 0; k < at.height; k++) {
        if (at.local >> k & 1)
            gd_mmr_hash_node(acc, proof->hashes[k], acc);
        else
            gd_mmr_hash_node(acc, acc, proof->hashes[k]);
    }
    const uint8_t *peaks[32];
    for (unsigned i = 0; i < n_peaks; i++) {
        if (i < at.mountain)
            peaks[i] = proof->hashes[at.height + i];
        else if (i == at.mountain)
            peaks[i] = acc;
        else
            peaks[i] = proof->hashes[at.height + i - 1];
    }
    uint8_t computed[GD_MMR_HASH_LEN];
    gd_mmr_bag(computed, peaks, n_peaks);
    return gd_bytes_equal_ct(computed, root, GD_MMR_HASH_LEN);
}

gd_status gd_mmr_proof_encode(const gd_mmr_proof *proof, gd_buf *out) {
    /* Refuse what decode would refuse, so every encoding round-trips. */
    if (proof->n_hashes > GD_MMR_PROOF_MAX || proof->leaf_count == 0 ||
        proof->leaf_count > GD_MMR_MAX_LEAVES || proof->leaf_index >= proof->leaf_count)
        return gd_fail(GD_ERR_INVALID, "malformed MMR proof (leaf %u of %u, %u hashes)",
                       (unsigned)proof->leaf_index, (unsigned)proof->leaf_count,
                       (unsigned)proof->n_hashes);
    size_t len = GD_MMR_WIRE_HEADER + (size_t)proof->n_hashes * GD_MMR_HASH_LEN;
    GD_TRY(gd_buf_reserve(out, len));
    uint8_t *p = out->data + out->len;
    gd_put_le32(p, proof->leaf_index);
    gd_put_le32(p + 4, proof->leaf_count);
    gd_put_le32(p + 8, proof->n_hashes);
    if (proof->n_hashes > 0)
        memcpy(p + GD_MMR_WIRE_HEADER, proof->hashes, (size_t)proof->n_hashes * GD_MMR_HASH_LEN);
    out->len += len;
    return GD_OK;
}

gd_status gd_mmr_proof_decode(gd_mmr_proof *out, const uint8_t *bytes, size_t len) {
    memset(out, 0, sizeof *out);
    if (len < GD_MMR_WIRE_HEADER)
        return gd_fail(GD_ERR_PARSE, "MMR proof of %zu bytes is shorter than its header", len);
    uint32_t index = gd_get_le32(bytes), count = gd_get_le32(bytes + 4);
    uint32_t n = gd_get_le32(bytes + 8);
    if (n > GD_MMR_PROOF_MAX)
        return gd_fail(GD_ERR_PARSE, "MMR proof claims %u hashes (at most %d)", (unsigned)n,
                       GD_MMR_PROOF_MAX);
    if (len != GD_MMR_WIRE_HEADER + (size_t)n * GD_MMR_HASH_LEN)
        return gd_fail(GD_ERR_PARSE, "MMR proof is %zu bytes, %u hashes need %zu", len,
                       (unsigned)n, GD_MMR_WIRE_HEADER + (size_t)n * GD_MMR_HASH_LEN);
    if (count == 0 || count > GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_PARSE, "MMR proof leaf count %u is out of range",
                       (unsigned)count);
    if (index >= count)
        return gd_fail(GD_ERR_PARSE, "MMR proof leaf %u is outside %u leaves", (unsigned)index,
                       (unsigned)count);
    out->leaf_index = index;
    out->leaf_count = count;
    out->n_hashes = n;
    if (n > 0)
        memcpy(out->hashes, bytes + GD_MMR_WIRE_HEADER, (size_t)n * GD_MMR_HASH_LEN);
    return GD_OK;
}

void gd_mmr_peaks_init(gd_mmr_peaks *p) {
    memset(p, 0, sizeof *p);
}

gd_status gd_mmr_peaks_append(gd_mmr_peaks *p, const uint8_t leaf_hash[GD_MMR_HASH_LEN]) {
    if (p->n_leaves >= GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_LIMIT, "MMR is full (%u leaves)", (unsigned)GD_MMR_MAX_LEAVES);
    /* Binary increment: each trailing one of the count is a mountain the
     * carry merges into (it is the left, older child). */
    uint8_t carry[GD_MMR_HASH_LEN];
    memcpy(carry, leaf_hash, GD_MMR_HASH_LEN);
    unsigned h = 0;
    while (p->n_leaves >> h & 1) {
        gd_mmr_hash_node(carry, p->peak[h], carry);
        h++;
    }
    memcpy(p->peak[h], carry, GD_MMR_HASH_LEN);
    p->n_leaves++;
    return GD_OK;
}

gd_status gd_mmr_peaks_root(const gd_mmr_peaks *p, uint8_t root[GD_MMR_HASH_LEN]) {
    if (p->n_leaves == 0)
        return gd_fail(GD_ERR_INVALID, "the root of an empty MMR is undefined");
    const uint8_t *peaks[32];
    unsigned n = 0;
    for (unsigned h = 32; h-- > 0;)
        if (p->n_leaves >> h & 1)
            peaks[n++] = p->peak[h];
    gd_mmr_bag(root, peaks, n);
    return GD_OK;
}
