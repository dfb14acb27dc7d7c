/* The incentive model, measured: the DiLoCo module driven in process over
 * many rounds and epochs by W members, with chosen numbers of fakers (each
 * fakes a fraction of its segments every round), withholders (no
 * checkpoints), lazy validators (PASS with a made-up digest), colluders
 * (fake everything, pass each other), idle members, and the red-team
 * review's attackers (docs/verification.md): framers (a coalition that
 * FAILs honest targets as validators and jurors), lazy-single validators
 * (a made-up PASS on single checks only), early passers (the digest of a
 * partial re-execution), late servers (states served only from dispute
 * start), skippers (no answer to the checks they hold), grinders
 * (secrets sealed and withheld, last, to choose the seed) and drippers (a
 * payload dripped past the verify window); everyone else is honest. Prints per behaviour: how often it was caught (per round and per
 * epoch) next to the model's probability (docs/verification.md, "The
 * incentive model"), its pay per member and epoch relative to an honest
 * member's, the same net of slashes, and how many of its members were
 * slashed at all (for honest members: must be 0).
 * Usage: gd-bench-incentives [--members W] [--epochs E] [--epoch-length B]
 *          [--fakers N] [--fake-fraction F] [--withholders N] [--lazy N]
 *          [--colluders N] [--idle N] [--framers N] [--lazy-single N]
 *          [--pass-early N] [--late-servers N] [--skippers N] [--grinders N]
 *          [--drippers N]
 *          [--json] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/diloco_driver.h"

#define SEGMENTS 8
#define CHECKS 4       /* the spec's checks_per_commit */
#define DOUBLE_P 0.5   /* and double_check_ppm / 10^6 */

typedef struct role_stats {
    int members;
    double rounds, caught_rounds;   /* rounds it committed; of them, caught */
    double epochs, caught_epochs;   /* epochs it committed in; of them, caught in */
    double model_epochs;            /* the model's sum over those epochs */
    double checks;                  /* checks it was assigned */
    double faked_share;             /* sum of faked / segments over committed rounds */
    double paid, slashed;
    int slashed_members;
} role_stats;

typedef struct opts {
    int members, epochs, counts[GD_DD_ROLES];
    double fake_fraction;
    int64_t epoch_length;
    bool json;
} opts;

static int parse(int argc, char **argv, opts *o) {
    *o = (opts){.members = 40, .epochs = 3, .fake_fraction = 0.25, .epoch_length = 400};
    o->counts[GD_DD_FAKER] = 4;
    o->counts[GD_DD_WITHHOLDER] = 2;
    o->counts[GD_DD_LAZY] = 2;
    o->counts[GD_DD_COLLUDER] = 3;
    o->counts[GD_DD_IDLE] = 1;
    o->counts[GD_DD_FRAMER] = 3;
    o->counts[GD_DD_LAZY_SINGLE] = 2;
    o->counts[GD_DD_PASS_EARLY] = 1;
    o->counts[GD_DD_LATE_SERVER] = 1;
    o->counts[GD_DD_SKIPPER] = 2;
    o->counts[GD_DD_GRINDER] = 1;
    o->counts[GD_DD_DRIPPER] = 1;
    static const char *const names[] = {"--fakers",      "--withholders", "--lazy",
                                        "--colluders",   "--idle",        "--framers",
                                        "--lazy-single", "--pass-early",  "--late-servers",
                                        "--skippers",    "--grinders",    "--drippers"};
    static const gd_dd_role which[] = {GD_DD_FAKER,       GD_DD_WITHHOLDER, GD_DD_LAZY,
                                       GD_DD_COLLUDER,    GD_DD_IDLE,       GD_DD_FRAMER,
                                       GD_DD_LAZY_SINGLE, GD_DD_PASS_EARLY, GD_DD_LATE_SERVER,
                                       GD_DD_SKIPPER,     GD_DD_GRINDER,    GD_DD_DRIPPER};
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc, done = false;
        for (size_t k = 0; k < sizeof which / sizeof which[0] && !done; k++)
            if (strcmp(argv[i], names[k]) == 0 && more) {
                o->counts[which[k]] = atoi(argv[++i]);
                done = true;
            }
        if (done)
            continue;
        if (strcmp(argv[i], "--members") == 0 && more)
            o->members = atoi(argv[++i]);
        else if (strcmp(argv[i], "--epochs") == 0 && more)
            o->epochs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--epoch-length") == 0 && more)
            o->epoch_length = atoll(argv[++i]);
        else if (strcmp(argv[i], "--fake-fraction") == 0 && more)
            o->fake_fraction = atof(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            o->json = true;
        else
            return -1;
    }
    int others = 0;
    for (int r = 1; r < GD_DD_ROLES; r++)
        others += o->counts[r] < 0 ? 1 << 20 : o->counts[r];
    if (o->members < 6 || o->members > 1024 || o->epochs < 1 || o->epochs > 100 ||
        o->epoch_length < 100 || others > o->members - 6 || !(o->fake_fraction > 0) ||
        o->fake_fraction > 1)
        return -1;
    o->counts[GD_DD_HONEST] = o->members - others;
    return 0;
}

