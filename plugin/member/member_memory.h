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
    bool keep_params;       /* G's params in memory, not only in G's file (4 B/param) */
    bool keep_next;         /* G's momentum and an aggregated G' kept in memory, not only
                               in their files (12 B/param) */
    uint64_t floor_bytes;   /* what a round holds whatever the budget: its own payload */
    bool under_floor;       /* the budget is below it */
} gd_memory_choices;

/* The choices for a round of `params` parameters whose payload is at most
 * payload_bytes, under `budget` bytes (0: no limit): the staging copy
 * first, then G's params, then G's momentum and G'. */
gd_memory_choices gd_memory_choose(uint64_t budget, uint64_t params, uint64_t payload_bytes);

/* The most bytes a payload of params values in chunks of chunk_elems takes
 * with codec (what gd_memory_choose's floor is). */
uint64_t gd_memory_payload_bytes(const gd_codec *codec, uint64_t params,
                                 uint32_t chunk_elems);

#endif
