/* The round driver (plugin/member/round_driver.h): which duties are due, from the
 * chain's view and the node's journal. */
#include "plugin/member/round_driver.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *const gd_action_names[GD_ACT_KINDS] = {
    "join",   "seal-secret", "train",          "commit",    "reveal-secret",
    "report", "check",       "reveal-verdict", "recheck",   "reveal-recheck",
    "aggregate", "seal-attest", "reveal-attest", "claim",   "leave",
};

void gd_action_describe(char *out, size_t cap, const gd_action *a) {
    const char *name = gd_action_names[a->kind];
    if (a->kind == GD_ACT_CLAIM)
        snprintf(out, cap, "%s epoch %" PRIu64, name, a->epoch);
    else if (a->kind == GD_ACT_JOIN || a->kind == GD_ACT_LEAVE)
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "%s round %" PRIu64 "%s%s", name, a->round, a->target[0] ? " " : "",
                 a->target);
}

unsigned gd_role_of(const char *name) {
    return strcmp(name, "worker") == 0      ? GD_ROLE_WORKER
           : strcmp(name, "validator") == 0 ? GD_ROLE_VALIDATOR
                                            : 0;
}

/* The windows' starts in order, end last: window i is [starts[i-1], starts[i]). */
#define GD_WINDOW_STARTS 10
static void gd_window_starts(const gd_round_windows *w, int64_t out[GD_WINDOW_STARTS]) {
    const int64_t starts[GD_WINDOW_STARTS] = {
        w->train_start,  w->commit_start,       w->reveal_start, w->verify_start,
        w->open_start,   w->dispute_start,      w->dispute_open_start,
        w->attest_start, w->attest_open_start,  w->end};
    memcpy(out, starts, sizeof starts);
}

gd_window gd_round_window_at(const gd_round_windows *w, int64_t h) {
    int64_t starts[GD_WINDOW_STARTS];
    gd_window_starts(w, starts);
    if (h < starts[0])
        return GD_WINDOW_NONE;
    for (size_t i = 1; i < GD_WINDOW_STARTS; i++)
        if (h < starts[i])
            return (gd_window)i;
    return GD_WINDOW_OVER;
}

int64_t gd_round_window_end(const gd_round_windows *w, int64_t h) {
    int64_t starts[GD_WINDOW_STARTS];
    gd_window_starts(w, starts);
    gd_window at = gd_round_window_at(w, h);
    return at == GD_WINDOW_NONE || at == GD_WINDOW_OVER ? 0 : starts[at];
}

const char *gd_window_name(gd_window w) {
    static const char *const names[] = {"none",   "train",   "commit",       "reveal",
                                        "verify", "open",    "dispute",      "dispute_open",
                                        "attest", "attest_open", "over"};
    return (unsigned)w < sizeof names / sizeof names[0] ? names[w] : "none";
}

typedef struct gd_emitter {
    gd_action *out;
    size_t cap, n;
    bool more;
} gd_emitter;

