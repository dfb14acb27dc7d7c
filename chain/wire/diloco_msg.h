/* The DiLoCo module's transaction messages (gonka.diloco.v1, tx.proto)
 * packed as google.protobuf.Any. As with chain/wire/msg.h, each builder first
 * applies the message's ValidateBasic, so a malformed message fails here
 * (GD_ERR_INVALID naming the field) instead of after a fee. The _check
 * functions are those ValidateBasics, on the protobuf structs, for the
 * module to apply to what it unpacks. Addresses are Gonka account addresses
 * (prefix gonka); hashes, roots, seals and digests are 32 bytes. */
#ifndef GD_CHAIN_WIRE_DILOCO_MSG_H
#define GD_CHAIN_WIRE_DILOCO_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "chain/wire/coin.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/msg.h"
#include "common/status.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "proofs/state_sample.h"

/* Bounds of MsgJoinRun's free text (printable ASCII), as the module's. */
#define GD_DILOCO_URL_MAX 512
#define GD_DILOCO_HW_CLASS_MAX 128
/* A payload is at least its header (trainer/payload.h, which chain/ does
 * not include). */
#define GD_DILOCO_PAYLOAD_BYTES_MIN 176

/* ValidateBasic of each message. */
gd_status gd_diloco_msg_create_run_check(const Gonka__Diloco__V1__MsgCreateRun *m) GD_MUST_CHECK;
gd_status gd_diloco_msg_join_run_check(const Gonka__Diloco__V1__MsgJoinRun *m) GD_MUST_CHECK;
gd_status gd_diloco_msg_commit_round_check(const Gonka__Diloco__V1__MsgCommitRound *m)
    GD_MUST_CHECK;
gd_status gd_diloco_msg_report_availability_check(
    const Gonka__Diloco__V1__MsgReportAvailability *m) GD_MUST_CHECK;
/* Verdicts and re-checks: exactly one form, sealed (seal only) or revealed
 * (verdict, digest and a 32-byte salt; the digest of UNAVAILABLE is all
 * zero). */
gd_status gd_diloco_msg_submit_verdict_check(const Gonka__Diloco__V1__MsgSubmitVerdict *m)
    GD_MUST_CHECK;
gd_status gd_diloco_msg_dispute_check(const Gonka__Diloco__V1__MsgDispute *m) GD_MUST_CHECK;
/* Sealed (seal only) or revealed (next_state_hash and salt). */
gd_status gd_diloco_msg_attest_round_check(const Gonka__Diloco__V1__MsgAttestRound *m)
    GD_MUST_CHECK;
gd_status gd_diloco_msg_claim_rewards_check(const Gonka__Diloco__V1__MsgClaimRewards *m)
    GD_MUST_CHECK;
/* Exactly one of seal and secret, 32 bytes. */
gd_status gd_diloco_msg_randomness_check(const Gonka__Diloco__V1__MsgRandomness *m) GD_MUST_CHECK;
gd_status gd_diloco_msg_leave_run_check(const Gonka__Diloco__V1__MsgLeaveRun *m) GD_MUST_CHECK;

/* MsgCreateRun: the pool must be in the spec's reward denom. */
gd_status gd_diloco_msg_create_run(gd_any *out, const char *authority,
                                   const Gonka__Diloco__V1__RunSpec *spec,
                                   const gd_coin *pool) GD_MUST_CHECK;

gd_status gd_diloco_msg_join_run(gd_any *out, const char *participant, uint64_t run,
                                 const char *artifact_url, const char *hw_class,
                                 const gd_coin *collateral) GD_MUST_CHECK;

/* The fields of MsgCommitRound after the signer. */
typedef struct gd_diloco_commit {
    uint64_t run;
    uint64_t round;
    uint8_t payload_root[GD_DILOCO_HASH_LEN];
    uint32_t payload_leaves; /* chunk count + 1, at least 2 */
    uint64_t payload_bytes;  /* the payload's wire size, at least the header */
    uint8_t transcript_root[GD_DILOCO_HASH_LEN];
    uint32_t segment_count;  /* at least 1 */
    uint64_t loss_first_micro;
    uint64_t loss_last_micro;
} gd_diloco_commit;

gd_status gd_diloco_msg_commit_round(gd_any *out, const char *participant,
                                     const gd_diloco_commit *c) GD_MUST_CHECK;

/* One proven chunk of an availability report: proof is the proofs/mmr.h
 * wire form of the chunk's inclusion proof; it must decode and be for a
 * chunk leaf (index >= 1). */
