/* An availability report's proofs: the chunks the chain draws for a
 * reporter (gd_diloco_avail_chunks over the round's verify randomness),
 * each with its MMR leaf hash and wire-form inclusion proof. One home for
 * `tx report-availability` and the daemon's report duty. */
#ifndef GD_PLUGIN_AVAIL_PROOF_H
#define GD_PLUGIN_AVAIL_PROOF_H

#include <stdint.h>

#include "chain/diloco_msg.h"
#include "common/bytes.h"
#include "common/status.h"
#include "trainer/payload.h"

/* The drawn chunks of p (leaves - 1 of them, the count the commitment
 * states): chunks[i] points into wire[i] (both arrays of
 * GD_DILOCO_AVAIL_CHUNKS_MAX, wire zeroed by the caller and freed by it). */
gd_status gd_avail_prove(const gd_payload *p, uint32_t leaves,
                         const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                         const char *reporter, uint32_t want, gd_diloco_chunk_proof *chunks,
                         gd_buf *wire, uint32_t *n) GD_MUST_CHECK;

#endif
