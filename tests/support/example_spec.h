/* docs/examples/run-spec.json, the project's example run spec, as the unit
 * tests load it: its JSON, or parsed (gd_diloco_spec_from_json). Either
 * aborts the test with the reason if the file is missing or invalid. */
#ifndef GD_TESTS_SUPPORT_EXAMPLE_SPEC_H
#define GD_TESTS_SUPPORT_EXAMPLE_SPEC_H

#include <jansson.h>

#include "gonka/diloco/v1/types.pb-c.h"

json_t *gd_test_example_spec_json(void);
Gonka__Diloco__V1__RunSpec *gd_test_example_spec(void);

#endif
