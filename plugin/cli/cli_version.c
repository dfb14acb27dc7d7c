/* `gonka-diloco version [--json]`: the version and the backends, compiled
 * into this build and usable on this machine. */
#include <string.h>

#include <jansson.h>

#include "kernels/backend_registry.h"
#include "plugin/cli/cli.h"
#include "plugin/cli/cli_util.h"

static int gd_run_version(gd_cli *cli, gd_args *args) {
    const char *const *compiled = gd_backend_compiled();
    if (gd_flag(args, "json")) {
        json_t *c = json_array(), *u = json_array();
        for (size_t i = 0; compiled[i] != NULL; i++) {
            char why[256];
            json_array_append_new(c, json_string(compiled[i]));
            if (gd_backend_usable(compiled[i], why, sizeof why))
                json_array_append_new(u, json_string(compiled[i]));
        }
        return gd_cli_print_json(cli, json_pack("{s:s,s:{s:o,s:o}}", "version", GD_VERSION,
                                                "backends", "compiled", c, "usable", u));
    }
    fprintf(cli->out, "gonka-diloco %s\nbackends:\n", GD_VERSION);
    for (size_t i = 0; compiled[i] != NULL; i++) {
        char why[256];
        bool usable = gd_backend_usable(compiled[i], why, sizeof why);
        fprintf(cli->out, "  %-5s %s (%s)\n", compiled[i], usable ? "usable" : "not usable",
                why);
    }
    return GD_EXIT_OK;
}

static const gd_opt_spec gd_version_opts[] = {
    {"json", NULL,
     "print {\"version\": str, \"backends\": {\"compiled\": [..], \"usable\": [..]}}"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_version = {
    "version", "", 0, 0, "Show the version and the compute backends built in and usable here.",
    "A backend is compiled in when the build found its toolkit (cuda: nvcc) and usable when\n"
    "this machine can run it (cuda: a GPU and its driver). --backend auto picks cuda when it\n"
    "is usable, else cpu.",
    gd_version_opts, gd_run_version,
};
