/* The names of the DiLoCo training module (gonka.diloco.v1) that the chain
 * and its clients share: message type URLs and query paths. The draws,
 * seals and digests both sides compute live below, in proofs/diloco_rules.h,
 * where the trainer can use them too. */
#ifndef GD_CHAIN_WIRE_DILOCO_RULES_H
#define GD_CHAIN_WIRE_DILOCO_RULES_H

#include "proofs/diloco_rules.h"

/* Message type URLs and query paths. */
#define GD_DILOCO_MSG_CREATE_RUN "/gonka.diloco.v1.MsgCreateRun"
#define GD_DILOCO_MSG_JOIN_RUN "/gonka.diloco.v1.MsgJoinRun"
#define GD_DILOCO_MSG_COMMIT_ROUND "/gonka.diloco.v1.MsgCommitRound"
#define GD_DILOCO_MSG_REPORT_AVAILABILITY "/gonka.diloco.v1.MsgReportAvailability"
#define GD_DILOCO_MSG_SUBMIT_VERDICT "/gonka.diloco.v1.MsgSubmitVerdict"
#define GD_DILOCO_MSG_DISPUTE "/gonka.diloco.v1.MsgDispute"
#define GD_DILOCO_MSG_ATTEST_ROUND "/gonka.diloco.v1.MsgAttestRound"
#define GD_DILOCO_MSG_CLAIM_REWARDS "/gonka.diloco.v1.MsgClaimRewards"
#define GD_DILOCO_MSG_RANDOMNESS "/gonka.diloco.v1.MsgRandomness"
#define GD_DILOCO_MSG_LEAVE_RUN "/gonka.diloco.v1.MsgLeaveRun"

#define GD_DILOCO_QUERY_PARAMS "/gonka.diloco.v1.Query/Params"
#define GD_DILOCO_QUERY_RUNS "/gonka.diloco.v1.Query/Runs"
#define GD_DILOCO_QUERY_RUN "/gonka.diloco.v1.Query/Run"
#define GD_DILOCO_QUERY_ROUND "/gonka.diloco.v1.Query/Round"
#define GD_DILOCO_QUERY_REWARDS "/gonka.diloco.v1.Query/Rewards"

/* The duties a round member can be slashed for skipping, as the chain
 * names them in the member's snapshot record (WeightedMember.missed) and
 * members count them (gd_missed_duties_total{duty}). */
#define GD_DUTY_CHECK "check"                 /* a drawn check not revealed */
#define GD_DUTY_DIGEST "digest"               /* its own digest of a checked segment */
#define GD_DUTY_RECHECK "recheck"             /* a re-check not revealed, or UNAVAILABLE */
#define GD_DUTY_SERVE "serve"                 /* states the class could not fetch in time */
#define GD_DUTY_REPORT "report"               /* the availability report */
#define GD_DUTY_TAKE_PART "take_part"         /* no message of the round at all */
#define GD_DUTY_ATTEST "attest"               /* absent, or a minority hash */
#define GD_DUTY_REVEAL_SECRET "reveal_secret" /* a sealed secret not revealed */

/* Stable error codes of codespace "diloco" (docs/protocol.md): the module
 * answers with them, and members read them. */
enum {
    GD_DILOCO_ERR_INVALID = 2,
    GD_DILOCO_ERR_UNAUTHORIZED = 3,
    GD_DILOCO_ERR_UNKNOWN_RUN = 4,
    GD_DILOCO_ERR_ALREADY_MEMBER = 5,
    GD_DILOCO_ERR_NOT_MEMBER = 6,
    GD_DILOCO_ERR_COLLATERAL = 7,
    GD_DILOCO_ERR_UNKNOWN_ROUND = 8,
    GD_DILOCO_ERR_WINDOW = 9,
    GD_DILOCO_ERR_DUPLICATE = 10,
    GD_DILOCO_ERR_NO_COMMITMENT = 11,
    GD_DILOCO_ERR_BAD_PROOF = 12,
    GD_DILOCO_ERR_NOT_ASSIGNED = 13,
    GD_DILOCO_ERR_SEAL = 14,
    GD_DILOCO_ERR_CLAIMED = 16,
    GD_DILOCO_ERR_NOTHING = 17,
    GD_DILOCO_ERR_CLAIM_STAGE = 18,
    GD_DILOCO_ERR_EPOCH = 19,
};

#endif
