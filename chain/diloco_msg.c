/* The DiLoCo module's messages: ValidateBasic and builders
 * (chain/diloco_msg.h). */
#include "chain/diloco_msg.h"

#include <stdbool.h>
#include <string.h>

#include "chain/address.h"
#include "chain/diloco_spec.h"
#include "proofs/mmr.h"

/* --- field rules ---------------------------------------------------------- */

/* A Gonka address in canonical (lower-case) form: the module compares
 * addresses as strings, so "GONKA1..." must not pass as another account. */
static gd_status gd_dmsg_address(const char *text, const char *what) {
    if (text == NULL || text[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "%s is missing", what);
    if (gd_address_check_canonical(text) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "%s", what);
    return GD_OK;
}

/* signer and target are both addresses, and differ: nobody reports, checks
 * or re-checks its own payload. */
static gd_status gd_dmsg_pair(const char *signer, const char *signer_what, const char *target) {
    GD_TRY(gd_dmsg_address(signer, signer_what));
    GD_TRY(gd_dmsg_address(target, "target"));
    if (strcmp(signer, target) == 0)
        return gd_fail(GD_ERR_INVALID, "%s and target must differ", signer_what);
    return GD_OK;
}

static gd_status gd_dmsg_hash(const ProtobufCBinaryData *b, const char *what) {
    if (b->len != GD_DILOCO_HASH_LEN || b->data == NULL)
        return gd_fail(GD_ERR_INVALID, "%s must be %d bytes, not %zu", what, GD_DILOCO_HASH_LEN,
                       b->len);
    return GD_OK;
}

static gd_status gd_dmsg_check_index(uint32_t check) {
    if (check >= GD_DILOCO_CHECKS_MAX)
        return gd_fail(GD_ERR_INVALID, "check %u is out of range (checks are 0 to %d)", check,
                       GD_DILOCO_CHECKS_MAX - 1);
    return GD_OK;
}

static bool gd_dmsg_is_zero(const ProtobufCBinaryData *b) {
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] != 0)
            return false;
    return true;
}

/* --- ValidateBasic ------------------------------------------------------------ */

gd_status gd_diloco_msg_create_run_check(const Gonka__Diloco__V1__MsgCreateRun *m) {
    GD_TRY(gd_dmsg_address(m->authority, "authority"));
    GD_TRY(gd_diloco_spec_check(m->spec));
    GD_TRY(gd_diloco_coin_check(m->pool, "pool"));
    if (strcmp(m->pool->denom, m->spec->reward_per_epoch->denom) != 0)
        return gd_fail(GD_ERR_INVALID, "pool must be in the reward denom %s",
                       m->spec->reward_per_epoch->denom);
    return GD_OK;
}

gd_status gd_diloco_msg_join_run_check(const Gonka__Diloco__V1__MsgJoinRun *m) {
    GD_TRY(gd_dmsg_address(m->participant, "participant"));
    GD_TRY(gd_diloco_text_check(m->artifact_url, GD_DILOCO_URL_MAX, "artifact_url"));
    GD_TRY(gd_diloco_text_check(m->hw_class, GD_DILOCO_HW_CLASS_MAX, "hw_class"));
    return gd_diloco_coin_check(m->collateral, "collateral");
}

gd_status gd_diloco_msg_commit_round_check(const Gonka__Diloco__V1__MsgCommitRound *m) {
    GD_TRY(gd_dmsg_address(m->participant, "participant"));
    GD_TRY(gd_dmsg_hash(&m->payload_root, "payload_root"));
    GD_TRY(gd_dmsg_hash(&m->transcript_root, "transcript_root"));
    if (m->payload_leaves < 2 || m->payload_leaves > GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_INVALID, "payload_leaves must be 2 to %u (the header and at "
                                       "least one chunk)", (unsigned)GD_MMR_MAX_LEAVES);
    if (m->payload_bytes < GD_DILOCO_PAYLOAD_BYTES_MIN)
        return gd_fail(GD_ERR_INVALID, "payload_bytes %llu is less than a payload header (%d)",
                       (unsigned long long)m->payload_bytes, GD_DILOCO_PAYLOAD_BYTES_MIN);
    if (m->segment_count == 0)
        return gd_fail(GD_ERR_INVALID, "segment_count must be at least 1");
    return GD_OK;
}

gd_status gd_diloco_msg_report_availability_check(
    const Gonka__Diloco__V1__MsgReportAvailability *m) {
    GD_TRY(gd_dmsg_pair(m->reporter, "reporter", m->target));
    GD_TRY(gd_dmsg_hash(&m->leaf_hash, "leaf_hash"));
    gd_mmr_proof proof;
    if (gd_mmr_proof_decode(&proof, m->proof.data, m->proof.len) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "proof");
    if (proof.leaf_index == 0)
        return gd_fail(GD_ERR_INVALID, "proof is for the header leaf, not a chunk");
    return GD_OK;
}

