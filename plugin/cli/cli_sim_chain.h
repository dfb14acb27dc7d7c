/* sim --chain (cli_sim_chain.c): the run played over the module's state
 * machine by members in one process. */
#ifndef GD_PLUGIN_CLI_CLI_SIM_CHAIN_H
#define GD_PLUGIN_CLI_CLI_SIM_CHAIN_H

#include <stdint.h>

#include "common/cli.h"
#include "gonka/diloco/v1/types.pb-c.h"

int gd_sim_chain_run(gd_cli *cli, gd_args *args, const Gonka__Diloco__V1__RunSpec *spec,
                     uint32_t workers, uint32_t rounds, int threads);

#endif
