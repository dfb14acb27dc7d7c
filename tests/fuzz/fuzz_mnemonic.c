/* Mnemonic files: normalising is idempotent on accepted input. */
#include <string.h>

#include "chain/keys/bip39.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096)
        return 0;
    char *text = fuzz_cstr(data, size);
    char norm[GD_BIP39_MNEMONIC_MAX + 1], again[GD_BIP39_MNEMONIC_MAX + 1];
    if (gd_bip39_normalize(norm, sizeof norm, text) == GD_OK) {
        FUZZ_ASSERT(gd_bip39_normalize(again, sizeof again, norm) == GD_OK);
        FUZZ_ASSERT(strcmp(norm, again) == 0);
    }
    free(text);
    return 0;
}
