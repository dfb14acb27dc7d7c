/* The RunSpec of a DiLoCo training run (gonka.diloco.v1.RunSpec) as JSON,
 * the form `tx create-run --spec` and the module's genesis read, its
 * ValidateBasic and its digest. docs/cli.md ("Training module (chain)")
 * documents the format; docs/examples/run-spec.json is a complete example.
 *
 * JSON keys are the proto field names. Integers are JSON numbers or decimal
 * strings (a uint64 may exceed 2^53, so a string is the safe form);
 * real numbers (inner_lr, adam_beta1, clip_factor, ...) are canonical
 * decimals (chain/wire/decimal.h) in JSON strings, never JSON numbers; flags
 * are JSON true or false; layout_digest and initial_state_hash are 64 hex
 * digits; coins are strings like "1000ngonka"; hw_classes is an array of
 * strings; windows is an object {train, commit, reveal, verify, open,
 * dispute, attest, dispute_open, attest_open}. Duplicate keys are the
 * loader's to refuse: parse the file with JSON_REJECT_DUPLICATES, as the
 * CLI does. */
#ifndef GD_CHAIN_WIRE_DILOCO_SPEC_H
#define GD_CHAIN_WIRE_DILOCO_SPEC_H

#include <jansson.h>
#include <stdint.h>

#include "chain/wire/epoch.h"
#include "common/status.h"
#include "gonka/diloco/v1/types.pb-c.h"

/* Limits of the spec rules (gd_diloco_spec_check). */
#define GD_DILOCO_TEXT_MAX 256          /* model, data_spec */
#define GD_DILOCO_WINDOWS_MAX 100000    /* sum of a round's window lengths, in blocks */
#define GD_DILOCO_OUTER_LR_PPM_MAX 2000000
#define GD_DILOCO_CHECKS_MAX 16         /* checks_per_commit */
#define GD_DILOCO_RECHECKERS_MAX 15     /* recheck_validators (odd) */
#define GD_DILOCO_HW_CLASSES_MAX 16     /* hw_classes */
#define GD_DILOCO_MEMBERS_MAX 1024      /* max_members */
#define GD_DILOCO_SUSPEND_ROUNDS_MAX 1000000 /* suspend_rounds */
#define GD_DILOCO_BATCH_MAX (1u << 20)  /* batch, as the trainer's limit */
#define GD_DILOCO_SEQ_LEN_MAX (1u << 20)
#define GD_DILOCO_BATCH_TOKENS_MAX ((uint64_t)1 << 32) /* batch x seq_len */
#define GD_DILOCO_CHUNK_ELEMS_MAX (1u << 28)

/* Defaults of the optional keys. min_class_members has none of its own:
 * it defaults to gd_diloco_spec_class_min of the spec read. */
#define GD_DILOCO_DEFAULT_CHECKS_PER_COMMIT 4
#define GD_DILOCO_DEFAULT_DOUBLE_CHECK_PPM 500000
#define GD_DILOCO_DEFAULT_RECHECK_VALIDATORS 3
#define GD_DILOCO_DEFAULT_VALIDATOR_SHARE_PPM 200000
#define GD_DILOCO_DEFAULT_AVAIL_CHUNKS 4
#define GD_DILOCO_DEFAULT_SUSPEND_ROUNDS 4
#define GD_DILOCO_DEFAULT_MAX_MEMBERS 256
#define GD_DILOCO_DEFAULT_ATTEST_SHARE_PPM 50000

/* Parses a RunSpec object strictly: only known keys, every key present but
 * the optional checks_per_commit, double_check_ppm, recheck_validators,
 * validator_share_ppm, min_class_members, avail_chunks, suspend_rounds,
 * max_members and attest_share_ppm (defaults above; the inner optimizer's
 * keys have none), then applies gd_diloco_spec_check. GD_ERR_INVALID
 * naming the key on any problem (v1's slash_ppm and skip_slash_ppm with a
 * pointer to the fixed slashes that replace them). On success *out is a
 * new message allocated with malloc
 * throughout (protobuf-c's default allocator), so that
 * protobuf_c_message_free_unpacked(&spec->base, NULL) frees it;
 * gd_diloco_spec_free does exactly that. */
gd_status gd_diloco_spec_from_json(Gonka__Diloco__V1__RunSpec **out, const json_t *j) GD_MUST_CHECK;

