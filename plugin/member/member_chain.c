/* A member's exchange with the chain (plugin/member/member_internal.h):
 * reading it into the step's view, which duties are due (with the ones the
 * chain keeps refusing set aside), sending their messages in transactions,
 * settling the transactions sent ahead and taking what the chain said of
 * each into the journal and stats. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "plugin/member/member_internal.h"

static uint64_t gd_coin_u64(const char *amount) {
    if (amount == NULL || amount[0] < '0' || amount[0] > '9')
        return 0;
    char *end = NULL;
    unsigned long long v = strtoull(amount, &end, 10);
    return end && *end == '\0' ? (uint64_t)v : 0;
}

/* The member's standing and what it waits for, from the view just read
 * (under n->mu): so that a member that stopped earning says why. */
static void gd_member_explain(const gd_member *n, gd_member_stats *st,
                              const Gonka__Diloco__V1__Member *me) {
    const gd_chain_view *v = &n->view.view;
    const gd_member_journal *j = &n->journal;
    st->membership_reason[0] = '\0';
    st->waiting_until = 0;
    uint64_t round = v->have_round ? v->round.index : v->next_round;
    if (me == NULL && j->bonded > 0 && !j->leave_wanted) {
        st->membership = "removed";
        snprintf(st->membership_reason, sizeof st->membership_reason,
                 "the chain no longer lists this member (its collateral was slashed below "
                 "min_collateral); restart it with collateral to take part again");
    } else if (me == NULL) {
        st->membership = "not_joined";
        snprintf(st->membership_reason, sizeof st->membership_reason, "%s",
                 j->leave_wanted ? "left the run (node leave)"
                 : j->join_sent  ? "its join is sent and not yet in a block"
                 : n->o.join     ? "it joins at the next block"
                                 : "joining is off");
    } else if (me->suspended_until > round) {
        st->membership = "suspended";
        snprintf(st->membership_reason, sizeof st->membership_reason,
                 "suspended until round %" PRIu64 " (a cheat of its was proven)",
                 me->suspended_until);
    } else {
        st->membership = "member";
        if (me->leaving)
            snprintf(st->membership_reason, sizeof st->membership_reason,
                     "leaving: released once no live round holds it");
    }
    if (me == NULL) {
        snprintf(st->waiting_for, sizeof st->waiting_for, "%s",
                 strcmp(st->membership, "removed") == 0 ? "nothing: removed from the run"
                                                        : "its membership");
    } else if (!v->have_round || v->round.over) {
        snprintf(st->waiting_for, sizeof st->waiting_for, "round %" PRIu64 " to open",
                 v->next_round);
    } else if (!v->round.in_snapshot) {
        snprintf(st->waiting_for, sizeof st->waiting_for,
                 "round %" PRIu64 " to end (it joined after the round's snapshot)",
                 v->round.index);
        st->waiting_until = v->round.windows.end;
    } else {
        gd_window w = gd_round_window_at(&v->round.windows, v->height + 1);
        snprintf(st->waiting_for, sizeof st->waiting_for, "round %" PRIu64 "'s %s window to end",
                 v->round.index, gd_window_name(w));
        st->waiting_until = gd_round_window_end(&v->round.windows, v->height + 1);
    }
}

/* The chain dropped this member (its collateral fell below the run's
 * minimum, by slashes; maybe while the node was down) and paid back what
 * was left. A node that joins by itself joins again, once per start, with
 * its configured collateral; removed a second time, or with joining off,
 * it stops with the reason: a member that keeps losing its collateral
 * needs its operator, and one that runs on outside the run earns nothing. */
static gd_status gd_member_removed(gd_member *n) {
    const char *why = n->stats.membership_reason;
    if (!n->o.join)
        return gd_fail(GD_ERR_INVALID, "run %" PRIu64 ": %s (join is off in node.yaml, so it "
                       "does not join again by itself)", n->o.run, why);
    if (n->rejoined)
        return gd_fail(GD_ERR_INVALID, "run %" PRIu64 ": removed again after it joined again: "
                       "see its errors and missed duties before it bonds more collateral; "
                       "restart it to join once more", n->o.run);
    n->rejoined = true;
    gd_member_error(n, "run %" PRIu64 ": %s; joining again with collateral %s%s", n->o.run, why,
                    n->o.collateral.amount, n->o.collateral.denom);
    n->journal.join_sent = false;
    n->journal.bonded = 0;
    return gd_journal_save(&n->store, &n->journal);
}

bool gd_commit_headroom_thin(int64_t left, int64_t usable) {
    return 4 * left < usable;
}

/* This node's commitment in the current round, once the chain shows it:
 * where it landed in the commit window (Commitment.height) goes to the
 * stats, with a warning the first time it came too close, while there is
 * still a round to act in. The landing block, not the node's clock: a
 * training that ran into the commit window, or a transaction that waited
 * for blocks, shows the same. */
