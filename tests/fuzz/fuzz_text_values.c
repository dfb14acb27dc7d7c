/* Values typed on the command line or read from config: coins, numbers,
 * durations, hex, base64, HD paths. Decoded values must re-encode. */
#include <string.h>
#include <strings.h>

#include "chain/keys/bip32.h"
#include "chain/wire/coin.h"
#include "common/base64.h"
#include "common/bytes.h"
#include "common/parse.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    gd_coin coins[GD_COINS_MAX];
    size_t n;
    if (gd_coins_parse(coins, GD_COINS_MAX, &n, text, 0) == GD_OK)
        for (size_t i = 0; i < n; i++) {
            FUZZ_ASSERT(gd_denom_check(coins[i].denom) == GD_OK);
            FUZZ_ASSERT(gd_amount_check(coins[i].amount) == GD_OK);
        }
    uint64_t u;
    int64_t i64;
    FUZZ_IGNORE(gd_parse_u64(&u, text));
    FUZZ_IGNORE(gd_parse_i64(&i64, text));
    if (gd_parse_duration_ms(text, &i64) == GD_OK)
        FUZZ_ASSERT(i64 >= 0);
    uint32_t idx[GD_HD_PATH_MAX_DEPTH];
    FUZZ_IGNORE(gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &n, text));
    uint8_t *buf = malloc(size + 1);
    size_t len = 0;
    if (gd_base64_decode(buf, size + 1, &len, text, size) == GD_OK) {
        char *enc = malloc(gd_base64_encoded_len(len) + 1);
        gd_base64_encode(enc, buf, len);
        FUZZ_ASSERT(strlen(enc) == size && memcmp(enc, text, size) == 0);
        free(enc);
    }
    if (gd_hex_decode(buf, size + 1, &len, text, size) == GD_OK) {
        char *enc = malloc(2 * len + 1);
        gd_hex_encode(enc, buf, len, false);
        FUZZ_ASSERT(strncasecmp(enc, text, size) == 0);
        free(enc);
    }
    free(buf);
    free(text);
    return 0;
}