/* Frees a spec from gd_diloco_spec_from_json (NULL is fine). A spec from
 * gonka__diloco__v1__run_spec__unpack is freed with its free_unpacked, as
 * any unpacked message; with the default allocator that is the same call. */
void gd_diloco_spec_free(Gonka__Diloco__V1__RunSpec *spec);

/* The same JSON shape back: uint64 fields as decimal strings, decimals as
 * the strings they are, bytes as lowercase hex, coins as "AMOUNTdenom",
 * every key present, so that export -> import gives an equal spec. NULL when out of memory or when a
 * required sub-message (windows, a coin) is absent. */
json_t *gd_diloco_spec_to_json(const Gonka__Diloco__V1__RunSpec *spec);

/* ValidateBasic of a spec (the rules are in docs/cli.md): GD_ERR_INVALID
 * with a detail naming the field and the rule. The inner optimizer's
 * ranges are a subset of what the trainer accepts (gd_train_options and
 * gd_diloco_config), so a run the chain takes is one workers can train. */
gd_status gd_diloco_spec_check(const Gonka__Diloco__V1__RunSpec *spec) GD_MUST_CHECK;

/* The blocks one round takes: the sum of the spec's window lengths. */
int64_t gd_diloco_spec_round_blocks(const Gonka__Diloco__V1__RunSpec *spec);

/* A round opens only inside one epoch's Inference phase and must end
 * before the next PoC starts (docs/protocol.md), so a run whose round is
 * longer than that phase (gd_epoch_inference_length) would never open
 * one. GD_ERR_INVALID with both lengths when it is; the spec must pass
 * gd_diloco_spec_check and the params gd_epoch_params_check. The genesis
 * epoch, whose length is epoch_length - epoch_shift, is not counted: a run
 * lives through the later ones. */
gd_status gd_diloco_spec_epoch_check(const Gonka__Diloco__V1__RunSpec *spec,
                                     const gd_epoch_params *epoch) GD_MUST_CHECK;

/* The first height from `from` on at which the module can open a round of
 * round_blocks blocks (gd_diloco_spec_round_blocks), the previous round
 * being over and some member sealed for it: a height in an epoch's
 * Inference phase (gd_epoch_phase_at) from which the whole round ends by
 * that epoch's next PoC start. latest is the epoch at `from` - 1 (the
 * chain's latest); later epochs follow from the params. -1 if no height in
 * the next three epochs fits (a round longer than the Inference phase). */
int64_t gd_diloco_next_open_height(const gd_epoch *latest, const gd_epoch_params *p,
                                   int64_t from, int64_t round_blocks);

/* The fewest members a hardware class needs for its commitments to be
 * checked: the target, its validators (two when double checks are on) and
 * a full set of re-checkers, all distinct:
 *   1 + (double_check_ppm > 0 ? 2 : 1) + recheck_validators.
 * min_class_members may not be below it, and defaults to it. */
uint32_t gd_diloco_spec_class_min(const Gonka__Diloco__V1__RunSpec *spec);

/* out = SHA-256("gd-run-spec-v3" || the spec's protobuf bytes): the one
 * name of everything a run fixes. protobuf-c writes proto3 fields in field
 * number order and leaves out zero values, so two equal specs have the
 * same bytes; a spec carrying unknown fields has no canonical bytes and is
 * refused (GD_ERR_INVALID), as is NULL. The spec need not pass
 * gd_diloco_spec_check. GD_ERR_NOMEM when out of memory. */
gd_status gd_diloco_spec_digest(uint8_t out[32],
                                const Gonka__Diloco__V1__RunSpec *spec) GD_MUST_CHECK;

/* An amount the module stores as a decimal string (pool, collateral,
 * weight, reward): canonical, and small enough for its 64-bit arithmetic.
 * Zero is allowed. */
gd_status gd_diloco_amount_check(const char *amount, const char *what) GD_MUST_CHECK;

/* A coin of the spec (or a message) as the module's 64-bit arithmetic
 * needs it: valid denom, canonical positive amount that fits a uint64.
 * what names it in the detail. */
gd_status gd_diloco_coin_check(const Cosmos__Base__V1beta1__Coin *coin,
                               const char *what) GD_MUST_CHECK;

/* Free text of the module's records (model, data_spec, artifact URL,
 * hardware class): 1..max bytes of printable ASCII. */
gd_status gd_diloco_text_check(const char *text, size_t max, const char *what) GD_MUST_CHECK;

#endif