static void gd_emit(gd_emitter *e, gd_action_kind kind, uint64_t round, const char *target,
                    uint32_t check) {
    if (e->n == e->cap) {
        e->more = true;
        return;
    }
    gd_action *a = &e->out[e->n++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->round = round;
    a->check = check;
    if (target)
        snprintf(a->target, sizeof a->target, "%s", target);
}

static bool gd_listed(const char *const *items, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

gd_member_journal gd_journal_at(const gd_member_journal *j, uint64_t round) {
    if (j->round == round)
        return *j;
    return (gd_member_journal){.round = round, .join_sent = j->join_sent,
                             .leave_wanted = j->leave_wanted, .sealed_upto = j->sealed_upto,
                             .bonded = j->bonded};
}

bool gd_journal_trained(const gd_member_journal *j, uint64_t round) {
    return (j->round == round && j->trained) || (j->round + 1 == round && j->ahead);
}

/* With overlap, a worker whose commitment of the current round r is on
 * chain knows S_{r+1} = G_r - Δ̂_{w,r} already: it trains round r + 1 while
 * round r is checked and aggregated (and in the gap before r + 1 opens),
 * as the last duty of each step, so every duty of round r goes first. Only
 * for the round it sealed a secret for (it takes part in it). */
static bool gd_trains_ahead(const gd_duty_config *cfg, const gd_chain_view *v,
                            const gd_member_journal *j) {
    const gd_round_view *r = &v->round;
    return (cfg->roles & GD_ROLE_WORKER) != 0 && v->overlap && v->have_round && r->committed &&
           v->next_round == r->index + 1 && v->sealed_next &&
           !gd_journal_trained(j, r->index + 1);
}

/* The duties of a live round this node is a member of, by window. The view
 * is the state at its height h; what is sent now lands in block h + 1, so
 * a duty is due only if h + 1 is still in its window. A duty that needs
 * what the window's first block fixed (the seed's draws at verify start,
 * the re-checkers at dispute start, the aggregation set at attest start)
 * is due only once the view shows that block, h inside the window too. */
static void gd_round_duties(gd_emitter *e, const gd_duty_config *cfg, const gd_chain_view *v,
                            const gd_member_journal *j) {
    const gd_round_view *r = &v->round;
    gd_window at = gd_round_window_at(&r->windows, v->height + 1);
    bool fixed = gd_round_window_at(&r->windows, v->height) == at; /* its start is visible */
    bool mine = j->round == r->index; /* the journal speaks of this round */
    bool worker = (cfg->roles & GD_ROLE_WORKER) != 0;
    switch (at) {
    case GD_WINDOW_TRAIN:
    case GD_WINDOW_COMMIT:
        /* Training late in the commit window commits in the same step. */
        if (worker && !r->committed && !gd_journal_trained(j, r->index))
            gd_emit(e, GD_ACT_TRAIN, r->index, NULL, 0);
        if (at == GD_WINDOW_COMMIT && worker && !r->committed)
            gd_emit(e, GD_ACT_COMMIT, r->index, NULL, 0);
        break;
    case GD_WINDOW_REVEAL:
        if (r->secret_sealed && !r->secret_revealed)
            gd_emit(e, GD_ACT_REVEAL_SECRET, r->index, NULL, 0);
        break;
    case GD_WINDOW_VERIFY:
        if (!fixed)
            break;
        for (size_t i = 0; i < r->n_commitments; i++)
            if (strcmp(r->commitments[i], v->address) != 0 &&
                !gd_listed(r->reported, r->n_reported, r->commitments[i]))
                gd_emit(e, GD_ACT_REPORT, r->index, r->commitments[i], 0);
        /* A check of its own commitment: its own digest (no re-execution). */
        for (size_t i = 0; i < r->n_checks; i++)
            if ((r->checks[i].validator || r->checks[i].own) && !r->checks[i].sealed)
                gd_emit(e, GD_ACT_CHECK, r->index, r->checks[i].target, r->checks[i].check);
        break;
    case GD_WINDOW_OPEN:
        for (size_t i = 0; i < r->n_checks; i++)
            if ((r->checks[i].validator || r->checks[i].own) && r->checks[i].sealed &&
                !r->checks[i].revealed)
                gd_emit(e, GD_ACT_REVEAL_VERDICT, r->index, r->checks[i].target,
                        r->checks[i].check);
        break;
    case GD_WINDOW_DISPUTE:
        for (size_t i = 0; fixed && i < r->n_checks; i++)
            if (r->checks[i].rechecker && !r->checks[i].sealed)
                gd_emit(e, GD_ACT_RECHECK, r->index, r->checks[i].target, r->checks[i].check);
        break;
    case GD_WINDOW_DISPUTE_OPEN:
        for (size_t i = 0; i < r->n_checks; i++)
            if (r->checks[i].rechecker && r->checks[i].sealed && !r->checks[i].revealed)
                gd_emit(e, GD_ACT_REVEAL_RECHECK, r->index, r->checks[i].target,
                        r->checks[i].check);
        break;
    case GD_WINDOW_ATTEST:
        if (!fixed)
            break;
        /* The seal follows the aggregate in the same step (it fails, and
         * stays due, if the aggregate could not be made). */
        if (!(mine && j->aggregated))
            gd_emit(e, GD_ACT_AGGREGATE, r->index, NULL, 0);
        if (!r->attest_sealed)
            gd_emit(e, GD_ACT_SEAL_ATTEST, r->index, NULL, 0);
        break;
    case GD_WINDOW_ATTEST_OPEN:
        if (r->attest_sealed && !r->attest_revealed)
            gd_emit(e, GD_ACT_REVEAL_ATTEST, r->index, NULL, 0);
        break;
    default: break;
    }
}

bool gd_round_driver_step(const gd_duty_config *cfg, const gd_chain_view *v,
                          const gd_member_journal *j, gd_action *out, size_t cap, size_t *n) {
    gd_emitter e = {out, cap, 0, false};
    bool ahead = false;
    if (!v->member) {
        if (cfg->join && !j->join_sent && !j->leave_wanted)
            gd_emit(&e, GD_ACT_JOIN, 0, NULL, 0);
    } else {
        bool staying = !v->leaving && !j->leave_wanted;
        if (j->leave_wanted && !v->leaving)
            gd_emit(&e, GD_ACT_LEAVE, 0, NULL, 0);
        /* Taking part in the next round starts with its secret's seal. */
        if (staying && !v->sealed_next)
            gd_emit(&e, GD_ACT_SEAL_SECRET, v->next_round, NULL, 0);
        if (v->have_round && !v->round.over && v->round.in_snapshot)
            gd_round_duties(&e, cfg, v, j);
        if (staying && gd_trains_ahead(cfg, v, j))
            ahead = true;
    }
    /* Whoever was settled something claims it, member or not any more. */
    if (v->claim_open && v->owed > 0 && !v->claimed) {
        size_t before = e.n;
        gd_emit(&e, GD_ACT_CLAIM, 0, NULL, 0);
        if (e.n > before)
            e.out[before].epoch = v->claim_epoch;
    }
    if (ahead)
        gd_emit(&e, GD_ACT_TRAIN, v->round.index + 1, NULL, 0);
    *n = e.n;
    return e.more;
}
