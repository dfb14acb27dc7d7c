/* The node's transaction path: arbitrary bytes through CheckTx, Simulate
 * and a block (DeliverTx, commit) of a chain with known accounts. Nothing
 * may crash, and the invariants must hold after the block. */
#include <string.h>

#include "chain/module/app.h"
#include "tests/fuzz/fuzz.h"

static gd_app *gd_fuzz_new_app(void) {
    static const char genesis_text[] =
        "{\"chain_id\":\"prod-sim\",\"app_state\":{\"auth\":{\"accounts\":[{\"@type\":"
        "\"/cosmos.auth.v1beta1.BaseAccount\",\"address\":"
        "\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\",\"account_number\":\"0\"}]},"
        "\"bank\":{\"balances\":[{\"address\":\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\","
        "\"coins\":[{\"denom\":\"ngonka\",\"amount\":\"1000000\"}]}]}}}";
    json_t *genesis = json_loads(genesis_text, 0, NULL);
    gd_app *app = NULL;
    FUZZ_ASSERT(genesis && gd_app_new(&app, NULL) == GD_OK);
    FUZZ_ASSERT(gd_app_register_standard(app) == GD_OK);
    FUZZ_ASSERT(gd_app_init_chain(app, genesis) == GD_OK);
    json_decref(genesis);
    return app;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gd_app *app = gd_fuzz_new_app();
    gd_tx_outcome o;
    FUZZ_ASSERT(gd_app_check_tx(app, &o, data, size) == GD_OK);
    gd_tx_outcome_free(&o);
    FUZZ_ASSERT(gd_app_simulate(app, &o, data, size) == GD_OK);
    gd_tx_outcome_free(&o);
    uint8_t hash[32] = {0}, app_hash[32];
    gd_events events = {0};
    FUZZ_ASSERT(gd_app_begin_block(app, 1, hash, &events) == GD_OK);
    FUZZ_ASSERT(gd_app_deliver_tx(app, &o, data, size) == GD_OK);
    gd_tx_outcome_free(&o);
    FUZZ_ASSERT(gd_app_end_block(app, &events) == GD_OK);
    FUZZ_ASSERT(gd_app_commit(app, app_hash) == GD_OK);
    FUZZ_ASSERT(gd_app_check_invariants(app) == GD_OK);
    gd_events_free(&events);
    gd_app_free(app);
    return 0;
}
