/* Each duty the round driver returns, done by a member
 * (plugin/member/member_internal.h): the dispatch to the file of its family
 * (member_train.c, member_report.c, member_check.c, member_aggregate.c),
 * and the small duties that only build a message: join, leave, claim, and
 * the seal and reveal of the round's secret. */
#include <inttypes.h>
#include <string.h>

#include "common/secure.h"
#include "plugin/member/member_internal.h"

/* Whether the run takes this member as node.yaml configures it: its
 * hardware class among the run's, its collateral in the run's denom and at
 * least its min_collateral. What the run refuses only the operator can
 * fix, and every join the chain refused would pay its fee: the daemon
 * stops instead of sending it. */
static gd_status gd_member_join_allowed(const gd_member *n) {
    const Gonka__Diloco__V1__Run *run = n->ans.run ? n->ans.run->run : NULL;
    const Gonka__Diloco__V1__RunSpec *spec = run ? run->spec : NULL;
    if (spec == NULL)
        return GD_OK; /* nothing to judge by: the chain decides */
    if (!gd_run_spec_lists_class(spec, n->hw_class))
        return gd_fail(GD_ERR_INVALID,
                       "run %" PRIu64 " does not take hardware class %s (it takes %s%s%s): set "
                       "hardware_class in node.yaml and restart; a join would be refused and "
                       "pay its fee",
                       n->o.run, n->hw_class, spec->n_hw_classes ? spec->hw_classes[0] : "none",
                       spec->n_hw_classes > 1 ? ", " : "",
                       spec->n_hw_classes > 1 ? spec->hw_classes[1] : "");
    const Cosmos__Base__V1beta1__Coin *min = spec->min_collateral;
    const gd_coin *c = &n->o.collateral;
    if (!gd_run_spec_takes_collateral(spec, c))
        return gd_fail(GD_ERR_INVALID,
                       "collateral %s%s is below run %" PRIu64 "'s min_collateral %s%s: set "
                       "collateral in node.yaml and restart; a join would be refused and pay "
                       "its fee",
                       c->amount, c->denom, n->o.run, min->amount, min->denom);
    return GD_OK;
}

static gd_status gd_duty_secret(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    uint8_t secret[32], sealed[32];
    gd_member_salt(n, secret, GD_SEAL_RANDOMNESS, a->round, NULL, 0);
    gd_status s;
    if (a->kind == GD_ACT_SEAL_SECRET) {
        gd_diloco_seal(sealed, GD_SEAL_RANDOMNESS, n->address, NULL, 0, secret);
        s = gd_diloco_msg_randomness_sealed(msg, n->address, n->o.run, a->round, sealed);
    } else {
        s = gd_diloco_msg_randomness_revealed(msg, n->address, n->o.run, a->round, secret);
    }
    gd_wipe(secret, sizeof secret);
    *sent = s == GD_OK;
    return s;
}

gd_status gd_member_duty(gd_member *n, const gd_action *a, gd_any *msgs, size_t cap,
                       size_t *n_msgs) {
    if (*n_msgs >= cap)
        return GD_OK;
    /* Built aside: a duty that computes sends the queue first
     * (gd_member_before_compute), which empties msgs under it. */
    gd_any one;
    gd_any *msg = &one;
    memset(msg, 0, sizeof *msg);
    bool sent = false;
    gd_status s = GD_OK;
    if (n->o.duty != NULL && n->o.duty(a, n->address, n->o.run, n->ans.round, msg, &sent)) {
        if (sent)
            msgs[(*n_msgs)++] = one;
        else
            gd_any_free(msg);
        return GD_OK;
    }
    switch (a->kind) {
    case GD_ACT_JOIN:
        if ((s = gd_member_join_allowed(n)) != GD_OK)
            return s; /* stops the member: not a duty to try again */
        s = gd_diloco_msg_join_run(msg, n->address, n->o.run, n->artifact_url, n->hw_class,
                                   &n->o.collateral);
        sent = s == GD_OK;
        break;
    case GD_ACT_SEAL_SECRET:
    case GD_ACT_REVEAL_SECRET: s = gd_duty_secret(n, a, msg, &sent); break;
    case GD_ACT_TRAIN: s = gd_duty_train(n, a); break;
    case GD_ACT_COMMIT: s = gd_duty_commit(n, a->round, msg, &sent); break;
    case GD_ACT_REPORT: s = gd_duty_report(n, a, msg, &sent); break;
    case GD_ACT_CHECK:
    case GD_ACT_REVEAL_VERDICT:
    case GD_ACT_RECHECK:
    case GD_ACT_REVEAL_RECHECK: s = gd_duty_answer(n, a, msg, &sent); break;
    case GD_ACT_AGGREGATE: s = gd_duty_aggregate(n, a->round); break;
    case GD_ACT_SEAL_ATTEST:
    case GD_ACT_REVEAL_ATTEST: s = gd_duty_attest(n, a, msg, &sent); break;
    case GD_ACT_CLAIM:
        s = gd_diloco_msg_claim_rewards(msg, n->address, n->o.run, a->epoch);
        sent = s == GD_OK;
        break;
    case GD_ACT_LEAVE:
        s = gd_diloco_msg_leave_run(msg, n->address, n->o.run);
        sent = s == GD_OK;
        break;
    default: break;
    }
    if (s != GD_OK && s != GD_ERR_NOMEM && s != GD_ERR_IO) {
        /* A duty that failed for a reason outside this node stays due. */
        char what[160];
        gd_action_describe(what, sizeof what, a);
        gd_member_error(n, "height %" PRId64 ": %s: %s", n->view.view.height, what,
                        gd_error_detail());
        s = GD_OK;
        sent = false;
    }
    if (sent)
        msgs[(*n_msgs)++] = one;
    else
        gd_any_free(msg);
    return s;
}
