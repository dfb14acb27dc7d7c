/* The DiLoCo module's table: genesis import and export, queries and
 * invariants (messages in diloco_msgs.c, block logic in diloco_rounds.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/auth.h"
#include "chain/module/bank.h"
#include "chain/module/diloco_internal.h"
#include "chain/module/json_util.h"
#include "chain/wire/diloco_spec.h"
#include "common/base64.h"

static gd_status dl_invariants(gd_app *app, gd_kv *kv);

/* ---- genesis ------------------------------------------------------------------------------ */

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
        GD_TRY(gd_json_str_field(p, "authority", true, authority, sizeof authority));
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
    GD_TRY(gd_json_u64_field(j, "id", true, *next_id, &run.id));
    GD_TRY(gd_json_str_field(j, "creator", true, creator, sizeof creator));
    GD_TRY(gd_json_str_field(j, "pool", false, pool, sizeof pool));
    if (dl_amount(pool, &v) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "diloco run pool");
    GD_TRY(gd_json_u64_field(j, "rounds_aggregated", true, 0, &run.rounds_aggregated));
    GD_TRY(gd_json_u64_field(j, "next_round", true, 0, &run.next_round));
    GD_TRY(gd_json_u64_field(j, "next_settle_epoch", true, 0, &run.next_settle_epoch));
    uint64_t next_rank = 0;
    GD_TRY(gd_json_u64_field(j, "next_rank", true, 0, &next_rank));
    if (next_rank > UINT32_MAX)
        return gd_fail(GD_ERR_PARSE, "diloco run next_rank %llu does not fit 32 bits",
                       (unsigned long long)next_rank);
    run.next_rank = (uint32_t)next_rank;
    GD_TRY(gd_json_b64_field(j, "state_hash", true, hash, sizeof hash, &hash_len));
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
    if (s == GD_OK && dl_get_run(ctx, run.id, &old) == GD_OK)
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
    GD_TRY(gd_json_u64_field(j, "run", false, 0, &m.run));
    GD_TRY(gd_json_str_field(j, "address", false, address, sizeof address));
    GD_TRY(gd_json_str_field(j, "artifact_url", false, url, sizeof url));
    GD_TRY(gd_json_str_field(j, "hw_class", false, cls, sizeof cls));
    GD_TRY(gd_json_str_field(j, "collateral", false, collateral, sizeof collateral));
    GD_TRY(gd_json_i64_field(j, "joined_height", true, 0, &m.joined_height));
    GD_TRY(gd_json_u64_field(j, "suspended_until", true, 0, &m.suspended_until));
    const json_t *leaving = json_object_get(j, "leaving");
    if (leaving != NULL && !json_is_boolean(leaving))
        return gd_fail(GD_ERR_PARSE, "diloco member leaving must be true or false");
    m.leaving = leaving != NULL && json_is_true(leaving);
    /* No default: a rank names a data stream, so genesis says which. */
    if (gd_json_u64_field(j, "rank", false, 0, &rank) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "diloco member %s", address);
    if (gd_address_check_canonical(address) != GD_OK || dl_amount(collateral, &v) != GD_OK ||
        gd_diloco_text_check(url, 512, "artifact_url") != GD_OK ||
        gd_diloco_text_check(cls, 128, "hw_class") != GD_OK)
        return gd_fail(GD_ERR_PARSE, "diloco member %s: bad address, collateral, url or class",
                       address);
    dl_run *run = NULL;
    if (dl_get_run(ctx, m.run, &run) != GD_OK)
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
    GD_TRY(gd_json_b64_field(j, "key", false, key, sizeof key, &key_len));
    const json_t *vj = json_object_get(j, "value");
    if (!json_is_string(vj))
        return gd_fail(GD_ERR_PARSE, "diloco record value must be base64");
    size_t cap = gd_base64_decoded_max(strlen(json_string_value(vj))) + 1;
    uint8_t *value = malloc(cap);
    if (value == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = gd_json_b64_field(j, "value", false, value, cap, &value_len);
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

static gd_status dl_init_genesis(gd_app *app, gd_ctx *ctx, const json_t *state) {
    gd_account module;
    GD_TRY(gd_auth_module_account(ctx, GD_DILOCO_MODULE_NAME, &module));
    if (state != NULL)
        GD_TRY(gd_json_only_keys(state, "diloco genesis", "params", "next_run_id", "runs",
                                 "members", "records", NULL));
    GD_TRY(dl_import_params(ctx, state));
    uint64_t next = 1, given = 0;
    if (state != NULL) {
        GD_TRY(dl_import_array(ctx, state, "runs", dl_each_run, &next));
        GD_TRY(dl_import_array(ctx, state, "members", dl_each_member, NULL));
        GD_TRY(dl_import_array(ctx, state, "records", dl_each_record, NULL));
        GD_TRY(gd_json_u64_field(state, "next_run_id", true, next, &given));
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

static json_t *dl_export_genesis(gd_app *app, gd_ctx *ctx) {
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

/* ---- queries --------------------------------------------------------------------------------- */

static gd_status dl_query_bad(gd_ctx *ctx, const char *what) {
    return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                       "rpc error: code = InvalidArgument desc = %s", what);
}

static gd_status dl_q_params(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                             gd_buf *resp) {
    (void)app;
    (void)req;
    (void)len;
    dl_params *p = NULL;
    GD_TRY(dl_get_params(ctx, &p));
    Gonka__Diloco__V1__QueryParamsResponse r = GONKA__DILOCO__V1__QUERY_PARAMS_RESPONSE__INIT;
    r.params = p;
    gd_status s = dl_pack(resp, &r);
    dl_free(p);
    return s;
}

static gd_status dl_q_runs(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                           gd_buf *resp) {
    (void)app;
    (void)req;
    (void)len;
    dl_key k;
    dl_key_init(&k, DL_RUN);
    dl_list runs;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__run__descriptor, &runs));
    Gonka__Diloco__V1__QueryRunsResponse r = GONKA__DILOCO__V1__QUERY_RUNS_RESPONSE__INIT;
    r.runs = (dl_run **)runs.items;
    r.n_runs = runs.n;
    gd_status s = dl_pack(resp, &r);
    dl_list_free(&runs);
    return s;
}

static gd_status dl_q_run(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                          gd_buf *resp) {
    (void)app;
    Gonka__Diloco__V1__QueryRunRequest *q =
        gonka__diloco__v1__query_run_request__unpack(NULL, len, req);
    if (q == NULL)
        return dl_query_bad(ctx, "the request does not decode");
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_list members = {NULL, 0};
    gd_status s = dl_get_run(ctx, q->run, &run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)q->run);
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, q->run);
    if (s == GD_OK)
        s = dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__member__descriptor, &members);
    if (s == GD_OK && run->next_round > 0) {
        s = dl_get_round(ctx, q->run, run->next_round - 1, &round);
        if (s == GD_ERR_NOT_FOUND) /* pruned after its epoch's claims closed */
            s = GD_OK;
    }
    if (s == GD_OK && round != NULL)
        s = dl_load_members(ctx, round);
    /* The next round's seals, which no round record holds before it opens:
     * a member restarted after sending its seal reads here that it landed. */
    dl_list secrets = {NULL, 0};
    if (s == GD_OK) {
        dl_key_init(&k, DL_RANDOM);
        dl_key_u64(&k, q->run);
        dl_key_u64(&k, run->next_round);
        s = dl_list_prefix(ctx->kv, &k, &gonka__diloco__v1__randomness_record__descriptor,
                           &secrets);
    }
    char **sealed = NULL;
    if (s == GD_OK && secrets.n > 0) {
        sealed = calloc(secrets.n, sizeof *sealed);
        if (sealed == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; s == GD_OK && i < secrets.n; i++)
        sealed[i] = ((dl_secret *)secrets.items[i])->member;
    if (s == GD_OK) {
        Gonka__Diloco__V1__QueryRunResponse r = GONKA__DILOCO__V1__QUERY_RUN_RESPONSE__INIT;
        r.run = run;
        r.members = (dl_member **)members.items;
        r.n_members = members.n;
        r.current_round = round;
        r.next_sealed = sealed;
        r.n_next_sealed = secrets.n;
        s = dl_pack(resp, &r);
    }
    free(sealed);
    dl_list_free(&secrets);
    dl_list_free(&members);
    dl_free(round);
    dl_free(run);
    dl_free(q);
    return s;
}

