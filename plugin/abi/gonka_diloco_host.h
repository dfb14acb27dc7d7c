/* Opening the node with a stand-in trainer: for the test-only adversaries
 * (tests/adversary), which link the plugin's static library. Not part of the
 * public ABI (plugin/include/gonka_diloco.h): libgonka_diloco.so does not export
 * it, and no product binary calls it. */
#ifndef GD_PLUGIN_ABI_GONKA_DILOCO_HOST_H
#define GD_PLUGIN_ABI_GONKA_DILOCO_HOST_H

#include <stddef.h>

#include "plugin/include/gonka_diloco.h"
#include "plugin/member/member.h"
#include "plugin/member/round_engine.h"

/* The member's stand-ins (tests/adversary): NULL fields are the engine's. */
typedef struct gonka_diloco_seams {
    gd_engine_train_fn train; /* trains each of its rounds */
    gd_engine_check_fn check; /* answers each of its checks */
    gd_member_withhold_fn withhold; /* requests it answers 404 */
    gd_member_withhold_fn drip; /* requests whose file answer it drips */
    gd_member_duty_fn duty; /* duties it does its own way */
} gonka_diloco_seams;

/* gonka_diloco_open with the seams (NULL: none). */
int gonka_diloco_open_with(const char *config_path, const gonka_diloco_seams *seams,
                           gonka_diloco **out, char *err, size_t err_cap);

#endif
