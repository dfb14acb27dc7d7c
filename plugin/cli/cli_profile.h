/* bench train --profile: the op profile (kernels/backend_profile.h) of the
 * profiled steps, as a table or as JSON. */
#ifndef GD_PLUGIN_CLI_CLI_PROFILE_H
#define GD_PLUGIN_CLI_CLI_PROFILE_H

#include <jansson.h>
#include <stdio.h>

#include "kernels/backend_profile.h"

/* steps profiled steps of step_s seconds each; p sorted by time first
 * (gd_backend_profile_sort). */
void gd_profile_print(FILE *out, const gd_backend_profile *p, size_t steps, double step_s);
/* {"steps", "step_ms", "outside_ms", "ops": [{"op", "in_dim", "out_dim",
 * "calls", "ms", "share", "gflops"}]}: calls and ms per step, share of the
 * step, gflops null where the op has no FLOPs counted. NULL when out of
 * memory. */
json_t *gd_profile_json(const gd_backend_profile *p, size_t steps, double step_s);

#endif
