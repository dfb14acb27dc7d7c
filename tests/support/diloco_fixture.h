/* A DiLoCo run in a test chain (tests/support/app_fixture.h): the run spec as
 * JSON, members that join it, and a driver that plays a round window by
 * window with every member doing what its actor says: honest members seal
 * and reveal their round secrets, commit, report every payload they can
 * fetch, seal and reveal true verdicts and re-checks, and seal and reveal
 * the true next state; adversaries skip, withhold, lie or answer lazily.
 * Every block runs through the app fixture (every module's invariants);
 * this fixture also logs each slash and release, and fails the test when a
 * slash hits a member whose actor is honest. */
#ifndef GD_TESTS_SUPPORT_DILOCO_FIXTURE_H
#define GD_TESTS_SUPPORT_DILOCO_FIXTURE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "chain/module/diloco.h"
#include "chain/wire/diloco_rules.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "proofs/mmr.h"
#include "proofs/state_sample.h"
#include "tests/support/app_fixture.h"

#define PH(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x
#define OUTCOME(x) GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_##x
#define V_PASS GONKA__DILOCO__V1__VERDICT__VERDICT_PASS
#define V_FAIL GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL
#define V_UNAVAILABLE GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE

typedef Gonka__Diloco__V1__QueryRoundResponse df_qround;
typedef Gonka__Diloco__V1__QueryRunResponse df_qrun;
typedef Gonka__Diloco__V1__Assignment df_assignment;
typedef Gonka__Diloco__V1__VerdictRecord df_verdict;
typedef Gonka__Diloco__V1__RoundWindows df_windows;

#define DF_ACCOUNTS 20 /* 0 the run's authority, 1 .. n members, the rest outsiders */
#define DF_CHUNKS 4    /* every payload: a header leaf and four chunks */
#define DF_SEGMENTS 2  /* every commitment: two segments of two steps */
#define DF_TOKENS (DF_SEGMENTS * 2 * 512)
#define DF_CPU "cpu-x86-openblas"
#define DF_GPU "gpu-h100-cuda13"
#define DF_COLLATERAL 20000 /* a member's default bond */
#define DF_BALANCE 1000000  /* every account's genesis balance */

/* The run's knobs (the rest of the spec is fixed). Amounts in ngonka. */
typedef struct df_knobs {
    uint32_t checks;      /* checks_per_commit */
    uint32_t double_ppm;  /* double_check_ppm */
    uint32_t rechecks;    /* recheck_validators */
    uint32_t min_class;   /* min_class_members */
    uint32_t avail;       /* avail_chunks */
    uint32_t suspend;     /* suspend_rounds */
    uint32_t max_members;
    uint32_t window;      /* every window's length in blocks (verify and dispute need 2) */
    bool overlap;         /* the run's one-step-delay overlap */
    uint32_t validator_share_ppm, attest_share_ppm;
    uint64_t cheat_slash, skip_slash, fail_bond, min_collateral, reward, pool;
    uint64_t withhold_slash; /* a sealed secret not revealed: half the epoch's reward */
    const json_t *spec;   /* if set, the run's whole spec instead of df_spec_json's */
} df_knobs;

/* Defaults like a real run's: two checks, double checks half the time,
 * three re-checkers, classes of at least six, two chunks per report. */
void df_knobs_default(df_knobs *k);
/* The spec JSON of a run with these knobs (classes DF_CPU and DF_GPU). */
json_t *df_spec_json(const df_knobs *k);

/* What a member does in a round (all zero: everything honest). */
enum df_mode {
    DF_HONEST = 0,
    DF_SKIP,        /* sends nothing for the duty */
    DF_SEAL_ONLY,   /* seals the honest answer, never reveals it */
    DF_LAZY_PASS,   /* PASS with a digest it did not compute */
    DF_UNAVAILABLE, /* UNAVAILABLE whatever the target did */
    DF_FAIL,        /* FAIL whatever the target did */
    DF_PASS,        /* PASS with the honest digest whatever the target did */
    DF_MINORITY,    /* attests a hash that is not the true next state */
};

