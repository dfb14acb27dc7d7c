/* The DiLoCo module's genesis: importing params, runs, members and the
 * round-level records (each checked before it is written, then the whole
 * against the invariants), and exporting the state in the same shape. */
#include <stdlib.h>
#include <string.h>

#include "chain/module/auth.h"
#include "chain/module/diloco_internal.h"
#include "chain/module/json_util.h"
#include "chain/wire/diloco_spec.h"
#include "common/base64.h"

/* Record kinds that export as raw (key, value) pairs, with their types. */
static const ProtobufCMessageDescriptor *dl_raw_kind(uint8_t kind) {
    switch (kind) {
    case DL_ROUND: return &gonka__diloco__v1__round__descriptor;
    case DL_COMMIT: return &gonka__diloco__v1__commitment__descriptor;
    case DL_REPORT: return &gonka__diloco__v1__availability_report__descriptor;
    case DL_ASSIGN: return &gonka__diloco__v1__assignment__descriptor;
    case DL_VERDICT: return &gonka__diloco__v1__verdict_record__descriptor;
    case DL_ATTEST: return &gonka__diloco__v1__attestation__descriptor;
    case DL_SETTLE: return &gonka__diloco__v1__settle_amount__descriptor;
    case DL_WEIGHT: return &gonka__diloco__v1__weighted_member__descriptor;
    case DL_RANDOM: return &gonka__diloco__v1__randomness_record__descriptor;
    default: return NULL;
    }
}

static json_t *dl_b64(const uint8_t *data, size_t len) {
    char *text = malloc(gd_base64_encoded_len(len) + 1);
    if (text == NULL)
        return NULL;
    gd_base64_encode(text, data, len);
    json_t *j = json_string(text);
    free(text);
    return j;
}

static gd_status dl_import_params(gd_ctx *ctx, const json_t *state) {
    char authority[GD_ADDRESS_STR_MAX] = "";
    const json_t *p = json_object_get(state, "params");
    if (p != NULL) {
        GD_TRY(gd_json_only_keys(p, "diloco.params", "authority", NULL));
        GD_TRY(gd_json_str_field(authority, sizeof authority, p, "authority", true));
        if (authority[0] && gd_address_check_canonical(authority) != GD_OK)
            return gd_fail_context(GD_ERR_PARSE, "diloco.params.authority");
    }
    dl_params params = GONKA__DILOCO__V1__PARAMS__INIT;
    params.authority = authority;
    dl_key k;
    dl_key_init(&k, DL_PARAMS);
    return dl_save(ctx, &k, &params);
}

static gd_status dl_import_run(gd_ctx *ctx, const json_t *j, uint64_t *next_id) {
    GD_TRY(gd_json_only_keys(j, "diloco run", "id", "creator", "spec", "state_hash",
                             "rounds_aggregated", "next_round", "pool", "next_settle_epoch",
                             "next_rank", NULL));
    dl_run run = GONKA__DILOCO__V1__RUN__INIT;
    char creator[GD_ADDRESS_STR_MAX] = "", pool[24] = "";
    uint8_t hash[GD_DILOCO_HASH_LEN];
    size_t hash_len = 0;
    uint64_t v = 0;
    GD_TRY(gd_json_u64_field(&run.id, j, "id", true, *next_id));
    GD_TRY(gd_json_str_field(creator, sizeof creator, j, "creator", true));
    GD_TRY(gd_json_str_field(pool, sizeof pool, j, "pool", false));
    if (dl_amount(&v, pool) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "diloco run pool");
    GD_TRY(gd_json_u64_field(&run.rounds_aggregated, j, "rounds_aggregated", true, 0));
    GD_TRY(gd_json_u64_field(&run.next_round, j, "next_round", true, 0));
    GD_TRY(gd_json_u64_field(&run.next_settle_epoch, j, "next_settle_epoch", true, 0));
    uint64_t next_rank = 0;
    GD_TRY(gd_json_u64_field(&next_rank, j, "next_rank", true, 0));
    if (next_rank > UINT32_MAX)
        return gd_fail(GD_ERR_PARSE, "diloco run next_rank %llu does not fit 32 bits",
                       (unsigned long long)next_rank);
    run.next_rank = (uint32_t)next_rank;
    GD_TRY(gd_json_b64_field(hash, sizeof hash, j, "state_hash", true, &hash_len));
    if (run.id == 0)
        return gd_fail(GD_ERR_PARSE, "diloco run id 0 is not valid");
    dl_spec *spec = NULL;
    gd_status s = gd_diloco_spec_from_json(&spec, json_object_get(j, "spec"));
    if (s == GD_OK)
        s = gd_diloco_spec_check(spec);
    if (s != GD_OK) {
        gd_diloco_spec_free(spec);
        return gd_fail_context(GD_ERR_PARSE, "diloco run %llu spec", (unsigned long long)run.id);
    }
    run.creator = creator;
    run.spec = spec;
    run.pool = pool;
    if (hash_len == GD_DILOCO_HASH_LEN) {
        run.state_hash.data = hash;
        run.state_hash.len = hash_len;
    } else if (hash_len == 0) {
        run.state_hash = spec->initial_state_hash;
    } else {
        s = gd_fail(GD_ERR_PARSE, "diloco run %llu state_hash is not 32 bytes",
                    (unsigned long long)run.id);
    }
    dl_run *old = NULL;
    if (s == GD_OK && dl_get_run(ctx, &old, run.id) == GD_OK)
        s = gd_fail(GD_ERR_PARSE, "diloco run %llu appears twice", (unsigned long long)run.id);
    if (s == GD_OK)
        s = dl_put_run(ctx, &run);
    if (s == GD_OK && run.id >= *next_id)
        *next_id = run.id + 1;
    dl_free(old);
    gd_diloco_spec_free(spec);
    return s;
}

