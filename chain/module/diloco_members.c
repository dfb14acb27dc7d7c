/* The DiLoCo module's penalties and membership: fixed slashes, the skip
 * slash capped per round, suspension, activity within a round, and paying a
 * member's collateral back when it leaves or falls below the minimum
 * (docs/protocol.md section 7, docs/verification.md "The incentive model"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"

bool dl_round_over(const dl_round *r) { return r->phase == PH(DONE) || r->phase == PH(VOID); }

size_t dl_round_find(const dl_round *r, const char *addr) {
    size_t lo = 0, hi = r->n_members;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = gd_diloco_address_cmp(r->members[mid]->address, addr);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return r->n_members;
}

gd_status dl_slash(gd_ctx *ctx, const dl_run *run, const char *addr, const char *amount,
                   const char *reason) {
    dl_member *m = NULL;
    gd_status s = dl_get_member(ctx, &m, run->id, addr);
    if (s == GD_ERR_NOT_FOUND)
        return GD_OK; /* released already: nothing bonded */
    uint64_t have = 0, want = 0;
    if (s == GD_OK)
        s = dl_amount(&have, m->collateral);
    if (s == GD_OK)
        s = dl_amount(&want, amount);
    uint64_t cut = want < have ? want : have;
    if (s == GD_OK && cut > 0) {
        char left[24], cs[24], rs[24];
        dl_amount_str(left, have - cut);
        dl_amount_str(cs, cut);
        dl_amount_str(rs, run->id);
        s = dl_set_str(&m->collateral, left);
        if (s == GD_OK)
            s = dl_put_member(ctx, m);
        if (s == GD_OK)
            s = dl_burn(ctx, dl_denom(run), cut);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_slashed", "run", rs, "address", addr,
                              "amount", cs, "reason", reason, NULL);
    }
    dl_free(m);
    return s;
}

gd_status dl_slash_cheat(gd_ctx *ctx, const dl_run *run, const char *addr, const char *reason) {
    return dl_slash(ctx, run, addr, run->spec->cheat_slash->amount, reason);
}

/* A round member's duty not done, at a price: the snapshot record
 * remembers that it skipped and which duty, whatever the duty cost. */
static gd_status dl_skip_at(gd_ctx *ctx, const dl_run *run, dl_round *r, const char *addr,
                            const char *duty, const char *amount, const char *reason) {
    size_t i = dl_round_find(r, addr);
    if (i == r->n_members)
        return GD_OK;
    dl_weighted *m = r->members[i];
    char **missed = realloc(m->missed, (m->n_missed + 1) * sizeof *missed);
    if (missed == NULL)
        return gd_fail(GD_ERR_NOMEM, "no memory for a skip record");
    m->missed = missed;
    if ((m->missed[m->n_missed] = strdup(duty)) == NULL)
        return gd_fail(GD_ERR_NOMEM, "no memory for a skip record");
    m->n_missed++;
    m->skip_slashed = true;
    dl_key k;
    dl_key_weight(&k, r->run, r->index, addr);
    GD_TRY(dl_save(ctx, &k, m));
    return dl_slash(ctx, run, addr, amount, reason);
}

gd_status dl_skip(gd_ctx *ctx, const dl_run *run, dl_round *r, const char *addr,
                  const char *duty, const char *reason) {
    return dl_skip_at(ctx, run, r, addr, duty, run->spec->skip_slash->amount, reason);
}

gd_status dl_withhold(gd_ctx *ctx, const dl_run *run, dl_round *r, const char *addr) {
    return dl_skip_at(ctx, run, r, addr, GD_DUTY_REVEAL_SECRET, run->spec->withhold_slash->amount,
                      "unrevealed randomness");
}

gd_status dl_suspend(gd_ctx *ctx, uint64_t run, const char *addr, uint64_t until) {
    dl_member *m = NULL;
    gd_status s = dl_get_member(ctx, &m, run, addr);
    if (s == GD_ERR_NOT_FOUND)
        return GD_OK;
    if (s == GD_OK && m->suspended_until < until) {
        m->suspended_until = until;
        s = dl_put_member(ctx, m);
    }
    dl_free(m);
    return s;
}

static gd_status dl_mark(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                         uint64_t *weight, bool reporter) {
    *weight = 0;
    dl_key k;
    dl_key_weight(&k, run, round, addr);
    dl_weighted *m = NULL;
    gd_status s = dl_load(ctx, &k, (void **)&m, &gonka__diloco__v1__weighted_member__descriptor);
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_NOT_MEMBER, "%s is not a member of round %llu", addr,
                       (unsigned long long)round);
    if (s == GD_OK)
        s = dl_amount(weight, m->weight);
    if (s == GD_OK && (!m->active || (reporter && !m->reported))) {
        m->active = true;
        m->reported |= reporter;
        s = dl_save(ctx, &k, m);
    }
    dl_free(m);
    return s;
}

gd_status dl_mark_active(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                         uint64_t *weight) {
    return dl_mark(ctx, run, round, addr, weight, false);
}

gd_status dl_mark_reporter(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                           uint64_t *weight) {
    return dl_mark(ctx, run, round, addr, weight, true);
}

gd_status dl_run_member(gd_ctx *ctx, dl_member **out, uint64_t run, const char *addr) {
    *out = NULL;
    gd_status s = dl_get_member(ctx, out, run, addr);
    if (s == GD_ERR_NOT_FOUND || (s == GD_OK && (*out)->leaving)) {
        dl_free(*out);
        *out = NULL;
        return dl_fail(ctx, GD_DILOCO_ERR_NOT_MEMBER, "%s is not a member of run %llu", addr,
                       (unsigned long long)run);
    }
    return s;
}

gd_status dl_release(gd_ctx *ctx, const dl_run *run, const dl_member *m, const char *reason) {
    uint64_t left = 0;
    GD_TRY(dl_amount(&left, m->collateral));
    if (left > 0)
        GD_TRY(dl_pay_out(ctx, m->address, dl_denom(run), left));
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, run->id);
    dl_key_addr(&k, m->address);
    GD_TRY(gd_ctx_delete(ctx, k.b, k.n));
    char rs[24], ls[24];
    dl_amount_str(rs, run->id);
    dl_amount_str(ls, left);
    return gd_events_add(ctx->events, "diloco_released", "run", rs, "address", m->address,
                         "collateral", ls, "reason", reason, NULL);
}
