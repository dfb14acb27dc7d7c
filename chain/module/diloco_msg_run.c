/* The DiLoCo module's messages of a run's membership and money: creating a
 * run with its pool (MsgCreateRun), joining with collateral (MsgJoinRun),
 * leaving (MsgLeaveRun) and claiming an epoch's rewards (MsgClaimRewards);
 * docs/protocol.md section 7. */
#include <string.h>

#include "chain/module/diloco_internal.h"
#include "chain/module/epochs.h"
#include "chain/wire/coin.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_spec.h"

/* A positive coin that fits 64 bits. */
static gd_status dl_coin_check(gd_ctx *ctx, const char *what,
                               const Cosmos__Base__V1beta1__Coin *c, uint64_t *amount) {
    uint64_t v = 0;
    if (c == NULL || c->denom == NULL || gd_denom_check(c->denom) != GD_OK ||
        dl_amount(&v, c->amount) != GD_OK || v == 0)
        return dl_fail(ctx, GD_DILOCO_ERR_INVALID, "%s must be a positive coin below 2^64", what);
    if (amount)
        *amount = v;
    return GD_OK;
}

/* ---- MsgCreateRun ------------------------------------------------------------------ */

DL_VALIDATE(dl_create_validate, Gonka__Diloco__V1__MsgCreateRun, authority,
            gd_diloco_msg_create_run_check)

gd_status dl_create_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgCreateRun *m = (const Gonka__Diloco__V1__MsgCreateRun *)msg;
    dl_params *params = NULL;
    uint64_t pool = 0, id = 1;
    gd_status s = dl_get_params(ctx, &params);
    if (s == GD_OK && strcmp(params->authority, m->authority) != 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNAUTHORIZED, "%s is not the module authority",
                    m->authority);
    if (s == GD_OK)
        s = dl_coin_check(ctx, "pool", m->pool, &pool);
    if (s == GD_OK && strcmp(m->pool->denom, m->spec->reward_per_epoch->denom) != 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "pool denom %s is not the run's %s",
                    m->pool->denom, m->spec->reward_per_epoch->denom);
    dl_key k;
    dl_key_init(&k, DL_NEXT_RUN);
    const uint8_t *v;
    size_t vlen;
    if (s == GD_OK) {
        gd_status g = gd_ctx_get(ctx, k.b, k.n, &v, &vlen);
        if (g == GD_OK && vlen == 8)
            id = dl_get_be64(v);
        else if (g != GD_ERR_NOT_FOUND)
            s = g == GD_OK ? gd_fail(GD_ERR_PARSE, "stored next run id is malformed") : g;
    }
    gd_epoch latest;
    gd_epoch_params ep;
    if (s == GD_OK)
        s = gd_epochs_get(ctx, &latest, &ep);
    /* Stateful, not ValidateBasic: the epoch clock is the chain's state. */
    if (s == GD_OK && gd_diloco_spec_epoch_check(m->spec, &ep) != GD_OK)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "%s", gd_error_detail());
    if (s == GD_OK)
        s = dl_pay_in(ctx, m->authority, m->pool->denom, pool);
    if (s == GD_OK) {
        dl_run run = GONKA__DILOCO__V1__RUN__INIT;
        char pool_text[24];
        dl_amount_str(pool_text, pool);
        run.id = id;
        run.creator = m->authority;
        run.spec = m->spec;
        run.state_hash = m->spec->initial_state_hash;
        run.pool = pool_text;
        run.next_settle_epoch = latest.index;
        s = dl_put_run(ctx, &run);
        uint8_t next[8];
        dl_put_be64(next, id + 1);
        if (s == GD_OK)
            s = gd_ctx_set(ctx, k.b, k.n, next, 8);
        char ids[24];
        dl_amount_str(ids, id);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_run_created", "run", ids, "creator",
                              m->authority, "pool", pool_text, NULL);
        Gonka__Diloco__V1__MsgCreateRunResponse r =
            GONKA__DILOCO__V1__MSG_CREATE_RUN_RESPONSE__INIT;
        r.run = id;
        if (s == GD_OK)
            s = dl_pack(response, &r);
    }
    dl_free(params);
    return s;
}

/* ---- MsgJoinRun ------------------------------------------------------------------------ */

DL_VALIDATE(dl_join_validate, Gonka__Diloco__V1__MsgJoinRun, participant,
            gd_diloco_msg_join_run_check)

