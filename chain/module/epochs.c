/* The epoch module: Gonka's epoch advance and EpochInfo. */
#include "chain/module/epochs.h"

#include <string.h>

#include "chain/module/json_util.h"
#include "chain/wire/epoch_codec.h"
#include "inference/inference/query.pb-c.h"

#define GD_EPOCHS_PREFIX 0x03
#define GD_EPOCHS_KEY_PARAMS 0x01
#define GD_EPOCHS_KEY_LATEST 0x02

void gd_epoch_params_localnet(gd_epoch_params *p) {
    *p = (gd_epoch_params){
        .epoch_length = 100,
        .epoch_multiplier = 1,
        .epoch_shift = 80,
        .default_unit_of_compute_price = 100,
        .poc_stage_duration = 10,
        .poc_exchange_duration = 2,
        .poc_validation_delay = 2,
        .poc_validation_duration = 10,
        .set_new_validators_delay = 2,
        .inference_validation_cutoff = 2,
        .inference_pruning_epoch_threshold = 2,
    };
}

static gd_status gd_epochs_store(gd_ctx *ctx, const gd_epoch *e, const gd_epoch_params *p) {
    uint8_t buf[256];
    if (p) {
        Inference__Inference__EpochParams ep;
        gd_epoch_params_to_proto(&ep, p);
        const uint8_t key[2] = {GD_EPOCHS_PREFIX, GD_EPOCHS_KEY_PARAMS};
        size_t n = inference__inference__epoch_params__pack(&ep, buf);
        GD_TRY(gd_ctx_set(ctx, key, 2, buf, n));
    }
    if (e) {
        Inference__Inference__Epoch pe = INFERENCE__INFERENCE__EPOCH__INIT;
        pe.index = e->index;
        pe.poc_start_block_height = e->poc_start_block_height;
        const uint8_t key[2] = {GD_EPOCHS_PREFIX, GD_EPOCHS_KEY_LATEST};
        size_t n = inference__inference__epoch__pack(&pe, buf);
        GD_TRY(gd_ctx_set(ctx, key, 2, buf, n));
    }
    return GD_OK;
}

gd_status gd_epochs_get(gd_ctx *ctx, gd_epoch *latest, gd_epoch_params *params) {
    const uint8_t pkey[2] = {GD_EPOCHS_PREFIX, GD_EPOCHS_KEY_PARAMS};
    const uint8_t ekey[2] = {GD_EPOCHS_PREFIX, GD_EPOCHS_KEY_LATEST};
    const uint8_t *v;
    size_t vlen;
    GD_TRY(gd_ctx_get(ctx, pkey, 2, &v, &vlen));
    Inference__Inference__EpochParams *ep = inference__inference__epoch_params__unpack(NULL, vlen, v);
    if (ep == NULL)
        return gd_fail(GD_ERR_PARSE, "stored epoch params are malformed");
    gd_epoch_params_from_proto(params, ep);
    inference__inference__epoch_params__free_unpacked(ep, NULL);
    GD_TRY(gd_ctx_get(ctx, ekey, 2, &v, &vlen));
    Inference__Inference__Epoch *pe = inference__inference__epoch__unpack(NULL, vlen, v);
    if (pe == NULL)
        return gd_fail(GD_ERR_PARSE, "stored epoch is malformed");
    latest->index = pe->index;
    latest->poc_start_block_height = pe->poc_start_block_height;
    inference__inference__epoch__free_unpacked(pe, NULL);
    return GD_OK;
}

/* A new epoch starts in the block at the previous epoch's next PoC start,
 * as Gonka's IsStartOfPocStage; a chain whose first PoC height is already
 * behind it (epoch_length <= epoch_shift) starts it at once. */
static gd_status gd_epochs_begin_block(gd_app *app, gd_ctx *ctx) {
    (void)app;
    gd_epoch e;
    gd_epoch_params p;
    GD_TRY(gd_epochs_get(ctx, &e, &p));
    gd_epoch_stages s;
    gd_epoch_stages_compute(&s, &e, &p);
    if (ctx->height < s.next_poc_start)
        return GD_OK;
    gd_epoch next = {.index = e.index + 1, .poc_start_block_height = ctx->height};
    GD_TRY(gd_epochs_store(ctx, &next, NULL));
    char index[24], start[24];
    snprintf(index, sizeof index, "%llu", (unsigned long long)next.index);
    snprintf(start, sizeof start, "%lld", (long long)next.poc_start_block_height);
    return gd_events_add(ctx->events, "new_epoch", "epoch_index", index, "poc_start_block_height",
                         start, NULL);
}

static gd_status gd_query_epoch_info(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                                     gd_buf *resp) {
    (void)app;
    (void)req;
    (void)len;
    gd_epoch e;
    gd_epoch_params p;
    GD_TRY(gd_epochs_get(ctx, &e, &p));
    Inference__Inference__EpochParams ep;
    gd_epoch_params_to_proto(&ep, &p);
    Inference__Inference__Params params = INFERENCE__INFERENCE__PARAMS__INIT;
    params.epoch_params = &ep;
    Inference__Inference__Epoch pe = INFERENCE__INFERENCE__EPOCH__INIT;
    pe.index = e.index;
    pe.poc_start_block_height = e.poc_start_block_height;
    Inference__Inference__QueryEpochInfoResponse out =
        INFERENCE__INFERENCE__QUERY_EPOCH_INFO_RESPONSE__INIT;
    out.block_height = ctx->height;
    out.params = &params;
    out.latest_epoch = &pe;
    GD_TRY(gd_buf_reserve(resp, protobuf_c_message_get_packed_size(&out.base) + 1));
    resp->len = protobuf_c_message_pack(&out.base, resp->data);
    return GD_OK;
}

