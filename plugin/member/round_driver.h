/* The round driver: a participant's side of the DiLoCo round protocol
 * (docs/protocol.md section 7) as a pure state machine. Each step takes
 * what the chain shows (a gd_chain_view, read by the host from a chain
 * port) and what this node has done locally (its gd_member_journal) and
 * returns the duties due now, in the order they should be done. It does
 * no I/O: the host (the daemon, the simulation, a test) performs each
 * action, records its local effects in the journal, and steps again.
 *
 * Idempotence is the rule that makes restarts safe: an action is returned
 * only while the chain does not show it done (a commitment, a report, a
 * seal, a reveal, a claim) and the journal says its inputs are ready, so a
 * host that crashed and restarted with the same journal never sends a
 * duty twice; it re-reads the chain first. */
#ifndef GD_PLUGIN_MEMBER_ROUND_DRIVER_H
#define GD_PLUGIN_MEMBER_ROUND_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/keys/address.h"

/* The roles a node takes (bits). Every member reports, attests and takes
 * part in the randomness; a worker also trains and commits; a validator
 * that does not train still checks and re-checks. */
enum { GD_ROLE_WORKER = 1, GD_ROLE_VALIDATOR = 2 };
/* The bit of a role's name ("worker", "validator"), 0 for another name:
 * the one spelling of the roles, for node.yaml and the command line. */
unsigned gd_role_of(const char *name);

/* A round's windows, in the chain's phase order (gonka.diloco.v1.RoundPhase
 * values are not in time order; these are). */
typedef enum gd_window {
    GD_WINDOW_NONE = 0, /* before train_start */
    GD_WINDOW_TRAIN,
    GD_WINDOW_COMMIT,
    GD_WINDOW_REVEAL,
    GD_WINDOW_VERIFY,
    GD_WINDOW_OPEN,
    GD_WINDOW_DISPUTE,
    GD_WINDOW_DISPUTE_OPEN,
    GD_WINDOW_ATTEST,
    GD_WINDOW_ATTEST_OPEN,
    GD_WINDOW_OVER, /* at or past end */
} gd_window;

/* Window starts, as Round.windows holds them. */
typedef struct gd_round_windows {
    int64_t train_start, commit_start, reveal_start, verify_start, open_start, dispute_start,
        dispute_open_start, attest_start, attest_open_start, end;
} gd_round_windows;

/* The window a height falls in. */
gd_window gd_round_window_at(const gd_round_windows *w, int64_t height);
/* The first height after the window `height` falls in (the next window's
 * start, or end), or 0 before train_start and at or past end. */
int64_t gd_round_window_end(const gd_round_windows *w, int64_t height);
const char *gd_window_name(gd_window w);

/* A check of the round that involves this node. */
typedef struct gd_view_check {
    char target[GD_ADDRESS_STR_MAX];
    uint32_t check, segment, step, chunk;
    bool validator;       /* an assigned validator of it */
    bool own;             /* a check of this node's own commitment: it seals and reveals
                           * its own digest as a validator seals and reveals a verdict */
    bool rechecker;       /* on its jury (the assignment's recheckers) */
    bool sealed, revealed; /* this node's record of it on chain */
} gd_view_check;

/* What the chain shows of the current round, from this node's side. */
typedef struct gd_round_view {
    uint64_t index, epoch;
    gd_round_windows windows;
    bool over;                /* DONE or VOID */
    bool in_snapshot;         /* this node is one of the round's members */
    bool committed;           /* this node's commitment is on chain */
    bool secret_sealed;       /* this node sealed a secret for this round */
    bool secret_revealed;
    /* Commitments of the round (addresses), and those this node reported. */
    const char *const *commitments;
    size_t n_commitments;
    const char *const *reported;
    size_t n_reported;
    /* Checks that involve this node. */
    const gd_view_check *checks;
    size_t n_checks;
    /* Fixed at attest start; the payloads to aggregate. */
    const char *const *aggregation_set;
    size_t n_aggregation_set;
    bool attest_sealed, attest_revealed;
} gd_round_view;