static void gd_member_note_headroom(gd_member *n) {
    const gd_chain_view *v = &n->view.view;
    const Gonka__Diloco__V1__Commitment *c =
        v->have_round ? gd_commitment_in(n->ans.round, n->address) : NULL;
    const gd_round_windows *w = &v->round.windows;
    int64_t usable = w->reveal_start - 1 - w->commit_start;
    if (c == NULL || c->height < w->commit_start || c->height >= w->reveal_start)
        return;
    pthread_mutex_lock(&n->mu);
    gd_member_stats *st = &n->stats;
    bool seen = st->have_headroom && st->headroom_round == v->round.index;
    st->have_headroom = true;
    st->headroom_round = v->round.index;
    st->headroom_left = w->reveal_start - 1 - c->height;
    st->headroom_usable = usable;
    pthread_mutex_unlock(&n->mu);
    if (!seen && gd_commit_headroom_thin(w->reveal_start - 1 - c->height, usable))
        GD_LOG_WARN("node",
                    "round %" PRIu64 ": the commitment landed at height %" PRId64
                    " with %" PRId64 " of the commit window's %" PRId64
                    " blocks left after it: a round a little slower misses the window and pays "
                    "the skip slash; train faster (more GPUs, a faster backend, recompute "
                    "none) or ask the run for a longer train window",
                    v->round.index, c->height, w->reveal_start - 1 - c->height, usable + 1);
}

/* Reads the chain into the node's answers and view; updates the stats. */
gd_status gd_member_read(gd_member *n) {
    n->read_ms = gd_clock_ms();
    gd_chain_view_free(&n->view);
    gd_chain_answers_free(&n->ans);
    int64_t height = 0;
    gd_claim_state claims = {false, 0};
    gd_status s = n->chain.iface->read(n->chain.ctx, n->o.run, n->address, &n->ans, &height,
                                       &claims);
    /* An outage goes into the node's errors once, when it begins. */
    if (s != GD_OK && s != GD_ERR_NOMEM && s != GD_ERR_CANCELLED && !n->chain_down) {
        n->chain_down = true;
        gd_member_error(n, "the chain cannot be read: %s", gd_error_detail());
    }
    GD_TRY(s);
    n->chain_down = false;
    /* The chain's pace, which turns a window's blocks into a deadline for
     * the fetches of its duties. */
    if (height > n->pace_height) {
        if (n->pace_height > 0) {
            double sample = (double)(n->read_ms - n->pace_ms) / (double)(height - n->pace_height);
            n->block_ms = n->block_ms > 0 ? 0.75 * n->block_ms + 0.25 * sample : sample;
        }
        n->pace_height = height;
        n->pace_ms = n->read_ms;
    }
    uint64_t next = n->ans.run->run ? n->ans.run->run->next_round : 0;
    GD_TRY(gd_chain_view_build(&n->view, n->address, height, n->ans.run, n->ans.round,
                               n->ans.rewards, &claims, n->journal.sealed_upto > next));
    const gd_chain_view *v = &n->view.view;
    const Gonka__Diloco__V1__Member *me = gd_member_lookup(n, n->address);
    uint64_t bonded = me ? gd_coin_u64(me->collateral) : 0;
    if (me && n->journal.bonded == 0 && bonded > 0) {
        n->journal.bonded = bonded;
        GD_TRY(gd_journal_save(&n->store, &n->journal));
    }
    pthread_mutex_lock(&n->mu);
    gd_member_stats *st = &n->stats;
    st->read_ok_ms = gd_clock_ms();
    st->height = v->height;
    st->have_round = v->have_round;
    st->round = v->round.index;
    st->round_over = v->have_round && v->round.over;
    st->windows = v->round.windows;
    st->window = v->have_round ? gd_round_window_at(&v->round.windows, v->height + 1)
                               : GD_WINDOW_NONE;
    if (me && n->journal.bonded > bonded && !me->leaving)
        st->slashed = n->journal.bonded - bonded;
    const char *was = st->membership;
    gd_member_explain(n, st, me);
    bool removed = st->membership && strcmp(st->membership, "removed") == 0 &&
                   (was == NULL || strcmp(was, "removed") != 0);
    pthread_mutex_unlock(&n->mu);
    if (removed)
        GD_TRY(gd_member_removed(n));
    gd_member_note_headroom(n);
    gd_member_watch_disk(n);
    return gd_member_count_missed(n);
}

static bool gd_action_same(const gd_action *a, const gd_action *b) {
    return a->kind == b->kind && a->round == b->round && a->epoch == b->epoch &&
           a->check == b->check && strcmp(a->target, b->target) == 0;
}

