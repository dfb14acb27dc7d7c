/* What the DiLoCo module's message handlers share: the signer, the shared
 * ValidateBasic step, the current round in its window, and the check of a
 * revealed answer against its seal. The handlers themselves are in
 * diloco_msg_run.c, diloco_msg_round.c and diloco_msg_check.c, one file per
 * family of messages; the router (chain/module/app.c) decodes each message
 * before they see it. */
#include <string.h>

#include "chain/module/diloco_internal.h"

static gd_status dl_address(gd_ctx *ctx, const char *what, const char *addr) {
    if (addr == NULL || gd_address_check_canonical(addr) != GD_OK)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS, "invalid %s: %s",
                           what, addr ? gd_error_detail() : "missing");
    return GD_OK;
}

gd_status dl_signer(gd_ctx *ctx, const char *addr, char *signer, size_t cap) {
    GD_TRY(dl_address(ctx, "signer address", addr));
    if (strlen(addr) >= cap)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS, "address too long");
    strcpy(signer, addr);
    return GD_OK;
}

gd_status dl_basic(gd_ctx *ctx, gd_status check) {
    if (check != GD_OK)
        return dl_fail(ctx, GD_DILOCO_ERR_INVALID, "%s", gd_error_detail());
    return GD_OK;
}

static const char *dl_window_name(Gonka__Diloco__V1__RoundPhase w) {
    /* Indexed by RoundPhase: the two reveal windows came last. */
    static const char *const names[] = {"none",    "train",  "commit",       "reveal",
                                        "verify",  "open",   "dispute",      "attest",
                                        "done",    "void",   "dispute_open", "attest_open"};
    return (unsigned)w < sizeof names / sizeof names[0] ? names[w] : "none";
}

gd_status dl_current(gd_ctx *ctx, uint64_t run_id, uint64_t round_id,
                     Gonka__Diloco__V1__RoundPhase want, dl_run **run, dl_round **round) {
    *run = NULL;
    *round = NULL;
    gd_status s = dl_get_run(ctx, run, run_id);
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                       (unsigned long long)run_id);
    GD_TRY(s);
    if ((*run)->next_round == 0 || round_id != (*run)->next_round - 1)
        return dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND, "round %llu is not run %llu's current "
                                                         "round",
                       (unsigned long long)round_id, (unsigned long long)run_id);
    s = dl_get_round(ctx, round, run_id, round_id);
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND, "round %llu does not exist",
                       (unsigned long long)round_id);
    GD_TRY(s);
    Gonka__Diloco__V1__RoundPhase at = dl_window_at(*round, ctx->height);
    if (at != want)
        return dl_fail(ctx, GD_DILOCO_ERR_WINDOW,
                       "height %lld is in round %llu's %s window, not its %s window",
                       (long long)ctx->height, (unsigned long long)round_id, dl_window_name(at),
                       dl_window_name(want));
    return GD_OK;
}

gd_status dl_check_reveal(gd_ctx *ctx, bool found, const ProtobufCBinaryData *stored_seal,
                          bool already, const uint8_t computed[GD_DILOCO_HASH_LEN],
                          const char *who, const char *what) {
    if (!found || stored_seal->len != GD_DILOCO_HASH_LEN)
        return dl_fail(ctx, GD_DILOCO_ERR_SEAL, "%s sealed no %s", who, what);
    if (already)
        return dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "%s already revealed its %s", who, what);
    if (memcmp(computed, stored_seal->data, GD_DILOCO_HASH_LEN) != 0)
        return dl_fail(ctx, GD_DILOCO_ERR_SEAL, "the revealed %s does not match %s's seal", what,
                       who);
    return GD_OK;
}
