/* An availability report's proofs (plugin/member/avail_proof.h). */
#include "plugin/member/avail_proof.h"

#include <stdlib.h>
#include <string.h>

#include "plugin/member/round_engine.h"
#include "plugin/member/state_index.h"

gd_status gd_avail_prove(gd_payload_view *p, const gd_mmr *mmr,
                         const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                         const char *reporter, uint32_t want, gd_diloco_chunk_proof *chunks,
                         gd_buf *wire, uint32_t *n) {
    uint32_t leaves = mmr->n_leaves;
    if (leaves < 2 || leaves - 1 != p->header.chunk_count || want > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_fail(GD_ERR_INVALID, "a report of %u chunks of a payload of %u leaves", want,
                       leaves);
    uint32_t drawn[GD_DILOCO_AVAIL_CHUNKS_MAX];
    *n = gd_diloco_avail_chunks(drawn, randomness, target, reporter, leaves - 1, want);
    for (uint32_t i = 0; i < *n; i++) {
        const uint8_t *raw = NULL;
        size_t raw_len = 0;
        GD_TRY(gd_payload_view_raw(p, drawn[i], &raw, &raw_len));
        gd_mmr_hash_leaf(chunks[i].leaf_hash, drawn[i] + 1, raw, raw_len);
        gd_mmr_proof proof;
        GD_TRY(gd_mmr_prove(mmr, &proof, drawn[i] + 1));
        GD_TRY(gd_mmr_proof_encode(&proof, &wire[i]));
        chunks[i].proof = wire[i].data;
        chunks[i].proof_len = wire[i].len;
    }
    return GD_OK;
}


/* The arrays of a served state chunk, in the order the body holds them. */
#define GD_AVAIL_SERVED_ARRAYS 4

gd_status gd_avail_state_begin(gd_avail_state *a, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                               const char *target, const char *reporter,
                               const uint8_t transcript_root[GD_DILOCO_HASH_LEN],
                               uint32_t segments, const uint8_t *transcript,
                               size_t transcript_len) {
    if (segments == 0 || segments > GD_MMR_MAX_LEAVES - 2)
        return gd_fail(GD_ERR_INVALID, "a commitment of %u segments has no state sample",
                       segments);
    gd_worker_desc *descs = calloc((size_t)segments + 2, sizeof *descs);
    if (descs == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_mmr mmr;
    gd_status s = gd_engine_transcript_parse(transcript, transcript_len, segments,
                                             transcript_root, descs, &mmr);
    if (s == GD_OK) {
        gd_state_sample_draw(&a->sample, randomness, target, reporter, segments);
        const gd_worker_desc *d = &descs[a->sample.leaf];
        a->chunk = gd_state_sample_chunk(&a->sample, d);
        gd_worker_desc_encode(d, a->descriptor);
        gd_mmr_proof proof;
        s = gd_mmr_prove(&mmr, &proof, a->sample.leaf);
        if (s == GD_OK)
            s = gd_mmr_proof_encode(&proof, &a->descriptor_proof);
        gd_mmr_free(&mmr);
    }
    free(descs);
    return s;
}

gd_status gd_avail_state_finish(gd_avail_state *a,
                                const uint8_t transcript_root[GD_DILOCO_HASH_LEN],
                                uint32_t segments, const gd_buf *body, const gd_buf *proofs) {
    if (body->len % (GD_AVAIL_SERVED_ARRAYS * sizeof(float)) != 0 || body->len == 0)
        return gd_fail(GD_ERR_PARSE, "a served state chunk of %zu bytes is not four arrays",
                       body->len);
    size_t bytes = body->len / GD_AVAIL_SERVED_ARRAYS;
    const uint8_t *p = proofs->data;
    size_t left = proofs->len;
    gd_mmr_proof proof = {0};
    for (uint32_t i = 0; i <= a->sample.array; i++)
        GD_TRY(gd_state_chunk_proof_next(&proof, &p, &left));
    gd_mmr_hash_leaf(a->chunk_leaf, a->chunk, body->data + a->sample.array * bytes, bytes);
    gd_buf_free(&a->chunk_proof);
    GD_TRY(gd_mmr_proof_encode(&proof, &a->chunk_proof));
    a->proof = (gd_state_sample_proof){
        .descriptor = a->descriptor,
        .descriptor_len = sizeof a->descriptor,
        .descriptor_proof = a->descriptor_proof.data,
        .descriptor_proof_len = a->descriptor_proof.len,
        .chunk_leaf = a->chunk_leaf,
        .chunk_leaf_len = sizeof a->chunk_leaf,
        .chunk_proof = a->chunk_proof.data,
        .chunk_proof_len = a->chunk_proof.len,
    };
    gd_status s = gd_state_sample_verify(&a->sample, transcript_root, segments, &a->proof, NULL);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "the served state chunk");
}

void gd_avail_state_free(gd_avail_state *a) {
    gd_buf_free(&a->descriptor_proof);
    gd_buf_free(&a->chunk_proof);
    memset(a, 0, sizeof *a);
}
