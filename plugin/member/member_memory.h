/* What a memory budget lets a round keep in host memory beside the
 * trainer's buffers (docs/node.md, "Memory"): one rule for the member and
 * gd-bench-round. Whatever it decides, the bits are the same. */
#ifndef GD_PLUGIN_MEMBER_MEMBER_MEMORY_H
#define GD_PLUGIN_MEMBER_MEMBER_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "trainer/codec.h"

typedef struct gd_memory_choices {
    bool background_starts; /* segment starts written behind training (a 16 B/param copy) */
    bool keep_params;       /* the round's start in memory (G's params, or with overlap
                               S_r), not only in a file (4 B/param) */
    bool keep_next;         /* G's momentum and an aggregated G' kept in memory, not only
                               in their files (12 B/param) */
    uint64_t floor_bytes;   /* what a round holds whatever the budget: a window of Δ
                               as it is made and encoded */
    bool under_floor;       /* the budget is below it */
} gd_memory_choices;

/* The choices for a round of `params` parameters whose floor is
 * floor_bytes, under `budget` bytes (0: no limit): the staging copy first,
 * then the round's start, then G's momentum and G'. */
gd_memory_choices gd_memory_choose(uint64_t budget, uint64_t params, uint64_t floor_bytes);

/* What a round of params values in chunks of chunk_elems holds whatever
 * the budget, with codec (gd_memory_choose's floor): the window the
 * pseudo-gradient is made and encoded in (trainer/diloco.c, six arrays of
 * it) and that window's encoded chunks, on their way to the payload's
 * file. It does not grow with the model past a window. */
uint64_t gd_memory_floor_bytes(const gd_codec *codec, uint64_t params, uint32_t chunk_elems);

#endif
