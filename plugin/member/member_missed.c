/* What the chain says this member missed (plugin/member/member_internal.h):
 * the duties its snapshot record of a finished round lists as skipped
 * (WeightedMember.missed), each logged once and counted by duty. The chain
 * is the judge, not the member's own view: a duty that fell due while the
 * chain could not be read was never seen as due here, but the chain
 * slashed it all the same. */
#include <inttypes.h>
#include <string.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

const char *const gd_missed_duty_names[GD_MISSED_DUTIES] = {
    GD_DUTY_CHECK, GD_DUTY_DIGEST,    GD_DUTY_RECHECK, GD_DUTY_SERVE,         GD_DUTY_REPORT,
    GD_DUTY_ATTEST, GD_DUTY_TAKE_PART, GD_DUTY_REVEAL_SECRET, "other",
};

static size_t gd_missed_duty_at(const char *duty) {
    size_t i = 0;
    while (i + 1 < GD_MISSED_DUTIES && strcmp(gd_missed_duty_names[i], duty) != 0)
        i++;
    return i; /* a name this version does not know counts as "other" */
}

/* Takes round's record of this member into the log and the counters. */
static void gd_member_take_missed(gd_member *n, const Gonka__Diloco__V1__Round *round) {
    const Gonka__Diloco__V1__WeightedMember *me = NULL;
    for (size_t i = 0; i < round->n_members && me == NULL; i++)
        if (strcmp(round->members[i]->address, n->address) == 0)
            me = round->members[i];
    if (me == NULL)
        return;
    for (size_t i = 0; i < me->n_missed; i++) {
        size_t at = gd_missed_duty_at(me->missed[i]);
        pthread_mutex_lock(&n->mu);
        n->stats.missed[at]++;
        pthread_mutex_unlock(&n->mu);
        gd_member_error(n, "round %" PRIu64 ": the chain slashed this member for a missed %s duty",
                        round->index, me->missed[i]);
    }
}

gd_status gd_member_count_missed(gd_member *n) {
    const gd_chain_view *v = &n->view.view;
    uint64_t now = v->have_round ? v->round.index : v->next_round;
    if (!n->missed_started) {
        /* A fresh start counts from the round before the current one: what
         * was counted before a restart is not counted again for long. */
        n->missed_started = true;
        n->missed_upto = now > 0 ? now - 1 : 0;
    }
    /* At most a few rounds a read: a long outage catches up over reads. */
    for (int reads = 0; reads < 4 && n->missed_upto <= now; reads++) {
        uint64_t r = n->missed_upto;
        const Gonka__Diloco__V1__Round *round = NULL;
        Gonka__Diloco__V1__QueryRoundResponse *q = NULL;
        if (r == now) {
            if (!v->have_round || !v->round.over)
                break; /* not over: its record may still grow */
            round = gd_member_round(n);
        } else {
            gd_status s = n->chain.iface->query_round(n->chain.ctx, &q, n->o.run, r);
            if (s == GD_ERR_NOT_FOUND) {
                n->missed_upto++; /* pruned, or never opened */
                continue;
            }
            if (s == GD_ERR_NOMEM || s == GD_ERR_CANCELLED)
                return s;
            if (s != GD_OK) {
                GD_LOG_DEBUG("node", "round %" PRIu64 "'s record cannot be read yet: %s", r,
                             gd_error_detail());
                return GD_OK; /* the next read tries again */
            }
            round = q->round;
            if (round == NULL || (round->phase != GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE &&
                                  round->phase != GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VOID)) {
                protobuf_c_message_free_unpacked(&q->base, NULL);
                break;
            }
        }
        gd_member_take_missed(n, round);
        if (q != NULL)
            protobuf_c_message_free_unpacked(&q->base, NULL);
        n->missed_upto++;
    }
    return GD_OK;
}