/* Roles whose cheat is in how they validate: caught by a slash, counted
 * per epoch over the checks they held. */
static bool validating_role(int r) {
    return r == GD_DD_LAZY || r == GD_DD_LAZY_SINGLE || r == GD_DD_PASS_EARLY ||
           r == GD_DD_FRAMER || r == GD_DD_SKIPPER;
}

/* The model's chance that a validating role is slashed in an epoch in which
 * it held `checks` checks: every made-up or partial PASS meets the target's
 * own digest, every FAIL of an honest target is overturned by the class,
 * every skipped check is priced; a lazy-single validator only lies on
 * single checks (1 - d of them). */
static double model_validator_epoch(int r, double checks) {
    if (checks <= 0)
        return 0;
    return r == GD_DD_LAZY_SINGLE ? 1 - pow(DOUBLE_P, checks) : 1.0;
}

/* The model's probability that a check catches a cheat, given which kind. */
static double model_round(gd_dd_role role, const opts *o, double faked_share) {
    double q = (double)(o->counts[GD_DD_COLLUDER] - 1) / (o->members - 1);
    switch (role) {
    case GD_DD_FAKER: return 1 - pow(1 - faked_share, CHECKS);
    case GD_DD_WITHHOLDER: return 1;
    case GD_DD_COLLUDER: return 1 - pow(q * (1 - DOUBLE_P + DOUBLE_P * q), CHECKS);
    default: return 0;
    }
}

