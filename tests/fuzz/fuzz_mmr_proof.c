/* MMR proofs off the wire: any accepted encoding re-encodes to the same
 * bytes, and verification against a fixed 11-leaf MMR (leaf i holds the
 * byte 'a' + i; peaks of 8, 2 and 1 leaves) never crashes and succeeds
 * only for the genuine proof of that leaf. The root does not bind the
 * leaf count (mmr.h), so a count of the same shape may verify too; the
 * hashes and index must still be the genuine ones. */
#include <stdbool.h>
#include <string.h>

#include "proofs/mmr.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_MMR_LEAVES 11
#define FUZZ_MMR_FIXED_LEAF 5

static uint8_t fuzz_leaves[FUZZ_MMR_LEAVES][GD_MMR_HASH_LEN];
static uint8_t fuzz_root[GD_MMR_HASH_LEN];
static gd_mmr_proof fuzz_genuine[FUZZ_MMR_LEAVES];

static void fuzz_mmr_setup(void) {
    static bool ready = false;
    if (ready)
        return;
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    for (uint32_t i = 0; i < FUZZ_MMR_LEAVES; i++) {
        char c = (char)('a' + i);
        gd_mmr_hash_leaf(fuzz_leaves[i], i, &c, 1);
        FUZZ_ASSERT(gd_mmr_append(&mmr, fuzz_leaves[i]) == GD_OK);
    }
    FUZZ_ASSERT(gd_mmr_root(&mmr, fuzz_root) == GD_OK);
    for (uint32_t i = 0; i < FUZZ_MMR_LEAVES; i++)
        FUZZ_ASSERT(gd_mmr_prove(&mmr, &fuzz_genuine[i], i) == GD_OK);
    gd_mmr_free(&mmr);
    ready = true;
}

/* A proof that verified for leaf `index` must carry that leaf's genuine
 * index and hashes (so with the MMR's count it is the genuine proof). */
static void fuzz_check_genuine(const gd_mmr_proof *proof, uint32_t index) {
    const gd_mmr_proof *g = &fuzz_genuine[index];
    FUZZ_ASSERT(proof->leaf_index == index);
    FUZZ_ASSERT(proof->n_hashes == g->n_hashes);
    FUZZ_ASSERT(memcmp(proof->hashes, g->hashes, (size_t)g->n_hashes * GD_MMR_HASH_LEN) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_mmr_setup();
    gd_mmr_proof proof;
    if (gd_mmr_proof_decode(&proof, data, size) != GD_OK)
        return 0;
    gd_buf again = {0};
    FUZZ_ASSERT(gd_mmr_proof_encode(&proof, &again) == GD_OK);
    FUZZ_ASSERT(again.len == size && memcmp(again.data, data, size) == 0);
    gd_buf_free(&again);

    if (gd_mmr_verify(fuzz_root, &proof, fuzz_leaves[FUZZ_MMR_FIXED_LEAF]))
        fuzz_check_genuine(&proof, FUZZ_MMR_FIXED_LEAF);
    if (proof.leaf_index < FUZZ_MMR_LEAVES &&
        gd_mmr_verify(fuzz_root, &proof, fuzz_leaves[proof.leaf_index]))
        fuzz_check_genuine(&proof, proof.leaf_index);
    return 0;
}
