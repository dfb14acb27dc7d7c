/* The DiLoCo module's messages: their ValidateBasic (chain/wire/diloco_msg.h).
 * The builders (diloco_msg.c) and the module apply the same functions, so a
 * client refuses exactly what the chain would refuse without a fee. */
#include <stdbool.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_spec.h"
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

/* The two forms of every sealed answer: the seal alone (the reveal's
 * fields empty), or the revealed fields with the salt and no seal. A
 * message carrying both could be read either way, so it is refused. */
static gd_status gd_dmsg_sealed_only(const ProtobufCBinaryData *seal, bool revealed_fields_empty,
                                     const char *what) {
    GD_TRY(gd_dmsg_hash(seal, "seal"));
    if (!revealed_fields_empty)
        return gd_fail(GD_ERR_INVALID, "a sealed %s carries only the seal", what);
    return GD_OK;
}

static gd_status gd_dmsg_salt(const ProtobufCBinaryData *salt, const char *name) {
    if (salt->len != GD_DILOCO_SALT_LEN || salt->data == NULL)
        return gd_fail(GD_ERR_INVALID, "%s must be %d bytes, not %zu (the one the seal was made "
                                       "with)",
                       name, GD_DILOCO_SALT_LEN, salt->len);
    return GD_OK;
}

/* A verdict or re-check (MsgSubmitVerdict, MsgDispute): sealed, or
 * revealed with a defined verdict, its digest (all zero for UNAVAILABLE,
 * which re-executed nothing) and the salt. */
