/* What a memory budget lets a round keep in host memory beside the
 * trainer's buffers (docs/node.md, "Memory"): one rule for the member and
 * gd-bench-round. Whatever it decides, the bits are the same. */
#ifndef GD_PLUGIN_MEMBER_MEMBER_MEMORY_H
#define GD_PLUGIN_MEMBER_MEMBER_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gd_memory_choices {
    bool background_starts; /* segment starts written behind training (a 16 B/param copy) */
    bool keep_next;         /* an aggregated G' kept in memory, not only stored (8 B/param) */
    uint64_t floor_bytes;   /* what a round holds whatever the budget (8 B/param) */
    bool under_floor;       /* the budget is below it */
} gd_memory_choices;

/* The choices for a round of `params` parameters under `budget` bytes
 * (0: no limit): the staging copy first, then G'. */
gd_memory_choices gd_memory_choose(uint64_t budget, uint64_t params);

#endif
