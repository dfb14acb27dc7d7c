/* The DiLoCo module's messages of a round's checks: verdicts
 * (MsgSubmitVerdict) and re-checks (MsgDispute), sealed and then revealed
 * through one answer path, and the attestations of the next state
 * (MsgAttestRound); docs/protocol.md section 7, docs/verification.md. */
#include <string.h>

#include "chain/module/diloco_internal.h"
#include "chain/wire/diloco_msg.h"

/* ---- MsgSubmitVerdict and MsgDispute ---------------------------------------------------- */

DL_VALIDATE(dl_verdict_validate, Gonka__Diloco__V1__MsgSubmitVerdict, validator,
            gd_diloco_msg_submit_verdict_check)

/* The assignment of (target, check), and whether addr is among its
 * validators (recheck = false; or the target itself, for its own digest)
 * or re-checkers (true); code 13 otherwise. */
static gd_status dl_assigned(gd_ctx *ctx, dl_assignment **out, uint64_t run, uint64_t round,
                             const char *target, uint32_t check, const char *addr,
                             bool recheck) {
    dl_key k;
    dl_key_assignment(&k, run, round, target, check);
    gd_status s = dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__assignment__descriptor);
    bool in = s == GD_OK && (recheck ? dl_has_str((*out)->recheckers, (*out)->n_recheckers, addr)
                                     : dl_has_str((*out)->validators, (*out)->n_validators, addr) ||
                                           strcmp(target, addr) == 0);
    if (s == GD_OK && !in)
        s = GD_ERR_NOT_FOUND;
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_NOT_ASSIGNED, "%s is not %s check %u of %s", addr,
                       recheck ? "re-checking" : "assigned", (unsigned)check, target);
    return s;
}

static const char *dl_verdict_name(int v) {
    return v == 1 ? "pass" : v == 2 ? "fail" : v == 3 ? "unavailable" : "sealed";
}

/* A verdict or re-check, sealed or revealed (MsgSubmitVerdict and
 * MsgDispute differ only in their windows, whom they are for, the seal's
 * kind, and the bond an assigned accusation pays). */
typedef struct dl_answer {
    const char *validator;
    uint64_t run, round;
    const char *target;
    uint32_t check;
    const ProtobufCBinaryData *seal, *digest, *salt;
    int verdict;
    bool recheck;
} dl_answer;

static gd_status dl_answer_execute(gd_ctx *ctx, const dl_answer *m) {
    bool sealed = m->seal->len > 0;
    /* The target's own digest: sealed and revealed as a verdict is, with a
     * seal of its own kind and no bond (docs/protocol.md, "The target's
     * own digest"). */
    bool own = !m->recheck && strcmp(m->validator, m->target) == 0;
    Gonka__Diloco__V1__RoundPhase want =
        m->recheck ? (sealed ? PH(DISPUTE) : PH(DISPUTE_OPEN))
                   : (sealed ? PH(VERIFY) : PH(OPEN));
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_assignment *a = NULL;
    dl_verdict *rec = NULL;
    gd_status s = dl_current(ctx, m->run, m->round, want, &run, &round);
    /* ValidateBasic ran before; the sizes the seal reads are checked again
     * where they are read. */
    if (s == GD_OK && !sealed &&
        (m->digest->len != GD_DILOCO_HASH_LEN || m->salt->len != GD_DILOCO_SALT_LEN))
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a revealed %s needs a 32-byte digest and salt",
                    m->recheck ? "re-check" : "verdict");
    if (s == GD_OK)
        s = dl_assigned(ctx, &a, m->run, m->round, m->target, m->check, m->validator, m->recheck);
    dl_key k;
    dl_key_verdict(&k, m->run, m->round, m->target, m->check, m->validator);
    gd_status g = GD_ERR_NOT_FOUND;
    if (s == GD_OK) {
        g = dl_load(ctx, &k, (void **)&rec, &gonka__diloco__v1__verdict_record__descriptor);
        if (g != GD_OK && g != GD_ERR_NOT_FOUND)
            s = g;
    }
    const char *what = m->recheck ? "re-check" : "verdict";
    if (s == GD_OK && sealed) {
        uint64_t weight = 0;
        if (g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "%s already sealed check %u of %s",
                        m->validator, (unsigned)m->check, m->target);
        if (s == GD_OK)
            s = dl_mark_active(ctx, m->run, m->round, m->validator, &weight);
        dl_verdict v = GONKA__DILOCO__V1__VERDICT_RECORD__INIT;
        v.validator = (char *)m->validator;
        v.target = (char *)m->target;
        v.check = m->check;
        v.seal = *m->seal;
        v.recheck = m->recheck;
        if (s == GD_OK)
            s = dl_save(ctx, &k, &v);
        if (s == GD_OK)
            s = dl_event(ctx, m->recheck ? "diloco_recheck_sealed" : "diloco_verdict_sealed",
                         m->run, m->round, "target", m->target, "validator", m->validator);
    } else if (s == GD_OK) {
        uint8_t seal[GD_DILOCO_HASH_LEN];
        gd_diloco_verdict_seal(seal, m->recheck ? GD_SEAL_RECHECK : own ? GD_SEAL_OWN
                                                                         : GD_SEAL_VERDICT,
                               m->validator, (gd_diloco_verdict)m->verdict, m->digest->data,
                               m->salt->data);
        s = dl_check_reveal(ctx, g == GD_OK, g == GD_OK ? &rec->seal : NULL,
                            g == GD_OK && rec->verdict != 0, seal, m->validator, what);
        /* An assigned accusation (FAIL or UNAVAILABLE) is bonded: it is paid
         * only if the class upholds it, and loses the bond otherwise. */
        bool accuses = m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL ||
                       m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE;
        if (s == GD_OK && accuses && !m->recheck && !own) {
            uint64_t bond = 0;
            s = dl_amount(&bond, run->spec->fail_bond->amount);
            if (s == GD_OK)
                s = dl_pay_in(ctx, m->validator, dl_denom(run), bond);
            rec->bonded = true;
        }
        if (s == GD_OK) {
            rec->verdict = m->verdict;
            s = dl_set_bytes(&rec->digest, m->digest->data, m->digest->len);
        }
        if (s == GD_OK)
            s = dl_save(ctx, &k, rec);
        if (s == GD_OK)
            s = dl_event(ctx, m->recheck ? "diloco_recheck_revealed" : "diloco_verdict_revealed",
                         m->run, m->round, "target", m->target, "verdict",
                         dl_verdict_name(m->verdict));
    }
    dl_free(rec);
    dl_free(a);
    dl_free(round);
    dl_free(run);
    return s;
}

