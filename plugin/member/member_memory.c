/* The host memory a member's round uses beside the trainer's buffers, and
 * what its memory budget (node.yaml `memory_budget`, `run --memory-budget`)
 * decides (plugin/member/member_internal.h, docs/node.md "Memory").
 *
 * Three things may stay out of memory at the cost of time, and the budget
 * keeps them in this order:
 *   - the start-state writer's staging copy (16 bytes a parameter): segment
 *     starts written behind training, or in the foreground from the
 *     trainer a window at a time without one;
 *   - the round's start (4 bytes a parameter): G's params, else they
 *     stay in G's file (trainer/global_backing.c), read a window at a time
 *     as the trainer loads the round's start and as Δ is made, a chunk at
 *     a time for a check, each chunk checked against its leaf as it is
 *     read; with overlap S_r = G_{r-1} - Δ̂, else made into a file of its
 *     own that has no name and read back the same way;
 *   - G's momentum and the aggregated G' (12 bytes a parameter): the
 *     aggregate writes G' to its file a window at a time either way; kept,
 *     it is also copied to memory, else it is read back (after G is let
 *     go) when its round opens; and G's momentum, which only the aggregate
 *     reads, stays in G's file like the params.
 * Either way the bits are the same. The worker's state lives in the
 * trainer while it trains and in its round's files between rounds (read
 * back a window at a time as the next round loads it, the residual
 * whenever a window of it is needed); Δ is made and encoded a window at a
 * time, each window's chunks appended to the payload's file as they are
 * encoded. What a round still holds whatever the budget is its floor:
 * that window (tens of MiB, whatever the model's size).
 * A budget under the floor is said once, in the log; the round goes on. */
#include "plugin/member/member_memory.h"

#include <inttypes.h>
#include <stdio.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

#define GD_MEMORY_STATE_PER_PARAM 16  /* the staging copy */
#define GD_MEMORY_PARAMS_PER_PARAM 4  /* the round's start */
#define GD_MEMORY_GLOBAL_PER_PARAM 12 /* G's momentum and G' */
#define GD_MEMORY_WINDOW_ARRAYS 6     /* Δ's window: params, moments, residual, Δ, start */

uint64_t gd_memory_floor_bytes(const gd_codec *codec, uint64_t params, uint32_t chunk_elems) {
    if (chunk_elems == 0 || params == 0)
        return 0;
    uint64_t w = gd_values_window_whole(chunk_elems, (size_t)params);
    uint64_t chunks = (w + chunk_elems - 1) / chunk_elems;
    uint64_t per_chunk = gd_codec_chunk_bound(codec, w < chunk_elems ? (size_t)w : chunk_elems);
    return GD_MEMORY_WINDOW_ARRAYS * sizeof(float) * w + chunks * per_chunk;
}

gd_memory_choices gd_memory_choose(uint64_t budget, uint64_t params, uint64_t floor_bytes) {
    uint64_t floor = floor_bytes;
    uint64_t starts = floor + GD_MEMORY_STATE_PER_PARAM * params;
    uint64_t g_params = starts + GD_MEMORY_PARAMS_PER_PARAM * params;
    uint64_t all = g_params + GD_MEMORY_GLOBAL_PER_PARAM * params;
    return (gd_memory_choices){
        .background_starts = budget == 0 || budget >= starts,
        .keep_params = budget == 0 || budget >= g_params,
        .keep_next = budget == 0 || budget >= all,
        .floor_bytes = floor,
        .under_floor = budget != 0 && budget < floor,
    };
}

void gd_member_set_memory_budget(gd_member *n, uint64_t bytes) {
    n->o.memory_budget = bytes;
    n->memory_floor_said = n->memory_planned = false;
}

/* bytes as "12.5 MiB", or in KiB below a MiB. */
static void gd_memory_text(char *out, size_t cap, uint64_t bytes) {
    if (bytes < (1u << 20))
        snprintf(out, cap, "%.1f KiB", (double)bytes / 1024);
    else
        snprintf(out, cap, "%.1f MiB", (double)bytes / (1 << 20));
}

void gd_member_memory_plan(gd_member *n) {
    uint64_t budget = n->o.memory_budget;
    const gd_diloco_config *dc = &n->engine.rc.diloco;
    gd_memory_choices c = gd_memory_choose(
        budget, n->engine.n, gd_memory_floor_bytes(&dc->codec, n->engine.n, dc->chunk_elems));
    if (c.under_floor && !n->memory_floor_said) {
        char budget_text[32], floor_text[32];
        gd_memory_text(budget_text, sizeof budget_text, budget);
        gd_memory_text(floor_text, sizeof floor_text, c.floor_bytes);
        GD_LOG_WARN("node", "memory_budget %s is under what a round of this model still "
                            "holds in memory, %s (a window of its pseudo-gradient as it is "
                            "made and encoded); the round goes on above the budget",
                    budget_text, floor_text);
        n->memory_floor_said = true;
    }
    if (!n->memory_planned || c.background_starts != n->starts.background ||
        c.keep_params != n->keep_params || c.keep_next != n->keep_next)
        GD_LOG_INFO("node", "memory_budget %s: segment starts written %s, a round's start "
                            "(G's params, or an overlapped start) %s, G's momentum and an "
                            "aggregated G %s",
                    budget ? "set" : "none",
                    c.background_starts ? "behind training" : "in the foreground",
                    c.keep_params ? "in memory" : "read from its file",
                    c.keep_next ? "kept in memory" : "read from their files");
    n->memory_planned = true;
    n->starts.background = c.background_starts;
    n->keep_params = c.keep_params;
    n->keep_next = c.keep_next;
}
