/* Addresses typed by users or read from the chain: decode, and re-encode
 * whatever decodes (the lower-case input must come back). */
#include <string.h>

#include "chain/keys/address.h"
#include "chain/keys/bech32.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    char hrp[GD_BECH32_HRP_MAX + 1];
    uint8_t five[GD_BECH32_MAX_LEN];
    size_t n = 0;
    if (strlen(text) == size &&
        gd_bech32_decode(hrp, sizeof hrp, five, sizeof five, &n, text, GD_BECH32_MAX_LEN) ==
            GD_OK) {
        char again[GD_BECH32_MAX_LEN + 2];
        FUZZ_ASSERT(gd_bech32_encode(again, sizeof again, hrp, five, n) == GD_OK);
        for (size_t i = 0; i < size; i++) {
            char c = text[i];
            if (c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            FUZZ_ASSERT(again[i] == c);
        }
        uint8_t raw[GD_ADDRESS_RAW_MAX];
        size_t raw_len;
        if (gd_address_decode(raw, &raw_len, text, NULL) == GD_OK) {
            char addr[GD_ADDRESS_STR_MAX + 64];
            FUZZ_ASSERT(gd_address_encode(addr, sizeof addr, hrp, raw, raw_len) == GD_OK);
            FUZZ_ASSERT(strcmp(addr, again) == 0);
        }
    }
    free(text);
    return 0;
}
