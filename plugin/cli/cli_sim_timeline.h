/* `gonka-diloco sim --timeline`: one round on one host modelled from rates,
 * without training (trainer/timeline.h). */
#ifndef GD_PLUGIN_CLI_CLI_SIM_TIMELINE_H
#define GD_PLUGIN_CLI_CLI_SIM_TIMELINE_H

#include "plugin/cli/cli.h"

/* Runs the model for sim's arguments; an exit code. */
int gd_sim_timeline(gd_cli *cli, gd_args *args);

#endif
