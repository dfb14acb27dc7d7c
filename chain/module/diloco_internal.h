/* What the files of the DiLoCo module share: store keys and records, 64-bit
 * amounts, the module account's transfers, errors and events, the round
 * logic the block hooks and the message handlers both call, and the entries
 * of the module's table (diloco.c). Not a public header. */
#ifndef GD_CHAIN_MODULE_DILOCO_INTERNAL_H
#define GD_CHAIN_MODULE_DILOCO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/keys/address.h"
#include "chain/module/diloco.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "gonka/diloco/v1/types.pb-c.h"

typedef Gonka__Diloco__V1__Params dl_params;
typedef Gonka__Diloco__V1__Run dl_run;
typedef Gonka__Diloco__V1__RunSpec dl_spec;
typedef Gonka__Diloco__V1__Member dl_member;
typedef Gonka__Diloco__V1__Round dl_round;
typedef Gonka__Diloco__V1__Commitment dl_commitment;
typedef Gonka__Diloco__V1__AvailabilityReport dl_report;
typedef Gonka__Diloco__V1__Assignment dl_assignment;
typedef Gonka__Diloco__V1__VerdictRecord dl_verdict;
typedef Gonka__Diloco__V1__Attestation dl_attestation;
typedef Gonka__Diloco__V1__SettleAmount dl_settle;
typedef Gonka__Diloco__V1__RandomnessRecord dl_secret;
typedef Gonka__Diloco__V1__WeightedMember dl_weighted;

/* Exact products of two 64-bit amounts (GCC and Clang; the Go port uses
 * math/big or sdk.Int). */
__extension__ typedef unsigned __int128 dl_u128;

/* A round's phase, or the window a height falls in. */
#define PH(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x

/* ---- keys (diloco.h lists the layout) ------------------------------------ */

enum {
    DL_PREFIX = 0x04,
    DL_PARAMS = 0x01,
    DL_NEXT_RUN = 0x02,
    DL_RUN = 0x03,
    DL_MEMBER = 0x04,
    DL_ROUND = 0x05,
    DL_COMMIT = 0x06,
    DL_REPORT = 0x07,
    DL_ASSIGN = 0x08,
    DL_VERDICT = 0x09,
    DL_ATTEST = 0x0a,
    DL_SETTLE = 0x0b,
    DL_WEIGHT = 0x0c,
    DL_RANDOM = 0x0d,
};

typedef struct dl_key {
    uint8_t b[2 + 8 + 8 + 2 * (1 + GD_ADDRESS_STR_MAX) + 4];
    size_t n;
} dl_key;

void dl_key_init(dl_key *k, uint8_t kind);
void dl_key_u64(dl_key *k, uint64_t v);
void dl_key_u32(dl_key *k, uint32_t v);
void dl_key_addr(dl_key *k, const char *address);
/* The prefix of a round's records of one kind: kind, run, round. */
void dl_round_prefix(dl_key *k, uint8_t kind, const Gonka__Diloco__V1__Round *r);
/* Whole keys of the records more than one file reads or writes. */
void dl_key_commit(dl_key *k, uint64_t run, uint64_t round, const char *participant);
void dl_key_weight(dl_key *k, uint64_t run, uint64_t round, const char *member);
void dl_key_assignment(dl_key *k, uint64_t run, uint64_t round, const char *target,
                       uint32_t check);
void dl_key_verdict(dl_key *k, uint64_t run, uint64_t round, const char *target, uint32_t check,
                    const char *validator);
void dl_key_settle(dl_key *k, uint64_t run, uint64_t epoch, const char *address);
void dl_key_secret(dl_key *k, uint64_t run, uint64_t round, const char *member);
/* Address keys (dl_key_addr: length, then bytes) sort in the one address
 * order, gd_diloco_address_cmp (proofs/diloco_rules.h), so records listed
 * by prefix come in that order. */

uint64_t dl_get_be64(const uint8_t b[8]);
void dl_put_be64(uint8_t b[8], uint64_t v);

/* ---- records ------------------------------------------------------------ */

/* Loads and decodes a record; GD_ERR_NOT_FOUND when absent (no ctx error),
 * GD_ERR_PARSE when the stored bytes do not decode. Free with dl_free. */
gd_status dl_load(gd_ctx *ctx, const dl_key *k, void **out,
                  const ProtobufCMessageDescriptor *d) GD_MUST_CHECK;
gd_status dl_save(gd_ctx *ctx, const dl_key *k, const void *msg) GD_MUST_CHECK;
/* A message's canonical bytes into out (replacing its content): query and
 * message responses. */
gd_status dl_pack(gd_buf *out, const void *msg) GD_MUST_CHECK;
void dl_free(void *msg);

