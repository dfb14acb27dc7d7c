/* RFC 3339 times (genesis_time, block times, --genesis-time): any text is
 * refused or read, and what is read prints in UTC and reads back as the
 * same instant. */
#include "common/rfc3339.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    gd_time t, back;
    if (text != NULL && gd_rfc3339_parse(&t, text) == GD_OK) {
        FUZZ_ASSERT(t.nanos >= 0 && t.nanos <= 999999999);
        for (int nanos9 = 0; nanos9 < 2; nanos9++) {
            char out[GD_RFC3339_MAX];
            FUZZ_ASSERT(gd_rfc3339_format(out, sizeof out, t, nanos9) == GD_OK);
            FUZZ_ASSERT(gd_rfc3339_parse(&back, out) == GD_OK);
            FUZZ_ASSERT(gd_time_cmp(t, back) == 0);
        }
    }
    free(text);
    return 0;
}
