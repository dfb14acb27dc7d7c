/* State descriptors: the fixed-size header that names a state (run, round,
 * worker, ...) and holds one sub-root per array; a state's hash is SHA-256
 * of its descriptor. The layout is in trainer/state.h's comment and
 * docs/protocol.md section 2. The trainer builds descriptors from arrays;
 * the chain module only decodes one (an availability report's state
 * sample), so the codec lives here, below both, with one spelling.
 * Decoding is strict: every size from outside is bounded before use. */
#ifndef GD_PROOFS_STATE_DESC_H
#define GD_PROOFS_STATE_DESC_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "proofs/mmr.h"

#define GD_STATE_VERSION 2
#define GD_WORKER_DESC_BYTES 312
#define GD_GLOBAL_DESC_BYTES 128
#define GD_STATE_ADDRESS_MAX 64
/* The largest state a descriptor may describe (2^40 values: far above the
 * models a host trains), so sizes from outside are bounded before use. */
#define GD_STATE_VALUES_MAX ((uint64_t)1 << 40)
#define GD_STATE_CHUNK_ELEMS_MAX ((uint32_t)1 << 28)

/* Where in a round a worker state was taken. */
typedef enum gd_state_stage {
    GD_STAGE_TRAIN = 0,   /* transcript leaves 0 .. S: before/after each segment */
    GD_STAGE_ENCODED = 1, /* the last leaf: after encoding, with the new residual */
} gd_state_stage;

/* What every worker state of a run carries: fixed by the run's spec. */
typedef struct gd_state_tag {
    uint64_t run;
    uint8_t spec_digest[32];   /* the RunSpec's canonical digest */
    uint8_t layout_digest[32]; /* trainer/layout.h */
    uint32_t chunk_elems;      /* the payload chunk size */
} gd_state_tag;

/* --- worker descriptors --------------------------------------------------------- */

typedef struct gd_worker_desc {
    gd_state_tag tag;
    uint64_t round;
    char address[GD_STATE_ADDRESS_MAX + 1];
    uint32_t rank;
    gd_state_stage stage;
    uint64_t step;
    uint64_t n;
    uint8_t params_root[GD_MMR_HASH_LEN];
    uint8_t exp_avg_root[GD_MMR_HASH_LEN];
    uint8_t exp_avg_sq_root[GD_MMR_HASH_LEN];
    uint8_t residual_root[GD_MMR_HASH_LEN];
} gd_worker_desc;

void gd_worker_desc_encode(const gd_worker_desc *d, uint8_t out[GD_WORKER_DESC_BYTES]);
/* Strict: magic, version, stage, address spelling, n in 1..GD_STATE_VALUES_MAX,
 * chunk_elems in 1..2^28, zero padding. GD_ERR_PARSE naming the field. */
gd_status gd_worker_desc_decode(gd_worker_desc *d, const uint8_t *in,
                                size_t len) GD_MUST_CHECK;
/* The state hash: SHA-256 of the encoded descriptor (a transcript leaf). */
void gd_worker_desc_hash(const gd_worker_desc *d, uint8_t out[GD_MMR_HASH_LEN]);

/* The sub-root of array `array` of d (0 params, 1 exp_avg, 2 exp_avg_sq,
 * 3 residual), or NULL for another index. */
const uint8_t *gd_worker_desc_root(const gd_worker_desc *d, uint32_t array);

/* --- global descriptors --------------------------------------------------------- */

typedef struct gd_global_desc {
    uint8_t layout_digest[32];
    uint64_t round;
    uint64_t n;
    uint32_t chunk_elems;
    uint8_t params_root[GD_MMR_HASH_LEN];
    uint8_t momentum_root[GD_MMR_HASH_LEN];
} gd_global_desc;

void gd_global_desc_encode(const gd_global_desc *d, uint8_t out[GD_GLOBAL_DESC_BYTES]);
gd_status gd_global_desc_decode(gd_global_desc *d, const uint8_t *in,
                                size_t len) GD_MUST_CHECK;
void gd_global_desc_hash(const gd_global_desc *d, uint8_t out[GD_MMR_HASH_LEN]);

/* The chunk count of an array of n values in chunks of chunk_elems (0 if
 * chunk_elems is 0 or the count exceeds GD_MMR_MAX_LEAVES). */
uint32_t gd_values_chunks(size_t n, uint32_t chunk_elems);

#endif
