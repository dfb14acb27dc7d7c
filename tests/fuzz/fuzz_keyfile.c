/* Key files: any accepted file yields a key whose pubkey matches its secret. */
#include <string.h>

#include "chain/keys/keyfile.h"
#include "chain/keys/keys.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gd_key key;
    if (gd_keyfile_parse(&key, data, size) != GD_OK)
        return 0;
    gd_key check;
    FUZZ_ASSERT(gd_key_from_secret(&check, key.secret) == GD_OK);
    FUZZ_ASSERT(memcmp(check.pubkey, key.pubkey, GD_PUBKEY_LEN) == 0);
    /* Formatting and parsing again gives the same key. */
    gd_buf text = {0};
    FUZZ_ASSERT(gd_keyfile_format(&text, &key) == GD_OK);
    gd_key again;
    FUZZ_ASSERT(gd_keyfile_parse(&again, text.data, text.len) == GD_OK);
    FUZZ_ASSERT(memcmp(&again, &key, sizeof key) == 0);
    gd_buf_wipe_free(&text);
    return 0;
}
