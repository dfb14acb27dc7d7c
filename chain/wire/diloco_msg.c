/* The DiLoCo module's messages: the builders (chain/wire/diloco_msg.h). Each
 * fills the protobuf struct, applies the message's ValidateBasic
 * (diloco_msg_check.c) and packs it as an Any. */
#include "chain/wire/diloco_msg.h"

static ProtobufCBinaryData gd_dmsg_bytes(const uint8_t *data, size_t len) {
    return (ProtobufCBinaryData){.len = data ? len : 0, .data = (uint8_t *)data};
}

/* A caller's input that must be there (a seal, a digest, a salt); the
 * message's check names anything else that is wrong. */
static gd_status gd_dmsg_need(const void *p, const char *what) {
    return p ? GD_OK : gd_fail(GD_ERR_INVALID, "%s is missing", what);
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
                                            const gd_diloco_chunk_proof *chunks, size_t n,
                                            const gd_state_sample_proof *state) {
    if (n > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_fail(GD_ERR_INVALID, "leaf_hashes has %zu entries, not 1 to %d (one per drawn "
                                       "chunk)",
                       n, GD_DILOCO_AVAIL_CHUNKS_MAX);
    if (n > 0 && chunks == NULL)
        return gd_fail(GD_ERR_INVALID, "the chunks are missing");
    ProtobufCBinaryData leaves[GD_DILOCO_AVAIL_CHUNKS_MAX], proofs[GD_DILOCO_AVAIL_CHUNKS_MAX];
    for (size_t i = 0; i < n; i++) {
        leaves[i] = gd_dmsg_bytes(chunks[i].leaf_hash, GD_DILOCO_HASH_LEN);
        proofs[i] = gd_dmsg_bytes(chunks[i].proof, chunks[i].proof_len);
    }
    Gonka__Diloco__V1__MsgReportAvailability m = GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
    m.reporter = (char *)reporter;
    m.run = run;
    m.round = round;
    m.target = (char *)target;
    m.n_leaf_hashes = n;
    m.leaf_hashes = leaves;
    m.n_proofs = n;
    m.proofs = proofs;
    if (state != NULL) {
        m.state_descriptor = gd_dmsg_bytes(state->descriptor, state->descriptor_len);
        m.state_descriptor_proof =
            gd_dmsg_bytes(state->descriptor_proof, state->descriptor_proof_len);
        m.state_chunk_leaf = gd_dmsg_bytes(state->chunk_leaf, state->chunk_leaf_len);
        m.state_chunk_proof = gd_dmsg_bytes(state->chunk_proof, state->chunk_proof_len);
    }
    GD_TRY(gd_diloco_msg_report_availability_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m.base);
}

/* Both forms of MsgSubmitVerdict: the seal, or verdict, digest and salt. */
static gd_status gd_dmsg_verdict(gd_any *out, const char *validator, uint64_t run,
                                 uint64_t round, const char *target, uint32_t check,
                                 const uint8_t *seal, gd_diloco_verdict verdict,
                                 const uint8_t *digest, const uint8_t *salt) {
    Gonka__Diloco__V1__MsgSubmitVerdict m = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
    m.validator = (char *)validator;
    m.run = run;
    m.round = round;
    m.target = (char *)target;
    m.check = check;
    m.seal = gd_dmsg_bytes(seal, GD_DILOCO_HASH_LEN);
    m.verdict = (Gonka__Diloco__V1__Verdict)verdict;
    m.digest = gd_dmsg_bytes(digest, GD_DILOCO_HASH_LEN);
    m.salt = gd_dmsg_bytes(salt, GD_DILOCO_SALT_LEN);
    GD_TRY(gd_diloco_msg_submit_verdict_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_SUBMIT_VERDICT, &m.base);
}

gd_status gd_diloco_msg_submit_verdict_sealed(gd_any *out, const char *validator, uint64_t run,
                                              uint64_t round, const char *target, uint32_t check,
                                              const uint8_t seal[GD_DILOCO_HASH_LEN]) {
    GD_TRY(gd_dmsg_need(seal, "seal"));
    return gd_dmsg_verdict(out, validator, run, round, target, check, seal,
                           GD_VERDICT_UNSPECIFIED, NULL, NULL);
}

gd_status gd_diloco_msg_submit_verdict_revealed(gd_any *out, const char *validator,
                                                uint64_t run, uint64_t round, const char *target,
                                                uint32_t check, gd_diloco_verdict verdict,
                                                const uint8_t digest[GD_DILOCO_HASH_LEN],
                                                const uint8_t salt[GD_DILOCO_SALT_LEN]) {
    GD_TRY(gd_dmsg_need(digest, "digest"));
    GD_TRY(gd_dmsg_need(salt, "salt"));
    return gd_dmsg_verdict(out, validator, run, round, target, check, NULL, verdict, digest,
                           salt);
}

/* Both forms of MsgDispute, as MsgSubmitVerdict's. */
static gd_status gd_dmsg_dispute(gd_any *out, const char *validator, uint64_t run,
                                 uint64_t round, const char *target, uint32_t check,
                                 const uint8_t *seal, gd_diloco_verdict verdict,
                                 const uint8_t *digest, const uint8_t *salt) {
    Gonka__Diloco__V1__MsgDispute m = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
    m.validator = (char *)validator;
    m.run = run;
    m.round = round;
    m.target = (char *)target;
    m.check = check;
    m.seal = gd_dmsg_bytes(seal, GD_DILOCO_HASH_LEN);
    m.verdict = (Gonka__Diloco__V1__Verdict)verdict;
    m.digest = gd_dmsg_bytes(digest, GD_DILOCO_HASH_LEN);
    m.salt = gd_dmsg_bytes(salt, GD_DILOCO_SALT_LEN);
    GD_TRY(gd_diloco_msg_dispute_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_DISPUTE, &m.base);
}

gd_status gd_diloco_msg_dispute_sealed(gd_any *out, const char *validator, uint64_t run,
                                       uint64_t round, const char *target, uint32_t check,
                                       const uint8_t seal[GD_DILOCO_HASH_LEN]) {
    GD_TRY(gd_dmsg_need(seal, "seal"));
    return gd_dmsg_dispute(out, validator, run, round, target, check, seal,
                           GD_VERDICT_UNSPECIFIED, NULL, NULL);
}

gd_status gd_diloco_msg_dispute_revealed(gd_any *out, const char *validator, uint64_t run,
                                         uint64_t round, const char *target, uint32_t check,
                                         gd_diloco_verdict verdict,
                                         const uint8_t digest[GD_DILOCO_HASH_LEN],
                                         const uint8_t salt[GD_DILOCO_SALT_LEN]) {
    GD_TRY(gd_dmsg_need(digest, "digest"));
    GD_TRY(gd_dmsg_need(salt, "salt"));
    return gd_dmsg_dispute(out, validator, run, round, target, check, NULL, verdict, digest,
                           salt);
}

static gd_status gd_dmsg_attest(gd_any *out, const char *attester, uint64_t run, uint64_t round,
                                const uint8_t *seal, const uint8_t *next_state_hash,
                                const uint8_t *salt) {
    Gonka__Diloco__V1__MsgAttestRound m = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
    m.attester = (char *)attester;
    m.run = run;
    m.round = round;
    m.seal = gd_dmsg_bytes(seal, GD_DILOCO_HASH_LEN);
    m.next_state_hash = gd_dmsg_bytes(next_state_hash, GD_DILOCO_HASH_LEN);
    m.salt = gd_dmsg_bytes(salt, GD_DILOCO_SALT_LEN);
    GD_TRY(gd_diloco_msg_attest_round_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_ATTEST_ROUND, &m.base);
}

gd_status gd_diloco_msg_attest_round_sealed(gd_any *out, const char *attester, uint64_t run,
                                            uint64_t round,
                                            const uint8_t seal[GD_DILOCO_HASH_LEN]) {
    GD_TRY(gd_dmsg_need(seal, "seal"));
    return gd_dmsg_attest(out, attester, run, round, seal, NULL, NULL);
}

gd_status gd_diloco_msg_attest_round_revealed(gd_any *out, const char *attester, uint64_t run,
                                              uint64_t round,
                                              const uint8_t next_state_hash[GD_DILOCO_HASH_LEN],
                                              const uint8_t salt[GD_DILOCO_SALT_LEN]) {
    GD_TRY(gd_dmsg_need(next_state_hash, "next_state_hash"));
    GD_TRY(gd_dmsg_need(salt, "salt"));
    return gd_dmsg_attest(out, attester, run, round, NULL, next_state_hash, salt);
}

static gd_status gd_dmsg_randomness(gd_any *out, const char *member, uint64_t run,
                                    uint64_t round, const uint8_t *seal, const uint8_t *secret) {
    Gonka__Diloco__V1__MsgRandomness m = GONKA__DILOCO__V1__MSG_RANDOMNESS__INIT;
    m.member = (char *)member;
    m.run = run;
    m.round = round;
    m.seal = gd_dmsg_bytes(seal, GD_DILOCO_HASH_LEN);
    m.secret = gd_dmsg_bytes(secret, GD_DILOCO_SALT_LEN);
    GD_TRY(gd_diloco_msg_randomness_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_RANDOMNESS, &m.base);
}

gd_status gd_diloco_msg_randomness_sealed(gd_any *out, const char *member, uint64_t run,
                                          uint64_t round,
                                          const uint8_t seal[GD_DILOCO_HASH_LEN]) {
    GD_TRY(gd_dmsg_need(seal, "seal"));
    return gd_dmsg_randomness(out, member, run, round, seal, NULL);
}

gd_status gd_diloco_msg_randomness_revealed(gd_any *out, const char *member, uint64_t run,
                                            uint64_t round,
                                            const uint8_t secret[GD_DILOCO_SALT_LEN]) {
    GD_TRY(gd_dmsg_need(secret, "secret"));
    return gd_dmsg_randomness(out, member, run, round, NULL, secret);
}

gd_status gd_diloco_msg_leave_run(gd_any *out, const char *participant, uint64_t run) {
    Gonka__Diloco__V1__MsgLeaveRun m = GONKA__DILOCO__V1__MSG_LEAVE_RUN__INIT;
    m.participant = (char *)participant;
    m.run = run;
    GD_TRY(gd_diloco_msg_leave_run_check(&m));
    return gd_any_pack(out, GD_DILOCO_MSG_LEAVE_RUN, &m.base);
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