gd_status gd_diloco_msg_submit_verdict_check(const Gonka__Diloco__V1__MsgSubmitVerdict *m) {
    GD_TRY(gd_dmsg_pair(m->validator, "validator", m->target));
    GD_TRY(gd_dmsg_check_index(m->check));
    if (m->seal.len != 0) {
        GD_TRY(gd_dmsg_hash(&m->seal, "seal"));
        if (m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_UNSPECIFIED || m->digest.len != 0)
            return gd_fail(GD_ERR_INVALID, "a sealed verdict carries only the seal");
        return GD_OK;
    }
    if (m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_PASS &&
        m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL &&
        m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE)
        return gd_fail(GD_ERR_INVALID, "verdict must be pass, fail or unavailable (or send a "
                                       "seal)");
    GD_TRY(gd_dmsg_hash(&m->digest, "digest"));
    if (m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE &&
        !gd_dmsg_is_zero(&m->digest))
        return gd_fail(GD_ERR_INVALID, "the digest of an unavailable verdict is all zero");
    return GD_OK;
}

gd_status gd_diloco_msg_dispute_check(const Gonka__Diloco__V1__MsgDispute *m) {
    GD_TRY(gd_dmsg_pair(m->validator, "validator", m->target));
    GD_TRY(gd_dmsg_check_index(m->check));
    if (m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_PASS &&
        m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL)
        return gd_fail(GD_ERR_INVALID, "a re-check verdict must be pass or fail");
    return gd_dmsg_hash(&m->digest, "digest");
}

gd_status gd_diloco_msg_attest_round_check(const Gonka__Diloco__V1__MsgAttestRound *m) {
    GD_TRY(gd_dmsg_address(m->attester, "attester"));
    return gd_dmsg_hash(&m->next_state_hash, "next_state_hash");
}

gd_status gd_diloco_msg_claim_rewards_check(const Gonka__Diloco__V1__MsgClaimRewards *m) {
    return gd_dmsg_address(m->claimer, "claimer");
}

/* --- builders --------------------------------------------------------------- */

static ProtobufCBinaryData gd_dmsg_bytes(const uint8_t *data, size_t len) {
    return (ProtobufCBinaryData){.len = data ? len : 0, .data = (uint8_t *)data};
}

static void gd_dmsg_coin(Cosmos__Base__V1beta1__Coin *c, const gd_coin *coin) {
    cosmos__base__v1beta1__coin__init(c);
    c->denom = (char *)coin->denom;
    c->amount = (char *)coin->amount;
}

gd_status gd_diloco_msg_create_run(gd_any *out, const char *authority,
                                   const Gonka__Diloco__V1__RunSpec *spec, const gd_coin *pool) {
    Cosmos__Base__V1beta1__Coin c;
    gd_dmsg_coin(&c, pool);
    Gonka__Diloco__V1__MsgCreateRun m = GONKA__DILOCO__V1__MSG_CREATE_RUN__INIT;
    m.authority = (char *)authority;
    m.spec = (Gonka__Diloco__V1__RunSpec *)spec;
    m.pool = &c;
    GD_TRY(gd_diloco_msg_create_run_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_CREATE_RUN, &m.base);
}

gd_status gd_diloco_msg_join_run(gd_any *out, const char *participant, uint64_t run,
                                 const char *artifact_url, const char *hw_class,
                                 const gd_coin *collateral) {
    Cosmos__Base__V1beta1__Coin c;
    gd_dmsg_coin(&c, collateral);
    Gonka__Diloco__V1__MsgJoinRun m = GONKA__DILOCO__V1__MSG_JOIN_RUN__INIT;
    m.participant = (char *)participant;
    m.run = run;
    m.artifact_url = (char *)artifact_url;
    m.hw_class = (char *)hw_class;
    m.collateral = &c;
    GD_TRY(gd_diloco_msg_join_run_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_JOIN_RUN, &m.base);
}

gd_status gd_diloco_msg_commit_round(gd_any *out, const char *participant,
                                     const gd_diloco_commit *c) {
    Gonka__Diloco__V1__MsgCommitRound m = GONKA__DILOCO__V1__MSG_COMMIT_ROUND__INIT;
    m.participant = (char *)participant;
    m.run = c->run;
    m.round = c->round;
    m.payload_root = gd_dmsg_bytes(c->payload_root, GD_DILOCO_HASH_LEN);
    m.payload_leaves = c->payload_leaves;
    m.payload_bytes = c->payload_bytes;
    m.transcript_root = gd_dmsg_bytes(c->transcript_root, GD_DILOCO_HASH_LEN);
    m.segment_count = c->segment_count;
    m.loss_first_micro = c->loss_first_micro;
    m.loss_last_micro = c->loss_last_micro;
    GD_TRY(gd_diloco_msg_commit_round_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_COMMIT_ROUND, &m.base);
}

