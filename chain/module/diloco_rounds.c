/* The DiLoCo module's block logic: opening rounds inside Gonka's Inference
 * phase, the transitions at each window's first block (checks, inclusion,
 * re-checks, dispute resolution, attestation quorum), slashing, and the
 * settlement of each finished epoch (docs/protocol.md section 7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"
#include "chain/module/epochs.h"

#define PH(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x
#define VERDICT(x) GONKA__DILOCO__V1__VERDICT__VERDICT_##x

gd_status dl_randomness(gd_ctx *ctx, const char *purpose, uint8_t out[GD_DILOCO_HASH_LEN]) {
    (void)purpose; /* one source on localnet; a real chain keys its source by purpose */
    if (ctx->block_hash == NULL)
        return gd_fail(GD_ERR_INVALID, "diloco: randomness outside a block");
    memcpy(out, ctx->block_hash, GD_DILOCO_HASH_LEN);
    return GD_OK;
}

Gonka__Diloco__V1__RoundPhase dl_window_at(const dl_round *r, int64_t h) {
    const Gonka__Diloco__V1__RoundWindows *w = r->windows;
    if (w == NULL || h < w->train_start)
        return PH(UNSPECIFIED);
    if (h < w->commit_start)
        return PH(TRAIN);
    if (h < w->reveal_start)
        return PH(COMMIT);
    if (h < w->verify_start)
        return PH(REVEAL);
    if (h < w->open_start)
        return PH(VERIFY);
    if (h < w->dispute_start)
        return PH(OPEN);
    if (h < w->attest_start)
        return PH(DISPUTE);
    if (h < w->end)
        return PH(ATTEST);
    return PH(DONE);
}

/* Loaded members come in key order (gd_diloco_address_cmp), so a lookup is a
 * binary search: the inclusion set weighs every report of every target. */
uint64_t dl_round_weight(const dl_round *r, const char *addr, const char **hw_class) {
    size_t lo = 0, hi = r->n_members;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = gd_diloco_address_cmp(r->members[mid]->address, addr);
        if (c < 0) {
            lo = mid + 1;
        } else if (c > 0) {
            hi = mid;
        } else {
            uint64_t w = 0;
            if (dl_amount(r->members[mid]->weight, &w) != GD_OK)
                return 0;
            if (hw_class)
                *hw_class = r->members[mid]->hw_class;
            return w;
        }
    }
    return 0;
}

static dl_u128 dl_total_weight(const dl_round *r) {
    dl_u128 w = 0;
    return dl_amount128(r->total_weight, &w) == GD_OK ? w : 0;
}

/* 3 * part >= 2 * total, exactly (both below 2^96: W 64-bit weights). */
static bool dl_two_thirds(dl_u128 part, dl_u128 total) {
    return total > 0 && part * 3 >= total * 2;
}

static gd_status dl_event(gd_ctx *ctx, const char *type, const dl_round *r, const char *k1,
                          const char *v1, const char *k2, const char *v2) {
    char rs[24], ro[24];
    dl_amount_str(rs, r->run);
    dl_amount_str(ro, r->index);
    if (k1 == NULL)
        return gd_events_add(ctx->events, type, "run", rs, "round", ro, NULL);
    if (k2 == NULL)
        return gd_events_add(ctx->events, type, "run", rs, "round", ro, k1, v1, NULL);
    return gd_events_add(ctx->events, type, "run", rs, "round", ro, k1, v1, k2, v2, NULL);
}

gd_status dl_slash(gd_ctx *ctx, uint64_t run_id, const char *addr, uint32_t ppm,
                   const char *reason) {
    dl_member *m = NULL;
    dl_run *run = NULL;
    gd_status s = dl_get_member(ctx, run_id, addr, &m);
    if (s == GD_ERR_NOT_FOUND)
        return GD_OK; /* nothing bonded */
    uint64_t have = 0;
    if (s == GD_OK)
        s = dl_get_run(ctx, run_id, &run);
    if (s == GD_OK)
        s = dl_amount(m->collateral, &have);
    uint64_t cut = dl_muldiv(have, ppm, GD_DILOCO_PPM);
    if (s == GD_OK && cut > 0) {
        char left[24], cs[24], rs[24];
        dl_amount_str(left, have - cut);
        dl_amount_str(cs, cut);
        dl_amount_str(rs, run_id);
        s = dl_set_str(&m->collateral, left);
        if (s == GD_OK)
            s = dl_put_member(ctx, m);
        if (s == GD_OK)
            s = dl_burn(ctx, dl_denom(run), cut);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_slashed", "run", rs, "address", addr,
                              "amount", cs, "reason", reason, NULL);
    }
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- opening a round ---------------------------------------------------------------- */

