/* The DiLoCo module's settlement: when Gonka's epoch advances, each run
 * pays its epoch reward to workers by accepted tokens, to validators by
 * credited checks and to attesters by the weight of their winning
 * attestations in the epoch's
 * DONE rounds, except to a member that paid a cheat slash in any round of
 * the epoch, which forfeits it; and burns what the epoch before settled and nobody claimed,
 * pruning that epoch's rounds (docs/protocol.md section 7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"

typedef struct dl_earner {
    char *address;
    bool cheated; /* paid a cheat slash in one of the epoch's rounds: forfeits the epoch */
    uint64_t tokens;
    uint32_t checks;
    uint32_t attestations;
    dl_u128 attest_weight; /* the attester's weight, summed over its winning attestations */
} dl_earner;

typedef struct dl_earners {
    dl_earner *items;
    size_t n;
} dl_earners;

static dl_earner *dl_earner_of(dl_earners *e, const char *addr) {
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->items[i].address, addr) == 0)
            return &e->items[i];
    dl_earner *grown = realloc(e->items, (e->n + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    e->items = grown;
    dl_earner *x = &grown[e->n];
    *x = (dl_earner){strdup(addr), false, 0, 0, 0, 0};
    if (x->address == NULL)
        return NULL;
    e->n++;
    return x;
}

static int dl_earner_cmp(const void *a, const void *b) {
    return gd_diloco_address_cmp(((const dl_earner *)a)->address,
                                 ((const dl_earner *)b)->address);
}

/* Accepted tokens and checks done in the run's DONE rounds of an epoch. */
static gd_status dl_collect(gd_ctx *ctx, const dl_run *run, uint64_t epoch, dl_earners *e) {
    dl_key k;
    dl_key_init(&k, DL_ROUND);
    dl_key_u64(&k, run->id);
    dl_list rounds;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &rounds, &gonka__diloco__v1__round__descriptor));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < rounds.n; i++) {
        const dl_round *r = rounds.items[i];
        if (r->epoch != epoch)
            continue;
        /* A cheat in any round of the epoch, DONE or VOID, forfeits it. */
        for (size_t j = 0; s == GD_OK && j < r->n_cheaters; j++) {
            dl_earner *x = dl_earner_of(e, r->cheaters[j]);
            if (x == NULL)
                s = gd_fail(GD_ERR_NOMEM, "out of memory");
            else
                x->cheated = true;
        }
        if (r->phase != PH(DONE))
            continue;
        for (size_t j = 0; s == GD_OK && j < r->n_aggregation_set; j++) {
            dl_commitment *c = NULL;
            s = dl_get_commitment(ctx, &c, r->run, r->index, r->aggregation_set[j]);
            dl_earner *x = s == GD_OK ? dl_earner_of(e, c->participant) : NULL;
            if (s == GD_OK && x == NULL)
                s = gd_fail(GD_ERR_NOMEM, "out of memory");
            /* Saturating: a record of the tokens, never a reason to halt. */
            if (s == GD_OK)
                x->tokens = x->tokens > UINT64_MAX - c->tokens ? UINT64_MAX
                                                               : x->tokens + c->tokens;
            dl_free(c);
        }
        dl_key vk;
        dl_round_prefix(&vk, DL_VERDICT, r);
        dl_list verdicts;
        if (s == GD_OK)
            s = dl_list_prefix(ctx->kv, &vk, &verdicts,
                               &gonka__diloco__v1__verdict_record__descriptor);
        else
            verdicts = (dl_list){NULL, 0};
        /* A check is paid when its outcome credited it (the winning side). */
        for (size_t j = 0; s == GD_OK && j < verdicts.n; j++) {
            const dl_verdict *v = verdicts.items[j];
            if (!v->credited)
                continue;
            dl_earner *x = dl_earner_of(e, v->validator);
            if (x == NULL)
                s = gd_fail(GD_ERR_NOMEM, "out of memory");
            else
                x->checks++;
        }
        dl_list_free(&verdicts);
        /* An attestation is paid when it revealed the winning hash. */
        dl_key ak;
        dl_round_prefix(&ak, DL_ATTEST, r);
        dl_list atts;
        if (s == GD_OK)
            s = dl_list_prefix(ctx->kv, &ak, &atts, &gonka__diloco__v1__attestation__descriptor);
        else
            atts = (dl_list){NULL, 0};
        for (size_t j = 0; s == GD_OK && j < atts.n; j++) {
            const dl_attestation *a = atts.items[j];
            if (a->next_state_hash.len != GD_DILOCO_HASH_LEN ||
                r->next_state_hash.len != GD_DILOCO_HASH_LEN ||
                memcmp(a->next_state_hash.data, r->next_state_hash.data, GD_DILOCO_HASH_LEN) != 0)
                continue;
            /* Paid by weight, not per identity: two identities splitting one
             * collateral earn what the one would. */
            uint64_t weight = 0;
            s = dl_member_weight(ctx, r->run, r->index, a->attester, &weight);
            dl_earner *x = s == GD_OK ? dl_earner_of(e, a->attester) : NULL;
            if (s == GD_OK && x == NULL)
                s = gd_fail(GD_ERR_NOMEM, "out of memory");
            else if (s == GD_OK) {
                x->attestations++;
                x->attest_weight += weight;
            }
        }
        dl_list_free(&atts);
    }
    dl_list_free(&rounds);
    return s;
}

/* Every record of one round (the round itself last): settled rounds are
 * pruned, and the events they emitted keep their history. */