static size_t gd_member_suspect_at(const gd_member *n, const gd_action *a) {
    size_t i = 0;
    while (i < n->n_suspects && !gd_action_same(a, &n->suspects[i].act))
        i++;
    return i;
}

/* A refused transaction of one duty names the duty; of several, none (the
 * chain refuses the whole transaction): the next steps send one duty each
 * until one is refused alone. */
static void gd_member_refused(gd_member *n, const gd_action *acts, size_t n_acts) {
    if (n_acts != 1) {
        n->solo = true;
        return;
    }
    n->solo = false;
    size_t at = gd_member_suspect_at(n, &acts[0]);
    if (at == n->n_suspects) {
        if (n->n_suspects == GD_MEMBER_MSGS_MAX)
            return;
        n->suspects[n->n_suspects++] = (gd_member_suspect){.act = acts[0]};
    }
    /* The first retry is at the next block (a duty refused at a window's
     * edge, by a view a block behind, passes there and must not miss a
     * short window); each later refusal doubles the wait (2, 4, .. 64):
     * every try pays a fee, and a duty refused twice is rarely passed at
     * the next block. */
    gd_member_suspect *sus = &n->suspects[at];
    unsigned wait = sus->tries < 7 ? 1u << sus->tries : GD_MEMBER_RETRY_MAX;
    sus->tries++;
    sus->retry_height = n->view.view.height + (int64_t)wait;
}

static void gd_member_accepted(gd_member *n, const gd_action *acts, size_t n_acts) {
    n->solo = false;
    for (size_t i = 0; i < n_acts; i++) {
        size_t at = gd_member_suspect_at(n, &acts[i]);
        if (at < n->n_suspects)
            n->suspects[at] = n->suspects[--n->n_suspects];
    }
}

/* What the step sends: its duties with the suspects set aside (they never
 * hold up the others, however often the chain refuses them), or, when
 * nothing else is due, the first suspect whose wait is over alone to try
 * it again; while solo, one duty per transaction. */
size_t gd_member_due(const gd_member *n, gd_action *acts, size_t n_acts) {
    size_t kept = 0, first_suspect = n_acts;
    for (size_t i = 0; i < n_acts; i++) {
        size_t at = gd_member_suspect_at(n, &acts[i]);
        if (at == n->n_suspects)
            acts[kept++] = acts[i];
        else if (first_suspect == n_acts && n->view.view.height >= n->suspects[at].retry_height)
            first_suspect = i;
    }
    if (kept == 0 && first_suspect < n_acts) {
        acts[0] = acts[first_suspect];
        kept = 1;
    }
    return kept;
}

/* What the chain said of a transaction of n_acts duties (s: how sending or
 * settling it went, code and log: its result): logged, and the journal,
 * stats and done (the duties accepted) follow what it accepted. */
static gd_status gd_member_outcome(gd_member *n, gd_status s, uint32_t code, const char *log,
                                   const gd_action *acts, size_t n_acts, size_t *done) {
    int64_t h = n->view.view.height;
    if (s == GD_ERR_CANCELLED)
        return s; /* the node stops; the duty is due again after a restart */
    char what[160];
    gd_action_describe(what, sizeof what, &acts[0]);
    if (s == GD_ERR_INVALID) /* the port says no transaction of this node can pass */
        return gd_fail_context(s, "height %" PRId64 ": sending %s", h, what);
    if (s != GD_OK) {
        gd_member_error(n, "height %" PRId64 ": sending %s: %s", h, what, gd_error_detail());
        return GD_OK; /* due again next step */
    }
    if (code != 0 && n_acts == 1 && acts[0].kind == GD_ACT_JOIN)
        return gd_fail(GD_ERR_INVALID, "height %" PRId64 ": run %" PRIu64 " refused this node's "
                       "join with code %u: %s; fix what it says and restart (another try would "
                       "pay its fee again)", h, n->o.run, code, log);
    if (code != 0) {
        gd_member_refused(n, acts, n_acts);
        gd_member_error(n, "height %" PRId64 ": %s refused with code %u: %s", h, what, code, log);
        return GD_OK;
    }
    gd_member_accepted(n, acts, n_acts);
    *done += n_acts;
    for (size_t i = 0; i < n_acts; i++) {
        gd_action_describe(what, sizeof what, &acts[i]);
        GD_LOG_INFO("node", "height %" PRId64 ": %s done", h, what);
        if (acts[i].kind == GD_ACT_SEAL_SECRET && n->journal.sealed_upto <= acts[i].round) {
            n->journal.sealed_upto = acts[i].round + 1;
            GD_TRY(gd_journal_save(&n->store, &n->journal));
        }
        if (acts[i].kind == GD_ACT_JOIN || acts[i].kind == GD_ACT_LEAVE) {
            n->journal.join_sent |= acts[i].kind == GD_ACT_JOIN;
            GD_TRY(gd_journal_save(&n->store, &n->journal));
        }
        if (acts[i].kind == GD_ACT_COMMIT) {
            pthread_mutex_lock(&n->mu);
            n->stats.committed[n->stats.n_committed++ % GD_MEMBER_COMMITTED] = acts[i].round;
            pthread_mutex_unlock(&n->mu);
        }
        if (acts[i].kind == GD_ACT_CLAIM) {
            pthread_mutex_lock(&n->mu);
            n->stats.rewards_claimed += n->view.view.owed;
            pthread_mutex_unlock(&n->mu);
        }
    }
    return GD_OK;
}

