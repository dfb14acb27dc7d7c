/* The DiLoCo training module (gonka.diloco.v1): runs, members, rounds and
 * their windows, commitments, availability, checks and verdicts, disputes,
 * attestations, settlement and claims. docs/protocol.md section 7 is its
 * specification. Keys under store prefix 0x04 (big-endian integers, so that
 * iteration runs in numeric order; addresses as their bech32 text after a
 * length byte):
 *   0x04 0x01                                 Params
 *   0x04 0x02                                 next run id (BE64)
 *   0x04 0x03 run                             Run
 *   0x04 0x04 run addr                        Member
 *   0x04 0x05 run round                       Round
 *   0x04 0x06 run round addr                  Commitment
 *   0x04 0x07 run round target reporter       AvailabilityReport
 *   0x04 0x08 run round target check          Assignment (BE32 check)
 *   0x04 0x09 run round target check addr     VerdictRecord
 *   0x04 0x0a run round addr                  Attestation
 *   0x04 0x0b run epoch addr                  SettleAmount
 *   0x04 0x0c run round addr                  WeightedMember (the round's snapshot)
 * Values are canonical protobuf. The module account "diloco" holds every
 * pool, collateral and bond; the invariants check that its balance equals
 * their sum, and that each run's members have distinct ranks below its
 * next_rank. */
#ifndef GD_CHAIN_MODULE_DILOCO_H
#define GD_CHAIN_MODULE_DILOCO_H

#include "chain/module/app.h"
#include "chain/wire/diloco_rules.h"

#define GD_DILOCO_MODULE_NAME "diloco"
#define GD_DILOCO_CODESPACE "diloco"

/* Stable error codes of codespace "diloco" (docs/protocol.md). */
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

extern const gd_module gd_diloco_module;

#endif