/* Every record under a key prefix, in key order. */
typedef struct dl_list {
    void **items;
    size_t n;
} dl_list;
gd_status dl_list_prefix(gd_kv *kv, const dl_key *prefix, dl_list *out,
                         const ProtobufCMessageDescriptor *d) GD_MUST_CHECK;
void dl_list_free(dl_list *l);
/* Deletes every record under a key prefix. */
gd_status dl_delete_prefix(gd_ctx *ctx, const dl_key *prefix) GD_MUST_CHECK;
/* The number of records under a key prefix (nothing decoded). */
gd_status dl_count_prefix(gd_kv *kv, const dl_key *prefix, size_t *out) GD_MUST_CHECK;

/* Replaces a string field of a decoded record (frees the old one). */
gd_status dl_set_str(char **field, const char *value) GD_MUST_CHECK;
/* Replaces a bytes field with a copy of len bytes. */
gd_status dl_set_bytes(ProtobufCBinaryData *field, const uint8_t *data, size_t len) GD_MUST_CHECK;
/* Appends a copy of s to a repeated string field. */
gd_status dl_push_str(char ***items, size_t *n, const char *s) GD_MUST_CHECK;
bool dl_has_str(char *const *items, size_t n, const char *s);

/* ---- typed access --------------------------------------------------------- */

gd_status dl_get_params(gd_ctx *ctx, dl_params **out) GD_MUST_CHECK;
/* GD_ERR_NOT_FOUND (no ctx error) when absent. */
gd_status dl_get_run(gd_ctx *ctx, dl_run **out, uint64_t run) GD_MUST_CHECK;
gd_status dl_put_run(gd_ctx *ctx, const dl_run *r) GD_MUST_CHECK;
gd_status dl_get_member(gd_ctx *ctx, dl_member **out, uint64_t run, const char *addr) GD_MUST_CHECK;
gd_status dl_put_member(gd_ctx *ctx, const dl_member *m) GD_MUST_CHECK;
/* A round record holds everything but its member snapshot, which lives in
 * one record per member (DL_WEIGHT) so that a message reads one member's
 * weight without decoding all of them. dl_get_round leaves members empty;
 * dl_load_members fills them (address order) for the block hooks and the
 * queries; dl_put_round never stores them. */
gd_status dl_get_round(gd_ctx *ctx, dl_round **out, uint64_t run, uint64_t round) GD_MUST_CHECK;
gd_status dl_load_members(gd_ctx *ctx, dl_round *r) GD_MUST_CHECK;
gd_status dl_put_round(gd_ctx *ctx, const dl_round *r) GD_MUST_CHECK;
/* A member's frozen weight in a round (0 if not in its snapshot). */
gd_status dl_member_weight(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                           uint64_t *weight) GD_MUST_CHECK;
gd_status dl_get_commitment(gd_ctx *ctx, dl_commitment **out, uint64_t run, uint64_t round,
                            const char *addr) GD_MUST_CHECK;

/* ---- amounts and the module account ---------------------------------------- */

/* A canonical decimal amount that fits 64 bits. */
gd_status dl_amount(uint64_t *out, const char *text) GD_MUST_CHECK;
void dl_amount_str(char out[24], uint64_t v);
/* floor(a * b / c) without overflow (c > 0), saturating at 2^64 - 1 (it
 * fits whenever b <= c). */
uint64_t dl_muldiv(uint64_t a, uint64_t b, dl_u128 c);
/* floor(a * b / c) for b <= c of 128 bits (weights summed over members),
 * rounding down a little further when c passes 2^64. */
uint64_t dl_muldiv_wide(uint64_t a, dl_u128 b, dl_u128 c);
/* Sums of many 64-bit amounts (a round's total weight) are 128-bit, so that
 * no collateral can overflow them: canonical decimal, at most 39 digits. */
gd_status dl_amount128(dl_u128 *out, const char *text) GD_MUST_CHECK;
/* A tally kept as a decimal string: NULL or "" (a record from before the
 * tally existed) reads as 0. */
gd_status dl_tally_read(dl_u128 *out, const char *text) GD_MUST_CHECK;
void dl_amount128_str(char out[40], dl_u128 v);

gd_status dl_module_address(char out[GD_ADDRESS_STR_MAX]) GD_MUST_CHECK;
gd_status dl_pay_in(gd_ctx *ctx, const char *from, const char *denom, uint64_t amount) GD_MUST_CHECK;
gd_status dl_pay_out(gd_ctx *ctx, const char *to, const char *denom, uint64_t amount) GD_MUST_CHECK;
gd_status dl_burn(gd_ctx *ctx, const char *denom, uint64_t amount) GD_MUST_CHECK;