static int64_t dl_span(const Gonka__Diloco__V1__WindowLengths *w) {
    return (int64_t)w->train + w->commit + w->reveal + w->verify + w->open + w->dispute +
           w->attest;
}

static gd_status dl_open_round(gd_ctx *ctx, dl_run *run, uint64_t epoch) {
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, run->id);
    dl_list members;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__member__descriptor, &members));
    if (members.n == 0) {
        dl_list_free(&members);
        return GD_OK;
    }
    const Gonka__Diloco__V1__WindowLengths *len = run->spec->windows;
    Gonka__Diloco__V1__RoundWindows w = GONKA__DILOCO__V1__ROUND_WINDOWS__INIT;
    w.train_start = ctx->height;
    w.commit_start = w.train_start + len->train;
    w.reveal_start = w.commit_start + len->commit;
    w.verify_start = w.reveal_start + len->reveal;
    w.open_start = w.verify_start + len->verify;
    w.dispute_start = w.open_start + len->open;
    w.attest_start = w.dispute_start + len->dispute;
    w.end = w.attest_start + len->attest;

    Gonka__Diloco__V1__WeightedMember *wm = calloc(members.n, sizeof *wm);
    Gonka__Diloco__V1__WeightedMember **wp = calloc(members.n, sizeof *wp);
    char (*weights)[24] = calloc(members.n, sizeof *weights);
    gd_status s = wm && wp && weights ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    dl_u128 total = 0;
    for (size_t i = 0; s == GD_OK && i < members.n; i++) {
        dl_member *m = members.items[i];
        uint64_t c = 0;
        s = dl_amount(m->collateral, &c);
        gonka__diloco__v1__weighted_member__init(&wm[i]);
        wm[i].address = m->address;
        wm[i].hw_class = m->hw_class;
        wm[i].rank = m->rank;
        dl_amount_str(weights[i], c);
        wm[i].weight = weights[i];
        wp[i] = &wm[i];
        total += c;
    }
    uint8_t beacon[GD_DILOCO_HASH_LEN];
    if (s == GD_OK)
        s = dl_randomness(ctx, "beacon", beacon);
    if (s == GD_OK) {
        char total_text[40];
        dl_amount128_str(total_text, total);
        dl_round r = GONKA__DILOCO__V1__ROUND__INIT;
        r.run = run->id;
        r.index = run->next_round;
        r.epoch = epoch;
        r.windows = &w;
        r.beacon.data = beacon;
        r.beacon.len = sizeof beacon;
        r.total_weight = total_text;
        r.start_state_hash = run->state_hash;
        r.phase = PH(TRAIN);
        s = dl_put_round(ctx, &r);
        for (size_t i = 0; s == GD_OK && i < members.n; i++) {
            dl_key wk;
            dl_key_weight(&wk, run->id, r.index, wp[i]->address);
            s = dl_save(ctx, &wk, wp[i]);
        }
        run->next_round++;
        char ends[24], count[24];
        snprintf(ends, sizeof ends, "%lld", (long long)w.end);
        dl_amount_str(count, members.n);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_round_opened", &r, "members", count, "end", ends);
    }
    free(weights);
    free(wp);
    free(wm);
    dl_list_free(&members);
    return s;
}

/* ---- reveal start: checks ------------------------------------------------------------ */

/* The round's members of a class other than the target (and other than the
 * excluded addresses), in address order. Pointers into r. */
