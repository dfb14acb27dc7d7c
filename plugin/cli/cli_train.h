/* Helpers shared by the trainer commands (train, eval, bench train). */
#ifndef GD_PLUGIN_CLI_CLI_TRAIN_H
#define GD_PLUGIN_CLI_CLI_TRAIN_H

#include "kernels/backend_registry.h"
#include "plugin/cli/cli.h"
#include "trainer/config.h"
#include "trainer/train.h"

/* --threads N (default: the online cores, at most 64). Returns an exit code
 * or GD_CLI_CONTINUE. */
int gd_cli_threads(gd_cli *cli, gd_args *args, int *threads);
/* Opens --backend NAME (cpu, cuda, auto; default auto: cuda where a GPU is
 * usable, else cpu) on --gpus N ranks (default 1) for data parallelism
 * (kernels/backend_registry.h), without pools (a trainer lends one rank its
 * threads); close it with gd_backend_group_close. GD_CLI_CONTINUE when opened, else the
 * exit code, the error printed. */
int gd_cli_backend_group(gd_cli *cli, gd_args *args, gd_backend_group *out);

/* --shard optimizer|full, --recompute none|full and --offload
 * none|optimizer into out->memory (the rest zeroed: the caller puts the
 * opened group's ranks in). */
int gd_cli_trainer_host(gd_cli *cli, gd_args *args, gd_trainer_host *out);
#define GD_TRAINER_HOST_OPTS                                                                  \
    {"shard", "optimizer|full", "each GPU holds the whole model (optimizer, the default) or "  \
                                "a shard of it, gathered a layer at a time (full); the same "  \
                                "bits"},                                                      \
        {"recompute", "none|full", "keep every layer's activations (none, the default) or "    \
                                   "only each layer's input, replaying its forward in the "    \
                                   "backward pass (full); the same bits"},                     \
        {"offload", "none|optimizer", "keep AdamW's moments on the GPU (none, the default) or "  \
                                      "in host memory (optimizer); the same bits"}

/* --attention naive|flash, --precision fp32|bf16 and --moments fp32|bf16
 * into o: the settings that decide a step's bits (trainer/settings.h), the
 * run spec's keys of the same names. Absent leaves o's. */
int gd_cli_run_settings(gd_cli *cli, gd_args *args, gd_train_options *o);
#define GD_RUN_SETTINGS_OPTS                                                                   \
    {"attention", "naive|flash", "naive: the T x T probabilities kept, the logits whole; "      \
                                 "flash: online softmax and the cross-entropy in chunks of "     \
                                 "1,024 tokens (other bits; default naive)"},                   \
        {"precision", "fp32|bf16", "store weights as the ops read them and activations in "     \
                                   "fp32 (default) or bf16, computing in fp32 (other bits)"},   \
        {"moments", "fp32|bf16", "store AdamW's moments in fp32 (default) or bf16 (other "      \
                                 "bits)"}

/* --model NAME | --model-config FILE, then --vocab N. */
int gd_cli_model_config(gd_cli *cli, gd_args *args, gd_model_config *config);

#endif