static gd_status dl_q_round(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                            gd_buf *resp) {
    (void)app;
    Gonka__Diloco__V1__QueryRoundRequest *q =
        gonka__diloco__v1__query_round_request__unpack(NULL, len, req);
    if (q == NULL)
        return dl_query_bad(ctx, "the request does not decode");
    dl_round *round = NULL;
    gd_status s = dl_get_round(ctx, q->run, q->round, &round);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND, "run %llu has no round %llu",
                    (unsigned long long)q->run, (unsigned long long)q->round);
    if (s == GD_OK)
        s = dl_load_members(ctx, round);
    static const uint8_t kinds[] = {DL_COMMIT, DL_REPORT, DL_ASSIGN, DL_VERDICT, DL_ATTEST,
                                    DL_RANDOM};
    const ProtobufCMessageDescriptor *types[] = {
        &gonka__diloco__v1__commitment__descriptor,
        &gonka__diloco__v1__availability_report__descriptor,
        &gonka__diloco__v1__assignment__descriptor,
        &gonka__diloco__v1__verdict_record__descriptor,
        &gonka__diloco__v1__attestation__descriptor,
        &gonka__diloco__v1__randomness_record__descriptor};
    dl_list lists[6] = {{NULL, 0}};
    for (size_t i = 0; s == GD_OK && i < 6; i++) {
        dl_key k;
        dl_key_init(&k, kinds[i]);
        dl_key_u64(&k, q->run);
        dl_key_u64(&k, q->round);
        s = dl_list_prefix(ctx->kv, &k, types[i], &lists[i]);
    }
    if (s == GD_OK) {
        Gonka__Diloco__V1__QueryRoundResponse r = GONKA__DILOCO__V1__QUERY_ROUND_RESPONSE__INIT;
        r.round = round;
        r.commitments = (dl_commitment **)lists[0].items;
        r.n_commitments = lists[0].n;
        r.availability = (dl_report **)lists[1].items;
        r.n_availability = lists[1].n;
        r.assignments = (dl_assignment **)lists[2].items;
        r.n_assignments = lists[2].n;
        r.verdicts = (dl_verdict **)lists[3].items;
        r.n_verdicts = lists[3].n;
        r.attestations = (dl_attestation **)lists[4].items;
        r.n_attestations = lists[4].n;
        r.randomness = (dl_secret **)lists[5].items;
        r.n_randomness = lists[5].n;
        r.height = ctx->height;
        s = dl_pack(resp, &r);
    }
    for (size_t i = 0; i < 6; i++)
        dl_list_free(&lists[i]);
    dl_free(round);
    dl_free(q);
    return s;
}

