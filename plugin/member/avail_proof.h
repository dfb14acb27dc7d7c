/* An availability report's proofs: the chunks the chain draws for a
 * reporter (gd_diloco_avail_chunks over the round's verify randomness),
 * each with its MMR leaf hash and wire-form inclusion proof. One home for
 * `tx report-availability` and the daemon's report duty. */
#ifndef GD_PLUGIN_MEMBER_AVAIL_PROOF_H
#define GD_PLUGIN_MEMBER_AVAIL_PROOF_H

#include <stdint.h>

#include "chain/wire/diloco_msg.h"
#include "common/bytes.h"
#include "common/status.h"
#include "proofs/state_sample.h"
#include "trainer/payload.h"

/* The drawn chunks of p, read in place, with proofs from mmr, its
 * commitment (gd_payload_view_mmr; its leaves - 1 chunks, the count the
 * commitment states): chunks[i] points into wire[i] (both arrays of
 * GD_DILOCO_AVAIL_CHUNKS_MAX, wire zeroed by the caller and freed by it). */
gd_status gd_avail_prove(gd_payload_view *p, const gd_mmr *mmr,
                         const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                         const char *reporter, uint32_t want, gd_diloco_chunk_proof *chunks,
                         gd_buf *wire, uint32_t *n) GD_MUST_CHECK;

/* A report's state sample (proofs/state_sample.h), built in two steps
 * around the fetch of the drawn chunk: begin reads the target's transcript
 * file (checked against the committed root) and says which chunk of which
 * leaf to fetch; finish takes the chunk as served (four arrays, four
 * length-prefixed proofs, plugin/member/state_index.h) and keeps the drawn
 * array's leaf and proof, checked as the chain will check them, so a
 * reporter never pays a fee for a sample the chain refuses. `proof` then
 * points into this struct. Zero-initialise; free with _free. */
typedef struct gd_avail_state {
    gd_state_sample sample;
    uint32_t chunk; /* of leaf sample.leaf, array sample.array */
    uint8_t descriptor[GD_WORKER_DESC_BYTES];
    uint8_t chunk_leaf[GD_DILOCO_HASH_LEN];
    gd_buf descriptor_proof, chunk_proof;
    gd_state_sample_proof proof;
} gd_avail_state;

gd_status gd_avail_state_begin(gd_avail_state *a, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                               const char *target, const char *reporter,
                               const uint8_t transcript_root[GD_DILOCO_HASH_LEN],
                               uint32_t segments, const uint8_t *transcript,
                               size_t transcript_len) GD_MUST_CHECK;
gd_status gd_avail_state_finish(gd_avail_state *a,
                                const uint8_t transcript_root[GD_DILOCO_HASH_LEN],
                                uint32_t segments, const gd_buf *body,
                                const gd_buf *proofs) GD_MUST_CHECK;
void gd_avail_state_free(gd_avail_state *a);

#endif
