/* The DiLoCo module's query answers (chain/client/diloco_query.h): the first byte
 * picks the decoder, the rest is the answer. What a decoder accepts must
 * render as JSON, re-encode to bytes the decoder accepts again, and keep
 * the properties its checks promise. */
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/wire/diloco_spec.h"
#include "tests/fuzz/fuzz.h"

/* Decoder `which` (0 params, 1 runs, 2 run, 3 round, 4 rewards). */
#define GD_FUZZ_CASE(k, type, decode)                                                       \
    case k: {                                                                               \
        type *t = NULL;                                                                     \
        s = decode(&t, d, n);                                                               \
        *out = t ? &t->base : NULL;                                                         \
        break;                                                                              \
    }

static gd_status gd_fuzz_decode(ProtobufCMessage **out, int which, const uint8_t *d, size_t n) {
    gd_status s = GD_ERR_INVALID;
    *out = NULL;
    switch (which) {
        GD_FUZZ_CASE(0, Gonka__Diloco__V1__QueryParamsResponse, gd_diloco_query_params_decode)
        GD_FUZZ_CASE(1, Gonka__Diloco__V1__QueryRunsResponse, gd_diloco_query_runs_decode)
        GD_FUZZ_CASE(2, Gonka__Diloco__V1__QueryRunResponse, gd_diloco_query_run_decode)
        GD_FUZZ_CASE(3, Gonka__Diloco__V1__QueryRoundResponse, gd_diloco_query_round_decode)
        GD_FUZZ_CASE(4, Gonka__Diloco__V1__QueryRewardsResponse, gd_diloco_query_rewards_decode)
    }
    return s;
}

/* What an accepted answer promises beyond decoding. */
static json_t *gd_fuzz_properties(int which, const ProtobufCMessage *m) {
    switch (which) {
    case 0:
        return gd_diloco_params_json((const void *)m);
    case 1: {
        const Gonka__Diloco__V1__QueryRunsResponse *r = (const void *)m;
        for (size_t i = 0; i < r->n_runs; i++) {
            /* A spec the chain holds exports and imports again. */
            json_t *spec = gd_diloco_spec_to_json(r->runs[i]->spec);
            Gonka__Diloco__V1__RunSpec *back = NULL;
            FUZZ_ASSERT(spec && gd_diloco_spec_from_json(&back, spec) == GD_OK);
            gd_diloco_spec_free(back);
            json_decref(spec);
        }
        return gd_diloco_runs_json(r);
    }
    case 2:
        return gd_diloco_run_json((const void *)m);
    case 3: {
        const Gonka__Diloco__V1__QueryRoundResponse *r = (const void *)m;
        FUZZ_ASSERT(r->round != NULL && r->round->beacon.len == 32);
        return gd_diloco_round_json(r);
    }
    default:
        return gd_diloco_rewards_json((const void *)m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    int which = data[0] % 5;
    ProtobufCMessage *m = NULL;
    if (gd_fuzz_decode(&m, which, data + 1, size - 1) != GD_OK)
        return 0;
    /* It renders, and its re-encoding decodes to the same bytes: strict
     * decoding leaves nothing protobuf-c would re-encode differently. */
    json_t *j = gd_fuzz_properties(which, m);
    FUZZ_ASSERT(j != NULL);
    json_decref(j);
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    FUZZ_ASSERT(buf != NULL && protobuf_c_message_pack(m, buf) == n);
    ProtobufCMessage *again = NULL;
    FUZZ_ASSERT(gd_fuzz_decode(&again, which, buf, n) == GD_OK);
    FUZZ_ASSERT(protobuf_c_message_get_packed_size(again) == n);
    protobuf_c_message_free_unpacked(again, NULL);
    protobuf_c_message_free_unpacked(m, NULL);
    free(buf);
    return 0;
}
