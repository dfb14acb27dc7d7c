/* A run spec as JSON (chain/wire/diloco_spec.h), which `tx create-run
 * --spec`, `sim --spec` and the demo read from a file: any bytes are
 * refused or read, and what is read writes back to JSON that reads to the
 * same spec (the same digest), whether or not the spec passes its check. */
#include <string.h>

#include <jansson.h>

#include "chain/wire/diloco_spec.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1);
    if (text == NULL)
        abort();
    memcpy(text, data, size);
    json_error_t err;
    json_t *j = json_loadb(text, size, JSON_REJECT_DUPLICATES, &err);
    Gonka__Diloco__V1__RunSpec *spec = NULL, *back = NULL;
    if (j != NULL && gd_diloco_spec_from_json(&spec, j) == GD_OK) {
        FUZZ_IGNORE(gd_diloco_spec_check(spec));
        json_t *again = gd_diloco_spec_to_json(spec);
        FUZZ_ASSERT(again != NULL);
        FUZZ_ASSERT(gd_diloco_spec_from_json(&back, again) == GD_OK);
        uint8_t d1[32], d2[32];
        FUZZ_ASSERT(gd_diloco_spec_digest(d1, spec) == GD_OK);
        FUZZ_ASSERT(gd_diloco_spec_digest(d2, back) == GD_OK);
        FUZZ_ASSERT(memcmp(d1, d2, 32) == 0);
        json_decref(again);
    }
    gd_diloco_spec_free(back);
    gd_diloco_spec_free(spec);
    json_decref(j);
    free(text);
    return 0;
}
