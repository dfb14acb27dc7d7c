/* Well-formedness of the DiLoCo module's state records (types.proto), as a
 * client checks what a node answers and as a genesis file can be checked:
 * canonical Gonka addresses, 32-byte hashes (empty only where the record
 * says "not fixed yet"), canonical 64-bit amounts, defined enum values,
 * printable bounded text. GD_ERR_INVALID naming the record and field. */
#ifndef GD_CHAIN_WIRE_DILOCO_RECORDS_H
#define GD_CHAIN_WIRE_DILOCO_RECORDS_H

#include "common/status.h"
#include "gonka/diloco/v1/types.pb-c.h"

/* A run: its spec passes gd_diloco_spec_check; creator may be empty (a run
 * from genesis). */
gd_status gd_diloco_run_check(const Gonka__Diloco__V1__Run *r) GD_MUST_CHECK;
gd_status gd_diloco_member_check(const Gonka__Diloco__V1__Member *m) GD_MUST_CHECK;
/* A run's members as a Run query lists them: each passes
 * gd_diloco_member_check, is of this run and declares one of its
 * hw_classes, and their ranks are distinct and below the run's next_rank. */
gd_status gd_diloco_members_check(const Gonka__Diloco__V1__Run *run,
                                  Gonka__Diloco__V1__Member *const *members,
                                  size_t n) GD_MUST_CHECK;
/* A list of canonical addresses; `what` names it in the error. */
gd_status gd_diloco_addresses_check(char *const *list, size_t n, const char *what) GD_MUST_CHECK;
/* Also: window heights non-negative and non-decreasing (train, commit,
 * reveal, verify, open, dispute, dispute_open, attest, attest_open, end),
 * the snapshot's ranks distinct; seed and active_weight empty until fixed. */
gd_status gd_diloco_round_check(const Gonka__Diloco__V1__Round *r) GD_MUST_CHECK;
/* A commitment listed under round (same run and round index). */
gd_status gd_diloco_commitment_check(const Gonka__Diloco__V1__Commitment *c,
                                     const Gonka__Diloco__V1__Round *round) GD_MUST_CHECK;
/* 1 to GD_DILOCO_AVAIL_CHUNKS_MAX distinct chunks. */
gd_status gd_diloco_availability_check(const Gonka__Diloco__V1__AvailabilityReport *a)
    GD_MUST_CHECK;
gd_status gd_diloco_assignment_check(const Gonka__Diloco__V1__Assignment *a) GD_MUST_CHECK;
gd_status gd_diloco_verdict_record_check(const Gonka__Diloco__V1__VerdictRecord *v)
    GD_MUST_CHECK;
/* Sealed answers (attestations, randomness): a seal, a revealed value or
 * both, each of its length. */
gd_status gd_diloco_attestation_check(const Gonka__Diloco__V1__Attestation *a) GD_MUST_CHECK;
gd_status gd_diloco_randomness_record_check(const Gonka__Diloco__V1__RandomnessRecord *r)
    GD_MUST_CHECK;
gd_status gd_diloco_settle_check(const Gonka__Diloco__V1__SettleAmount *s) GD_MUST_CHECK;

#endif
