/* CometBFT JSON helpers and the merkle root. */
#include "localnet/cometbft_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/bytes.h"
#include "common/hash.h"

json_t *gd_cmt_int64(int64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return json_string(buf);
}

json_t *gd_cmt_events(const gd_events *events) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < events->n; i++) {
        const gd_event *e = &events->items[i];
        json_t *attrs = json_array();
        for (size_t k = 0; attrs && k < e->n_attrs; k++)
            json_array_append_new(attrs, json_pack("{s:s,s:s,s:b}", "key", e->attrs[k].key,
                                                   "value", e->attrs[k].value, "index",
                                                   e->attrs[k].index));
        json_array_append_new(arr, json_pack("{s:s,s:o}", "type", e->type, "attributes", attrs));
    }
    return arr;
}

json_t *gd_cmt_tx_result(const gd_tx_outcome *o) {
    json_t *j = json_object();
    if (j == NULL)
        return NULL;
    if (o->err.code != 0)
        json_object_set_new(j, "code", json_integer(o->err.code));
    if (o->data.len > 0)
        json_object_set_new(j, "data", gd_json_base64(o->data.data, o->data.len));
    if (o->err.log[0])
        json_object_set_new(j, "log", json_string(o->err.log));
    if (o->gas_wanted)
        json_object_set_new(j, "gas_wanted", gd_cmt_int64((int64_t)o->gas_wanted));
    if (o->gas_used)
        json_object_set_new(j, "gas_used", gd_cmt_int64((int64_t)o->gas_used));
    if (o->events.n > 0)
        json_object_set_new(j, "events", gd_cmt_events(&o->events));
    if (o->err.codespace[0])
        json_object_set_new(j, "codespace", json_string(o->err.codespace));
    return j;
}

/* A leaf is SHA256(0x00 || item), streamed: items have no size bound here. */
static gd_status gd_merkle_leaf(uint8_t out[32], const uint8_t *item, size_t len) {
    gd_sha256_ctx *ctx;
    if (gd_sha256_begin(&ctx) != GD_OK)
        return gd_fail(GD_ERR_NOMEM, "out of memory hashing a block");
    gd_sha256_update(ctx, "\x00", 1);
    gd_sha256_update(ctx, item, len);
    gd_sha256_finish(ctx, out);
    return GD_OK;
}

static gd_status gd_merkle_node(uint8_t out[32], const uint8_t *const *items, const size_t *lens,
                                size_t n) {
    if (n == 1)
        return gd_merkle_leaf(out, items[0], lens[0]);
    size_t k = 1;
    while (k * 2 < n)
        k *= 2;
    uint8_t inner[65];
    inner[0] = 0x01;
    GD_TRY(gd_merkle_node(inner + 1, items, lens, k));
    GD_TRY(gd_merkle_node(inner + 33, items + k, lens + k, n - k));
    gd_sha256(out, inner, sizeof inner);
    return GD_OK;
}

gd_status gd_merkle_root(uint8_t out[32], const uint8_t *const *items, const size_t *lens,
                         size_t n) {
    if (n == 0) {
        gd_sha256(out, "", 0);
        return GD_OK;
    }
    return gd_merkle_node(out, items, lens, n);
}
