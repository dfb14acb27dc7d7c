/* The RunSpec a simulation runs: built from sim's flags (--print-spec
 * prints it), or read from a file (--spec), and turned into the engine's
 * configuration by plugin/member/run_config.h, exactly as a host would. */
#ifndef GD_PLUGIN_CLI_CLI_SIM_SPEC_H
#define GD_PLUGIN_CLI_CLI_SIM_SPEC_H

#include <stdint.h>

#include "gonka/diloco/v1/types.pb-c.h"
#include "plugin/cli/cli.h"
#include "plugin/member/run_config.h"

/* Flags a spec fixes: refused beside --spec. */
extern const char *const gd_sim_spec_flags[];

/* The spec of sim's flags: the model, the inner and outer optimizer,
 * batches, codec and chunks, with an inner schedule of warm_start + rounds
 * x H steps, and the chain-side fields (windows, economics) at the
 * defaults docs/cli.md lists. initial_state_hash is G_0's, computed.
 * Returns an exit code, or GD_CLI_CONTINUE with *spec (free with gd_diloco_spec_free)
 * and *rc set. */
int gd_sim_spec_from_flags(gd_cli *cli, gd_args *args, uint64_t warm_start, uint64_t rounds,
                           uint64_t run, int threads, Gonka__Diloco__V1__RunSpec **spec,
                           gd_run_config *rc);

/* The spec in FILE (the JSON of tx create-run), its configuration, and a
 * check that its initial_state_hash is G_0's. local_model: the config a
 * digest-named model stands for (NULL if none). Exit code or GD_CLI_CONTINUE. */
int gd_sim_spec_from_file(gd_cli *cli, const char *path, uint64_t run,
                          const gd_model_config *local_model, int threads,
                          Gonka__Diloco__V1__RunSpec **spec, gd_run_config *rc);

#endif
