/* The DiLoCo module's block logic: opening rounds inside Gonka's Inference
 * phase (with the member snapshot), the transitions at each window's first
 * block (the seed, inclusion, attestation quorum; the checks themselves are
 * diloco_checks.c's), and the settlement of each finished epoch
 * (docs/protocol.md section 7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"
#include "chain/module/epochs.h"
#include "chain/wire/diloco_spec.h"

/* The hash of the block being executed. */
static gd_status dl_block_hash(gd_ctx *ctx, uint8_t out[GD_DILOCO_HASH_LEN]) {
    if (ctx->block_hash == NULL)
        return gd_fail(GD_ERR_INVALID, "diloco: a block hook outside a block");
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
    if (h < w->dispute_open_start)
        return PH(DISPUTE);
    if (h < w->attest_start)
        return PH(DISPUTE_OPEN);
    if (h < w->attest_open_start)
        return PH(ATTEST);
    if (h < w->end)
        return PH(ATTEST_OPEN);
    return PH(DONE);
}

/* The first height of the window after the round's current phase. */
static int64_t dl_next_boundary(const dl_round *r) {
    const Gonka__Diloco__V1__RoundWindows *w = r->windows;
    switch (r->phase) {
    case PH(TRAIN): return w->commit_start;
    case PH(COMMIT): return w->reveal_start;
    case PH(REVEAL): return w->verify_start;
    case PH(VERIFY): return w->open_start;
    case PH(OPEN): return w->dispute_start;
    case PH(DISPUTE): return w->dispute_open_start;
    case PH(DISPUTE_OPEN): return w->attest_start;
    case PH(ATTEST): return w->attest_open_start;
    case PH(ATTEST_OPEN): return w->end;
    default: return INT64_MAX;
    }
}

/* A member's frozen weight in a round whose members are loaded (0 if not
 * in its snapshot): a binary search, as the members come in address order. */
static uint64_t dl_round_weight(const dl_round *r, const char *addr) {
    size_t i = dl_round_find(r, addr);
    uint64_t w = 0;
    if (i == r->n_members || dl_amount(&w, r->members[i]->weight) != GD_OK)
        return 0;
    return w;
}

/* 3 * part >= 2 * total, exactly (both below 2^96: W 64-bit weights). */
bool dl_two_thirds(dl_u128 part, dl_u128 total) {
    return total > 0 && part * 3 >= total * 2;
}

/* ---- opening a round ---------------------------------------------------------------- */

/* Who is in the next round: members that left or fell below the minimum
 * collateral are paid back and removed first (no live round holds them
 * now); suspended ones sit this round out; and a member takes part only if
 * it sealed a secret for the round. The seal is how a member says it will
 * take part: a member that sends nothing is in no snapshot, so idle weight
 * never counts and never draws checks. Returns the snapshot's members
 * (borrowed from *members). */
