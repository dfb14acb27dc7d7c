/* Opening the node with a stand-in trainer: for the test-only adversaries
 * (tests/adversary), which link the plugin's static library. Not part of the
 * public ABI (plugin/gonka_diloco.h): libgonka_diloco.so does not export
 * it, and no product binary calls it. */
#ifndef GD_PLUGIN_GONKA_DILOCO_HOST_H
#define GD_PLUGIN_GONKA_DILOCO_HOST_H

#include <stddef.h>

#include "plugin/gonka_diloco.h"
#include "plugin/round_engine.h"

/* gonka_diloco_open, with `train` (NULL: gd_engine_train) training each of
 * the member's rounds. */
int gonka_diloco_open_with_train(const char *config_path, gd_engine_train_fn train,
                                 gonka_diloco **out, char *err, size_t err_cap);

#endif
