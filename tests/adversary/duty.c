/* Members that do some duties their own way (tests/adversary/adversary.h),
 * played through the member's duty seam (gd_member_duty_fn).
 *
 * non-reporter: trains, serves and attests, but never reports anyone's
 * availability. Inclusion needs 2/3 of the reporting weight, so a
 * coalition under 1/3 that stays silent excludes nobody and pays the skip
 * slash ("no availability report") each round.
 *
 * wrong-hash attester: aggregates honestly, then seals and reveals a state
 * hash that is not its aggregate: a minority attestation, the skip slash.
 *
 * attestation copier: never aggregates; it seals a guess (G unchanged) in
 * the attest window and, once another attester has revealed, reveals that
 * hash instead. The reveal does not match its seal, the chain refuses it,
 * and it is absent from the round's attestations: the skip slash.
 *
 * copying validator: never re-executes; it seals a made-up PASS in the
 * verify window and, once its partner on a double check has revealed,
 * reveals the partner's verdict and digest. Seals are salted and bind the
 * answer before any is revealed, so the copied reveal does not match: it
 * is refused, the check counts as skipped (the skip slash) and the
 * partner's verdict decides (docs/verification.md, "Copying").
 *
 * skipper (the red-team review's seventh attack): does every duty but the
 * checks it is assigned, which it never answers, to save their compute.
 * Under one skip slash a round, every skip after the first was free; each
 * skipped check now costs the skip slash, and goes to the class. */
#include <stdio.h>
#include <string.h>

#include "chain/wire/diloco_msg.h"
#include "common/hash.h"
#include "tests/adversary/adversary.h"

/* Its own salt for a sealed answer: any 32 bytes do, the chain only checks
 * that a reveal matches its seal. */
static void adv_salt(uint8_t salt[32], const char *why, const char *address, uint64_t round,
                     const char *target, uint32_t check) {
    char text[320];
    int n = snprintf(text, sizeof text, "%s %s %llu %s %u", why, address,
                     (unsigned long long)round, target, check);
    gd_sha256(salt, text, n > 0 ? (size_t)n : 0);
}

bool gd_adv_no_reports(const gd_action *a, const char *address, uint64_t run,
                       const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                       bool *sent) {
    (void)address;
    (void)run;
    (void)round;
    (void)msg;
    *sent = false;
    return a->kind == GD_ACT_REPORT;
}

bool gd_adv_wrong_attest(const gd_action *a, const char *address, uint64_t run,
                         const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                         bool *sent) {
    (void)round;
    *sent = false;
    if (a->kind != GD_ACT_SEAL_ATTEST && a->kind != GD_ACT_REVEAL_ATTEST)
        return false;
    uint8_t salt[32], hash[32], seal[32];
    adv_salt(salt, "attest", address, a->round, "", 0);
    adv_salt(hash, "not the aggregate", address, a->round, "", 0);
    gd_status s;
    if (a->kind == GD_ACT_SEAL_ATTEST) {
        gd_diloco_seal(seal, GD_SEAL_ATTEST, address, hash, 32, salt);
        s = gd_diloco_msg_attest_round_sealed(msg, address, run, a->round, seal);
    } else {
        s = gd_diloco_msg_attest_round_revealed(msg, address, run, a->round, hash, salt);
    }
    *sent = s == GD_OK;
    return true;
}

bool gd_adv_copy_attest(const gd_action *a, const char *address, uint64_t run,
                        const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                        bool *sent) {
    *sent = false;
    if (a->kind == GD_ACT_AGGREGATE)
        return true; /* it never computes the aggregate */
    if ((a->kind != GD_ACT_SEAL_ATTEST && a->kind != GD_ACT_REVEAL_ATTEST) || round == NULL ||
        round->round == NULL || round->round->start_state_hash.len != 32)
        return false;
    uint8_t salt[32], seal[32];
    adv_salt(salt, "copy attest", address, a->round, "", 0);
    gd_status s = GD_OK;
    if (a->kind == GD_ACT_SEAL_ATTEST) {
        gd_diloco_seal(seal, GD_SEAL_ATTEST, address, round->round->start_state_hash.data, 32,
                       salt);
        s = gd_diloco_msg_attest_round_sealed(msg, address, run, a->round, seal);
        *sent = s == GD_OK;
        return true;
    }
    for (size_t i = 0; i < round->n_attestations; i++) {
        const Gonka__Diloco__V1__Attestation *x = round->attestations[i];
        if (strcmp(x->attester, address) != 0 && x->next_state_hash.len == 32) {
            s = gd_diloco_msg_attest_round_revealed(msg, address, run, a->round,
                                                    x->next_state_hash.data, salt);
            *sent = s == GD_OK;
            break;
        }
    }
    return true; /* nobody revealed yet: wait for one */
}

bool gd_adv_copy_verdicts(const gd_action *a, const char *address, uint64_t run,
                          const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                          bool *sent) {
    *sent = false;
    /* Its own digests it sends honestly: it copies only others' verdicts. */
    if ((a->kind != GD_ACT_CHECK && a->kind != GD_ACT_REVEAL_VERDICT) || round == NULL ||
        strcmp(a->target, address) == 0)
        return false;
    uint8_t salt[32], digest[32], seal[32];
    adv_salt(salt, "copy verdict", address, a->round, a->target, a->check);
    gd_status s = GD_OK;
    if (a->kind == GD_ACT_CHECK) {
        adv_salt(digest, "made up", address, a->round, a->target, a->check);
        gd_diloco_verdict_seal(seal, GD_SEAL_VERDICT, address, GD_VERDICT_PASS, digest, salt);
        s = gd_diloco_msg_submit_verdict_sealed(msg, address, run, a->round, a->target, a->check,
                                                seal);
        *sent = s == GD_OK;
        return true;
    }
    for (size_t i = 0; i < round->n_verdicts; i++) {
        const Gonka__Diloco__V1__VerdictRecord *v = round->verdicts[i];
        if (v->recheck || v->check != a->check || strcmp(v->target, a->target) != 0 ||
            strcmp(v->validator, address) == 0 || v->verdict == 0 || v->digest.len != 32)
            continue;
        s = gd_diloco_msg_submit_verdict_revealed(msg, address, run, a->round, a->target,
                                                  a->check, (gd_diloco_verdict)v->verdict,
                                                  v->digest.data, salt);
        *sent = s == GD_OK;
        break;
    }
    return true; /* the partner has not revealed yet: wait for it */
}

bool gd_adv_skipper(const gd_action *a, const char *address, uint64_t run,
                    const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg, bool *sent) {
    (void)run;
    (void)round;
    (void)msg;
    *sent = false;
    /* Its own digests it sends: it skips only the checks it holds. */
    return (a->kind == GD_ACT_CHECK || a->kind == GD_ACT_REVEAL_VERDICT) &&
           strcmp(a->target, address) != 0;
}
