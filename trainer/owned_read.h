/* The trainer's state read by the ranks that own it (docs/trainer.md,
 * "Segment starts"): at a segment boundary each rank copies its own shard
 * of the parameters and moments from its device into host memory its
 * backend moves bytes to fastest (pinned on a GPU), all ranks at once on
 * threads of their own, while the trainer's pool hashes every whole chunk
 * of what they brought into its leaf; the roots come from the leaves in
 * chunk order, so they are the bits gd_values_root gives whatever the
 * number of ranks. Each window read is handed on (to a segment start's
 * file) in the same pass, so the state is read once.
 *
 * Chunk c is read by the rank owning its first value; the few values of a
 * chunk that cross into the next shard are read after the ranks' copies,
 * from their owners, on the calling thread. */
#ifndef GD_TRAINER_OWNED_READ_H
#define GD_TRAINER_OWNED_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "proofs/mmr.h"
#include "trainer/train.h"

/* Where each window goes besides its hashes: [lo, lo + count) of the
 * parameters and both moments, each value once, in no set order (a window
 * of each rank in turn), on the calling thread. With place (optional) the
 * sink says where array a's window (0 params, 1 exp_avg, 2 exp_avg_sq)
 * goes before it is read, and the ranks copy into it straight from their
 * memory; write then gets those places. */
typedef struct gd_owned_sink {
    gd_status (*write)(void *ctx, const float *params, const float *exp_avg,
                       const float *exp_avg_sq, size_t lo, size_t count);
    float *(*place)(void *ctx, int array, size_t lo, size_t count);
    void *ctx;
} gd_owned_sink;

/* Whether gd_trainer_read_owned takes a state of n values in chunks of
 * chunk_elems: whole chunks fit its windows (at most 2^22 values a chunk)
 * and the leaves it keeps (96 bytes a chunk) stay under 24 MiB. */
bool gd_trainer_read_owned_fits(size_t n, uint32_t chunk_elems);

/* The roots of the trainer's parameters, exp_avg and exp_avg_sq in chunks
 * of chunk_elems (roots[0..2]; NULL: the windows only, hashed by whoever
 * `to` gives them to), every window also handed to `to` when it is not
 * NULL. GD_ERR_INVALID unless gd_trainer_read_owned_fits; GD_ERR_NOMEM
 * without the windows' memory; a sink's failure is returned. */
gd_status gd_trainer_read_owned(gd_trainer *t, uint8_t roots[3][GD_MMR_HASH_LEN],
                                uint32_t chunk_elems, const gd_owned_sink *to) GD_MUST_CHECK;

#endif