static size_t dl_eligible(const dl_round *r, const char *hw_class, const char *target,
                          char *const *exclude, size_t n_exclude, const char **out) {
    size_t n = 0;
    for (size_t i = 0; i < r->n_members; i++) {
        const Gonka__Diloco__V1__WeightedMember *m = r->members[i];
        if (strcmp(m->hw_class, hw_class) != 0 || strcmp(m->address, target) == 0 ||
            dl_has_str(exclude, n_exclude, m->address))
            continue;
        out[n++] = m->address;
    }
    return n;
}

static gd_status dl_assign_checks(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    uint8_t rnd[GD_DILOCO_HASH_LEN];
    GD_TRY(dl_randomness(ctx, "verify", rnd));
    GD_TRY(dl_set_bytes(&r->verify_randomness, rnd, sizeof rnd));
    dl_key k;
    dl_round_prefix(&k, DL_COMMIT, r);
    dl_list commits;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__commitment__descriptor, &commits));
    const char **eligible = calloc(r->n_members + 1, sizeof *eligible);
    gd_status s = eligible ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    const dl_spec *sp = run->spec;
    for (size_t i = 0; s == GD_OK && i < commits.n; i++) {
        const dl_commitment *c = commits.items[i];
        const char *cls = "";
        dl_round_weight(r, c->participant, &cls);
        size_t n = dl_eligible(r, cls, c->participant, NULL, 0, eligible);
        uint32_t assigned = 0;
        for (uint32_t j = 0; s == GD_OK && n > 0 && j < sp->checks_per_commit; j++) {
            gd_diloco_check_draw d;
            /* payload_leaves >= 2 (MsgCommitRound's check): a header and
             * at least one chunk. */
            gd_diloco_draw_check(&d, rnd, c->participant, j, c->segment_count,
                                 sp->segment_steps, c->payload_leaves - 1, (uint32_t)n,
                                 sp->double_check_ppm);
            char *validators[2] = {(char *)eligible[d.first], (char *)eligible[d.second]};
            dl_assignment a = GONKA__DILOCO__V1__ASSIGNMENT__INIT;
            a.target = c->participant;
            a.check = j;
            a.segment = d.segment;
            a.step = d.step;
            a.chunk = d.chunk;
            a.validators = validators;
            a.n_validators = d.twice ? 2 : 1;
            dl_key ak;
            dl_key_assignment(&ak, r->run, r->index, c->participant, j);
            s = dl_save(ctx, &ak, &a);
            assigned++;
        }
        char count[24];
        dl_amount_str(count, assigned);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_checks_assigned", r, "target", c->participant, "checks",
                         count);
    }
    free(eligible);
    dl_list_free(&commits);
    return s;
}

/* ---- verify start: the inclusion set ---------------------------------------------------- */

static gd_status dl_fix_inclusion(gd_ctx *ctx, dl_round *r) {
    dl_key k;
    dl_round_prefix(&k, DL_COMMIT, r);
    dl_list commits;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__commitment__descriptor, &commits));
    dl_u128 total = dl_total_weight(r);
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < commits.n; i++) {
        const dl_commitment *c = commits.items[i];
        dl_key rk;
        dl_round_prefix(&rk, DL_REPORT, r);
        dl_key_addr(&rk, c->participant);
        dl_list reports;
        s = dl_list_prefix(ctx->kv, &rk, &gonka__diloco__v1__availability_report__descriptor,
                           &reports);
        /* The committer's weight counts for its own payload. */
        dl_u128 w = dl_round_weight(r, c->participant, NULL);
        for (size_t j = 0; s == GD_OK && j < reports.n; j++)
            w += dl_round_weight(r, ((dl_report *)reports.items[j])->reporter, NULL);
        if (s == GD_OK && dl_two_thirds(w, total))
            s = dl_push_str(&r->inclusion_set, &r->n_inclusion_set, c->participant);
        dl_list_free(&reports);
    }
    char count[24];
    dl_amount_str(count, r->n_inclusion_set);
    if (s == GD_OK)
        s = dl_event(ctx, "diloco_inclusion_fixed", r, "included", count, NULL, NULL);
    dl_list_free(&commits);
    return s;
}

/* ---- dispute start: skipped checks and re-checkers ---------------------------------------- */