static gd_status dl_snapshot(gd_ctx *ctx, const dl_run *run, dl_list *members,
                             dl_member ***out, size_t *n_out) {
    *out = NULL;
    *n_out = 0;
    uint64_t min = 0;
    GD_TRY(dl_amount(&min, run->spec->min_collateral->amount));
    dl_member **in = calloc(members->n + 1, sizeof *in);
    if (in == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    size_t n = 0;
    for (size_t i = 0; s == GD_OK && i < members->n; i++) {
        dl_member *m = members->items[i];
        uint64_t c = 0;
        s = dl_amount(&c, m->collateral);
        if (s == GD_OK && m->leaving)
            s = dl_release(ctx, run, m, "left");
        else if (s == GD_OK && c < min)
            s = dl_release(ctx, run, m, "below the minimum collateral");
        else if (s == GD_OK && m->suspended_until <= run->next_round) {
            dl_key sk;
            dl_key_secret(&sk, run->id, run->next_round, m->address);
            const uint8_t *v;
            size_t vlen;
            gd_status g = gd_ctx_get(ctx, sk.b, sk.n, &v, &vlen);
            if (g == GD_OK)
                in[n++] = m;
            else if (g != GD_ERR_NOT_FOUND)
                s = g;
        }
    }
    if (s != GD_OK) {
        free(in);
        return s;
    }
    *out = in;
    *n_out = n;
    return GD_OK;
}

static gd_status dl_open_round(gd_ctx *ctx, dl_run *run, uint64_t epoch) {
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, run->id);
    dl_list members;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &members, &gonka__diloco__v1__member__descriptor));
    dl_member **in = NULL;
    size_t n_in = 0;
    gd_status s = dl_snapshot(ctx, run, &members, &in, &n_in);
    if (s != GD_OK || n_in == 0) {
        free(in);
        dl_list_free(&members);
        return s;
    }
    const Gonka__Diloco__V1__WindowLengths *len = run->spec->windows;
    Gonka__Diloco__V1__RoundWindows w = GONKA__DILOCO__V1__ROUND_WINDOWS__INIT;
    w.train_start = ctx->height;
    w.commit_start = w.train_start + len->train;
    w.reveal_start = w.commit_start + len->commit;
    w.verify_start = w.reveal_start + len->reveal;
    w.open_start = w.verify_start + len->verify;
    w.dispute_start = w.open_start + len->open;
    w.dispute_open_start = w.dispute_start + len->dispute;
    w.attest_start = w.dispute_open_start + len->dispute_open;
    w.attest_open_start = w.attest_start + len->attest;
    w.end = w.attest_open_start + len->attest_open;

    dl_weighted *wm = calloc(n_in, sizeof *wm);
    char (*weights)[24] = calloc(n_in, sizeof *weights);
    if (s == GD_OK && (wm == NULL || weights == NULL))
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    dl_u128 total = 0;
    for (size_t i = 0; s == GD_OK && i < n_in; i++) {
        uint64_t c = 0;
        s = dl_amount(&c, in[i]->collateral);
        gonka__diloco__v1__weighted_member__init(&wm[i]);
        wm[i].address = in[i]->address;
        wm[i].hw_class = in[i]->hw_class;
        wm[i].rank = in[i]->rank;
        dl_amount_str(weights[i], c);
        wm[i].weight = weights[i];
        total += c;
    }
    uint8_t beacon[GD_DILOCO_HASH_LEN];
    if (s == GD_OK)
        s = dl_block_hash(ctx, beacon);
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
        r.active_weight = (char *)"0";
        r.reporting_weight = (char *)"0";
        r.start_state_hash = run->state_hash;
        r.phase = PH(TRAIN);
        s = dl_put_round(ctx, &r);
        for (size_t i = 0; s == GD_OK && i < n_in; i++) {
            dl_key wk;
            dl_key_weight(&wk, run->id, r.index, wm[i].address);
            s = dl_save(ctx, &wk, &wm[i]);
        }
        run->next_round++;
        char ends[24], count[24];
        snprintf(ends, sizeof ends, "%lld", (long long)w.end);
        dl_amount_str(count, n_in);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_round_opened", r.run, r.index, "members", count, "end",
                         ends);
    }
    free(weights);
    free(wm);
    free(in);
    dl_list_free(&members);
    return s;
}

/* ---- verify start: the seed ---------------------------------------------------------------- */

gd_status dl_round_seed(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    if (r->beacon.len != GD_DILOCO_HASH_LEN)
        return gd_fail(GD_ERR_PARSE, "stored round %llu has a malformed beacon",
                       (unsigned long long)r->index);
    dl_key k;
    dl_round_prefix(&k, DL_RANDOM, r);
    dl_list secrets;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &secrets,
                          &gonka__diloco__v1__randomness_record__descriptor));
    uint8_t *bytes = malloc(secrets.n * GD_DILOCO_SALT_LEN + 1);
    gd_status s = bytes ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    size_t n = 0;
    /* Records come in address order; a sealed secret not revealed costs its
     * member the withhold slash: members that reveal last and withhold k
     * secrets choose among 2^k seeds, and that choice is priced above what
     * it can win (dl_withhold). */
    for (size_t i = 0; s == GD_OK && i < secrets.n; i++) {
        const dl_secret *x = secrets.items[i];
        if (x->secret.len == GD_DILOCO_SALT_LEN)
            memcpy(bytes + GD_DILOCO_SALT_LEN * n++, x->secret.data, GD_DILOCO_SALT_LEN);
        else
            s = dl_withhold(ctx, run, r, x->member);
    }
    uint8_t seed[GD_DILOCO_HASH_LEN], verify[GD_DILOCO_HASH_LEN];
    if (s == GD_OK)
        s = gd_diloco_round_seed(seed, r->run, r->index, r->beacon.data, bytes, n);
    gd_diloco_purpose(verify, seed, "verify");
    if (s == GD_OK)
        s = dl_set_bytes(&r->seed, seed, sizeof seed);
    if (s == GD_OK)
        s = dl_set_bytes(&r->verify_randomness, verify, sizeof verify);
    char count[24];
    dl_amount_str(count, n);
    if (s == GD_OK)
        s = dl_event(ctx, "diloco_seed_fixed", r->run, r->index, "secrets", count, NULL, NULL);
    free(bytes);
    dl_list_free(&secrets);
    return s;
}

