/* The state sample of an availability report: one chunk of one array of one
 * of the target's segment-start states, drawn per (target, reporter) from
 * the round's verify randomness. A report that carries it shows the chain
 * that the target served its states in the verify window, when its
 * validators had to fetch them; the module tallies these samples like the
 * payload's chunks and a check uses the tally to tell a late server from a
 * validator that did not try (docs/protocol.md, "Availability").
 *
 * The draw (gd_state_sample_draw) is in proofs/diloco_rules.h with the
 * round's other draws; this file checks a sample's proof. */
#ifndef GD_PROOFS_STATE_SAMPLE_H
#define GD_PROOFS_STATE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proofs/diloco_rules.h"
#include "proofs/mmr.h"
#include "proofs/state_desc.h"

/* The drawn chunk of an array of d's size. */
uint32_t gd_state_sample_chunk(const gd_state_sample *s, const gd_worker_desc *d);

/* What a report carries for its sample, as received. */
typedef struct gd_state_sample_proof {
    const uint8_t *descriptor; /* the leaf's worker descriptor */
    size_t descriptor_len;
    const uint8_t *descriptor_proof; /* its transcript proof, proofs/mmr.h wire form */
    size_t descriptor_proof_len;
    const uint8_t *chunk_leaf; /* gd_mmr_hash_leaf(chunk, the chunk's bytes) */
    size_t chunk_leaf_len;
    const uint8_t *chunk_proof; /* under the array's sub-root, wire form */
    size_t chunk_proof_len;
} gd_state_sample_proof;

/* GD_OK if p proves sample s of the commitment (transcript_root over
 * segment_count + 2 leaves): the descriptor decodes strictly, is a
 * training-stage state, sits at leaf s->leaf under the root, and the chunk
 * leaf sits at the drawn chunk under the drawn array's sub-root; *chunk
 * (may be NULL) receives that chunk. GD_ERR_INVALID or GD_ERR_PARSE saying
 * which part fails. */
gd_status gd_state_sample_verify(const gd_state_sample *s,
                                 const uint8_t transcript_root[GD_DILOCO_HASH_LEN],
                                 uint32_t segment_count, const gd_state_sample_proof *p,
                                 uint32_t *chunk) GD_MUST_CHECK;

#endif