/* Waits for every transaction sent ahead and takes what the chain said of
 * each, in the order sent; done counts the duties accepted. */
gd_status gd_member_settle(gd_member *n, size_t *done) {
    gd_status first = GD_OK;
    for (size_t i = 0; i < n->n_waiting; i++) {
        uint32_t code = 0;
        char log[256] = "";
        gd_status s = n->chain.iface->settle(n->chain.ctx, n->waiting[i].ticket, &code, log,
                                             sizeof log);
        s = gd_member_outcome(n, s, code, log, n->waiting[i].acts, n->waiting[i].n_acts, done);
        if (s != GD_OK && first == GD_OK)
            first = s;
    }
    n->n_waiting = 0;
    return first;
}

/* Sends one transaction of n_acts duties: ahead, where the chain port can
 * (settled by gd_member_settle), else waiting for its block. done counts
 * the duties accepted so far. */
static gd_status gd_member_send(gd_member *n, const gd_any *msgs, size_t n_msgs,
                                const gd_action *acts, size_t n_acts, size_t *done) {
    uint32_t code = 0, ticket = 0;
    char log[256] = "";
    if (n->chain.iface->send == NULL) {
        gd_status s = n->chain.iface->submit(n->chain.ctx, &n->key, msgs, n_msgs, &code, log,
                                             sizeof log);
        return gd_member_outcome(n, s, code, log, acts, n_acts, done);
    }
    if (n->n_waiting == GD_MEMBER_WAITING)
        GD_TRY(gd_member_settle(n, done));
    gd_status s = n->chain.iface->send(n->chain.ctx, &n->key, msgs, n_msgs, &ticket, &code, log,
                                       sizeof log);
    if (s != GD_OK || code != 0) /* not admitted: nothing waits */
        return gd_member_outcome(n, s, code, log, acts, n_acts, done);
    n->waiting[n->n_waiting].ticket = ticket;
    memcpy(n->waiting[n->n_waiting].acts, acts, n_acts * sizeof *acts);
    n->waiting[n->n_waiting].n_acts = n_acts;
    n->n_waiting++;
    return GD_OK;
}

bool gd_member_others_due(gd_member *n, const gd_action *self) {
    if (n->stop != NULL && *n->stop)
        return true;
    unsigned every = n->o.ahead_read_ms ? n->o.ahead_read_ms : GD_MEMBER_AHEAD_READ_MS;
    if (gd_clock_ms() - n->read_ms < (int64_t)every)
        return false;
    int64_t before = n->view.view.height;
    n->reread = true;
    if (gd_member_read(n) != GD_OK)
        return true;
    /* The duties of this height went before this one. */
    if (n->view.view.height == before)
        return false;
    gd_duty_config cfg = {n->o.roles, n->o.join};
    gd_action acts[GD_MEMBER_MSGS_MAX];
    size_t n_acts = 0;
    (void)gd_round_driver_step(&cfg, &n->view.view, &n->journal, acts, GD_MEMBER_MSGS_MAX, &n_acts);
    n_acts = gd_member_due(n, acts, n_acts);
    for (size_t i = 0; i < n_acts; i++)
        if (!gd_action_same(&acts[i], self))
            return true;
    return false;
}

/* Sends the messages gathered so far in one transaction and empties the
 * batch. */
gd_status gd_member_flush(gd_member *n, gd_any *msgs, size_t *n_msgs, gd_action *sent,
                          size_t *n_sent, size_t *done) {
    gd_status s = gd_member_send(n, msgs, *n_msgs, sent, *n_sent, done);
    for (size_t k = 0; k < *n_msgs; k++)
        gd_any_free(&msgs[k]);
    *n_msgs = *n_sent = 0;
    return s;
}

gd_status gd_member_before_compute(gd_member *n) {
    n->computed = true;
    if (n->outbox.msgs == NULL || *n->outbox.n_msgs == 0)
        return GD_OK;
    (*n->outbox.flushes)++;
    return gd_member_flush(n, n->outbox.msgs, n->outbox.n_msgs, n->outbox.sent,
                           n->outbox.n_sent, n->outbox.done);
}