/* ---- open start: the inclusion set ----------------------------------------------------------- */

/* The weight of the round's members that sent a message of it so far:
 * thresholds count active weight, so idle members (who pay the skip slash
 * for it, and may leave) can never hold a round up. */
static gd_status dl_fix_active_weight(dl_round *r, dl_u128 *out) {
    dl_u128 w = 0;
    for (size_t i = 0; i < r->n_members; i++)
        if (r->members[i]->active) {
            uint64_t x = 0;
            GD_TRY(dl_amount(&x, r->members[i]->weight));
            w += x;
        }
    char text[40];
    dl_amount128_str(text, w);
    *out = w;
    return dl_set_str(&r->active_weight, text);
}

/* The reporting weight: the members that sent availability reports. A
 * member that reports nothing adds nothing to anyone's tally, so it does
 * not count against them either: a coalition that withholds its reports
 * cannot hold honest payloads under two thirds. */
static gd_status dl_fix_reporting_weight(dl_round *r, dl_u128 *out) {
    dl_u128 w = 0;
    for (size_t i = 0; i < r->n_members; i++)
        if (r->members[i]->reported) {
            uint64_t x = 0;
            GD_TRY(dl_amount(&x, r->members[i]->weight));
            w += x;
        }
    char text[40];
    dl_amount128_str(text, w);
    *out = w;
    return dl_set_str(&r->reporting_weight, text);
}

/* Served: the reporters that proved a chunk of the committer's segment
 * starts in the verify window (its own weight counted as for its payload)
 * hold two thirds of the reporting weight. A check reads it to tell a
 * worker that served its states late from a validator that did not try
 * (dl_judge): honest reporters hold more than two thirds, so an honest
 * worker is always served, and a coalition below a third cannot make a
 * late one look served. */
static gd_status dl_fix_states_served(gd_ctx *ctx, const dl_round *r, dl_commitment *c,
                                      uint64_t own, dl_u128 reporting) {
    dl_u128 w = 0;
    GD_TRY(dl_tally_read(&w, c->state_report_weight));
    c->states_served = reporting > 0 && dl_two_thirds(w + own, reporting);
    dl_key ck;
    dl_key_commit(&ck, r->run, r->index, c->participant);
    return dl_save(ctx, &ck, c);
}

/* Included: the payload's reporters, with its committer if the committer
 * reports too, hold two thirds of the reporting weight. A committer that
 * reports nothing gets no say on its own payload, so weight alone never
 * includes an unfetched payload. */