int main(int argc, char **argv) {
    opts o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr,
                "usage: %s [--members W] [--epochs E] [--epoch-length B] [--fakers N]\n"
                "          [--fake-fraction F] [--withholders N] [--lazy N] [--colluders N]\n"
                "          [--framers N] [--lazy-single N] [--pass-early N] [--late-servers N]\n"
                "          [--skippers N] [--grinders N] [--drippers N]\n"
                "          [--idle N] [--json]\n"
                "(W 6..1024 with at least 6 honest; E 1..100; B >= 100; F in (0, 1])\n",
                argv[0]);
        return 2;
    }
    int w = o.members;
    gd_dd_role *roles = calloc((size_t)w, sizeof *roles);
    const char **classes = calloc((size_t)w, sizeof *classes);
    uint64_t *last_slashed = calloc((size_t)w, sizeof *last_slashed);
    bool *epoch_committed = calloc((size_t)w, 1), *epoch_caught = calloc((size_t)w, 1);
    /* This epoch, per member: rounds committed, faked share summed, checks. */
    double *e_rounds = calloc((size_t)w, sizeof *e_rounds);
    double *e_share = calloc((size_t)w, sizeof *e_share);
    double *e_checks = calloc((size_t)w, sizeof *e_checks);
    if (!roles || !classes || !last_slashed || !epoch_committed || !epoch_caught || !e_rounds ||
        !e_share || !e_checks)
        return 1;
    /* Member 0 (the module authority) is honest; the other behaviours are
     * spread over odd members first, then even ones, so that ranks and
     * addresses mix. */
    for (int i = 0; i < w; i++)
        classes[i] = "cpu";
    int slot = 1;
    for (int r = 1; r < GD_DD_ROLES; r++)
        for (int k = 0; k < o.counts[r]; k++) {
            roles[slot] = (gd_dd_role)r;
            slot += 2;
            if (slot >= w)
                slot = 2;
        }
    gd_dd d = {0};
    gd_dd_open(&d, w, gd_dd_spec(SEGMENTS), classes, 8000000, o.epoch_length);
    d.roles = roles;
    d.segments = SEGMENTS;
    d.fake_fraction = o.fake_fraction;
    role_stats st[GD_DD_ROLES] = {{0}};
    for (int i = 0; i < w; i++)
        st[roles[i]].members++;

    gd_dd_seal_secrets(&d, 0);
    gd_dd_round_log log;
    gd_dd_log_init(&log, w);
    uint64_t epoch = 0, rounds = 0, done_rounds = 0;
    double epoch_rounds = 0;
    while (epoch < (uint64_t)o.epochs) {
        gd_dd_await_round(&d);
        Gonka__Diloco__V1__QueryRunResponse *run = gd_dd_run(&d);
        uint64_t cur_epoch = run->current_round->epoch;
        gonka__diloco__v1__query_run_response__free_unpacked(run, NULL);
        if (cur_epoch != epoch) {
            /* An epoch is over and settled (at the new epoch's first block,
             * before its first round): tally it while its amounts are there. */
            for (int i = 0; i < w; i++) {
                role_stats *s = &st[roles[i]];
                s->epochs += epoch_committed[i];
                s->caught_epochs += epoch_committed[i] && epoch_caught[i];
                /* The model over the rounds it took part in this epoch (a
                 * caught member sits some out): for a lazy validator, over
                 * the checks it held, each of which meets the target's own
                 * digest (a made-up one never matches it). */
                double p = e_rounds[i] ? model_round(roles[i], &o, e_share[i] / e_rounds[i]) : 0;
                if (epoch_committed[i])
                    s->model_epochs += validating_role(roles[i])
                                           ? model_validator_epoch(roles[i], e_checks[i])
                                           : 1 - pow(1 - p, e_rounds[i]);
                s->paid += (double)gd_dd_settled(&d, i, epoch);
                epoch_committed[i] = epoch_caught[i] = false;
                e_rounds[i] = e_share[i] = e_checks[i] = 0;
            }
            epoch = cur_epoch;
            if (epoch >= (uint64_t)o.epochs)
                break;
        }
        gd_dd_play_round(&d, &log, NULL);
        rounds++;
        done_rounds += log.done;
        epoch_rounds += 1;
        for (int i = 0; i < w; i++) {
            role_stats *s = &st[roles[i]];
            s->checks += log.checks[i];
            e_checks[i] += log.checks[i];
            if (!log.committed[i])
                continue;
            e_rounds[i]++;
            e_share[i] += (double)log.faked[i] / SEGMENTS;
            s->rounds++;
            s->caught_rounds += log.caught[i];
            s->faked_share += (double)log.faked[i] / SEGMENTS;
            epoch_committed[i] = true;
            epoch_caught[i] |= log.caught[i];
        }
        for (int i = 0; i < w; i++)
            if (d.slashed[i] > last_slashed[i]) { /* a lazy validator is caught by a slash */
                if (validating_role(roles[i]))
                    epoch_caught[i] = true;
                last_slashed[i] = d.slashed[i];
            }
    }
    for (int i = 0; i < w; i++) {
        role_stats *s = &st[roles[i]];
        s->slashed += (double)d.slashed[i];
        s->slashed_members += d.slashed[i] > 0;
    }
    if (gd_app_check_invariants(d.app) != GD_OK) {
        fprintf(stderr, "gd-bench-incentives: invariants: %s\n", gd_error_detail());
        return 1;
    }
    double honest_pay = st[GD_DD_HONEST].paid / st[GD_DD_HONEST].members;
    double r_per_epoch = epoch_rounds / o.epochs; /* printed */
    if (o.json)
        printf("{\"members\": %d, \"epochs\": %d, \"rounds\": %llu, \"done_rounds\": %llu, "
               "\"roles\": [",
               w, o.epochs, (unsigned long long)rounds, (unsigned long long)done_rounds);
    else
        printf("W %d, %d epochs of about %.1f rounds (%llu rounds, %llu DONE); checks %d, "
               "double %.0f%%, faked fraction %.2f:\n"
               "%-15s %4s | %8s %8s | %8s %8s | %8s %8s | %s\n",
               w, o.epochs, r_per_epoch, (unsigned long long)rounds,
               (unsigned long long)done_rounds, CHECKS, DOUBLE_P * 100, o.fake_fraction,
               "behaviour", "n", "caught/r", "model", "caught/e", "model", "pay", "net",
               "slashed members");
    for (int r = 0; r < GD_DD_ROLES; r++) {
        const role_stats *s = &st[r];
        if (s->members == 0)
            continue;
        double share = s->rounds ? s->faked_share / s->rounds : 0;
        double per_round = s->rounds ? s->caught_rounds / s->rounds : 0;
        double model = model_round((gd_dd_role)r, &o, share);
        double per_epoch = s->epochs ? s->caught_epochs / s->epochs : 0;
        double model_epoch = s->epochs ? s->model_epochs / s->epochs : 0;
        bool lazy = validating_role(r); /* caught by a slash; no per-round figure */
        double pay = honest_pay > 0 ? s->paid / s->members / honest_pay : 0;
        double net = honest_pay > 0 ? (s->paid - s->slashed) / s->members / honest_pay : 0;
        if (o.json)
            printf("%s{\"role\": \"%s\", \"members\": %d, \"caught_per_round\": %.4f, "
                   "\"model_per_round\": %.4f, \"caught_per_epoch\": %.4f, "
                   "\"model_per_epoch\": %.4f, \"pay_vs_honest\": %.4f, \"net_vs_honest\": "
                   "%.4f, \"slashed_members\": %d}",
                   r ? ", " : "", gd_dd_role_names[r], s->members,
                   lazy ? -1 : per_round, lazy ? -1 : model, per_epoch,
                   model_epoch, pay, net, s->slashed_members);
        else if (lazy)
            printf("%-15s %4d | %8s %8s | %8.3f %8.3f | %8.3f %8.3f | %d\n", gd_dd_role_names[r],
                   s->members, "-", "-", per_epoch, model_epoch, pay, net, s->slashed_members);
        else
            printf("%-15s %4d | %8.3f %8.3f | %8.3f %8.3f | %8.3f %8.3f | %d\n",
                   gd_dd_role_names[r], s->members, per_round, model, per_epoch, model_epoch,
                   pay, net, s->slashed_members);
    }
    if (o.json)
        printf("]}\n");
    else
        printf("(caught: an upheld FAIL, a check the class could not fetch, or for lazy "
               "validators a slash; pay and net are per member relative to an honest member, "
               "net after slashes)\n");
    gd_dd_log_free(&log);
    gd_dd_close(&d);
    free(roles);
    free(classes);
    free(last_slashed);
    free(epoch_committed);
    free(epoch_caught);
    free(e_rounds);
    free(e_share);
    free(e_checks);
    return st[GD_DD_HONEST].slashed_members == 0 ? 0 : 3;
}