gd_status dl_verdict_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                             gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgSubmitVerdict *m = (const Gonka__Diloco__V1__MsgSubmitVerdict *)msg;
    dl_answer x = {m->validator, m->run, m->round, m->target, m->check,
                   &m->seal, &m->digest, &m->salt, (int)m->verdict, false};
    gd_status s = dl_answer_execute(ctx, &x);
    response->len = 0;
    return s;
}

DL_VALIDATE(dl_dispute_validate, Gonka__Diloco__V1__MsgDispute, validator,
            gd_diloco_msg_dispute_check)

gd_status dl_dispute_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                             gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgDispute *m = (const Gonka__Diloco__V1__MsgDispute *)msg;
    dl_answer x = {m->validator, m->run, m->round, m->target, m->check,
                   &m->seal, &m->digest, &m->salt, (int)m->verdict, true};
    gd_status s = dl_answer_execute(ctx, &x);
    response->len = 0;
    return s;
}

/* ---- MsgAttestRound ------------------------------------------------------------------------ */

DL_VALIDATE(dl_attest_validate, Gonka__Diloco__V1__MsgAttestRound, attester,
            gd_diloco_msg_attest_round_check)

gd_status dl_attest_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgAttestRound *m = (const Gonka__Diloco__V1__MsgAttestRound *)msg;
    bool sealed = m->seal.len > 0;
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_attestation *rec = NULL;
    gd_status s = dl_current(ctx, m->run, m->round, sealed ? PH(ATTEST) : PH(ATTEST_OPEN),
                             &run, &round);
    if (s == GD_OK && !sealed &&
        (m->next_state_hash.len != GD_DILOCO_HASH_LEN || m->salt.len != GD_DILOCO_SALT_LEN))
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a revealed attestation needs a 32-byte hash and "
                                                "salt");
    dl_key k;
    dl_key_init(&k, DL_ATTEST);
    dl_key_u64(&k, m->run);
    dl_key_u64(&k, m->round);
    dl_key_addr(&k, m->attester);
    gd_status g = GD_ERR_NOT_FOUND;
    if (s == GD_OK) {
        g = dl_load(ctx, &k, (void **)&rec, &gonka__diloco__v1__attestation__descriptor);
        if (g != GD_OK && g != GD_ERR_NOT_FOUND)
            s = g;
    }
    if (s == GD_OK && sealed) {
        uint64_t weight = 0;
        s = dl_mark_active(ctx, m->run, m->round, m->attester, &weight);
        if (s == GD_OK && g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "the attester already attested this round");
        dl_attestation a = GONKA__DILOCO__V1__ATTESTATION__INIT;
        a.attester = m->attester;
        a.seal = m->seal;
        if (s == GD_OK)
            s = dl_save(ctx, &k, &a);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_attestation_sealed", m->run, m->round, "attester",
                         m->attester, NULL, NULL);
    } else if (s == GD_OK) {
        uint8_t seal[GD_DILOCO_HASH_LEN];
        gd_diloco_seal(seal, GD_SEAL_ATTEST, m->attester, m->next_state_hash.data,
                       GD_DILOCO_HASH_LEN, m->salt.data);
        s = dl_check_reveal(ctx, g == GD_OK, g == GD_OK ? &rec->seal : NULL,
                            g == GD_OK && rec->next_state_hash.len != 0, seal, m->attester,
                            "attestation");
        if (s == GD_OK)
            s = dl_set_bytes(&rec->next_state_hash, m->next_state_hash.data, GD_DILOCO_HASH_LEN);
        if (s == GD_OK)
            s = dl_save(ctx, &k, rec);
        char hex[2 * GD_DILOCO_HASH_LEN + 1];
        gd_hex_encode(hex, m->next_state_hash.data, GD_DILOCO_HASH_LEN, false);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_attested", m->run, m->round, "attester",
                         m->attester, "next_state_hash", hex);
    }
    response->len = 0;
    dl_free(rec);
    dl_free(round);
    dl_free(run);
    return s;
}