static gd_status dl_load_verdict(gd_ctx *ctx, const dl_round *r, const char *target,
                                 uint32_t check, const char *validator, dl_verdict **out) {
    dl_key k;
    dl_key_verdict(&k, r->run, r->index, target, check, validator);
    gd_status s = dl_load(ctx, &k, &gonka__diloco__v1__verdict_record__descriptor, (void **)out);
    return s == GD_ERR_NOT_FOUND ? GD_OK : s;
}

static gd_status dl_save_verdict(gd_ctx *ctx, const dl_round *r, const dl_verdict *v) {
    dl_key k;
    dl_key_verdict(&k, r->run, r->index, v->target, v->check, v->validator);
    return dl_save(ctx, &k, v);
}

static bool dl_same_digest(const dl_verdict *a, const dl_verdict *b) {
    return a->digest.len == b->digest.len &&
           memcmp(a->digest.data, b->digest.data, a->digest.len) == 0;
}

static gd_status dl_assign_rechecks(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    uint8_t rnd[GD_DILOCO_HASH_LEN];
    GD_TRY(dl_randomness(ctx, "recheck", rnd));
    GD_TRY(dl_set_bytes(&r->recheck_randomness, rnd, sizeof rnd));
    dl_key k;
    dl_round_prefix(&k, DL_ASSIGN, r);
    dl_list checks;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__assignment__descriptor, &checks));
    const char **pool = calloc(r->n_members + 1, sizeof *pool);
    gd_status s = pool ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == GD_OK && i < checks.n; i++) {
        dl_assignment *a = checks.items[i];
        dl_verdict *v[2] = {NULL, NULL};
        bool fail = false;
        size_t revealed = 0;
        for (size_t j = 0; s == GD_OK && j < a->n_validators && j < 2; j++) {
            s = dl_load_verdict(ctx, r, a->target, a->check, a->validators[j], &v[j]);
            if (s == GD_OK && (v[j] == NULL || v[j]->verdict == 0))
                s = dl_slash(ctx, r->run, a->validators[j], run->spec->skip_slash_ppm,
                             "skipped check");
            else if (s == GD_OK) {
                revealed++;
                fail |= v[j]->verdict == VERDICT(FAIL);
            }
        }
        bool split = revealed == 2 && v[0]->verdict == VERDICT(PASS) &&
                     v[1]->verdict == VERDICT(PASS) && !dl_same_digest(v[0], v[1]);
        if (s == GD_OK && (fail || split)) {
            const char *cls = "";
            dl_round_weight(r, a->target, &cls);
            size_t n = dl_eligible(r, cls, a->target, a->validators, a->n_validators, pool);
            for (uint32_t kk = 0; s == GD_OK && n > 0 && kk < run->spec->recheck_validators;
                 kk++) {
                uint32_t at = gd_diloco_draw_rechecker(rnd, a->target, a->check, kk, (uint32_t)n);
                s = dl_push_str(&a->recheckers, &a->n_recheckers, pool[at]);
                memmove(&pool[at], &pool[at + 1], (n - at - 1) * sizeof *pool);
                n--;
            }
            dl_key ak;
            dl_key_assignment(&ak, r->run, r->index, a->target, a->check);
            if (s == GD_OK)
                s = dl_save(ctx, &ak, a);
            char count[24];
            dl_amount_str(count, a->n_recheckers);
            if (s == GD_OK)
                s = dl_event(ctx, "diloco_dispute", r, "target", a->target, "recheckers", count);
        }
        dl_free(v[0]);
        dl_free(v[1]);
    }
    free(pool);
    dl_list_free(&checks);
    return s;
}

/* ---- attest start: resolution --------------------------------------------------------------- */

typedef struct dl_resolution {
    const dl_run *run;
    dl_round *r;
    char **failed;
    size_t n_failed;
} dl_resolution;

static gd_status dl_mark_failed(dl_resolution *res, const char *target) {
    if (dl_has_str(res->failed, res->n_failed, target))
        return GD_OK;
    return dl_push_str(&res->failed, &res->n_failed, target);
}

