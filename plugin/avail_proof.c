/* An availability report's proofs (plugin/avail_proof.h). */
#include "plugin/avail_proof.h"

gd_status gd_avail_prove(const gd_payload *p, uint32_t leaves,
                         const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                         const char *reporter, uint32_t want, gd_diloco_chunk_proof *chunks,
                         gd_buf *wire, uint32_t *n) {
    if (leaves < 2 || leaves - 1 != p->header.chunk_count || want > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_fail(GD_ERR_INVALID, "a report of %u chunks of a payload of %u leaves", want,
                       leaves);
    uint32_t drawn[GD_DILOCO_AVAIL_CHUNKS_MAX];
    *n = gd_diloco_avail_chunks(randomness, target, reporter, leaves - 1, want, drawn);
    for (uint32_t i = 0; i < *n; i++) {
        const gd_payload_chunk *ch = &p->chunks[drawn[i]];
        gd_mmr_hash_leaf(chunks[i].leaf_hash, drawn[i] + 1, ch->raw, ch->raw_len);
        gd_mmr_proof proof;
        GD_TRY(gd_payload_prove_chunk(p, drawn[i], &proof));
        GD_TRY(gd_mmr_proof_encode(&proof, &wire[i]));
        chunks[i].proof = wire[i].data;
        chunks[i].proof_len = wire[i].len;
    }
    return GD_OK;
}

