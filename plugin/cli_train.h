/* Helpers shared by the trainer commands (train, eval, bench train). */
#ifndef GD_PLUGIN_CLI_TRAIN_H
#define GD_PLUGIN_CLI_TRAIN_H

#include "plugin/cli.h"
#include "trainer/config.h"

/* Seconds on the monotonic clock. */
double gd_cli_now(void);

/* --threads N (default: the online cores, at most 64). Returns an exit code
 * or -1. */
int gd_cli_threads(gd_cli *cli, gd_args *args, int *threads);

/* --model NAME | --model-config FILE, then --vocab N. */
int gd_cli_model_config(gd_cli *cli, gd_args *args, gd_model_config *config);

#endif