/* Returns a FAIL's bond to the accuser, or burns it. */
static gd_status dl_settle_bond(gd_ctx *ctx, dl_resolution *res, dl_verdict *v, bool give_back) {
    if (!v->bonded)
        return GD_OK;
    uint64_t bond = 0;
    GD_TRY(dl_amount(res->run->spec->fail_bond->amount, &bond));
    GD_TRY(give_back ? dl_pay_out(ctx, v->validator, dl_denom(res->run), bond)
                     : dl_burn(ctx, dl_denom(res->run), bond));
    v->bonded = false;
    return GD_OK;
}

/* The digest most re-check PASS verdicts share, or NULL without a strict
 * majority among them. */
static const dl_verdict *dl_majority_digest(dl_verdict *const *re, size_t n) {
    size_t passes = 0;
    for (size_t i = 0; i < n; i++)
        passes += re[i] && re[i]->verdict == VERDICT(PASS);
    for (size_t i = 0; i < n; i++) {
        if (!re[i] || re[i]->verdict != VERDICT(PASS))
            continue;
        size_t same = 0;
        for (size_t j = 0; j < n; j++)
            same += re[j] && re[j]->verdict == VERDICT(PASS) && dl_same_digest(re[i], re[j]);
        if (2 * same > passes)
            return re[i];
    }
    return NULL;
}

static gd_status dl_resolve_check(gd_ctx *ctx, dl_resolution *res, dl_assignment *a) {
    dl_round *r = res->r;
    size_t nv = a->n_validators < 2 ? a->n_validators : 2, nr = a->n_recheckers;
    dl_verdict *orig[2] = {NULL, NULL};
    dl_verdict **re = calloc(nr + 1, sizeof *re);
    gd_status s = re ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t j = 0; s == GD_OK && j < nv; j++)
        s = dl_load_verdict(ctx, r, a->target, a->check, a->validators[j], &orig[j]);
    size_t fails = 0, passes = 0;
    for (size_t j = 0; s == GD_OK && j < nr; j++) {
        s = dl_load_verdict(ctx, r, a->target, a->check, a->recheckers[j], &re[j]);
        if (s == GD_OK && re[j] == NULL)
            s = dl_slash(ctx, r->run, a->recheckers[j], res->run->spec->skip_slash_ppm,
                         "skipped re-check");
        else if (s == GD_OK) {
            fails += re[j]->verdict == VERDICT(FAIL);
            passes += re[j]->verdict == VERDICT(PASS);
        }
    }
    bool accused = false;
    for (size_t j = 0; j < nv; j++)
        accused |= orig[j] && orig[j]->verdict == VERDICT(FAIL);
    bool upheld = fails > passes, overturned = passes > fails;
    const dl_verdict *major = upheld ? NULL : dl_majority_digest(re, nr);
    if (s == GD_OK && (accused || nr > 0)) {
        if (upheld)
            s = dl_mark_failed(res, a->target);
        for (size_t j = 0; s == GD_OK && j < nv; j++) {
            dl_verdict *v = orig[j];
            if (v == NULL || v->verdict == 0)
                continue;
            if (v->verdict == VERDICT(FAIL)) {
                s = dl_settle_bond(ctx, res, v, !overturned);
                v->faulty = overturned;
            } else if (v->verdict == VERDICT(PASS)) {
                v->faulty = upheld || (major != NULL && !dl_same_digest(v, major));
            }
            if (s == GD_OK)
                s = dl_save_verdict(ctx, r, v);
        }
        for (size_t j = 0; s == GD_OK && j < nr; j++) {
            dl_verdict *v = re[j];
            if (v == NULL)
                continue;
            v->faulty = v->verdict == VERDICT(FAIL)
                            ? overturned
                            : upheld || (major != NULL && !dl_same_digest(v, major));
            s = dl_save_verdict(ctx, r, v);
        }
        if (s == GD_OK && accused)
            s = dl_event(ctx, upheld ? "diloco_fail_upheld"
                              : overturned ? "diloco_fail_overturned" : "diloco_fail_undecided",
                         r, "target", a->target, NULL, NULL);
    }
    dl_free(orig[0]);
    dl_free(orig[1]);
    for (size_t j = 0; re && j < nr; j++)
        dl_free(re[j]);
    free(re);
    return s;
}