static gd_status dl_fix_inclusion(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    dl_u128 active = 0, reporting = 0;
    GD_TRY(dl_fix_active_weight(r, &active));
    GD_TRY(dl_fix_reporting_weight(r, &reporting));
    dl_key k;
    dl_round_prefix(&k, DL_COMMIT, r);
    dl_list commits;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &commits, &gonka__diloco__v1__commitment__descriptor));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < commits.n; i++) {
        const dl_commitment *c = commits.items[i];
        dl_u128 w = 0; /* the tally: each reporter's weight */
        s = dl_amount128(&w, c->report_weight);
        size_t at = dl_round_find(r, c->participant);
        uint64_t own = 0;
        if (s == GD_OK && at < r->n_members && r->members[at]->reported)
            s = dl_amount(&own, r->members[at]->weight);
        if (s == GD_OK && dl_two_thirds(w + own, reporting))
            s = dl_push_str(&r->inclusion_set, &r->n_inclusion_set, c->participant);
        if (s == GD_OK)
            s = dl_fix_states_served(ctx, r, commits.items[i], own, reporting);
    }
    /* Reporting is a duty: an active member that reported nothing while
     * another member's payload was included (so available to more than a
     * third of honest weight) pays the skip slash. */
    for (size_t i = 0; s == GD_OK && i < r->n_members; i++) {
        const dl_weighted *m = r->members[i];
        if (!m->active || m->reported)
            continue;
        bool other = false;
        for (size_t j = 0; j < r->n_inclusion_set && !other; j++)
            other = strcmp(r->inclusion_set[j], m->address) != 0;
        if (other)
            s = dl_skip(ctx, run, r, m->address, GD_DUTY_REPORT, "no availability report");
    }
    char count[24];
    dl_amount_str(count, r->n_inclusion_set);
    if (s == GD_OK)
        s = dl_event(ctx, "diloco_inclusion_fixed", r->run, r->index, "included", count,
                     "reporting_weight", r->reporting_weight);
    dl_list_free(&commits);
    return s;
}

/* ---- dispute start ---------------------------------------------------------------------------- */

static gd_status dl_start_disputes(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    /* No draw: a dispute's jury is the whole class (dl_open_dispute), so
     * recheck_randomness stays empty. */
    return dl_assign_rechecks(ctx, run, r);
}

/* ---- end: the attestation quorum ----------------------------------------------------------- */

static int dl_attestation_cmp(const void *a, const void *b) {
    const dl_attestation *x = *(const dl_attestation *const *)a;
    const dl_attestation *y = *(const dl_attestation *const *)b;
    return memcmp(x->next_state_hash.data, y->next_state_hash.data, GD_DILOCO_HASH_LEN);
}

/* The revealed hash with the most weight (sorted, so one pass), if it has
 * two thirds of the active weight. */
static gd_status dl_quorum(const dl_round *r, dl_list *atts, dl_u128 active,
                           const dl_attestation **winner) {
    *winner = NULL;
    const dl_attestation **rev = calloc(atts->n + 1, sizeof *rev);
    if (rev == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < atts->n; i++) {
        const dl_attestation *a = atts->items[i];
        if (a->next_state_hash.len == GD_DILOCO_HASH_LEN)
            rev[n++] = a;
    }
    if (n > 1)
        qsort(rev, n, sizeof *rev, dl_attestation_cmp);
    for (size_t i = 0; i < n;) {
        dl_u128 w = 0;
        size_t j = i;
        for (; j < n && dl_attestation_cmp(&rev[i], &rev[j]) == 0; j++)
            w += dl_round_weight(r, rev[j]->attester);
        if (dl_two_thirds(w, active))
            *winner = rev[i];
        i = j;
    }
    free(rev);
    return GD_OK;
}

static gd_status dl_finish(gd_ctx *ctx, dl_run *run, dl_round *r) {
    dl_u128 active = 0;
    GD_TRY(dl_fix_active_weight(r, &active));
    dl_key k;
    dl_round_prefix(&k, DL_ATTEST, r);
    dl_list atts;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &atts, &gonka__diloco__v1__attestation__descriptor));
    const dl_attestation *winner = NULL;
    gd_status s = dl_quorum(r, &atts, active, &winner);
    if (s == GD_OK && winner != NULL) {
        s = dl_set_bytes(&r->next_state_hash, winner->next_state_hash.data, GD_DILOCO_HASH_LEN);
        if (s == GD_OK)
            s = dl_set_bytes(&run->state_hash, winner->next_state_hash.data, GD_DILOCO_HASH_LEN);
        run->rounds_aggregated++;
        r->phase = PH(DONE);
        char hex[2 * GD_DILOCO_HASH_LEN + 1];
        gd_hex_encode(hex, winner->next_state_hash.data, GD_DILOCO_HASH_LEN, false);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_round_done", r->run, r->index, "next_state_hash", hex,
                         NULL, NULL);
    } else if (s == GD_OK) {
        r->phase = PH(VOID);
        s = dl_event(ctx, "diloco_round_void", r->run, r->index, NULL, NULL, NULL, NULL);
    }
    /* Once a quorum formed, a member that attested nothing, or another hash,
     * pays the skip slash; an idle member pays it in every round. */
    /* Members and attestations both come in address order: one walk. */
    for (size_t i = 0, j = 0; s == GD_OK && i < r->n_members; i++) {
        const dl_weighted *m = r->members[i];
        while (j < atts.n &&
               gd_diloco_address_cmp(((dl_attestation *)atts.items[j])->attester, m->address) < 0)
            j++;
        const dl_attestation *mine =
            j < atts.n && strcmp(((dl_attestation *)atts.items[j])->attester, m->address) == 0
                ? atts.items[j]
                : NULL;
        if (!m->active) {
            s = dl_skip(ctx, run, r, m->address, GD_DUTY_TAKE_PART, "idle");
            continue;
        }
        if (winner == NULL)
            continue;
        if (mine == NULL || mine->next_state_hash.len != GD_DILOCO_HASH_LEN)
            s = dl_skip(ctx, run, r, m->address, GD_DUTY_ATTEST, "absent attestation");
        else if (memcmp(mine->next_state_hash.data, winner->next_state_hash.data,
                        GD_DILOCO_HASH_LEN) != 0)
            s = dl_skip(ctx, run, r, m->address, GD_DUTY_ATTEST, "minority attestation");
    }
    dl_list_free(&atts);
    return s;
}