typedef struct dl_rewards_job {
    const char *address;
    dl_list *out;
    gd_status status;
} dl_rewards_job;

static int dl_rewards_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                            size_t value_len) {
    (void)key;
    (void)key_len;
    dl_rewards_job *job = arg;
    dl_settle *st = gonka__diloco__v1__settle_amount__unpack(NULL, value_len, value);
    if (st == NULL) {
        job->status = gd_fail(GD_ERR_PARSE, "stored SettleAmount does not decode");
        return 1;
    }
    if (strcmp(st->address, job->address) != 0) {
        dl_free(st);
        return 0;
    }
    void **items = realloc(job->out->items, (job->out->n + 1) * sizeof *items);
    if (items == NULL) {
        dl_free(st);
        job->status = gd_fail(GD_ERR_NOMEM, "out of memory");
        return 1;
    }
    job->out->items = items;
    items[job->out->n++] = st;
    return 0;
}

static gd_status dl_q_rewards(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                              gd_buf *resp) {
    (void)app;
    Gonka__Diloco__V1__QueryRewardsRequest *q =
        gonka__diloco__v1__query_rewards_request__unpack(NULL, len, req);
    if (q == NULL)
        return dl_query_bad(ctx, "the request does not decode");
    gd_status s = GD_OK;
    if (gd_address_check(q->address) != GD_OK)
        s = dl_query_bad(ctx, "invalid address");
    dl_list found = {NULL, 0};
    dl_rewards_job job = {q->address, &found, GD_OK};
    dl_key k;
    dl_key_init(&k, DL_SETTLE);
    if (s == GD_OK)
        s = gd_kv_iterate_prefix(ctx->kv, k.b, k.n, dl_rewards_visit, &job);
    if (s == GD_OK)
        s = job.status;
    if (s == GD_OK) {
        Gonka__Diloco__V1__QueryRewardsResponse r =
            GONKA__DILOCO__V1__QUERY_REWARDS_RESPONSE__INIT;
        r.amounts = (dl_settle **)found.items;
        r.n_amounts = found.n;
        s = dl_pack(resp, &r);
    }
    dl_list_free(&found);
    dl_free(q);
    return s;
}

/* ---- invariants ---------------------------------------------------------------------------- */

typedef struct dl_owed {
    char denom[GD_DENOM_MAX + 1];
    dl_u128 amount;
} dl_owed;

