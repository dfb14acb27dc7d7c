/* The example run spec for the unit tests (see example_spec.h). */
#include "tests/support/example_spec.h"

#include <stdio.h>
#include <stdlib.h>

#include "chain/wire/diloco_spec.h"
#include "common/status.h"
#include "tests/support/testkit.h"

json_t *gd_test_example_spec_json(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/../docs/examples/run-spec.json", gd_test_source_dir());
    json_error_t err;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (j == NULL) {
        fprintf(stderr, "%s: %s\n", path, err.text);
        abort();
    }
    return j;
}

Gonka__Diloco__V1__RunSpec *gd_test_example_spec(void) {
    json_t *j = gd_test_example_spec_json();
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    gd_status s = gd_diloco_spec_from_json(&spec, j);
    json_decref(j);
    if (s != GD_OK || spec == NULL) {
        fprintf(stderr, "docs/examples/run-spec.json: %s\n", gd_error_detail());
        abort();
    }
    return spec;
}