static gd_status dl_import_member(gd_ctx *ctx, const json_t *j) {
    GD_TRY(gd_json_only_keys(j, "diloco member", "run", "address", "artifact_url", "hw_class",
                             "collateral", "joined_height", "rank", "suspended_until", "leaving",
                             NULL));
    dl_member m = GONKA__DILOCO__V1__MEMBER__INIT;
    char address[GD_ADDRESS_STR_MAX], url[513], cls[129], collateral[24];
    uint64_t v = 0, rank = 0;
    GD_TRY(gd_json_u64_field(&m.run, j, "run", false, 0));
    GD_TRY(gd_json_str_field(address, sizeof address, j, "address", false));
    GD_TRY(gd_json_str_field(url, sizeof url, j, "artifact_url", false));
    GD_TRY(gd_json_str_field(cls, sizeof cls, j, "hw_class", false));
    GD_TRY(gd_json_str_field(collateral, sizeof collateral, j, "collateral", false));
    GD_TRY(gd_json_i64_field(&m.joined_height, j, "joined_height", true, 0));
    GD_TRY(gd_json_u64_field(&m.suspended_until, j, "suspended_until", true, 0));
    const json_t *leaving = json_object_get(j, "leaving");
    if (leaving != NULL && !json_is_boolean(leaving))
        return gd_fail(GD_ERR_PARSE, "diloco member leaving must be true or false");
    m.leaving = leaving != NULL && json_is_true(leaving);
    /* No default: a rank names a data stream, so genesis says which. */
    if (gd_json_u64_field(&rank, j, "rank", false, 0) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "diloco member %s", address);
    if (gd_address_check_canonical(address) != GD_OK || dl_amount(&v, collateral) != GD_OK ||
        gd_diloco_text_check(url, 512, "artifact_url") != GD_OK ||
        gd_diloco_text_check(cls, 128, "hw_class") != GD_OK)
        return gd_fail(GD_ERR_PARSE, "diloco member %s: bad address, collateral, url or class",
                       address);
    dl_run *run = NULL;
    if (dl_get_run(ctx, &run, m.run) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "diloco member %s: run %llu does not exist", address,
                       (unsigned long long)m.run);
    uint32_t next_rank = run->next_rank;
    /* What MsgJoinRun would refuse, genesis refuses too. */
    bool class_ok = dl_has_str(run->spec->hw_classes, run->spec->n_hw_classes, cls);
    uint32_t cap = run->spec->max_members;
    dl_free(run);
    if (!class_ok)
        return gd_fail(GD_ERR_PARSE, "diloco member %s: hardware class %s is not one of run "
                                     "%llu's",
                       address, cls, (unsigned long long)m.run);
    size_t count = 0;
    dl_key mk;
    dl_key_init(&mk, DL_MEMBER);
    dl_key_u64(&mk, m.run);
    GD_TRY(dl_count_prefix(ctx->kv, &mk, &count));
    if (count >= cap)
        return gd_fail(GD_ERR_PARSE, "diloco member %s: run %llu already has its %u members",
                       address, (unsigned long long)m.run, (unsigned)cap);
    /* Distinct ranks are the invariants' to check (dl_invariants runs at
     * the end of the import); a rank at or past next_rank would be handed
     * out again by the next join. */
    if (rank >= next_rank)
        return gd_fail(GD_ERR_PARSE, "diloco member %s: rank %llu is not below run %llu's "
                                     "next_rank %u",
                       address, (unsigned long long)rank, (unsigned long long)m.run, next_rank);
    m.rank = (uint32_t)rank;
    m.address = address;
    m.artifact_url = url;
    m.hw_class = cls;
    m.collateral = collateral;
    return dl_put_member(ctx, &m);
}