typedef struct gd_diloco_chunk_proof {
    uint8_t leaf_hash[GD_DILOCO_HASH_LEN];
    const uint8_t *proof;
    size_t proof_len;
} gd_diloco_chunk_proof;

/* n chunks, 1 to GD_DILOCO_AVAIL_CHUNKS_MAX, in the chain's draw order
 * (gd_diloco_avail_chunks), and the state sample (proofs/state_sample.h),
 * or NULL when the reporter could not fetch it. */
gd_status gd_diloco_msg_report_availability(gd_any *out, const char *reporter, uint64_t run,
                                            uint64_t round, const char *target,
                                            const gd_diloco_chunk_proof *chunks, size_t n,
                                            const gd_state_sample_proof *state) GD_MUST_CHECK;

/* The sealed form (verify window): seal = gd_diloco_verdict_seal(
 * GD_SEAL_VERDICT, validator, verdict, digest, salt). With validator equal
 * to target it is the target's own digest of its check: GD_SEAL_OWN, and
 * revealed only as a PASS. */
gd_status gd_diloco_msg_submit_verdict_sealed(gd_any *out, const char *validator, uint64_t run,
                                              uint64_t round, const char *target, uint32_t check,
                                              const uint8_t seal[GD_DILOCO_HASH_LEN])
    GD_MUST_CHECK;

/* The revealed form (open window). */
gd_status gd_diloco_msg_submit_verdict_revealed(gd_any *out, const char *validator,
                                                uint64_t run, uint64_t round, const char *target,
                                                uint32_t check, gd_diloco_verdict verdict,
                                                const uint8_t digest[GD_DILOCO_HASH_LEN],
                                                const uint8_t salt[GD_DILOCO_SALT_LEN])
    GD_MUST_CHECK;

/* A re-checker's verdict, sealed in the dispute window (seal =
 * gd_diloco_verdict_seal(GD_SEAL_RECHECK, ...)), revealed in dispute_open. */
gd_status gd_diloco_msg_dispute_sealed(gd_any *out, const char *validator, uint64_t run,
                                       uint64_t round, const char *target, uint32_t check,
                                       const uint8_t seal[GD_DILOCO_HASH_LEN]) GD_MUST_CHECK;
gd_status gd_diloco_msg_dispute_revealed(gd_any *out, const char *validator, uint64_t run,
                                         uint64_t round, const char *target, uint32_t check,
                                         gd_diloco_verdict verdict,
                                         const uint8_t digest[GD_DILOCO_HASH_LEN],
                                         const uint8_t salt[GD_DILOCO_SALT_LEN]) GD_MUST_CHECK;

/* Sealed in the attest window (seal = gd_diloco_seal(GD_SEAL_ATTEST,
 * attester, hash, 32, salt)), revealed in attest_open. */
gd_status gd_diloco_msg_attest_round_sealed(gd_any *out, const char *attester, uint64_t run,
                                            uint64_t round,
                                            const uint8_t seal[GD_DILOCO_HASH_LEN]) GD_MUST_CHECK;
gd_status gd_diloco_msg_attest_round_revealed(gd_any *out, const char *attester, uint64_t run,
                                              uint64_t round,
                                              const uint8_t next_state_hash[GD_DILOCO_HASH_LEN],
                                              const uint8_t salt[GD_DILOCO_SALT_LEN])
    GD_MUST_CHECK;

/* A secret's seal for the run's next round (seal = gd_diloco_seal(
 * GD_SEAL_RANDOMNESS, member, NULL, 0, secret)), or the secret itself in
 * that round's reveal window. */
gd_status gd_diloco_msg_randomness_sealed(gd_any *out, const char *member, uint64_t run,
                                          uint64_t round,
                                          const uint8_t seal[GD_DILOCO_HASH_LEN]) GD_MUST_CHECK;
gd_status gd_diloco_msg_randomness_revealed(gd_any *out, const char *member, uint64_t run,
                                            uint64_t round,
                                            const uint8_t secret[GD_DILOCO_SALT_LEN])
    GD_MUST_CHECK;

gd_status gd_diloco_msg_leave_run(gd_any *out, const char *participant,
                                  uint64_t run) GD_MUST_CHECK;

gd_status gd_diloco_msg_claim_rewards(gd_any *out, const char *claimer, uint64_t run,
                                      uint64_t epoch) GD_MUST_CHECK;

#endif