gd_status dl_join_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg, gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgJoinRun *m = (const Gonka__Diloco__V1__MsgJoinRun *)msg;
    dl_run *run = NULL;
    dl_member *old = NULL;
    uint64_t amount = 0, min = 0;
    gd_status s = dl_get_run(ctx, &run, m->run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)m->run);
    if (s == GD_OK) {
        gd_status g = dl_get_member(ctx, &old, m->run, m->participant);
        if (g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_ALREADY_MEMBER, "%s is already a member of run %llu",
                        m->participant, (unsigned long long)m->run);
        else if (g != GD_ERR_NOT_FOUND)
            s = g;
    }
    /* The run fixes the classes it accepts: a class no one else declares
     * would get no checks (docs/verification.md). */
    if (s == GD_OK && !dl_has_str(run->spec->hw_classes, run->spec->n_hw_classes, m->hw_class))
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "hardware class %s is not one of run %llu's",
                    m->hw_class, (unsigned long long)m->run);
    size_t count = 0;
    dl_key mk;
    dl_key_init(&mk, DL_MEMBER);
    dl_key_u64(&mk, m->run);
    if (s == GD_OK)
        s = dl_count_prefix(ctx->kv, &mk, &count);
    if (s == GD_OK && count >= run->spec->max_members)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "run %llu has its %u members",
                    (unsigned long long)m->run, (unsigned)run->spec->max_members);
    if (s == GD_OK)
        s = dl_coin_check(ctx, "collateral", m->collateral, &amount);
    if (s == GD_OK && (dl_amount(&min, run->spec->min_collateral->amount) != GD_OK ||
                       strcmp(m->collateral->denom, dl_denom(run)) != 0 || amount < min))
        s = dl_fail(ctx, GD_DILOCO_ERR_COLLATERAL, "collateral must be at least %s%s",
                    run->spec->min_collateral->amount, dl_denom(run));
    /* Ranks are handed out once, in join order, and never reused: a later
     * member cannot take over an earlier one's data stream. */
    if (s == GD_OK && run->next_rank == UINT32_MAX)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "run %llu has no ranks left",
                    (unsigned long long)m->run);
    if (s == GD_OK)
        s = dl_pay_in(ctx, m->participant, m->collateral->denom, amount);
    if (s == GD_OK) {
        dl_member mem = GONKA__DILOCO__V1__MEMBER__INIT;
        char amount_text[24], rank_text[24];
        dl_amount_str(amount_text, amount);
        dl_amount_str(rank_text, run->next_rank);
        mem.run = m->run;
        mem.address = m->participant;
        mem.artifact_url = m->artifact_url;
        mem.hw_class = m->hw_class;
        mem.collateral = amount_text;
        mem.joined_height = ctx->height;
        mem.rank = run->next_rank++;
        s = dl_put_member(ctx, &mem);
        if (s == GD_OK)
            s = dl_put_run(ctx, run);
        char rs[24];
        dl_amount_str(rs, m->run);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_joined", "run", rs, "participant",
                              m->participant, "hw_class", m->hw_class, "collateral",
                              amount_text, "rank", rank_text, NULL);
        Gonka__Diloco__V1__MsgJoinRunResponse r = GONKA__DILOCO__V1__MSG_JOIN_RUN_RESPONSE__INIT;
        r.rank = mem.rank;
        if (s == GD_OK)
            s = dl_pack(response, &r);
    }
    dl_free(old);
    dl_free(run);
    return s;
}

/* ---- MsgLeaveRun -------------------------------------------------------------------------------- */

DL_VALIDATE(dl_leave_validate, Gonka__Diloco__V1__MsgLeaveRun, participant,
            gd_diloco_msg_leave_run_check)

