/* Transaction bytes from the network: strict decode, JSON rendering,
 * signature check. Accepted input must survive every step. */
#include "chain/wire/tx_decode.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gd_decoded_tx *tx = NULL;
    if (gd_tx_decode(&tx, data, size) != GD_OK)
        return 0;
    json_t *j = gd_decoded_tx_to_json(tx);
    FUZZ_ASSERT(j != NULL);
    char *text = json_dumps(j, JSON_COMPACT);
    free(text);
    json_decref(j);
    char addr[96];
    FUZZ_IGNORE(gd_decoded_tx_signer(tx, addr, sizeof addr));
    FUZZ_IGNORE(gd_decoded_tx_verify(tx, "prod-sim", 0));
    gd_decoded_tx_free(tx);
    return 0;
}
