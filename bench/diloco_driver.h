/* An in-process chain with the DiLoCo module, for the benchmarks that drive
 * it (gd-bench-module, gd-bench-incentives): a genesis with W funded members
 * of run 1, blocks with deterministic hashes, messages validated and
 * executed as DeliverTx does (no signatures: what the module itself
 * spends), queries, and a player that plays whole rounds with a behaviour
 * per member: honest, faking segments, withholding checkpoints, passing
 * without re-executing, colluding, or idle. */
#ifndef GD_BENCH_DILOCO_DRIVER_H
#define GD_BENCH_DILOCO_DRIVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "chain/keys/address.h"
#include "chain/module/app.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "proofs/mmr.h"

#define GD_DD_CHUNKS 8 /* chunks per payload: leaves 1..8 under the header */

/* What each member does. A member trains, reports, validates and attests. */
typedef enum gd_dd_role {
    GD_DD_HONEST,
    GD_DD_FAKER,      /* fakes a fraction of its segments each round */
    GD_DD_WITHHOLDER, /* does not serve its segment-start states */
    GD_DD_LAZY,       /* validates by revealing PASS with a made-up digest */
    GD_DD_COLLUDER,   /* fakes every segment; passes fellow colluders */
    GD_DD_IDLE,       /* sends nothing */
    /* The red-team review's attacks on the checks (docs/verification.md,
     * "The red-team review"): */
    GD_DD_FRAMER,      /* a coalition: FAILs honest targets as validator and juror */
    GD_DD_LAZY_SINGLE, /* PASS with a made-up digest on single checks, honest on doubles */
    GD_DD_PASS_EARLY,  /* PASS with the digest of a partial re-execution */
    GD_DD_LATE_SERVER, /* serves its states only from dispute start */
    GD_DD_SKIPPER,     /* leaves every check it holds unanswered */
    GD_DD_GRINDER,     /* seals its secret every round and withholds it: the grinders
                        * reveal last and keep the subset of their secrets (at least
                        * one) whose seed gives them the most validator slots */
    GD_DD_DRIPPER,     /* drips its payload: no honest member gets it in the verify
                        * window, so none reports it (the honest members' other
                        * duties go on: they fetch off their steps) */
    GD_DD_ROLES
} gd_dd_role;

extern const char *const gd_dd_role_names[GD_DD_ROLES];

typedef struct gd_dd {
    gd_app *app;
    int w;
    char (*addr)[GD_ADDRESS_STR_MAX];
    gd_mmr *mmr;        /* each member's payload tree (the same every round) */
    uint8_t (*root)[32];
    const gd_dd_role *roles;
    double fake_fraction;
    uint32_t segments;  /* per commitment */
    /* Filled as blocks run: what each member was slashed, and why. */
    uint64_t *slashed;
    /* Timing of messages by type URL (msg_kind) and of transition blocks. */
    double msg_seconds[16];
    size_t msg_count[16];
    char log[1024];     /* the last refusal */
} gd_dd;

/* A run spec for the benchmarks: one-block windows, one class "cpu",
 * commitments of `segments` segments of 2 steps, and the incentive knobs
 * at the defaults of `sim --print-spec` (4 checks, half of them double, 3
 * re-checkers, 4 availability chunks, a withheld secret half the epoch's
 * reward). */
json_t *gd_dd_spec(uint32_t segments);

/* Starts the chain: spec (taken) for run 1, classes[i] and collateral for
 * member i, the inference epoch length (0: the module's default). Member 0
 * is also the module authority. */
void gd_dd_open(gd_dd *d, int members, json_t *spec, const char *const *classes,
                uint64_t collateral, int64_t epoch_length);
void gd_dd_close(gd_dd *d);

/* One block with a deterministic hash; its milliseconds (hooks, commit and
 * app hash). Tallies slash events. */
double gd_dd_block(gd_dd *d);
/* Blocks until `height` is committed. */
void gd_dd_until(gd_dd *d, int64_t height);
/* Validates and executes one message as DeliverTx would, at the last
 * committed height; 0 or the refusal's code (d->log says why). */
uint32_t gd_dd_msg(gd_dd *d, const char *url, const void *msg);
/* The index of a message type URL in the timing arrays. */
int gd_dd_msg_kind(const char *url);

Gonka__Diloco__V1__QueryRoundResponse *gd_dd_round(gd_dd *d, uint64_t round); /* NULL: pruned */
Gonka__Diloco__V1__QueryRunResponse *gd_dd_run(gd_dd *d);
/* What the member was settled for an epoch (0 if nothing). */
uint64_t gd_dd_settled(gd_dd *d, int member, uint64_t epoch);

/* ---- the player ------------------------------------------------------------------ */

/* What a round did to each member. */
typedef struct gd_dd_round_log {
    uint64_t round, epoch;
    bool done;
    bool *committed, *included, *aggregated, *caught; /* caught: in Round.failed, or a check
                                                       * ended unavailable */
    uint32_t *faked;                                  /* segments faked */
    uint32_t *checks;                                 /* checks it was assigned */
} gd_dd_round_log;

void gd_dd_log_init(gd_dd_round_log *l, int members);
void gd_dd_log_free(gd_dd_round_log *l);

/* Seals every member's secret for the run's next round (sent while the
 * previous round is live, or before the first opens). */
void gd_dd_seal_secrets(gd_dd *d, uint64_t round);
/* Blocks until the run has a live round (none opens during PoC). */
void gd_dd_await_round(gd_dd *d);
/* Plays the run's current round from its train window to its end; the
 * next round's secrets are sealed during its train window. Block times of
 * the transition blocks go to hook_ms (indexed by window: verify, open,
 * dispute, attest, end) when not NULL. */
void gd_dd_play_round(gd_dd *d, gd_dd_round_log *log, double hook_ms[5]);

#endif