gd_status gd_diloco_msg_report_availability(gd_any *out, const char *reporter, uint64_t run,
                                            uint64_t round, const char *target,
                                            const uint8_t leaf_hash[GD_DILOCO_HASH_LEN],
                                            const uint8_t *proof, size_t proof_len) {
    Gonka__Diloco__V1__MsgReportAvailability m = GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
    m.reporter = (char *)reporter;
    m.run = run;
    m.round = round;
    m.target = (char *)target;
    m.leaf_hash = gd_dmsg_bytes(leaf_hash, GD_DILOCO_HASH_LEN);
    m.proof = gd_dmsg_bytes(proof, proof_len);
    GD_TRY(gd_diloco_msg_report_availability_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m.base);
}

/* Both forms of MsgSubmitVerdict: seal, or verdict and digest. */
static gd_status gd_dmsg_verdict(gd_any *out, const char *validator, uint64_t run,
                                 uint64_t round, const char *target, uint32_t check,
                                 const uint8_t *seal, gd_diloco_verdict verdict,
                                 const uint8_t *digest) {
    Gonka__Diloco__V1__MsgSubmitVerdict m = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
    m.validator = (char *)validator;
    m.run = run;
    m.round = round;
    m.target = (char *)target;
    m.check = check;
    m.seal = gd_dmsg_bytes(seal, GD_DILOCO_HASH_LEN);
    m.verdict = (Gonka__Diloco__V1__Verdict)verdict;
    m.digest = gd_dmsg_bytes(digest, GD_DILOCO_HASH_LEN);
    GD_TRY(gd_diloco_msg_submit_verdict_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_SUBMIT_VERDICT, &m.base);
}

gd_status gd_diloco_msg_submit_verdict_sealed(gd_any *out, const char *validator, uint64_t run,
                                              uint64_t round, const char *target, uint32_t check,
                                              const uint8_t seal[GD_DILOCO_HASH_LEN]) {
    if (seal == NULL)
        return gd_fail(GD_ERR_INVALID, "seal is missing");
    return gd_dmsg_verdict(out, validator, run, round, target, check, seal,
                           GD_VERDICT_UNSPECIFIED, NULL);
}

gd_status gd_diloco_msg_submit_verdict_revealed(gd_any *out, const char *validator,
                                                uint64_t run, uint64_t round, const char *target,
                                                uint32_t check, gd_diloco_verdict verdict,
                                                const uint8_t digest[GD_DILOCO_HASH_LEN]) {
    if (digest == NULL)
        return gd_fail(GD_ERR_INVALID, "digest is missing");
    return gd_dmsg_verdict(out, validator, run, round, target, check, NULL, verdict, digest);
}

gd_status gd_diloco_msg_dispute(gd_any *out, const char *validator, uint64_t run, uint64_t round,
                                const char *target, uint32_t check, gd_diloco_verdict verdict,
                                const uint8_t digest[GD_DILOCO_HASH_LEN]) {
    Gonka__Diloco__V1__MsgDispute m = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
    m.validator = (char *)validator;
    m.run = run;
    m.round = round;
    m.target = (char *)target;
    m.check = check;
    m.verdict = (Gonka__Diloco__V1__Verdict)verdict;
    m.digest = gd_dmsg_bytes(digest, GD_DILOCO_HASH_LEN);
    GD_TRY(gd_diloco_msg_dispute_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_DISPUTE, &m.base);
}

gd_status gd_diloco_msg_attest_round(gd_any *out, const char *attester, uint64_t run,
                                     uint64_t round,
                                     const uint8_t next_state_hash[GD_DILOCO_HASH_LEN]) {
    Gonka__Diloco__V1__MsgAttestRound m = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
    m.attester = (char *)attester;
    m.run = run;
    m.round = round;
    m.next_state_hash = gd_dmsg_bytes(next_state_hash, GD_DILOCO_HASH_LEN);
    GD_TRY(gd_diloco_msg_attest_round_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_ATTEST_ROUND, &m.base);
}

gd_status gd_diloco_msg_claim_rewards(gd_any *out, const char *claimer, uint64_t run,
                                      uint64_t epoch) {
    Gonka__Diloco__V1__MsgClaimRewards m = GONKA__DILOCO__V1__MSG_CLAIM_REWARDS__INIT;
    m.claimer = (char *)claimer;
    m.run = run;
    m.epoch = epoch;
    GD_TRY(gd_diloco_msg_claim_rewards_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_CLAIM_REWARDS, &m.base);
}
