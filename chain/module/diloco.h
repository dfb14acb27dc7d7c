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

extern const gd_module gd_diloco_module;

#endif