typedef struct dl_ledger {
    dl_owed items[64]; /* one per denom runs pay in (in practice one: ngonka) */
    size_t n;
    gd_status status;
    gd_kv *kv;
    /* The run the last record named: records of one run sit together in
     * key order, so each run is read once per kind, not once per record. */
    uint64_t run_id;
    dl_run *run;
    /* The ranks of run rank_run's members seen so far: member records of
     * one run sit together in key order too. */
    uint64_t rank_run;
    uint32_t *ranks;
    size_t n_ranks, cap_ranks;
} dl_ledger;

static void dl_owe(dl_ledger *l, const char *denom, const char *amount) {
    uint64_t v = 0;
    if (dl_amount(amount, &v) != GD_OK) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: stored amount '%s' is malformed",
                            amount);
        return;
    }
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].denom, denom) == 0) {
            l->items[i].amount += v;
            return;
        }
    if (l->n == sizeof l->items / sizeof l->items[0]) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: too many denoms");
        return;
    }
    snprintf(l->items[l->n].denom, sizeof l->items[l->n].denom, "%s", denom);
    l->items[l->n++].amount = v;
}

/* The run a member, bond or settle record names (they name only their
 * run), or NULL with the ledger failed when it does not exist. */
static const dl_run *dl_ledger_run(dl_ledger *l, uint64_t run_id) {
    if (l->run != NULL && l->run_id == run_id)
        return l->run;
    dl_free(l->run);
    l->run = NULL;
    gd_gas_meter unmetered = {0, 0};
    gd_ctx ctx = {.kv = l->kv, .gas = &unmetered, .mode = GD_EXEC_QUERY};
    if (dl_get_run(&ctx, run_id, &l->run) != GD_OK) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: a record names run %llu, which "
                                          "does not exist",
                            (unsigned long long)run_id);
        return NULL;
    }
    l->run_id = run_id;
    return l->run;
}

static int dl_rank_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* No two members of the run whose ranks were collected share a rank. */
static void dl_ranks_flush(dl_ledger *l) {
    if (l->n_ranks > 1)
        qsort(l->ranks, l->n_ranks, sizeof *l->ranks, dl_rank_cmp);
    for (size_t i = 1; l->status == GD_OK && i < l->n_ranks; i++)
        if (l->ranks[i] == l->ranks[i - 1])
            l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: two members of run %llu have "
                                              "rank %u (each rank names one member's data)",
                                (unsigned long long)l->rank_run, l->ranks[i]);
    l->n_ranks = 0;
}

/* A member's rank: below its run's next_rank, and (dl_ranks_flush) its own. */
static void dl_rank_add(dl_ledger *l, const dl_run *run, const dl_member *m) {
    if (m->rank >= run->next_rank) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: member %s of run %llu has rank %u, "
                                          "not below the run's next_rank %u",
                            m->address, (unsigned long long)run->id, m->rank, run->next_rank);
        return;
    }
    if (l->n_ranks > 0 && l->rank_run != run->id)
        dl_ranks_flush(l);
    l->rank_run = run->id;
    if (l->n_ranks == l->cap_ranks) {
        size_t cap = l->cap_ranks ? 2 * l->cap_ranks : 64;
        uint32_t *grown = realloc(l->ranks, cap * sizeof *grown);
        if (grown == NULL) {
            l->status = gd_fail(GD_ERR_NOMEM, "invariant diloco: out of memory");
            return;
        }
        l->ranks = grown;
        l->cap_ranks = cap;
    }
    l->ranks[l->n_ranks++] = m->rank;
}

static int dl_ledger_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                           size_t value_len) {
    dl_ledger *l = arg;
    if (key_len < 10)
        return 0;
    uint64_t run_id = dl_get_be64(key + 2);
    if (key[1] == DL_RUN) {
        dl_run *r = gonka__diloco__v1__run__unpack(NULL, value_len, value);
        if (r)
            dl_owe(l, dl_denom(r), r->pool);
        else
            l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: a run does not decode");
        dl_free(r);
    } else if (key[1] == DL_MEMBER) {
        dl_member *m = gonka__diloco__v1__member__unpack(NULL, value_len, value);
        const dl_run *run = m ? dl_ledger_run(l, run_id) : NULL;
        if (run) {
            dl_owe(l, dl_denom(run), m->collateral);
            dl_rank_add(l, run, m);
        }
        dl_free(m);
    } else if (key[1] == DL_VERDICT) {
        dl_verdict *v = gonka__diloco__v1__verdict_record__unpack(NULL, value_len, value);
        const dl_run *run = v && v->bonded ? dl_ledger_run(l, run_id) : NULL;
        if (run)
            dl_owe(l, dl_denom(run), run->spec->fail_bond->amount);
        dl_free(v);
    } else if (key[1] == DL_SETTLE) {
        dl_settle *st = gonka__diloco__v1__settle_amount__unpack(NULL, value_len, value);
        const dl_run *run = st && !st->claimed ? dl_ledger_run(l, run_id) : NULL;
        if (run)
            dl_owe(l, dl_denom(run), st->amount);
        dl_free(st);
    }
    return l->status != GD_OK;
}