static gd_status gd_epochs_init_genesis(gd_app *app, gd_ctx *ctx, const json_t *state) {
    (void)app;
    gd_epoch_params p;
    gd_epoch e = {0, 0};
    gd_epoch_params_localnet(&p);
    if (state != NULL) {
        GD_TRY(gd_json_only_keys(state, "inference genesis", "params", "latest_epoch", NULL));
        const json_t *params = json_object_get(state, "params");
        if (params != NULL) {
            GD_TRY(gd_json_only_keys(params, "inference.params", "epoch_params", NULL));
            const json_t *ep = json_object_get(params, "epoch_params");
            GD_TRY(gd_json_only_keys(ep, "epoch_params", "epoch_length", "epoch_multiplier",
                                     "epoch_shift", "default_unit_of_compute_price",
                                     "poc_stage_duration", "poc_exchange_duration",
                                     "poc_validation_delay", "poc_validation_duration",
                                     "set_new_validators_delay", "inference_validation_cutoff",
                                     "inference_pruning_epoch_threshold", NULL));
            const struct {
                const char *key;
                int64_t *field;
            } fields[] = {
                {"epoch_length", &p.epoch_length},
                {"epoch_multiplier", &p.epoch_multiplier},
                {"epoch_shift", &p.epoch_shift},
                {"default_unit_of_compute_price", &p.default_unit_of_compute_price},
                {"poc_stage_duration", &p.poc_stage_duration},
                {"poc_exchange_duration", &p.poc_exchange_duration},
                {"poc_validation_delay", &p.poc_validation_delay},
                {"poc_validation_duration", &p.poc_validation_duration},
                {"set_new_validators_delay", &p.set_new_validators_delay},
                {"inference_validation_cutoff", &p.inference_validation_cutoff},
            };
            for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
                GD_TRY(gd_json_i64_field(fields[i].field, ep, fields[i].key, true,
                                         *fields[i].field));
            GD_TRY(gd_json_u64_field(&p.inference_pruning_epoch_threshold, ep,
                                     "inference_pruning_epoch_threshold", true,
                                     p.inference_pruning_epoch_threshold));
        }
        const json_t *latest = json_object_get(state, "latest_epoch");
        if (latest != NULL) {
            GD_TRY(gd_json_only_keys(latest, "latest_epoch", "index", "poc_start_block_height",
                                     NULL));
            GD_TRY(gd_json_u64_field(&e.index, latest, "index", true, 0));
            GD_TRY(gd_json_i64_field(&e.poc_start_block_height, latest, "poc_start_block_height",
                                     true, 0));
            if (e.poc_start_block_height < 0)
                return gd_fail(GD_ERR_PARSE, "latest_epoch.poc_start_block_height is negative");
        }
    }
    if (gd_epoch_params_check(&p) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "inference.params.epoch_params");
    return gd_epochs_store(ctx, &e, &p);
}

static json_t *gd_epochs_export_genesis(gd_app *app, gd_ctx *ctx) {
    (void)app;
    gd_epoch e;
    gd_epoch_params p;
    if (gd_epochs_get(ctx, &e, &p) != GD_OK)
        return NULL;
    return json_pack(
        "{s:{s:{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}},s:{s:o,s:o}}", "params",
        "epoch_params", "epoch_length", gd_json_i64_str(p.epoch_length), "epoch_multiplier",
        gd_json_i64_str(p.epoch_multiplier), "epoch_shift", gd_json_i64_str(p.epoch_shift),
        "default_unit_of_compute_price", gd_json_i64_str(p.default_unit_of_compute_price),
        "poc_stage_duration", gd_json_i64_str(p.poc_stage_duration), "poc_exchange_duration",
        gd_json_i64_str(p.poc_exchange_duration), "poc_validation_delay",
        gd_json_i64_str(p.poc_validation_delay), "poc_validation_duration",
        gd_json_i64_str(p.poc_validation_duration), "set_new_validators_delay",
        gd_json_i64_str(p.set_new_validators_delay), "inference_validation_cutoff",
        gd_json_i64_str(p.inference_validation_cutoff), "inference_pruning_epoch_threshold",
        gd_json_u64_str(p.inference_pruning_epoch_threshold), "latest_epoch", "index",
        gd_json_u64_str(e.index), "poc_start_block_height",
        gd_json_i64_str(e.poc_start_block_height));
}

static gd_status gd_epochs_invariants(gd_app *app, gd_kv *kv) {
    (void)app;
    gd_gas_meter unmetered = {0, 0};
    gd_ctx ctx = {.kv = kv, .gas = &unmetered, .mode = GD_EXEC_QUERY};
    gd_epoch e;
    gd_epoch_params p;
    if (gd_epochs_get(&ctx, &e, &p) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "invariant inference");
    if (gd_epoch_params_check(&p) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "invariant inference: epoch params");
    return GD_OK;
}

static const gd_query_route gd_epochs_queries[] = {
    {"/inference.inference.Query/EpochInfo", gd_query_epoch_info},
};

const gd_module gd_epochs_module = {
    .name = "inference",
    .queries = gd_epochs_queries,
    .n_queries = sizeof gd_epochs_queries / sizeof gd_epochs_queries[0],
    .init_genesis = gd_epochs_init_genesis,
    .export_genesis = gd_epochs_export_genesis,
    .begin_block = gd_epochs_begin_block,
    .check_invariants = gd_epochs_invariants,
};
