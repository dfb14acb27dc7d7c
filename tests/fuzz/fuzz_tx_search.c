/* tx_search queries from RPC clients: parsed and run against an in-memory
 * store; malformed ones must be refused, never crash or reach SQL raw. */
#include <string.h>

#include "localnet/blockstore.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static gd_blockstore *bs;
    if (bs == NULL)
        FUZZ_ASSERT(gd_blockstore_open(&bs, ":memory:") == GD_OK);
    char *query = fuzz_cstr(data, size);
    json_t *out = NULL;
    gd_status s = gd_blockstore_tx_search(bs, &out, query, size % 2 == 0, 1, 30);
    FUZZ_ASSERT(s == GD_OK || s == GD_ERR_INVALID || s == GD_ERR_IO);
    if (s == GD_OK)
        FUZZ_ASSERT(json_is_array(json_object_get(out, "txs")));
    json_decref(out);
    free(query);
    return 0;
}