typedef struct df_actor {
    bool idle;                 /* sends nothing at all in the round */
    bool no_commit;            /* does not train this round */
    bool no_reports;           /* reports nobody */
    bool cheat;                /* trained wrongly: honest checks FAIL it */
    bool withhold_payload;     /* serves no payload: honest members cannot report it,
                                * and answer its checks UNAVAILABLE */
    bool withhold_checkpoints; /* serves its payload but not the checkpoints a
                                * check re-executes from: its checks are UNAVAILABLE */
    int secret;                /* DF_HONEST, DF_SKIP (seals nothing for the next
                                * round), DF_SEAL_ONLY (does not reveal this round's) */
    int verdict;               /* as an assigned validator */
    int own;                   /* its own digest of its checks: DF_HONEST, DF_SKIP,
                                * DF_SEAL_ONLY, DF_LAZY_PASS (not its training's) */
    int recheck;               /* as a re-checker */
    int attest;                /* DF_HONEST, DF_SKIP, DF_SEAL_ONLY, DF_MINORITY */
    int verdict_on[DF_ACCOUNTS]; /* overrides verdict for one target (0: verdict) */
    int recheck_on[DF_ACCOUNTS];
    bool skip_report[DF_ACCOUNTS]; /* does not report this target */
    bool serve_late;           /* serves its states only from dispute start: honest
                                * validators answer UNAVAILABLE, reporters get no
                                * state sample, jurors fetch and PASS */
} df_actor;

bool df_actor_honest(const df_actor *a);

typedef struct df_event_rec {
    char type[32];
    char who[GD_ADDRESS_STR_MAX];
    uint64_t amount;
    char reason[64];
    int64_t height;
} df_event_rec;

#define DF_LOG_MAX 512

typedef struct df {
    app_fixture f;
    df_knobs k;
    int n;                           /* members are accounts 1 .. n */
    char cls[DF_ACCOUNTS][32];       /* each member's class */
    df_actor act[DF_ACCOUNTS];
    uint64_t round;                  /* the round being played */
    df_windows w;                    /* its windows */
    df_qround *r;                    /* its last queried state (owned) */
    bool in_round[DF_ACCOUNTS];      /* in the round's snapshot */
    bool member[DF_ACCOUNTS];        /* a member of the run (may seal secrets) */
    uint64_t sealed[DF_ACCOUNTS];    /* bit r: sealed a secret for round r (r < 64) */
    bool committed[DF_ACCOUNTS];
    gd_mmr mmr[DF_ACCOUNTS];         /* the round's payload of each committer */
    uint8_t root[DF_ACCOUNTS][32];
    uint8_t transcript[DF_ACCOUNTS][32]; /* each member's committed transcript root */
    uint32_t variant;                /* mixed into secrets and salts: 0 in both of two equal runs */
    bool watch_honest;               /* fail on a slash of an honest member (default on) */
    df_event_rec log[DF_LOG_MAX];    /* diloco_slashed and diloco_released events */
    size_t n_log;
    char last_log[512];              /* the log of the last transaction that failed */
    /* Who was active when the round's draws were made (validators at
     * verify_start, re-checkers at dispute_start), as df_refresh saw it
     * right after those blocks; valid for round active_round - 1. */
    bool active_v[DF_ACCOUNTS], active_r[DF_ACCOUNTS];
    uint64_t active_v_round, active_r_round;
} df;

/* A chain with the run (id 1, created by account 0) and members 1 .. n,
 * joined in one block; classes[i - 1] and collateral[i - 1] for member i
 * (NULL: DF_CPU and DF_COLLATERAL for all). Every member then seals its
 * secret for round 0. */
void df_setup(df *d, const df_knobs *k, int n, const char *const *classes,
              const uint64_t *collateral);
void df_free(df *d);

/* ---- blocks and messages ---------------------------------------------------------- */

/* Messages of one block, one transaction per signer. */
typedef struct df_batch {
    int from[DF_ACCOUNTS];
    size_t n_tx;
    gd_any msgs[DF_ACCOUNTS][FIX_TX_MSGS_MAX];
    size_t n_msgs[DF_ACCOUNTS];
} df_batch;

void df_batch_init(df_batch *b);
/* Adds a message to from's transaction of the batch (packed now). */
void df_batch_add(df_batch *b, int from, const char *url, const void *msg);
/* Adds an already packed message (copied). */
void df_batch_add_any(df_batch *b, int from, const gd_any *msg);
/* Runs the batch as one block; codes[i] is the code of the i-th signer's
 * transaction in order of first appearance (999: another codespace).
 * Frees the batch's messages. codes may be NULL. Returns the number of
 * transactions that failed. */
size_t df_batch_run(df *d, df_batch *b, uint32_t *codes);
/* One message in its own block: its code. */
uint32_t df_deliver(df *d, int from, const char *url, const void *msg);
/* One block of n single-message transactions (distinct signers). */
void df_deliver_n(df *d, size_t n, const int *from, const char *const *url,
                  const void *const *msg, uint32_t *codes);
/* Empty blocks until the next block is `height`. */
void df_until(df *d, int64_t height);
void df_empty_block(df *d);

/* ---- queries ---------------------------------------------------------------------------- */

