/* What the demo (plugin/demo/demo_command.c) shows: one progress line per reading
 * while the run goes on, and at the end the summary, as a table and as the
 * JSON of --json FILE (docs/cli.md, "Demo"). The figures are the chain's
 * (tokens accepted, verdicts, attestations, claims, collateral) and the
 * daemons' own (/v1/status: inner loss, bytes, slashes seen). */
#ifndef GD_PLUGIN_DEMO_DEMO_REPORT_H
#define GD_PLUGIN_DEMO_DEMO_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "chain/keys/address.h"
#include "plugin/demo/demo_watch.h"

#define GD_DEMO_MEMBERS_MAX 16
#define GD_DEMO_ROUNDS_MAX 20

typedef enum gd_demo_role { GD_DEMO_WORKER, GD_DEMO_VALIDATOR, GD_DEMO_CHEATER } gd_demo_role;

typedef struct gd_demo_member {
    char address[GD_ADDRESS_STR_MAX];
    gd_demo_role role;
    char label[8]; /* w1, v1, c1: its name in the progress line and the table */
    /* From its daemon's latest /v1/status. */
    double loss; /* the mean inner loss of its last trained round; NAN before */
    uint64_t bytes_in, bytes_out, status_slashed;
    /* From the chain. */
    uint64_t bonded;     /* collateral when first seen a member */
    uint64_t collateral; /* the least seen since */
    uint64_t tokens, verdicts_failed, reward_claimed, reward_unclaimed;
} gd_demo_member;

typedef struct gd_demo_round {
    uint64_t index, epoch;
    bool done; /* DONE, else VOID (G unchanged) */
    char state_hash[65]; /* the agreed G after it (its start state if void) */
    unsigned attesters, participants, commitments, aggregated;
    char failed[64]; /* the labels of members whose accusation was upheld */
} gd_demo_round;

typedef struct gd_demo_report {
    gd_demo_member members[GD_DEMO_MEMBERS_MAX];
    size_t n_members;
    gd_demo_round rounds[GD_DEMO_ROUNDS_MAX];
    size_t n_rounds;
    double loss_before, loss_after; /* eval loss of G_0 and of the final G */
    unsigned eval_batches, batch, seq;
    int64_t height;
    double seconds;
} gd_demo_report;

const char *gd_demo_role_name(gd_demo_role role);

/* The member with that address, or NULL. */
gd_demo_member *gd_demo_report_member(gd_demo_report *r, const char *address);

/* What a member lost to slashes: bonded less the least collateral seen,
 * or what its daemon reported, whichever is more. */
uint64_t gd_demo_member_slashed(const gd_demo_member *m);

/* Records a round that is over (DONE or VOID): its outcome, and for each
 * member the tokens the chain accepted from it and the FAIL verdicts
 * against it. GD_ERR_LIMIT past GD_DEMO_ROUNDS_MAX rounds. */
gd_status gd_demo_report_add_round(gd_demo_report *r,
                                   const Gonka__Diloco__V1__QueryRoundResponse *q) GD_MUST_CHECK;

/* One line: height, the current round and phase, each worker's inner
 * loss, the round's commitments and verdicts, the daemons' bytes in and
 * out, then `extra` (what the demo waits for). */
void gd_demo_progress(FILE *f, const gd_demo_report *r, const gd_demo_chain *c,
                      const char *extra);

/* The summary: per participant its role, tokens accepted, verdicts
 * against it, reward claimed and collateral slashed; the eval loss before
 * and after; each round's agreed state hash. */
void gd_demo_report_print(FILE *f, const gd_demo_report *r);

/* The same as one JSON object (NULL when out of memory). */
json_t *gd_demo_report_json(const gd_demo_report *r);

#endif
