/* RunSpec <-> JSON (chain/wire/diloco_spec.h). One table of fields drives both
 * directions, so the two cannot drift apart and export -> import is exact. */
#include "chain/wire/diloco_spec.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/coin.h"
#include "chain/wire/json_bytes.h"
#include "common/bytes.h"
#include "common/parse.h"

typedef enum gd_spec_kind {
    GD_SPEC_TEXT,    /* char * */
    GD_SPEC_HASH,    /* ProtobufCBinaryData, 32 bytes as 64 hex digits */
    GD_SPEC_U32,     /* uint32_t */
    GD_SPEC_U64,     /* uint64_t, written back as a decimal string */
    GD_SPEC_COIN,    /* Cosmos__Base__V1beta1__Coin *, "1000ngonka" */
    GD_SPEC_WINDOWS, /* Gonka__Diloco__V1__WindowLengths * */
    GD_SPEC_DECIMAL, /* char *, a canonical decimal (chain/wire/decimal.h) as a JSON string */
    GD_SPEC_BOOL,    /* protobuf_c_boolean, JSON true or false */
    GD_SPEC_STRINGS, /* repeated string: char ** with its count at count_offset */
} gd_spec_kind;

typedef struct gd_spec_field {
    const char *key;
    gd_spec_kind kind;
    size_t offset;
    bool optional;
    uint32_t dflt;       /* optional fields are all uint32 */
    size_t count_offset; /* GD_SPEC_STRINGS: where the element count is */
} gd_spec_field;

#define GD_AT(field) offsetof(Gonka__Diloco__V1__RunSpec, field)