/* What the chain shows, from this node's side, at one height. */
typedef struct gd_chain_view {
    int64_t height;            /* the latest block the view was read at; what the
                                * node sends now lands in a later block */
    char address[GD_ADDRESS_STR_MAX];
    bool member;               /* of the run */
    bool leaving;              /* sent MsgLeaveRun */
    uint64_t next_round;       /* Run.next_round: the round secrets are sealed for */
    bool overlap;              /* the run's spec: a worker trains the next round ahead */
    bool sealed_next;          /* this node sealed a secret for next_round */
    bool have_round;           /* a current round exists (possibly over) */
    gd_round_view round;
    /* The previous epoch's settle amount, if claims are open for it. */
    bool claim_open;
    uint64_t claim_epoch;
    uint64_t owed;             /* 0: nothing settled to this node */
    bool claimed;
} gd_chain_view;

/* What this node has done locally that the chain cannot show: artifacts
 * that are durable on disk. The host updates it after an action and keeps
 * it across restarts (fsynced before it acts on it). */
typedef struct gd_member_journal {
    uint64_t round;       /* the round the fields below are for */
    bool trained;         /* payload, transcript and segment-start states written and fsynced */
    bool ahead;           /* the same for round + 1, trained ahead (overlap) */
    bool aggregated;      /* G_{r+1} computed from exactly the aggregation set */
    bool join_sent;       /* MsgJoinRun sent (the chain may not show it yet) */
    bool leave_wanted;    /* the operator asked to leave (`node leave`) */
    uint64_t sealed_upto; /* secrets are sealed for every round below this (the chain
                           * shows no round before it opens) */
    uint64_t bonded;      /* collateral (ngonka) when first seen a member, 0 before: what
                           * the node's slashes are counted from, across restarts */
} gd_member_journal;

typedef struct gd_duty_config {
    unsigned roles;       /* GD_ROLE_* bits */
    bool join;            /* join the run if not a member */
} gd_duty_config;

typedef enum gd_action_kind {
    GD_ACT_JOIN,          /* MsgJoinRun: bond collateral, record URL and class */
    GD_ACT_SEAL_SECRET,   /* MsgRandomness seal for `round` (the run's next) */
    GD_ACT_TRAIN,         /* train `round` from S_r: payload, transcript, states, durable;
                           * with overlap also the next round ahead, a segment at a time */
    GD_ACT_COMMIT,        /* MsgCommitRound from the durable artifacts */
    GD_ACT_REVEAL_SECRET, /* MsgRandomness reveal */
    GD_ACT_REPORT,        /* fetch `target`'s payload whole, prove the drawn chunks */
    GD_ACT_CHECK,         /* re-execute check (`target`, `check`) and seal the verdict */
    GD_ACT_REVEAL_VERDICT,
    GD_ACT_RECHECK,       /* re-execute a disputed check and seal the re-check */
    GD_ACT_REVEAL_RECHECK,
    GD_ACT_AGGREGATE,     /* G_{r+1} from the aggregation set's payloads */
    GD_ACT_SEAL_ATTEST,
    GD_ACT_REVEAL_ATTEST,
    GD_ACT_CLAIM,         /* MsgClaimRewards for `epoch` */
    GD_ACT_LEAVE,         /* MsgLeaveRun */
    GD_ACT_KINDS
} gd_action_kind;

extern const char *const gd_action_names[GD_ACT_KINDS];

typedef struct gd_action {
    gd_action_kind kind;
    uint64_t round;       /* the round it is for (the sealed one for SEAL_SECRET) */
    uint64_t epoch;       /* CLAIM */
    char target[GD_ADDRESS_STR_MAX]; /* REPORT, CHECK, RECHECK and their reveals */
    uint32_t check;
} gd_action;

/* A duty as logs name it: "commit round 3", "check round 2 gonka1…",
 * "claim epoch 4", "join". */
void gd_action_describe(char *out, size_t cap, const gd_action *a);

/* The journal for round `round`: j itself if it speaks of that round, else
 * a fresh one for it that keeps what is the node's, not a round's (join,
 * leave, seals, the first bond). */
gd_member_journal gd_journal_at(const gd_member_journal *j, uint64_t round);

/* Whether the journal holds round `round`'s artifacts (trained in its
 * window, or ahead of it). */
bool gd_journal_trained(const gd_member_journal *j, uint64_t round);

/* The duties due at v's height, at most cap of them, into out (n set):
 * those whose window holds the next block, and, for duties that need what
 * a window's first block fixes (its draws, its re-checkers, its
 * aggregation set), whose window holds v's height too. Returns true if
 * more were due than fit (step again after doing these). */
bool gd_round_driver_step(const gd_duty_config *cfg, const gd_chain_view *v,
                          const gd_member_journal *j, gd_action *out, size_t cap, size_t *n);

#endif