/* Records a "diloco" ABCI error and returns GD_ERR_CHAIN. */
gd_status dl_fail(gd_ctx *ctx, uint32_t code, const char *fmt, ...) GD_PRINTF(3, 4);
/* The one way the module emits an event of a round: its type, then "run"
 * and "round", then up to two more attributes (k1 may be NULL, or k2, or
 * neither), in that order. */
gd_status dl_event(gd_ctx *ctx, const char *type, uint64_t run, uint64_t round, const char *k1,
                   const char *v1, const char *k2, const char *v2) GD_MUST_CHECK;

/* The denom of a run's coins (the three spec coins share it). */
const char *dl_denom(const dl_run *r);

/* ---- rounds (diloco_rounds.c) --------------------------------------------- */

/* The one entry point of the module's randomness: a round's seed, fixed at
 * its verify_start from the beacon (the hash of its train_start block) and
 * the secrets its members revealed (gd_diloco_round_seed). A chain beacon
 * (Gonka's BLS randomness, drand) replaces this function's body: it must
 * give 32 bytes no one could know before the round's commit window closed.
 * Writes r->seed; the purposes' randomness follows from it
 * (gd_diloco_purpose). */
gd_status dl_round_seed(gd_ctx *ctx, const dl_run *run, dl_round *r) GD_MUST_CHECK;

/* The window a height falls in, as a RoundPhase (TRAIN..ATTEST), or DONE
 * past the end. */
Gonka__Diloco__V1__RoundPhase dl_window_at(const dl_round *r, int64_t height);
/* 3 * part >= 2 * total, exactly (both below 2^96: W 64-bit weights). */
bool dl_two_thirds(dl_u128 part, dl_u128 total);

/* ---- penalties and membership (diloco_members.c) ------------------------- */

/* Burns a fixed amount of a member's collateral (all of it if less is
 * left), with an event. */
gd_status dl_slash(gd_ctx *ctx, const dl_run *run, const char *addr, const char *amount,
                   const char *reason) GD_MUST_CHECK;
/* The run's cheat_slash: an upheld accusation, a PASS that lost. */
gd_status dl_slash_cheat(gd_ctx *ctx, const dl_run *run, const char *addr,
                         const char *reason) GD_MUST_CHECK;
/* The skip slash for a duty a round member did not do, once per duty: a
 * flat price per round made every skip after the first free. r's members
 * are loaded; the member's snapshot record remembers that it skipped and
 * which duty (GD_DUTY_*), so its node can say what it missed. */
gd_status dl_skip(gd_ctx *ctx, const dl_run *run, dl_round *r, const char *addr,
                  const char *duty, const char *reason) GD_MUST_CHECK;
/* The price of a sealed secret not revealed by verify start: the run's
 * withhold_slash, a skip (skip_slashed) priced apart. Withholding k secrets
 * chooses among 2^k seeds, so a skip slash would let a coalition buy the
 * seed that aims validator slots at itself (docs/verification.md, "Seed
 * grinding"). */
gd_status dl_withhold(gd_ctx *ctx, const dl_run *run, dl_round *r,
                      const char *addr) GD_MUST_CHECK;
/* Keeps a member out of the snapshots of rounds below until. */
gd_status dl_suspend(gd_ctx *ctx, uint64_t run, const char *addr, uint64_t until) GD_MUST_CHECK;
/* Marks a round member active (it sent a message of the round); weight is
 * its frozen weight, 0 if it is not in the snapshot (code 6 then). */
gd_status dl_mark_active(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                         uint64_t *weight) GD_MUST_CHECK;
/* dl_mark_active for an availability report: the member is a reporter
 * too (inclusion counts reporters' weight). */
gd_status dl_mark_reporter(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                           uint64_t *weight) GD_MUST_CHECK;
/* The run's member addr, not leaving (code 6 otherwise): who may seal a
 * secret or leave. */
gd_status dl_run_member(gd_ctx *ctx, dl_member **out, uint64_t run,
                        const char *addr) GD_MUST_CHECK;
/* Pays a member's collateral back and removes it (it left, or fell below
 * the minimum collateral). */
gd_status dl_release(gd_ctx *ctx, const dl_run *run, const dl_member *m,
                     const char *reason) GD_MUST_CHECK;
/* The index of addr in r's loaded members, or r->n_members. */
size_t dl_round_find(const dl_round *r, const char *addr);
/* Whether a round is over (DONE or VOID). */
bool dl_round_over(const dl_round *r);

/* ---- checks (diloco_checks.c) ---------------------------------------------- */

