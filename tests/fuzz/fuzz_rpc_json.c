/* CometBFT JSON-RPC answers: the envelope, then every result parser. */
#include "chain/client/rpc.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *result = NULL;
    gd_rpc_error err;
    if (gd_rpc_parse_envelope((const char *)data, size, &result, &err) != GD_OK)
        return 0;
    gd_node_status st;
    gd_abci_query_result q = {0};
    gd_broadcast_result b;
    gd_tx_result t;
    gd_block_info blk;
    if (gd_rpc_parse_status(&st, result) == GD_OK)
        FUZZ_ASSERT(st.latest_block_height >= 0);
    FUZZ_IGNORE(gd_rpc_parse_abci_query(&q, result));
    gd_abci_query_result_free(&q);
    if (gd_rpc_parse_broadcast(&b, result) == GD_OK) {
        char why[2048];
        gd_abci_code_describe(&b.result, why, sizeof why);
    }
    if (gd_rpc_parse_tx(&t, result) == GD_OK)
        FUZZ_ASSERT(t.height > 0);
    FUZZ_IGNORE(gd_rpc_parse_block(&blk, result));
    json_decref(result);
    return 0;
}