static gd_status gd_dmsg_verdict_form(const ProtobufCBinaryData *seal,
                                      Gonka__Diloco__V1__Verdict verdict,
                                      const ProtobufCBinaryData *digest,
                                      const ProtobufCBinaryData *salt, const char *what) {
    if (seal->len != 0)
        return gd_dmsg_sealed_only(seal,
                                   verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNSPECIFIED &&
                                       digest->len == 0 && salt->len == 0,
                                   what);
    if (verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_PASS &&
        verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL &&
        verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE)
        return gd_fail(GD_ERR_INVALID, "verdict must be pass, fail or unavailable (or send a "
                                       "seal)");
    GD_TRY(gd_dmsg_hash(digest, "digest"));
    if (verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE && !gd_dmsg_is_zero(digest))
        return gd_fail(GD_ERR_INVALID, "the digest of an unavailable verdict is all zero");
    return gd_dmsg_salt(salt, "salt");
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

/* The state sample's four fields: all or none, each of its fixed size or
 * a proof that decodes. Whether it proves the drawn chunk is the module's
 * to check (it needs the commitment). */
static gd_status gd_dmsg_state_sample_check(const Gonka__Diloco__V1__MsgReportAvailability *m) {
    size_t set = (m->state_descriptor.len > 0) + (m->state_descriptor_proof.len > 0) +
                 (m->state_chunk_leaf.len > 0) + (m->state_chunk_proof.len > 0);
    if (set == 0)
        return GD_OK;
    if (set != 4)
        return gd_fail(GD_ERR_INVALID, "the state sample has %zu of its 4 fields", set);
    if (m->state_descriptor.len != GD_WORKER_DESC_BYTES)
        return gd_fail(GD_ERR_INVALID, "state_descriptor must be %d bytes, not %zu",
                       GD_WORKER_DESC_BYTES, m->state_descriptor.len);
    if (m->state_chunk_leaf.len != GD_DILOCO_HASH_LEN)
        return gd_fail(GD_ERR_INVALID, "state_chunk_leaf must be %d bytes, not %zu",
                       GD_DILOCO_HASH_LEN, m->state_chunk_leaf.len);
    gd_mmr_proof proof;
    if (gd_mmr_proof_decode(&proof, m->state_descriptor_proof.data,
                            m->state_descriptor_proof.len) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "state_descriptor_proof");
    if (gd_mmr_proof_decode(&proof, m->state_chunk_proof.data, m->state_chunk_proof.len) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "state_chunk_proof");
    return GD_OK;
}

gd_status gd_diloco_msg_report_availability_check(
    const Gonka__Diloco__V1__MsgReportAvailability *m) {
    GD_TRY(gd_dmsg_pair(m->reporter, "reporter", m->target));
    if (m->n_leaf_hashes < 1 || m->n_leaf_hashes > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_fail(GD_ERR_INVALID, "leaf_hashes has %zu entries, not 1 to %d (one per drawn "
                                       "chunk)",
                       m->n_leaf_hashes, GD_DILOCO_AVAIL_CHUNKS_MAX);
    if (m->n_proofs != m->n_leaf_hashes)
        return gd_fail(GD_ERR_INVALID, "proofs has %zu entries, leaf_hashes %zu: one proof per "
                                       "leaf",
                       m->n_proofs, m->n_leaf_hashes);
    for (size_t i = 0; i < m->n_leaf_hashes; i++) {
        if (m->leaf_hashes[i].len != GD_DILOCO_HASH_LEN || m->leaf_hashes[i].data == NULL)
            return gd_fail(GD_ERR_INVALID, "leaf_hashes[%zu] must be %d bytes, not %zu", i,
                           GD_DILOCO_HASH_LEN, m->leaf_hashes[i].len);
        gd_mmr_proof proof;
        if (gd_mmr_proof_decode(&proof, m->proofs[i].data, m->proofs[i].len) != GD_OK)
            return gd_fail_context(GD_ERR_INVALID, "proofs[%zu]", i);
        if (proof.leaf_index == 0)
            return gd_fail(GD_ERR_INVALID, "proofs[%zu] is for the header leaf, not a chunk", i);
    }
    return gd_dmsg_state_sample_check(m);
}

gd_status gd_diloco_msg_submit_verdict_check(const Gonka__Diloco__V1__MsgSubmitVerdict *m) {
    /* From the target itself it is its own digest of one of its checks,
     * which asserts its own training: a PASS. */
    bool own = m->validator != NULL && m->target != NULL && strcmp(m->validator, m->target) == 0;
    if (own) {
        GD_TRY(gd_dmsg_address(m->target, "target"));
        if (m->seal.len == 0 && m->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_PASS)
            return gd_fail(GD_ERR_INVALID, "a target's own digest is revealed as PASS");
    } else {
        GD_TRY(gd_dmsg_pair(m->validator, "validator", m->target));
    }
    GD_TRY(gd_dmsg_check_index(m->check));
    return gd_dmsg_verdict_form(&m->seal, m->verdict, &m->digest, &m->salt, "verdict");
}

gd_status gd_diloco_msg_dispute_check(const Gonka__Diloco__V1__MsgDispute *m) {
    GD_TRY(gd_dmsg_pair(m->validator, "validator", m->target));
    GD_TRY(gd_dmsg_check_index(m->check));
    return gd_dmsg_verdict_form(&m->seal, m->verdict, &m->digest, &m->salt, "re-check");
}

gd_status gd_diloco_msg_attest_round_check(const Gonka__Diloco__V1__MsgAttestRound *m) {
    GD_TRY(gd_dmsg_address(m->attester, "attester"));
    if (m->seal.len != 0)
        return gd_dmsg_sealed_only(&m->seal, m->next_state_hash.len == 0 && m->salt.len == 0,
                                   "attestation");
    GD_TRY(gd_dmsg_hash(&m->next_state_hash, "next_state_hash"));
    return gd_dmsg_salt(&m->salt, "salt");
}

gd_status gd_diloco_msg_claim_rewards_check(const Gonka__Diloco__V1__MsgClaimRewards *m) {
    return gd_dmsg_address(m->claimer, "claimer");
}

gd_status gd_diloco_msg_randomness_check(const Gonka__Diloco__V1__MsgRandomness *m) {
    GD_TRY(gd_dmsg_address(m->member, "member"));
    if (m->seal.len != 0 && m->secret.len != 0)
        return gd_fail(GD_ERR_INVALID, "randomness carries a seal or a secret, not both");
    if (m->seal.len != 0)
        return gd_dmsg_hash(&m->seal, "seal");
    if (m->secret.len == 0)
        return gd_fail(GD_ERR_INVALID, "randomness needs a seal (for the next round) or a "
                                       "secret (in the round's reveal window)");
    return gd_dmsg_salt(&m->secret, "secret");
}

gd_status gd_diloco_msg_leave_run_check(const Gonka__Diloco__V1__MsgLeaveRun *m) {
    return gd_dmsg_address(m->participant, "participant");
}
