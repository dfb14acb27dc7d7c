/* What the files of the DiLoCo module share: store keys and records, 64-bit
 * amounts, the module account's transfers, errors, and the round logic the
 * block hooks and the message handlers both call. Not a public header. */
#ifndef GD_CHAIN_MODULE_DILOCO_INTERNAL_H
#define GD_CHAIN_MODULE_DILOCO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/address.h"
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

/* Exact products of two 64-bit amounts (GCC and Clang; the Go port uses
 * math/big or sdk.Int). */
__extension__ typedef unsigned __int128 dl_u128;

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
/* Address keys (dl_key_addr: length, then bytes) sort in the one address
 * order, gd_diloco_address_cmp (proofs/diloco_rules.h), so records listed
 * by prefix come in that order. */

uint64_t dl_get_be64(const uint8_t b[8]);
void dl_put_be64(uint8_t b[8], uint64_t v);

/* ---- records ------------------------------------------------------------ */

/* Loads and decodes a record; GD_ERR_NOT_FOUND when absent (no ctx error),
 * GD_ERR_PARSE when the stored bytes do not decode. Free with dl_free. */
gd_status dl_load(gd_ctx *ctx, const dl_key *k, const ProtobufCMessageDescriptor *d,
                  void **out) GD_MUST_CHECK;
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
gd_status dl_list_prefix(gd_kv *kv, const dl_key *prefix, const ProtobufCMessageDescriptor *d,
                         dl_list *out) GD_MUST_CHECK;
void dl_list_free(dl_list *l);

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
gd_status dl_get_run(gd_ctx *ctx, uint64_t run, dl_run **out) GD_MUST_CHECK;
gd_status dl_put_run(gd_ctx *ctx, const dl_run *r) GD_MUST_CHECK;
gd_status dl_get_member(gd_ctx *ctx, uint64_t run, const char *addr, dl_member **out) GD_MUST_CHECK;
gd_status dl_put_member(gd_ctx *ctx, const dl_member *m) GD_MUST_CHECK;
/* A round record holds everything but its member snapshot, which lives in
 * one record per member (DL_WEIGHT) so that a message reads one member's
 * weight without decoding all of them. dl_get_round leaves members empty;
 * dl_load_members fills them (address order) for the block hooks and the
 * queries; dl_put_round never stores them. */
gd_status dl_get_round(gd_ctx *ctx, uint64_t run, uint64_t round, dl_round **out) GD_MUST_CHECK;
gd_status dl_load_members(gd_ctx *ctx, dl_round *r) GD_MUST_CHECK;
gd_status dl_put_round(gd_ctx *ctx, const dl_round *r) GD_MUST_CHECK;
/* A member's frozen weight in a round (0 if not in its snapshot). */
gd_status dl_member_weight(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                           uint64_t *weight) GD_MUST_CHECK;
gd_status dl_get_commitment(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                            dl_commitment **out) GD_MUST_CHECK;

/* ---- amounts and the module account ---------------------------------------- */

/* A canonical decimal amount that fits 64 bits. */
gd_status dl_amount(const char *text, uint64_t *out) GD_MUST_CHECK;
void dl_amount_str(char out[24], uint64_t v);
/* floor(a * b / c) without overflow (c > 0), saturating at 2^64 - 1 (it
 * fits whenever b <= c). */
uint64_t dl_muldiv(uint64_t a, uint64_t b, dl_u128 c);
/* Sums of many 64-bit amounts (a round's total weight) are 128-bit, so that
 * no collateral can overflow them: canonical decimal, at most 39 digits. */
gd_status dl_amount128(const char *text, dl_u128 *out) GD_MUST_CHECK;
void dl_amount128_str(char out[40], dl_u128 v);

gd_status dl_module_address(char out[GD_ADDRESS_STR_MAX]) GD_MUST_CHECK;
gd_status dl_pay_in(gd_ctx *ctx, const char *from, const char *denom, uint64_t amount) GD_MUST_CHECK;
gd_status dl_pay_out(gd_ctx *ctx, const char *to, const char *denom, uint64_t amount) GD_MUST_CHECK;
gd_status dl_burn(gd_ctx *ctx, const char *denom, uint64_t amount) GD_MUST_CHECK;

/* Records a "diloco" ABCI error and returns GD_ERR_CHAIN. */
gd_status dl_fail(gd_ctx *ctx, uint32_t code, const char *fmt, ...) GD_PRINTF(3, 4);

/* The denom of a run's coins (the three spec coins share it). */
const char *dl_denom(const dl_run *r);

/* ---- rounds (diloco_rounds.c) --------------------------------------------- */

/* The module's randomness for a purpose ("beacon", "verify", "recheck") at
 * the block being executed. On localnet it is the block hash; a real chain
 * plugs commit-reveal or BLS randomness in here. */
gd_status dl_randomness(gd_ctx *ctx, const char *purpose,
                        uint8_t out[GD_DILOCO_HASH_LEN]) GD_MUST_CHECK;

/* The window a height falls in, as a RoundPhase (TRAIN..ATTEST), or DONE
 * past the end. */
Gonka__Diloco__V1__RoundPhase dl_window_at(const dl_round *r, int64_t height);
/* A member's frozen weight in a round whose members are loaded (0 if not
 * in its snapshot). */
uint64_t dl_round_weight(const dl_round *r, const char *addr, const char **hw_class);
/* Slashes ppm of a member's collateral (burned), with an event. */
gd_status dl_slash(gd_ctx *ctx, uint64_t run, const char *addr, uint32_t ppm,
                   const char *reason) GD_MUST_CHECK;
/* Settles one epoch of a run (diloco_settle.c); updates run->pool. */
gd_status dl_settle_epoch(gd_ctx *ctx, dl_run *run, uint64_t epoch) GD_MUST_CHECK;
/* The begin-block work of every run: window transitions, settlement, and
 * opening the next round. */
gd_status dl_begin_block(gd_ctx *ctx) GD_MUST_CHECK;

/* ---- messages (diloco_msgs.c) and genesis/queries (diloco.c) -------------- */

extern const gd_msg_route dl_msg_routes[];
extern const size_t dl_n_msg_routes;

#endif
