/* The host memory a member's round uses beside the trainer's buffers, and
 * what its memory budget (node.yaml `memory_budget`, `run --memory-budget`)
 * decides (plugin/member/member_internal.h, docs/node.md "Memory").
 *
 * Three things may stay out of memory at the cost of time, and the budget
 * says which do, in this order:
 *   - the start-state writer's staging copy (16 bytes a parameter): segment
 *     starts written behind training, or in the foreground without one;
 *   - the worker's state between rounds (16 bytes a parameter): kept, or
 *     read back from the round's post-encoding state file when the next
 *     round starts (as after a restart);
 *   - the aggregated G' (8 bytes a parameter): the aggregate writes it to
 *     its file a window at a time either way; kept, it is also copied to
 *     memory, else it is read back (after G is let go) when its round opens.
 * Either way the bits are the same. What a round still holds whatever the
 * budget is its floor: the worker's state while it trains (16 bytes a
 * parameter), G (8) and the round's start (4); Δ is made and encoded a
 * window at a time.
 * A budget under the floor is said once, in the log; the round goes on. */
#include "plugin/member/member_memory.h"

#include <inttypes.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

#define GD_MEMORY_FLOOR_PER_PARAM 28
#define GD_MEMORY_STATE_PER_PARAM 16
#define GD_MEMORY_GLOBAL_PER_PARAM 8

gd_memory_choices gd_memory_choose(uint64_t budget, uint64_t params) {
    uint64_t floor = GD_MEMORY_FLOOR_PER_PARAM * params;
    uint64_t state = GD_MEMORY_STATE_PER_PARAM * params;
    return (gd_memory_choices){
        .background_starts = budget == 0 || budget >= floor + state,
        .keep_worker = budget == 0 || budget >= floor + 2 * state,
        .keep_next = budget == 0 ||
                     budget >= floor + 2 * state + GD_MEMORY_GLOBAL_PER_PARAM * params,
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
        GD_LOG_WARN("node", "memory_budget %" PRIu64 " MiB is under what a round of this "
                            "model still holds in memory, %" PRIu64 " MiB (28 bytes a "
                            "parameter); the round goes on above the budget",
                    budget >> 20, c.floor_bytes >> 20);
        n->memory_floor_said = true;
    }
    if (!n->memory_planned || c.background_starts != n->starts.background ||
        c.keep_worker != n->keep_worker || c.keep_next != n->keep_next)
        GD_LOG_INFO("node", "memory_budget %s: segment starts written %s, the worker's state "
                            "%s between rounds, an aggregated G %s",
                    budget ? "set" : "none",
                    c.background_starts ? "behind training" : "in the foreground",
                    c.keep_worker ? "kept in memory" : "read back from its file",
                    c.keep_next ? "kept in memory" : "read back from its file");
    n->memory_planned = true;
    n->starts.background = c.background_starts;
    n->keep_worker = c.keep_worker;
    n->keep_next = c.keep_next;
}
