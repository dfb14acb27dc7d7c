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

#endif