/* In proto field order: to_json writes keys in this order. */
static const gd_spec_field gd_spec_fields[] = {
    {"model", GD_SPEC_TEXT, GD_AT(model), false, 0},
    {"layout_digest", GD_SPEC_HASH, GD_AT(layout_digest), false, 0},
    {"seed", GD_SPEC_U64, GD_AT(seed), false, 0},
    {"data_spec", GD_SPEC_TEXT, GD_AT(data_spec), false, 0},
    {"initial_state_hash", GD_SPEC_HASH, GD_AT(initial_state_hash), false, 0},
    {"h_min", GD_SPEC_U32, GD_AT(h_min), false, 0},
    {"h_max", GD_SPEC_U32, GD_AT(h_max), false, 0},
    {"segment_steps", GD_SPEC_U32, GD_AT(segment_steps), false, 0},
    {"tokens_per_step", GD_SPEC_U64, GD_AT(tokens_per_step), false, 0},
    {"outer_lr_ppm", GD_SPEC_U32, GD_AT(outer_lr_ppm), false, 0},
    {"outer_momentum_ppm", GD_SPEC_U32, GD_AT(outer_momentum_ppm), false, 0},
    {"codec", GD_SPEC_TEXT, GD_AT(codec), false, 0},
    {"windows", GD_SPEC_WINDOWS, GD_AT(windows), false, 0},
    {"reward_per_epoch", GD_SPEC_COIN, GD_AT(reward_per_epoch), false, 0},
    {"min_collateral", GD_SPEC_COIN, GD_AT(min_collateral), false, 0},
    {"fail_bond", GD_SPEC_COIN, GD_AT(fail_bond), false, 0},
    {"checks_per_commit", GD_SPEC_U32, GD_AT(checks_per_commit), true,
     GD_DILOCO_DEFAULT_CHECKS_PER_COMMIT},
    {"double_check_ppm", GD_SPEC_U32, GD_AT(double_check_ppm), true,
     GD_DILOCO_DEFAULT_DOUBLE_CHECK_PPM},
    {"recheck_validators", GD_SPEC_U32, GD_AT(recheck_validators), true,
     GD_DILOCO_DEFAULT_RECHECK_VALIDATORS},
    {"validator_share_ppm", GD_SPEC_U32, GD_AT(validator_share_ppm), true,
     GD_DILOCO_DEFAULT_VALIDATOR_SHARE_PPM},
    {"inner_lr", GD_SPEC_DECIMAL, GD_AT(inner_lr), false, 0},
    {"inner_min_lr", GD_SPEC_DECIMAL, GD_AT(inner_min_lr), false, 0},
    {"inner_warmup_steps", GD_SPEC_U64, GD_AT(inner_warmup_steps), false, 0},
    {"inner_schedule_steps", GD_SPEC_U64, GD_AT(inner_schedule_steps), false, 0},
    {"adam_beta1", GD_SPEC_DECIMAL, GD_AT(adam_beta1), false, 0},
    {"adam_beta2", GD_SPEC_DECIMAL, GD_AT(adam_beta2), false, 0},
    {"adam_eps", GD_SPEC_DECIMAL, GD_AT(adam_eps), false, 0},
    {"weight_decay", GD_SPEC_DECIMAL, GD_AT(weight_decay), false, 0},
    {"grad_clip", GD_SPEC_DECIMAL, GD_AT(grad_clip), false, 0},
    {"batch", GD_SPEC_U32, GD_AT(batch), false, 0},
    {"seq_len", GD_SPEC_U32, GD_AT(seq_len), false, 0},
    {"micro_batch", GD_SPEC_U32, GD_AT(micro_batch), false, 0},
    {"clip_factor", GD_SPEC_DECIMAL, GD_AT(clip_factor), false, 0},
    {"error_feedback", GD_SPEC_BOOL, GD_AT(error_feedback), false, 0},
    {"error_feedback_decay", GD_SPEC_DECIMAL, GD_AT(error_feedback_decay), false, 0},
    {"chunk_elems", GD_SPEC_U32, GD_AT(chunk_elems), false, 0},
    {"overlap", GD_SPEC_BOOL, GD_AT(overlap), false, 0},
    {"hw_classes", GD_SPEC_STRINGS, GD_AT(hw_classes), false, 0, GD_AT(n_hw_classes)},
    /* Its default depends on other keys: gd_spec_read sets it. */
    {"min_class_members", GD_SPEC_U32, GD_AT(min_class_members), true, 0},
    {"avail_chunks", GD_SPEC_U32, GD_AT(avail_chunks), true, GD_DILOCO_DEFAULT_AVAIL_CHUNKS},
    {"cheat_slash", GD_SPEC_COIN, GD_AT(cheat_slash), false, 0},
    {"skip_slash", GD_SPEC_COIN, GD_AT(skip_slash), false, 0},
    {"suspend_rounds", GD_SPEC_U32, GD_AT(suspend_rounds), true,
     GD_DILOCO_DEFAULT_SUSPEND_ROUNDS},
    {"max_members", GD_SPEC_U32, GD_AT(max_members), true, GD_DILOCO_DEFAULT_MAX_MEMBERS},
    {"attest_share_ppm", GD_SPEC_U32, GD_AT(attest_share_ppm), true,
     GD_DILOCO_DEFAULT_ATTEST_SHARE_PPM},
    {"data_digest", GD_SPEC_HASH, GD_AT(data_digest), false, 0},
    {"withhold_slash", GD_SPEC_COIN, GD_AT(withhold_slash), false, 0},
    /* Optional text: absent is empty, which reads as "naive", and is left
     * out of the JSON written, so older specs keep their bytes. */
    {"attention", GD_SPEC_TEXT, GD_AT(attention), true, 0},
    {"precision", GD_SPEC_TEXT, GD_AT(precision), true, 0},
    {"moments", GD_SPEC_TEXT, GD_AT(moments), true, 0},
};
#define GD_SPEC_N_FIELDS (sizeof gd_spec_fields / sizeof gd_spec_fields[0])

#define GD_WIN(field)                                                                         \
    {#field, GD_SPEC_U32, offsetof(Gonka__Diloco__V1__WindowLengths, field), false, 0}

static const gd_spec_field gd_window_fields[] = {
    GD_WIN(train),   GD_WIN(commit), GD_WIN(reveal),       GD_WIN(verify),
    GD_WIN(open),    GD_WIN(dispute), GD_WIN(attest),      GD_WIN(dispute_open),
    GD_WIN(attest_open),
};
#define GD_N_WINDOWS (sizeof gd_window_fields / sizeof gd_window_fields[0])

/* --- reading --------------------------------------------------------------- */

/* Strictness: a key not in fields is a typo, not something to ignore. */
static gd_status gd_spec_known_keys(const json_t *obj, const gd_spec_field *fields, size_t n,
                                    const char *what) {
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)obj, key, item) {
        size_t i = 0;
        while (i < n && strcmp(key, fields[i].key) != 0)
            i++;
        if (i == n)
            return gd_fail(GD_ERR_INVALID, "%s has an unknown key '%.40s'", what, key);
    }
    return GD_OK;
}

