/* The host memory a member's round uses beside the trainer's buffers, and
 * what its memory budget (node.yaml `memory_budget`, `run --memory-budget`)
 * decides (plugin/member/member_internal.h, docs/node.md "Memory").
 *
 * Two things may stay out of memory at the cost of time, and the budget
 * says which do, in this order:
 *   - the start-state writer's staging copy (16 bytes a parameter): segment
 *     starts written behind training, or in the foreground from the
 *     trainer a window at a time without one;
 *   - the aggregated G' (8 bytes a parameter): the aggregate writes it to
 *     its file a window at a time either way; kept, it is also copied to
 *     memory, else it is read back (after G is let go) when its round opens.
 * Either way the bits are the same. The worker's state lives in the
 * trainer while it trains and in its round's files between rounds (read
 * back a window at a time as the next round loads it, the residual
 * whenever a window of it is needed); Δ is made and encoded a window at a
 * time, from the round's start as the node holds it (G, borrowed; an
 * overlapped start is made for the round). What a round still holds
 * whatever the budget is its floor: G (8 bytes a parameter).
 * A budget under the floor is said once, in the log; the round goes on. */
#include "plugin/member/member_memory.h"

#include <inttypes.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

#define GD_MEMORY_FLOOR_PER_PARAM 8
#define GD_MEMORY_STATE_PER_PARAM 16
#define GD_MEMORY_GLOBAL_PER_PARAM 8

gd_memory_choices gd_memory_choose(uint64_t budget, uint64_t params) {
    uint64_t floor = GD_MEMORY_FLOOR_PER_PARAM * params;
    uint64_t state = GD_MEMORY_STATE_PER_PARAM * params;
    return (gd_memory_choices){
        .background_starts = budget == 0 || budget >= floor + state,
        .keep_next = budget == 0 ||
                     budget >= floor + state + GD_MEMORY_GLOBAL_PER_PARAM * params,
        .floor_bytes = floor,
        .under_floor = budget != 0 && budget < floor,
    };
}

void gd_member_set_memory_budget(gd_member *n, uint64_t bytes) {
    n->o.memory_budget = bytes;
    n->memory_floor_said = n->memory_planned = false;
}

void gd_member_memory_plan(gd_member *n) {
    uint64_t budget = n->o.memory_budget;
    gd_memory_choices c = gd_memory_choose(budget, n->engine.n);
    if (c.under_floor && !n->memory_floor_said) {
        GD_LOG_WARN("node", "memory_budget %.1f MiB is under what a round of this model "
                            "still holds in memory, %.1f MiB (8 bytes a parameter); the "
                            "round goes on above the budget",
                    (double)budget / (1 << 20), (double)c.floor_bytes / (1 << 20));
        n->memory_floor_said = true;
    }
    if (!n->memory_planned || c.background_starts != n->starts.background ||
        c.keep_next != n->keep_next)
        GD_LOG_INFO("node", "memory_budget %s: segment starts written %s, an aggregated G %s",
                    budget ? "set" : "none",
                    c.background_starts ? "behind training" : "in the foreground",
                    c.keep_next ? "kept in memory" : "read back from its file");
    n->memory_planned = true;
    n->starts.background = c.background_starts;
    n->keep_next = c.keep_next;
}
