/* An availability report's state sample (proofs/state_sample.h). */
#include "proofs/state_sample.h"

#include <string.h>


uint32_t gd_state_sample_chunk(const gd_state_sample *s, const gd_worker_desc *d) {
    uint32_t chunks = gd_values_chunks((size_t)d->n, d->tag.chunk_elems);
    return chunks ? (uint32_t)(s->pick % chunks) : 0;
}

gd_status gd_state_sample_verify(const gd_state_sample *s,
                                 const uint8_t transcript_root[GD_DILOCO_HASH_LEN],
                                 uint32_t segment_count, const gd_state_sample_proof *p,
                                 uint32_t *chunk_out) {
    if (segment_count == 0 || s->leaf >= segment_count || s->array >= GD_STATE_SAMPLE_ARRAYS)
        return gd_fail(GD_ERR_INVALID, "no state sample of leaf %u of %u segments", s->leaf,
                       segment_count);
    gd_worker_desc d;
    gd_status st = gd_worker_desc_decode(&d, p->descriptor, p->descriptor_len);
    if (st != GD_OK)
        return gd_fail_context(st, "the sampled state's descriptor");
    if (d.stage != GD_STAGE_TRAIN)
        return gd_fail(GD_ERR_INVALID, "the sampled descriptor is not a segment's start state");
    gd_mmr_proof proof;
    if (gd_mmr_proof_decode(&proof, p->descriptor_proof, p->descriptor_proof_len) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "the sampled descriptor's transcript proof");
    uint8_t hash[GD_DILOCO_HASH_LEN], leaf[GD_DILOCO_HASH_LEN];
    gd_worker_desc_hash(&d, hash);
    gd_mmr_hash_leaf(leaf, s->leaf, hash, sizeof hash);
    if (proof.leaf_index != s->leaf || proof.leaf_count != segment_count + 2 ||
        !gd_mmr_verify(transcript_root, &proof, leaf))
        return gd_fail(GD_ERR_INVALID, "the sampled descriptor is not transcript leaf %u",
                       s->leaf);
    uint32_t chunks = gd_values_chunks((size_t)d.n, d.tag.chunk_elems);
    uint32_t chunk = gd_state_sample_chunk(s, &d);
    if (p->chunk_leaf_len != GD_MMR_HASH_LEN ||
        gd_mmr_proof_decode(&proof, p->chunk_proof, p->chunk_proof_len) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "the sampled chunk's leaf or proof does not decode");
    if (chunks == 0 || proof.leaf_index != chunk || proof.leaf_count != chunks ||
        !gd_mmr_verify(gd_worker_desc_root(&d, s->array), &proof, p->chunk_leaf))
        return gd_fail(GD_ERR_INVALID, "the sampled leaf is not chunk %u of array %u", chunk,
                       s->array);
    if (chunk_out != NULL)
        *chunk_out = chunk;
    return GD_OK;
}