/* Round-level records travel as their store key and protobuf value; both
 * are checked (known kind, decodable value) before they are written. */
static gd_status dl_import_record(gd_ctx *ctx, const json_t *j) {
    GD_TRY(gd_json_only_keys(j, "diloco record", "key", "value", NULL));
    uint8_t key[sizeof(dl_key){0}.b];
    size_t key_len = 0, value_len = 0;
    GD_TRY(gd_json_b64_field(key, sizeof key, j, "key", false, &key_len));
    const json_t *vj = json_object_get(j, "value");
    if (!json_is_string(vj))
        return gd_fail(GD_ERR_PARSE, "diloco record value must be base64");
    size_t cap = gd_base64_decoded_max(strlen(json_string_value(vj))) + 1;
    uint8_t *value = malloc(cap);
    if (value == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = gd_json_b64_field(value, cap, j, "value", false, &value_len);
    const ProtobufCMessageDescriptor *d =
        key_len > 2 && key[0] == DL_PREFIX ? dl_raw_kind(key[1]) : NULL;
    if (s == GD_OK && d == NULL)
        s = gd_fail(GD_ERR_PARSE, "diloco record key is not a round-level record");
    ProtobufCMessage *m = s == GD_OK ? protobuf_c_message_unpack(d, NULL, value_len, value) : NULL;
    if (s == GD_OK && m == NULL)
        s = gd_fail(GD_ERR_PARSE, "diloco record value does not decode as %s", d->short_name);
    dl_free(m);
    if (s == GD_OK)
        s = gd_ctx_set(ctx, key, key_len, value, value_len);
    free(value);
    return s;
}

static gd_status dl_import_array(gd_ctx *ctx, const json_t *state, const char *name,
                                 gd_status (*each)(gd_ctx *, const json_t *, uint64_t *),
                                 uint64_t *arg) {
    const json_t *a = json_object_get(state, name);
    if (a == NULL)
        return GD_OK;
    if (!json_is_array(a))
        return gd_fail(GD_ERR_PARSE, "diloco.%s must be an array", name);
    for (size_t i = 0; i < json_array_size(a); i++)
        GD_TRY(each(ctx, json_array_get(a, i), arg));
    return GD_OK;
}

static gd_status dl_each_run(gd_ctx *ctx, const json_t *j, uint64_t *next) {
    return dl_import_run(ctx, j, next);
}
static gd_status dl_each_member(gd_ctx *ctx, const json_t *j, uint64_t *unused) {
    (void)unused;
    return dl_import_member(ctx, j);
}
static gd_status dl_each_record(gd_ctx *ctx, const json_t *j, uint64_t *unused) {
    (void)unused;
    return dl_import_record(ctx, j);
}

gd_status dl_init_genesis(gd_app *app, gd_ctx *ctx, const json_t *state) {
    gd_account module;
    GD_TRY(gd_auth_module_account(ctx, &module, GD_DILOCO_MODULE_NAME));
    if (state != NULL)
        GD_TRY(gd_json_only_keys(state, "diloco genesis", "params", "next_run_id", "runs",
                                 "members", "records", NULL));
    GD_TRY(dl_import_params(ctx, state));
    uint64_t next = 1, given = 0;
    if (state != NULL) {
        GD_TRY(dl_import_array(ctx, state, "runs", dl_each_run, &next));
        GD_TRY(dl_import_array(ctx, state, "members", dl_each_member, NULL));
        GD_TRY(dl_import_array(ctx, state, "records", dl_each_record, NULL));
        GD_TRY(gd_json_u64_field(&given, state, "next_run_id", true, next));
        if (given < next)
            return gd_fail(GD_ERR_PARSE, "diloco.next_run_id %llu is not above every run id",
                           (unsigned long long)given);
        next = given;
    }
    uint8_t b[8];
    dl_put_be64(b, next);
    dl_key k;
    dl_key_init(&k, DL_NEXT_RUN);
    GD_TRY(gd_ctx_set(ctx, k.b, k.n, b, 8));
    /* A genesis whose records disagree (amounts that do not parse, a module
     * balance that is not their sum) would stop the chain later, in a block
     * hook or an invariant check: refuse it now. */
    if (dl_invariants(app, ctx->kv) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "diloco genesis");
    return GD_OK;
}

typedef struct dl_export {
    json_t *runs, *members, *records;
    bool failed;
} dl_export;

static int dl_export_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                           size_t value_len) {
    dl_export *e = arg;
    json_t *item = NULL;
    if (key_len < 2)
        return 0;
    if (key[1] == DL_RUN) {
        dl_run *r = gonka__diloco__v1__run__unpack(NULL, value_len, value);
        json_t *spec = r ? gd_diloco_spec_to_json(r->spec) : NULL;
        if (r && spec)
            item = json_pack("{s:o,s:s,s:o,s:o,s:o,s:o,s:s,s:o,s:I}", "id",
                             gd_json_u64_str(r->id), "creator", r->creator, "spec", spec,
                             "state_hash", dl_b64(r->state_hash.data, r->state_hash.len),
                             "rounds_aggregated", gd_json_u64_str(r->rounds_aggregated),
                             "next_round", gd_json_u64_str(r->next_round), "pool", r->pool,
                             "next_settle_epoch", gd_json_u64_str(r->next_settle_epoch),
                             "next_rank", (json_int_t)r->next_rank);
        else
            json_decref(spec);
        dl_free(r);
        e->failed |= item == NULL || json_array_append_new(e->runs, item) != 0;
    } else if (key[1] == DL_MEMBER) {
        dl_member *m = gonka__diloco__v1__member__unpack(NULL, value_len, value);
        if (m)
            item = json_pack("{s:o,s:s,s:s,s:s,s:s,s:o,s:I,s:o,s:b}", "run",
                             gd_json_u64_str(m->run), "address", m->address, "artifact_url",
                             m->artifact_url, "hw_class", m->hw_class, "collateral",
                             m->collateral, "joined_height", gd_json_i64_str(m->joined_height),
                             "rank", (json_int_t)m->rank, "suspended_until",
                             gd_json_u64_str(m->suspended_until), "leaving", (int)m->leaving);
        dl_free(m);
        e->failed |= item == NULL || json_array_append_new(e->members, item) != 0;
    } else if (dl_raw_kind(key[1]) != NULL) {
        item = json_pack("{s:o,s:o}", "key", dl_b64(key, key_len), "value",
                         dl_b64(value, value_len));
        e->failed |= item == NULL || json_array_append_new(e->records, item) != 0;
    }
    return e->failed;
}