static gd_status dl_prune_round(gd_ctx *ctx, const dl_round *r) {
    static const uint8_t kinds[] = {DL_COMMIT, DL_REPORT, DL_ASSIGN, DL_VERDICT,
                                    DL_ATTEST, DL_WEIGHT, DL_RANDOM};
    for (size_t i = 0; i < sizeof kinds; i++) {
        dl_key k;
        dl_round_prefix(&k, kinds[i], r);
        GD_TRY(dl_delete_prefix(ctx, &k));
    }
    dl_key k;
    dl_round_prefix(&k, DL_ROUND, r);
    return gd_ctx_delete(ctx, k.b, k.n);
}

/* The claim window of epoch is over once the next epoch settles: burns what
 * was settled for it and not claimed, and removes its settle amounts and
 * its rounds, which nothing reads any more. */
static gd_status dl_expire(gd_ctx *ctx, const dl_run *run, uint64_t epoch) {
    dl_key k;
    dl_key_init(&k, DL_SETTLE);
    dl_key_u64(&k, run->id);
    dl_key_u64(&k, epoch);
    dl_list owed;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &owed, &gonka__diloco__v1__settle_amount__descriptor));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < owed.n; i++) {
        const dl_settle *o = owed.items[i];
        uint64_t amount = 0;
        if (!o->claimed)
            s = dl_amount(&amount, o->amount);
        if (s == GD_OK && amount > 0)
            s = dl_burn(ctx, dl_denom(run), amount);
    }
    dl_list_free(&owed);
    if (s == GD_OK)
        s = dl_delete_prefix(ctx, &k);
    dl_key rk;
    dl_key_init(&rk, DL_ROUND);
    dl_key_u64(&rk, run->id);
    dl_list rounds;
    if (s == GD_OK)
        s = dl_list_prefix(ctx->kv, &rk, &rounds, &gonka__diloco__v1__round__descriptor);
    else
        rounds = (dl_list){NULL, 0};
    for (size_t i = 0; s == GD_OK && i < rounds.n; i++) {
        const dl_round *r = rounds.items[i];
        if (r->epoch <= epoch && dl_round_over(r))
            s = dl_prune_round(ctx, r);
    }
    dl_list_free(&rounds);
    return s;
}

gd_status dl_settle_epoch(gd_ctx *ctx, dl_run *run, uint64_t epoch) {
    if (epoch > 0)
        GD_TRY(dl_expire(ctx, run, epoch - 1));
    dl_earners e = {NULL, 0};
    gd_status s = dl_collect(ctx, run, epoch, &e);
    uint64_t pool = 0, reward = 0, paid = 0;
    dl_u128 total_tokens = 0, total_checks = 0;
    if (s == GD_OK)
        s = dl_amount(&pool, run->pool);
    if (s == GD_OK)
        s = dl_amount(&reward, run->spec->reward_per_epoch->amount);
    uint64_t budget = reward < pool ? reward : pool;
    /* The spec check keeps the two shares within the whole. */
    uint64_t validators = dl_muldiv(budget, run->spec->validator_share_ppm, GD_DILOCO_PPM);
    uint64_t attesters = dl_muldiv(budget, run->spec->attest_share_ppm, GD_DILOCO_PPM);
    uint64_t workers = budget - validators - attesters;
    dl_u128 total_attest_weight = 0;
    for (size_t i = 0; i < e.n; i++) {
        total_tokens += e.items[i].tokens;
        total_checks += e.items[i].checks;
        total_attest_weight += e.items[i].attest_weight;
    }
    if (e.n > 1)
        qsort(e.items, e.n, sizeof *e.items, dl_earner_cmp);
    for (size_t i = 0; s == GD_OK && i < e.n; i++) {
        const dl_earner *x = &e.items[i];
        /* A cheater's shares count in the totals, so its forfeit changes no
         * one else's pay, and stay in the pool. */
        uint64_t amount = x->cheated ? 0 :
            (total_tokens ? dl_muldiv(workers, x->tokens, total_tokens) : 0) +
            (total_checks ? dl_muldiv(validators, x->checks, total_checks) : 0) +
            (total_attest_weight
                 ? dl_muldiv_wide(attesters, x->attest_weight, total_attest_weight)
                 : 0);
        if (amount == 0 && !x->cheated)
            continue;
        char text[24];
        dl_amount_str(text, amount);
        dl_settle st = GONKA__DILOCO__V1__SETTLE_AMOUNT__INIT;
        st.run = run->id;
        st.epoch = epoch;
        st.address = x->address;
        st.amount = text;
        st.tokens = x->tokens;
        st.checks = x->checks;
        st.attestations = x->attestations;
        st.forfeited = x->cheated;
        dl_key k;
        dl_key_settle(&k, run->id, epoch, x->address);
        s = dl_save(ctx, &k, &st);
        paid += amount;
    }
    char left[24], paid_text[24], rs[24], es[24];
    dl_amount_str(left, pool - paid);
    dl_amount_str(paid_text, paid);
    dl_amount_str(rs, run->id);
    dl_amount_str(es, epoch);
    if (s == GD_OK)
        s = dl_set_str(&run->pool, left);
    if (s == GD_OK)
        s = gd_events_add(ctx->events, "diloco_settled", "run", rs, "epoch", es, "paid",
                          paid_text, NULL);
    for (size_t i = 0; i < e.n; i++)
        free(e.items[i].address);
    free(e.items);
    return s;
}