/* Two revealed UNAVAILABLE verdicts against a target count as a FAIL. */
static gd_status dl_count_unavailable(gd_ctx *ctx, dl_resolution *res) {
    dl_key k;
    dl_round_prefix(&k, DL_VERDICT, res->r);
    dl_list all;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__verdict_record__descriptor, &all));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < all.n; i++) {
        const dl_verdict *v = all.items[i];
        if (v->recheck || v->verdict != VERDICT(UNAVAILABLE))
            continue;
        size_t count = 0;
        for (size_t j = 0; j < all.n; j++) {
            const dl_verdict *w = all.items[j];
            count += !w->recheck && w->verdict == VERDICT(UNAVAILABLE) &&
                     strcmp(w->target, v->target) == 0;
        }
        if (count >= 2)
            s = dl_mark_failed(res, v->target);
    }
    dl_list_free(&all);
    return s;
}

static gd_status dl_resolve(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    dl_resolution res = {run, r, NULL, 0};
    dl_key k;
    dl_round_prefix(&k, DL_ASSIGN, r);
    dl_list checks;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__assignment__descriptor, &checks));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < checks.n; i++) {
        dl_assignment *a = checks.items[i];
        if (a->n_recheckers > 0)
            s = dl_resolve_check(ctx, &res, a);
        else {
            /* Not disputed: nothing to decide, but a FAIL revealed with no
             * one to re-check it gets its bond back. */
            dl_resolution *rp = &res;
            for (size_t j = 0; s == GD_OK && j < a->n_validators; j++) {
                dl_verdict *v = NULL;
                s = dl_load_verdict(ctx, r, a->target, a->check, a->validators[j], &v);
                if (s == GD_OK && v && v->bonded) {
                    s = dl_settle_bond(ctx, rp, v, true);
                    if (s == GD_OK)
                        s = dl_save_verdict(ctx, r, v);
                }
                dl_free(v);
            }
        }
    }
    if (s == GD_OK)
        s = dl_count_unavailable(ctx, &res);
    for (size_t i = 0; s == GD_OK && i < res.n_failed; i++) {
        s = dl_push_str(&r->failed, &r->n_failed, res.failed[i]);
        if (s == GD_OK)
            s = dl_slash(ctx, r->run, res.failed[i], run->spec->slash_ppm, "upheld FAIL");
    }
    for (size_t i = 0; s == GD_OK && i < r->n_inclusion_set; i++)
        if (!dl_has_str(res.failed, res.n_failed, r->inclusion_set[i]))
            s = dl_push_str(&r->aggregation_set, &r->n_aggregation_set, r->inclusion_set[i]);
    for (size_t i = 0; i < res.n_failed; i++)
        free(res.failed[i]);
    free(res.failed);
    dl_list_free(&checks);
    return s;
}

/* ---- end: the attestation quorum ----------------------------------------------------------- */

static gd_status dl_finish(gd_ctx *ctx, dl_run *run, dl_round *r) {
    dl_key k;
    dl_round_prefix(&k, DL_ATTEST, r);
    dl_list atts;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__attestation__descriptor, &atts));
    dl_u128 total = dl_total_weight(r);
    const dl_attestation *winner = NULL;
    for (size_t i = 0; i < atts.n && winner == NULL; i++) {
        const dl_attestation *a = atts.items[i];
        dl_u128 w = 0;
        for (size_t j = 0; j < atts.n; j++) {
            const dl_attestation *b = atts.items[j];
            if (b->next_state_hash.len == a->next_state_hash.len &&
                memcmp(b->next_state_hash.data, a->next_state_hash.data,
                       a->next_state_hash.len) == 0)
                w += dl_round_weight(r, b->attester, NULL);
        }
        if (dl_two_thirds(w, total))
            winner = a;
    }
    gd_status s = GD_OK;
    if (winner != NULL) {
        s = dl_set_bytes(&r->next_state_hash, winner->next_state_hash.data,
                         winner->next_state_hash.len);
        if (s == GD_OK)
            s = dl_set_bytes(&run->state_hash, winner->next_state_hash.data,
                             winner->next_state_hash.len);
        run->rounds_aggregated++;
        r->phase = PH(DONE);
        char hex[2 * GD_DILOCO_HASH_LEN + 1];
        gd_hex_encode(hex, winner->next_state_hash.data, GD_DILOCO_HASH_LEN, false);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_round_done", r, "next_state_hash", hex, NULL, NULL);
    } else {
        r->phase = PH(VOID);
        s = dl_event(ctx, "diloco_round_void", r, NULL, NULL, NULL, NULL);
    }
    dl_list_free(&atts);
    return s;
}