/* A query's answer (NULL with *code set on an error; code may be NULL). */
void *df_query(df *d, const char *path, const void *req, const ProtobufCMessageDescriptor *desc,
               uint32_t *code);
df_qround *df_q_round(df *d, uint64_t round);  /* CHECKs it exists */
uint32_t df_q_round_code(df *d, uint64_t round); /* 0 or the error code */
df_qrun *df_q_run(df *d);
void df_qfree(void *msg);
/* A member's bonded collateral (UINT64_MAX when it is not a member). */
uint64_t df_collateral(df *d, int who);
uint64_t df_balance(df *d, int who);
/* What was settled to who for epoch (false when nothing; out may be NULL). */
typedef struct df_settle {
    uint64_t amount, tokens;
    uint32_t checks, attestations;
    bool claimed;
    bool forfeited;
} df_settle;
bool df_settled(df *d, df_settle *out, int who, uint64_t epoch);
/* The account index of an address (-1 if none). */
int df_index(const df *d, const char *addr);
bool df_has_str(char *const *items, size_t n, const char *s);
/* Of a queried round. */
const df_assignment *df_assignment_of(const df_qround *r, int target, uint32_t check,
                                      const df *d);
const df_verdict *df_verdict_of(const df_qround *r, const char *target, uint32_t check,
                                const char *validator);
const Gonka__Diloco__V1__Commitment *df_commitment_of(const df_qround *r, const char *addr);
const Gonka__Diloco__V1__WeightedMember *df_weighted_of(const df_qround *r, const char *addr);
/* The jury a disputed check of a queried round has: the members of the
 * target's class active as queried, less the target and its validators. */
uint32_t df_jury_size(const df_qround *r, const df_assignment *a);

/* ---- what happened ------------------------------------------------------------------ */

/* Total slashed from who since setup whose reason contains `reason`
 * (NULL: any), and how many slashes that was. */
uint64_t df_slashed(const df *d, int who, const char *reason, size_t *count);
/* Whether who was released (its collateral paid back), and how much. */
bool df_released(const df *d, int who, uint64_t *amount);
/* Whether the last block's begin/end events have an event of type with
 * attribute key = value. */
bool df_last_event(const df *d, const char *type, const char *key, const char *value);

/* ---- the honest answers -------------------------------------------------------------- */

/* The digest an honest validator computes for a check (stand-in state
 * hashes derived from target, segment and step). */
void df_honest_digest(uint8_t out[32], uint64_t round, const char *target, uint32_t segment,
                      uint32_t step);
/* The true next state of a round. */
void df_truth(uint8_t out[32], uint64_t round);
/* The deterministic salt of a sealed answer (kind, signer, round, target,
 * check, d->variant). */
void df_salt(const df *d, uint8_t out[32], int kind, int signer, uint64_t round,
             const char *target, uint32_t check);
/* A member's secret for a round. */
void df_secret(const df *d, uint8_t out[32], int who, uint64_t round);
/* What validator `who` answers for a check under its actor (0: nothing). */
int df_answer(const df *d, int who, bool recheck, const df_assignment *a, uint8_t digest[32]);
/* The target's own digest of one of its checks under its actor: V_PASS
 * with the digest, or 0 (it sends none). */
int df_own_answer(const df *d, const df_assignment *a, uint8_t digest[32]);
/* The payload leaf hash of member `who` in round `round`, leaf 0 .. DF_CHUNKS. */
void df_leaf_hash(uint8_t out[32], int who, uint64_t round, uint32_t leaf);

/* ---- message builders --------------------------------------------------------------------- */

Gonka__Diloco__V1__MsgCommitRound df_commit_msg(df *d, int who, uint32_t segments);
/* A report by who on target proving the given chunks (0-based); proofs and
 * leaves are written to the caller's arrays (at least n long), which the
 * message points into. */
Gonka__Diloco__V1__MsgReportAvailability df_report_msg(df *d, int who, int target,
                                                       const uint32_t *chunks, uint32_t n,
                                                       gd_buf *proofs,
                                                       ProtobufCBinaryData *proof_fields,
                                                       uint8_t (*leaves)[32],
                                                       ProtobufCBinaryData *leaf_fields);
/* A report's state sample (proofs/state_sample.h) of target's committed
 * states, as an honest reporter builds it: df_state_sample_add points m's
 * state fields into s; free s with df_state_sample_free after m is sent.
 * The fixture's states are GD_DD-style stand-ins: every array is DF_CHUNKS
 * chunks of one value whose leaves the tree below hashes, and the
 * descriptors (df_commit_msg's transcript) name the member and round. */