/* The module account holds exactly every pool, collateral, held bond and
 * unclaimed settle amount; every settled token amount comes from an
 * accepted commitment; and each run's members have distinct ranks below
 * its next_rank. */
static gd_status dl_invariants(gd_app *app, gd_kv *kv) {
    (void)app;
    dl_ledger l = {.n = 0, .status = GD_OK, .kv = kv, .run = NULL, .ranks = NULL};
    const uint8_t prefix[1] = {DL_PREFIX};
    gd_status it = gd_kv_iterate_prefix(kv, prefix, 1, dl_ledger_visit, &l);
    if (it == GD_OK && l.status == GD_OK)
        dl_ranks_flush(&l);
    free(l.ranks);
    dl_free(l.run);
    GD_TRY(it);
    GD_TRY(l.status);
    gd_gas_meter unmetered = {0, 0};
    gd_ctx ctx = {.kv = kv, .gas = &unmetered, .mode = GD_EXEC_QUERY};
    char module[GD_ADDRESS_STR_MAX];
    GD_TRY(dl_module_address(module));
    for (size_t i = 0; i < l.n; i++) {
        gd_u256 have;
        GD_TRY(gd_bank_balance(&ctx, module, l.items[i].denom, &have));
        uint64_t hi = (uint64_t)(l.items[i].amount >> 64), lo = (uint64_t)l.items[i].amount;
        if (have.w[0] != lo || have.w[1] != hi || have.w[2] != 0 || have.w[3] != 0)
            return gd_fail(GD_ERR_PARSE, "invariant diloco: the module account's %s balance "
                                         "is not the sum of pools, collateral, bonds and "
                                         "unclaimed rewards",
                           l.items[i].denom);
    }
    dl_key k;
    dl_key_init(&k, DL_SETTLE);
    dl_list owed;
    GD_TRY(dl_list_prefix(kv, &k, &gonka__diloco__v1__settle_amount__descriptor, &owed));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < owed.n; i++) {
        const dl_settle *st = owed.items[i];
        if (st->tokens == 0)
            continue;
        dl_key rk;
        dl_key_init(&rk, DL_ROUND);
        dl_key_u64(&rk, st->run);
        dl_list rounds;
        s = dl_list_prefix(kv, &rk, &gonka__diloco__v1__round__descriptor, &rounds);
        bool accepted = false;
        for (size_t j = 0; s == GD_OK && j < rounds.n && !accepted; j++) {
            const dl_round *r = rounds.items[j];
            accepted = r->epoch == st->epoch &&
                       r->phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE &&
                       dl_has_str(r->aggregation_set, r->n_aggregation_set, st->address);
        }
        if (s == GD_OK && !accepted)
            s = gd_fail(GD_ERR_PARSE, "invariant diloco: %s was settled tokens without an "
                                      "accepted commitment",
                        st->address);
        dl_list_free(&rounds);
    }
    dl_list_free(&owed);
    return s;
}

static gd_status dl_begin(gd_app *app, gd_ctx *ctx) {
    (void)app;
    return dl_begin_block(ctx);
}

static const gd_query_route dl_queries[] = {
    {GD_DILOCO_QUERY_PARAMS, dl_q_params}, {GD_DILOCO_QUERY_RUNS, dl_q_runs},
    {GD_DILOCO_QUERY_RUN, dl_q_run},       {GD_DILOCO_QUERY_ROUND, dl_q_round},
    {GD_DILOCO_QUERY_REWARDS, dl_q_rewards},
};

const gd_module gd_diloco_module = {
    .name = GD_DILOCO_MODULE_NAME,
    .msgs = dl_msg_routes,
    .n_msgs = 10, /* dl_msg_routes (diloco_msgs.c) */
    .queries = dl_queries,
    .n_queries = sizeof dl_queries / sizeof dl_queries[0],
    .init_genesis = dl_init_genesis,
    .export_genesis = dl_export_genesis,
    .begin_block = dl_begin,
    .check_invariants = dl_invariants,
};