/* A JSON string without an embedded NUL (which C would silently cut). */
static gd_status gd_spec_string(const char **out, const json_t *v, const char *key) {
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
        return gd_fail(GD_ERR_INVALID, "run spec: %s must be a string", key);
    *out = json_string_value(v);
    return GD_OK;
}

/* A non-negative integer as a JSON number or a decimal string, at most max. */
static gd_status gd_spec_uint(uint64_t *out, const json_t *v, const char *key, uint64_t max) {
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return gd_fail(GD_ERR_INVALID, "run spec: %s must not be negative", key);
        *out = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *text = NULL;
        GD_TRY(gd_spec_string(&text, v, key));
        if (gd_parse_u64(out, text) != GD_OK)
            return gd_fail(GD_ERR_INVALID, "run spec: %s '%.40s' is not a non-negative integer",
                           key, text);
    } else {
        return gd_fail(GD_ERR_INVALID,
                       "run spec: %s must be an integer (a JSON number or a decimal string)",
                       key);
    }
    if (*out > max)
        return gd_fail(GD_ERR_INVALID, "run spec: %s %" PRIu64 " is larger than %" PRIu64, key,
                       *out, max);
    return GD_OK;
}

static gd_status gd_spec_text(char **out, const json_t *v, const char *key) {
    const char *text = NULL;
    GD_TRY(gd_spec_string(&text, v, key));
    *out = strdup(text);
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
}

/* A decimal is a JSON string: a JSON number would pass through the
 * reader's double and could not be kept exactly. The grammar is checked
 * with the other rules (gd_diloco_spec_check). */
static gd_status gd_spec_decimal(char **out, const json_t *v, const char *key) {
    if (json_is_number(v))
        return gd_fail(GD_ERR_INVALID,
                       "run spec: %s must be a decimal in a JSON string, e.g. \"0.003\" "
                       "(quote it)",
                       key);
    return gd_spec_text(out, v, key);
}

static gd_status gd_spec_bool(protobuf_c_boolean *out, const json_t *v, const char *key) {
    if (!json_is_boolean(v))
        return gd_fail(GD_ERR_INVALID, "run spec: %s must be true or false", key);
    *out = json_is_true(v);
    return GD_OK;
}

