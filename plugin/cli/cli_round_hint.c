/* The "no round yet" hint (plugin/cli/cli_round_hint.h). */
#include "plugin/cli/cli_round_hint.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/wire/diloco_spec.h"

bool gd_cli_is_unknown_round(const gd_abci_code *code) {
    return code->code == GD_CLI_DILOCO_UNKNOWN_ROUND && strcmp(code->codespace, "diloco") == 0;
}

/* When round `round`, the run's next, can open. */
static void gd_round_hint_next(char *out, size_t cap, const Gonka__Diloco__V1__QueryRunResponse *r,
                               const gd_epoch_info *info, uint64_t run, uint64_t round) {
    int64_t blocks = gd_diloco_spec_round_blocks(r->run->spec);
    int64_t from = info->block_height + 1;
    size_t n = 0;
    const Gonka__Diloco__V1__Round *cur = r->current_round;
    if (cur != NULL && cur->windows != NULL && cur->windows->end > info->block_height) {
        n += (size_t)snprintf(out + n, cap - n,
                              "round %" PRIu64 " runs until height %" PRId64 "; ", cur->index,
                              cur->windows->end);
        if (cur->windows->end > from)
            from = cur->windows->end;
    }
    if (n < cap && r->n_next_sealed == 0)
        n += (size_t)snprintf(out + n, cap - n,
                              "no member has sealed a secret for round %" PRIu64
                              " (tx join-run, then tx randomness --run %" PRIu64
                              " --round %" PRIu64 " --seal-only), and a round opens only with "
                              "members who did; ",
                              round, run, round);
    int64_t at = gd_diloco_next_open_height(&info->epoch, &info->params, from, blocks);
    if (n >= cap)
        return;
    gd_epoch_phase phase = gd_epoch_phase_at(&info->epoch, &info->params, info->block_height);
    if (at < 0)
        snprintf(out + n, cap - n,
                 "its %" PRId64 " blocks never fit an epoch's Inference phase, so it never "
                 "opens",
                 blocks);
    else
        snprintf(out + n, cap - n,
                 "rounds open in an epoch's Inference phase when all %" PRId64
                 " blocks of their windows end before the next PoC: round %" PRIu64
                 " can open at height %" PRId64 " (now %" PRId64 ", epoch %" PRIu64
                 ", %s); wait with 'gonka-diloco query round %" PRIu64 " %" PRIu64
                 " --wait-window train' or watch 'gonka-diloco query run %" PRIu64 "'",
                 blocks, round, at, info->block_height, info->epoch.index,
                 gd_epoch_phase_name(phase), run, round, run);
}

void gd_cli_round_hint(gd_rpc *rpc, char *out, size_t cap, uint64_t run, uint64_t round) {
    if (cap == 0)
        return;
    out[0] = '\0';
    Gonka__Diloco__V1__QueryRunResponse *r = NULL;
    gd_epoch_info info;
    if (gd_diloco_query_run(rpc, &r, run, NULL) != GD_OK ||
        gd_query_epoch_info(rpc, &info, NULL) != GD_OK) {
        /* The hint is extra: without it the error still stands. */
        if (r != NULL)
            protobuf_c_message_free_unpacked(&r->base, NULL);
        gd_error_clear();
        return;
    }
    uint64_t next = r->run->next_round;
    if (round + 1 < next || (round + 1 == next && r->current_round == NULL))
        snprintf(out, cap,
                 "round %" PRIu64 " is over (run %" PRIu64 " is at round %" PRIu64
                 "; settled rounds are pruned)",
                 round, run, next - 1);
    else if (round + 1 == next)
        snprintf(out, cap, "round %" PRIu64 " is run %" PRIu64 "'s current round", round, run);
    else if (round > next)
        snprintf(out, cap,
                 "run %" PRIu64 "'s next round is %" PRIu64 ", and rounds open one at a time",
                 run, next);
    else
        gd_round_hint_next(out, cap, r, &info, run, round);
    protobuf_c_message_free_unpacked(&r->base, NULL);
}