gd_status dl_leave_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                           gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgLeaveRun *m = (const Gonka__Diloco__V1__MsgLeaveRun *)msg;
    dl_run *run = NULL;
    dl_member *mem = NULL;
    dl_round *round = NULL;
    gd_status s = dl_get_run(ctx, &run, m->run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)m->run);
    if (s == GD_OK)
        s = dl_run_member(ctx, &mem, m->run, m->participant);
    /* Its collateral stays bonded while a live round holds it (it can
     * still be slashed for that round); after that it is paid back. */
    uint64_t held = 0;
    if (s == GD_OK && run->next_round > 0) {
        gd_status g = dl_get_round(ctx, &round, m->run, run->next_round - 1);
        if (g == GD_OK && !dl_round_over(round))
            g = dl_member_weight(ctx, m->run, round->index, m->participant, &held);
        s = g == GD_ERR_NOT_FOUND ? GD_OK : g;
    }
    if (s == GD_OK && held > 0) {
        mem->leaving = true;
        s = dl_put_member(ctx, mem);
        char rs[24];
        dl_amount_str(rs, m->run);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_leaving", "run", rs, "participant",
                              m->participant, NULL);
    } else if (s == GD_OK) {
        s = dl_release(ctx, run, mem, "left");
    }
    response->len = 0;
    dl_free(round);
    dl_free(mem);
    dl_free(run);
    return s;
}

/* ---- MsgClaimRewards --------------------------------------------------------------------- */

DL_VALIDATE(dl_claim_validate, Gonka__Diloco__V1__MsgClaimRewards, claimer,
            gd_diloco_msg_claim_rewards_check)

gd_status dl_claim_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                           gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgClaimRewards *m = (const Gonka__Diloco__V1__MsgClaimRewards *)msg;
    gd_epoch latest;
    gd_epoch_params ep;
    dl_run *run = NULL;
    dl_settle *st = NULL;
    uint64_t amount = 0;
    gd_status s = dl_get_run(ctx, &run, m->run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)m->run);
    if (s == GD_OK)
        s = gd_epochs_get(ctx, &latest, &ep);
    if (s == GD_OK && (latest.index == 0 || m->epoch != latest.index - 1))
        s = dl_fail(ctx, GD_DILOCO_ERR_EPOCH, "only the previous epoch can be claimed (epoch "
                                              "%llu is current)",
                    (unsigned long long)latest.index);
    if (s == GD_OK) {
        gd_epoch_stages st_h;
        gd_epoch_stages_compute(&st_h, &latest, &ep);
        if (ctx->height < st_h.claim_money)
            s = dl_fail(ctx, GD_DILOCO_ERR_CLAIM_STAGE,
                        "claims open at the claim-money stage, height %lld",
                        (long long)st_h.claim_money);
    }
    dl_key k;
    dl_key_settle(&k, m->run, m->epoch, m->claimer);
    if (s == GD_OK) {
        gd_status g = dl_load(ctx, &k, (void **)&st,
                              &gonka__diloco__v1__settle_amount__descriptor);
        if (g == GD_ERR_NOT_FOUND)
            s = dl_fail(ctx, GD_DILOCO_ERR_NOTHING, "nothing settled to %s for epoch %llu",
                        m->claimer, (unsigned long long)m->epoch);
        else if (g == GD_OK && st->forfeited)
            s = dl_fail(ctx, GD_DILOCO_ERR_NOTHING,
                        "%s forfeited epoch %llu: a cheat slash in one of its rounds",
                        m->claimer, (unsigned long long)m->epoch);
        else if (g == GD_OK && st->claimed)
            s = dl_fail(ctx, GD_DILOCO_ERR_CLAIMED, "%s already claimed epoch %llu", m->claimer,
                        (unsigned long long)m->epoch);
        else
            s = g;
    }
    if (s == GD_OK)
        s = dl_amount(&amount, st->amount);
    if (s == GD_OK)
        s = dl_pay_out(ctx, m->claimer, dl_denom(run), amount);
    if (s == GD_OK) {
        st->claimed = true;
        s = dl_save(ctx, &k, st);
    }
    if (s == GD_OK) {
        char rs[24], es[24];
        dl_amount_str(rs, m->run);
        dl_amount_str(es, m->epoch);
        s = gd_events_add(ctx->events, "diloco_claimed", "run", rs, "epoch", es, "claimer",
                          m->claimer, "amount", st->amount, NULL);
    }
    if (s == GD_OK) {
        Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
        coin.denom = (char *)dl_denom(run);
        coin.amount = st->amount;
        Gonka__Diloco__V1__MsgClaimRewardsResponse r =
            GONKA__DILOCO__V1__MSG_CLAIM_REWARDS_RESPONSE__INIT;
        r.amount = &coin;
        s = dl_pack(response, &r);
    }
    dl_free(st);
    dl_free(run);
    return s;
}