/* Runs every transition whose window has started by this height. */
static gd_status dl_advance(gd_ctx *ctx, dl_run *run, dl_round *r) {
    const Gonka__Diloco__V1__RoundWindows *w = r->windows;
    gd_status s = GD_OK;
    for (bool moved = true; s == GD_OK && moved;) {
        moved = false;
        int64_t h = ctx->height;
        switch (r->phase) {
        case PH(TRAIN):
            if ((moved = h >= w->commit_start))
                r->phase = PH(COMMIT);
            break;
        case PH(COMMIT):
            if ((moved = h >= w->reveal_start)) {
                s = dl_assign_checks(ctx, run, r);
                r->phase = PH(REVEAL);
            }
            break;
        case PH(REVEAL):
            if ((moved = h >= w->verify_start)) {
                s = dl_fix_inclusion(ctx, r);
                r->phase = PH(VERIFY);
            }
            break;
        case PH(VERIFY):
            if ((moved = h >= w->open_start))
                r->phase = PH(OPEN);
            break;
        case PH(OPEN):
            if ((moved = h >= w->dispute_start)) {
                s = dl_assign_rechecks(ctx, run, r);
                r->phase = PH(DISPUTE);
            }
            break;
        case PH(DISPUTE):
            if ((moved = h >= w->attest_start)) {
                s = dl_resolve(ctx, run, r);
                r->phase = PH(ATTEST);
            }
            break;
        case PH(ATTEST):
            if ((moved = h >= w->end))
                s = dl_finish(ctx, run, r);
            break;
        default: break;
        }
        if (s == GD_OK && moved)
            s = dl_put_round(ctx, r);
    }
    return s;
}

/* ---- the block hook ----------------------------------------------------------------------------- */

static gd_status dl_run_block(gd_ctx *ctx, dl_run *run, const gd_epoch *latest,
                              const gd_epoch_params *ep) {
    dl_round *r = NULL;
    gd_buf before = {0}, after = {0}; /* write the run back only if the block changed it */
    gd_status s = dl_pack(&before, run);
    if (s == GD_OK && run->next_round > 0) {
        s = dl_get_round(ctx, run->id, run->next_round - 1, &r);
        bool live = s == GD_OK && r->phase != PH(DONE) && r->phase != PH(VOID);
        if (live)
            s = dl_load_members(ctx, r);
        if (live && s == GD_OK)
            s = dl_advance(ctx, run, r);
    }
    for (; s == GD_OK && run->next_settle_epoch < latest->index; run->next_settle_epoch++)
        s = dl_settle_epoch(ctx, run, run->next_settle_epoch);
    bool idle = r == NULL || r->phase == PH(DONE) || r->phase == PH(VOID);
    if (s == GD_OK && idle) {
        gd_epoch_stages st;
        gd_epoch_stages_compute(&st, latest, ep);
        if (gd_epoch_phase_at(latest, ep, ctx->height) == GD_PHASE_INFERENCE &&
            ctx->height + dl_span(run->spec->windows) <= st.next_poc_start)
            s = dl_open_round(ctx, run, latest->index);
    }
    if (s == GD_OK)
        s = dl_pack(&after, run);
    if (s == GD_OK && (after.len != before.len || memcmp(after.data, before.data, after.len)))
        s = dl_put_run(ctx, run);
    gd_buf_free(&before);
    gd_buf_free(&after);
    dl_free(r);
    return s;
}

gd_status dl_begin_block(gd_ctx *ctx) {
    gd_epoch latest;
    gd_epoch_params ep;
    GD_TRY(gd_epochs_get(ctx, &latest, &ep));
    dl_key k;
    dl_key_init(&k, DL_RUN);
    dl_list runs;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__run__descriptor, &runs));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < runs.n; i++)
        s = dl_run_block(ctx, runs.items[i], &latest, &ep);
    dl_list_free(&runs);
    return s;
}