/* Runs every transition whose window has started by this height. */
static gd_status dl_advance(gd_ctx *ctx, dl_run *run, dl_round *r) {
    gd_status s = GD_OK;
    while (s == GD_OK && !dl_round_over(r) && ctx->height >= dl_next_boundary(r)) {
        switch (r->phase) {
        case PH(TRAIN): r->phase = PH(COMMIT); break;
        case PH(COMMIT): r->phase = PH(REVEAL); break;
        case PH(REVEAL):
            s = dl_round_seed(ctx, run, r);
            if (s == GD_OK)
                s = dl_assign_checks(ctx, run, r);
            r->phase = PH(VERIFY);
            break;
        case PH(VERIFY):
            s = dl_fix_inclusion(ctx, run, r);
            r->phase = PH(OPEN);
            break;
        case PH(OPEN):
            s = dl_start_disputes(ctx, run, r);
            r->phase = PH(DISPUTE);
            break;
        case PH(DISPUTE): r->phase = PH(DISPUTE_OPEN); break;
        case PH(DISPUTE_OPEN):
            s = dl_resolve(ctx, run, r);
            r->phase = PH(ATTEST);
            break;
        case PH(ATTEST): r->phase = PH(ATTEST_OPEN); break;
        case PH(ATTEST_OPEN): s = dl_finish(ctx, run, r); break;
        default: return gd_fail(GD_ERR_PARSE, "stored round has phase %d", (int)r->phase);
        }
        if (s == GD_OK)
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
        s = dl_get_round(ctx, &r, run->id, run->next_round - 1);
        if (s == GD_ERR_NOT_FOUND) /* pruned: the run has been idle a while */
            s = GD_OK;
        /* The snapshot is read only in blocks where a window starts. */
        bool due = s == GD_OK && r != NULL && !dl_round_over(r) &&
                   ctx->height >= dl_next_boundary(r);
        if (due)
            s = dl_load_members(ctx, r);
        if (due && s == GD_OK)
            s = dl_advance(ctx, run, r);
    }
    for (; s == GD_OK && run->next_settle_epoch < latest->index; run->next_settle_epoch++)
        s = dl_settle_epoch(ctx, run, run->next_settle_epoch);
    bool idle = r == NULL || dl_round_over(r);
    if (s == GD_OK && idle) {
        gd_epoch_stages st;
        gd_epoch_stages_compute(&st, latest, ep);
        if (gd_epoch_phase_at(latest, ep, ctx->height) == GD_PHASE_INFERENCE &&
            ctx->height + gd_diloco_spec_round_blocks(run->spec) <= st.next_poc_start)
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
    GD_TRY(dl_list_prefix(ctx->kv, &k, &runs, &gonka__diloco__v1__run__descriptor));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < runs.n; i++)
        s = dl_run_block(ctx, runs.items[i], &latest, &ep);
    dl_list_free(&runs);
    return s;
}