static gd_status gd_spec_hash(ProtobufCBinaryData *out, const json_t *v, const char *key) {
    const char *hex = NULL;
    GD_TRY(gd_spec_string(&hex, v, key));
    uint8_t bytes[32];
    size_t len = 0;
    if (strlen(hex) != 64 || gd_hex_decode(bytes, sizeof bytes, &len, hex, 64) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "run spec: %s must be 64 hex digits (32 bytes)", key);
    out->data = malloc(len);
    if (out->data == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
    memcpy(out->data, bytes, len);
    out->len = len;
    return GD_OK;
}

static gd_status gd_spec_coin(Cosmos__Base__V1beta1__Coin **out, const json_t *v,
                              const char *key) {
    const char *text = NULL;
    gd_coin coin;
    GD_TRY(gd_spec_string(&text, v, key));
    if (gd_coin_parse(&coin, text) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec: %s", key);
    Cosmos__Base__V1beta1__Coin *c = malloc(sizeof *c);
    if (c == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
    cosmos__base__v1beta1__coin__init(c);
    *out = c; /* owned by the spec from here: freed with it on failure */
    c->denom = strdup(coin.denom);
    c->amount = strdup(coin.amount);
    if (c->denom == NULL || c->amount == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
    return GD_OK;
}

static gd_status gd_spec_windows(Gonka__Diloco__V1__WindowLengths **out, const json_t *v) {
    if (!json_is_object(v))
        return gd_fail(GD_ERR_INVALID, "run spec: windows must be an object {train, commit, "
                                       "reveal, verify, open, dispute, attest, dispute_open, "
                                       "attest_open}");
    GD_TRY(gd_spec_known_keys(v, gd_window_fields, GD_N_WINDOWS, "run spec: windows"));
    Gonka__Diloco__V1__WindowLengths *w = malloc(sizeof *w);
    if (w == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
    gonka__diloco__v1__window_lengths__init(w);
    *out = w;
    for (size_t i = 0; i < GD_N_WINDOWS; i++) {
        const json_t *len = json_object_get(v, gd_window_fields[i].key);
        char name[32];
        snprintf(name, sizeof name, "windows.%s", gd_window_fields[i].key);
        if (len == NULL)
            return gd_fail(GD_ERR_INVALID, "run spec: %s is missing", name);
        uint64_t n;
        GD_TRY(gd_spec_uint(&n, len, name, UINT32_MAX));
        *(uint32_t *)((char *)w + gd_window_fields[i].offset) = (uint32_t)n;
    }
    return GD_OK;
}

/* An array of strings. Its length and order are rules of the spec
 * (gd_diloco_spec_check); here only the shape. The count grows with each
 * copy, so that the spec's free releases what was read on failure. */
static gd_status gd_spec_strings(char ***out, const json_t *v, const char *key, size_t *n) {
    if (!json_is_array(v))
        return gd_fail(GD_ERR_INVALID, "run spec: %s must be an array of strings", key);
    *out = calloc(json_array_size(v) ? json_array_size(v) : 1, sizeof **out);
    if (*out == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        const char *text = NULL;
        char name[48];
        snprintf(name, sizeof name, "%s[%zu]", key, i);
        GD_TRY(gd_spec_string(&text, json_array_get(v, i), name));
        if (((*out)[i] = strdup(text)) == NULL)
            return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
        *n = i + 1;
    }
    return GD_OK;
}

static gd_status gd_spec_read_field(Gonka__Diloco__V1__RunSpec *spec, const gd_spec_field *f,
                                    const json_t *v) {
    void *at = (char *)spec + f->offset;
    uint64_t n;
    switch (f->kind) {
    case GD_SPEC_TEXT:
        return gd_spec_text((char **)at, v, f->key);
    case GD_SPEC_HASH:
        return gd_spec_hash((ProtobufCBinaryData *)at, v, f->key);
    case GD_SPEC_U32:
        GD_TRY(gd_spec_uint(&n, v, f->key, UINT32_MAX));
        *(uint32_t *)at = (uint32_t)n;
        return GD_OK;
    case GD_SPEC_U64:
        return gd_spec_uint((uint64_t *)at, v, f->key, UINT64_MAX);
    case GD_SPEC_COIN:
        return gd_spec_coin((Cosmos__Base__V1beta1__Coin **)at, v, f->key);
    case GD_SPEC_WINDOWS:
        return gd_spec_windows((Gonka__Diloco__V1__WindowLengths **)at, v);
    case GD_SPEC_DECIMAL:
        return gd_spec_decimal((char **)at, v, f->key);
    case GD_SPEC_BOOL:
        return gd_spec_bool((protobuf_c_boolean *)at, v, f->key);
    case GD_SPEC_STRINGS:
        return gd_spec_strings((char ***)at, v, f->key,
                               (size_t *)((char *)spec + f->count_offset));
    }
    return gd_fail(GD_ERR_INVALID, "run spec: %s has an unknown kind", f->key);
}

/* v1's proportional slashes: a spec written for v1 is told what replaced
 * them instead of only that the key is unknown. */
static const char *const gd_spec_retired[] = {"slash_ppm", "skip_slash_ppm"};

static gd_status gd_spec_read(Gonka__Diloco__V1__RunSpec *spec, const json_t *j) {
    if (!json_is_object(j))
        return gd_fail(GD_ERR_INVALID, "run spec must be a JSON object");
    for (size_t i = 0; i < sizeof gd_spec_retired / sizeof gd_spec_retired[0]; i++)
        if (json_object_get(j, gd_spec_retired[i]) != NULL)
            return gd_fail(GD_ERR_INVALID,
                           "run spec: %s is gone: slashes are fixed amounts now (the coins "
                           "cheat_slash and skip_slash)",
                           gd_spec_retired[i]);
    GD_TRY(gd_spec_known_keys(j, gd_spec_fields, GD_SPEC_N_FIELDS, "run spec"));
    for (size_t i = 0; i < GD_SPEC_N_FIELDS; i++) {
        const gd_spec_field *f = &gd_spec_fields[i];
        const json_t *v = json_object_get(j, f->key);
        if (v != NULL)
            GD_TRY(gd_spec_read_field(spec, f, v));
        else if (f->optional && f->kind == GD_SPEC_U32)
            *(uint32_t *)((char *)spec + f->offset) = f->dflt;
        else if (f->optional) /* text: protobuf's empty default */
            continue;
        else
            return gd_fail(GD_ERR_INVALID, "run spec: %s is missing", f->key);
    }
    if (json_object_get(j, "min_class_members") == NULL)
        spec->min_class_members = gd_diloco_spec_class_min(spec);
    return gd_diloco_spec_check(spec);
}

gd_status gd_diloco_spec_from_json(Gonka__Diloco__V1__RunSpec **out, const json_t *j) {
    *out = NULL;
    Gonka__Diloco__V1__RunSpec *spec = malloc(sizeof *spec);
    if (spec == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec: out of memory");
    gonka__diloco__v1__run_spec__init(spec);
    gd_status s = gd_spec_read(spec, j);
    if (s != GD_OK) {
        gd_diloco_spec_free(spec);
        return s;
    }
    *out = spec;
    return GD_OK;
}

void gd_diloco_spec_free(Gonka__Diloco__V1__RunSpec *spec) {
    if (spec != NULL)
        protobuf_c_message_free_unpacked(&spec->base, NULL);
}

/* --- writing --------------------------------------------------------------- */

static json_t *gd_spec_u64_json(uint64_t v) {
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    return json_string(text);
}

static json_t *gd_spec_field_json(const Gonka__Diloco__V1__RunSpec *spec,
                                  const gd_spec_field *f) {
    const void *at = (const char *)spec + f->offset;
    switch (f->kind) {
    case GD_SPEC_TEXT:
    case GD_SPEC_DECIMAL: {
        const char *text = *(char *const *)at;
        return json_string(text ? text : "");
    }
    case GD_SPEC_BOOL:
        return json_boolean(*(const protobuf_c_boolean *)at);
    case GD_SPEC_STRINGS: {
        char *const *v = *(char *const *const *)at;
        size_t n = *(const size_t *)((const char *)spec + f->count_offset);
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
            if (json_array_append_new(a, json_string(v[i])) != 0) {
                json_decref(a);
                a = NULL;
            }
        return a;
    }
    case GD_SPEC_HASH: {
        const ProtobufCBinaryData *b = at;
        return gd_json_hex(b->data, b->len, false);
    }
    case GD_SPEC_U32:
        return json_integer(*(const uint32_t *)at);
    case GD_SPEC_U64:
        return gd_spec_u64_json(*(const uint64_t *)at);
    case GD_SPEC_COIN: {
        const Cosmos__Base__V1beta1__Coin *c = *(Cosmos__Base__V1beta1__Coin *const *)at;
        if (c == NULL || c->amount == NULL || c->denom == NULL)
            return NULL;
        char text[GD_AMOUNT_DIGITS_MAX + GD_DENOM_MAX + 1];
        if ((size_t)snprintf(text, sizeof text, "%s%s", c->amount, c->denom) >= sizeof text)
            return NULL;
        return json_string(text);
    }
    case GD_SPEC_WINDOWS: {
        const Gonka__Diloco__V1__WindowLengths *w =
            *(Gonka__Diloco__V1__WindowLengths *const *)at;
        json_t *o = w ? json_object() : NULL;
        for (size_t i = 0; o && i < GD_N_WINDOWS; i++) {
            uint32_t n = *(const uint32_t *)((const char *)w + gd_window_fields[i].offset);
            if (json_object_set_new(o, gd_window_fields[i].key, json_integer(n)) != 0) {
                json_decref(o);
                o = NULL;
            }
        }
        return o;
    }
    }
    return NULL;
}

json_t *gd_diloco_spec_to_json(const Gonka__Diloco__V1__RunSpec *spec) {
    json_t *j = json_object();
    for (size_t i = 0; j && i < GD_SPEC_N_FIELDS; i++) {
        const gd_spec_field *f = &gd_spec_fields[i];
        if (f->optional && f->kind == GD_SPEC_TEXT) {
            const char *text = *(char *const *)((const char *)spec + f->offset);
            if (text == NULL || text[0] == '\0')
                continue;
        }
        json_t *v = gd_spec_field_json(spec, &gd_spec_fields[i]);
        if (v == NULL || json_object_set_new(j, gd_spec_fields[i].key, v) != 0) {
            json_decref(j);
            j = NULL;
        }
    }
    return j;
}