typedef struct df_state_sample {
    uint8_t descriptor[GD_WORKER_DESC_BYTES];
    uint8_t chunk_leaf[32];
    gd_buf descriptor_proof, chunk_proof;
} df_state_sample;
void df_state_sample_add(df *d, int who, int target, Gonka__Diloco__V1__MsgReportAvailability *m,
                         df_state_sample *s);
void df_state_sample_free(df_state_sample *s);

/* The chunks the chain asks who to prove for target in the current round
 * (from its verify randomness); returns the count. */
uint32_t df_drawn_chunks(const df *d, uint32_t out[GD_DILOCO_AVAIL_CHUNKS_MAX], int who,
                         int target);
/* A sealed (seal != NULL) or revealed verdict. */
Gonka__Diloco__V1__MsgSubmitVerdict df_verdict_msg(df *d, int who, const char *target,
                                                   uint32_t check, const uint8_t *seal,
                                                   int verdict, const uint8_t *digest,
                                                   const uint8_t *salt);
Gonka__Diloco__V1__MsgDispute df_dispute_msg(df *d, int who, const char *target, uint32_t check,
                                             const uint8_t *seal, int verdict,
                                             const uint8_t *digest, const uint8_t *salt);
Gonka__Diloco__V1__MsgAttestRound df_attest_msg(df *d, int who, const uint8_t *seal,
                                                const uint8_t *hash, const uint8_t *salt);
Gonka__Diloco__V1__MsgRandomness df_randomness_msg(df *d, int who, uint64_t round,
                                                   const uint8_t *seal, const uint8_t *secret);
Gonka__Diloco__V1__MsgJoinRun df_join_msg(df *d, int who, const char *hw_class,
                                          Cosmos__Base__V1beta1__Coin *coin, char *amount_buf,
                                          uint64_t amount);
Gonka__Diloco__V1__MsgClaimRewards df_claim_msg(df *d, int who, uint64_t epoch);

/* ---- the round driver ---------------------------------------------------------------------- */

/* Waits (empty blocks) until round d->round is open, and records its
 * windows and snapshot. */
void df_open(df *d);
/* Each step runs one block at its window's start (verify and dispute: the
 * block after, once the window's draws are made), with every member's
 * messages for it, and CHECKs they all succeed. */
void df_commit(df *d);          /* commitments, and seals of the next round's secrets */
void df_reveal(df *d);          /* this round's secrets */
void df_verify(df *d);          /* availability reports and sealed verdicts */
void df_open_verdicts(df *d);   /* revealed verdicts */
void df_dispute(df *d);         /* sealed re-checks */
void df_dispute_open(df *d);    /* revealed re-checks */
void df_attest(df *d);          /* sealed attestations */
void df_attest_open(df *d);     /* revealed attestations */
void df_finish(df *d);          /* through the end: the round is over; d->round moves on */
/* All of the above. */
void df_play_round(df *d);
/* The same in three parts, for a test that changes its actors in between:
 * open, commit, reveal, and stop once the checks are drawn; verify and
 * open the verdicts, and stop once the disputes' juries are set; the rest
 * of the round. */
void df_to_draws(df *d);
void df_to_juries(df *d);
void df_rest_of_round(df *d);
/* Refreshes d->r (the current round's state). */
void df_refresh(df *d);

/* Every settle amount of an epoch is the settlement rule's: the epoch's
 * budget (reward_per_epoch; the pool is assumed larger) split into the
 * validators' and attesters' shares and the workers' rest, each shared by
 * tokens, credited checks and the weight behind winning attestations (each
 * counting its attester's frozen weight in its DONE round), floored. The
 * epoch's rounds must not be pruned yet. */
void df_check_settlement(df *d, uint64_t epoch);

/* Replaces the chain with one started from `exported` (gd_app_export of
 * it, at its current height): the new chain must have the same app hash,
 * hold every invariant and export the same state again. */
void df_restart_from_export(df *d, json_t *exported);

/* Seals member `who`'s secret for round `round` (the run's next) in a block
 * of its own: what a member that joins later sends to take part. */
void df_seal_secret(df *d, int who, uint64_t round);

/* ---- the rules, recomputed ------------------------------------------------------------------- */

/* Every assignment of a round is the draw of proofs/diloco_rules.h: the
 * seed from the beacon and the revealed secrets, the segment, step and
 * chunk, validators weighted by frozen weight among the target's class
 * members that were active at verify_start, a dispute's jury all the rest
 * of the class active at dispute_start, and no checks for a class
 * with fewer than min_class_members members active at verify_start. */
void df_check_draws(const df *d, const df_qround *r);

#endif