/* verify_start: each commitment's checks, validators weighted by collateral. */
gd_status dl_assign_checks(gd_ctx *ctx, const dl_run *run, dl_round *r) GD_MUST_CHECK;
/* dispute_start: skipped checks, undisputed outcomes, the disputes' juries. */
gd_status dl_assign_rechecks(gd_ctx *ctx, const dl_run *run, dl_round *r) GD_MUST_CHECK;
/* attest_start: every disputed check's outcome, slashes, the aggregation set. */
gd_status dl_resolve(gd_ctx *ctx, const dl_run *run, dl_round *r) GD_MUST_CHECK;
/* Settles one epoch of a run (diloco_settle.c); updates run->pool. */
gd_status dl_settle_epoch(gd_ctx *ctx, dl_run *run, uint64_t epoch) GD_MUST_CHECK;
/* The begin-block work of every run: window transitions, settlement, and
 * opening the next round. */
gd_status dl_begin_block(gd_ctx *ctx) GD_MUST_CHECK;

/* ---- what the message handlers share (diloco_msg_common.c) ----------------- */

/* The signer's canonical address into signer (an invalid-address error of
 * codespace sdk otherwise). */
gd_status dl_signer(gd_ctx *ctx, const char *addr, char *signer, size_t cap) GD_MUST_CHECK;
/* The message's ValidateBasic, shared with the clients that build it
 * (chain/wire/diloco_msg.h), as code 2. */
gd_status dl_basic(gd_ctx *ctx, gd_status check) GD_MUST_CHECK;
/* The run and its current round (code 4 / 8), which must be in window want
 * at this height (code 9). */
gd_status dl_current(gd_ctx *ctx, uint64_t run_id, uint64_t round_id,
                     Gonka__Diloco__V1__RoundPhase want, dl_run **run,
                     dl_round **round) GD_MUST_CHECK;
/* A sealed answer's record, stored at its seal and completed at its reveal:
 * verdicts and re-checks (VerdictRecord), attestations, secrets. The
 * reveal must match the seal (code 14), once (code 10). */
gd_status dl_check_reveal(gd_ctx *ctx, bool found, const ProtobufCBinaryData *stored_seal,
                          bool already, const uint8_t computed[GD_DILOCO_HASH_LEN],
                          const char *who, const char *what) GD_MUST_CHECK;

/* The ValidateBasic step of a message whose stateless checks are all in
 * chain/wire/diloco_msg.h: the signer's address, the shared check (code
 * 2); the router has decoded the message strictly. One definition per
 * message, with its own types. */
#define DL_VALIDATE(fn, Type, signer_field, check)                                                \
    gd_status fn(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap) {            \
        const Type *m = (const Type *)msg;                                                        \
        gd_status s = dl_signer(ctx, m->signer_field, signer, cap);                               \
        if (s == GD_OK)                                                                           \
            s = dl_basic(ctx, check(m));                                                          \
        return s;                                                                                 \
    }

/* ---- the module's table (diloco.c) and what it lists ------------------------ */

/* Each message's validate and execute (gd_msg_route), in the file of its
 * family: a run's membership and money (diloco_msg_run.c), a round's course
 * (diloco_msg_round.c), a round's checks (diloco_msg_check.c). */
gd_status dl_create_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_create_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response);
gd_status dl_join_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_join_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                          gd_buf *response);
gd_status dl_leave_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_leave_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                           gd_buf *response);
gd_status dl_claim_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_claim_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                           gd_buf *response);
gd_status dl_commit_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_commit_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response);
gd_status dl_report_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_report_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response);
gd_status dl_randomness_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer,
                                 size_t cap);
gd_status dl_randomness_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                                gd_buf *response);
gd_status dl_verdict_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_verdict_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                             gd_buf *response);
gd_status dl_dispute_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_dispute_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                             gd_buf *response);
gd_status dl_attest_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer, size_t cap);
gd_status dl_attest_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response);

/* The queries (diloco_queries.c), one per gd_query_route. */
gd_status dl_q_params(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len, gd_buf *resp);
gd_status dl_q_runs(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len, gd_buf *resp);
gd_status dl_q_run(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len, gd_buf *resp);
gd_status dl_q_round(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len, gd_buf *resp);
gd_status dl_q_rewards(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len, gd_buf *resp);

/* Genesis import and export (diloco_genesis.c). */
gd_status dl_init_genesis(gd_app *app, gd_ctx *ctx, const json_t *state);
json_t *dl_export_genesis(gd_app *app, gd_ctx *ctx);

/* The invariants (diloco_invariants.c); genesis checks them too. */
gd_status dl_invariants(gd_app *app, gd_kv *kv);

#endif