json_t *dl_export_genesis(gd_app *app, gd_ctx *ctx) {
    (void)app;
    dl_params *params = NULL;
    const uint8_t *v;
    size_t vlen;
    dl_key k;
    dl_key_init(&k, DL_NEXT_RUN);
    if (dl_get_params(ctx, &params) != GD_OK || gd_ctx_get(ctx, k.b, k.n, &v, &vlen) != GD_OK ||
        vlen != 8) {
        dl_free(params);
        gd_fail(GD_ERR_PARSE, "diloco state is missing its params or next run id");
        return NULL;
    }
    dl_export e = {json_array(), json_array(), json_array(), false};
    const uint8_t prefix[1] = {DL_PREFIX};
    if (gd_kv_iterate_prefix(ctx->kv, prefix, 1, dl_export_visit, &e) != GD_OK || e.failed) {
        json_decref(e.runs);
        json_decref(e.members);
        json_decref(e.records);
        dl_free(params);
        gd_fail(GD_ERR_PARSE, "diloco export failed");
        return NULL;
    }
    json_t *out = json_pack("{s:{s:s},s:o,s:o,s:o,s:o}", "params", "authority",
                            params->authority, "next_run_id",
                            gd_json_u64_str(dl_get_be64(v)), "runs", e.runs, "members",
                            e.members, "records", e.records);
    dl_free(params);
    return out;
}
