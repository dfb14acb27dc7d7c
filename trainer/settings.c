/* The memory settings' names (trainer/settings.h). */
#include "trainer/settings.h"

#include <string.h>

const gd_setting gd_setting_shard = {"shard", {"optimizer", "full"}};
const gd_setting gd_setting_precision = {"precision", {"fp32", "bf16"}};
const gd_setting gd_setting_moments = {"moments", {"fp32", "bf16"}};
const gd_setting gd_setting_recompute = {"recompute", {"none", "full"}};
const gd_setting gd_setting_attention = {"attention", {"naive", "flash"}};
const gd_setting gd_setting_offload = {"offload", {"none", "optimizer"}};
const gd_setting *const gd_run_settings[GD_RUN_SETTINGS] = {
    &gd_setting_attention, &gd_setting_precision, &gd_setting_moments};

gd_status gd_memory_settings_check(const gd_memory_settings *m) {
    if ((m->shard != GD_SHARD_OPTIMIZER && m->shard != GD_SHARD_FULL) ||
        (m->recompute != GD_RECOMPUTE_NONE && m->recompute != GD_RECOMPUTE_FULL) ||
        (m->offload != GD_OFFLOAD_NONE && m->offload != GD_OFFLOAD_OPTIMIZER))
        return gd_fail(GD_ERR_INVALID, "unknown memory settings (shard %d, recompute %d, "
                                       "offload %d)",
                       (int)m->shard, (int)m->recompute, (int)m->offload);
    return GD_OK;
}

const char *gd_setting_name(const gd_setting *s, int v) {
    return v == 0 || v == 1 ? s->names[v] : "?";
}

gd_status gd_setting_parse_optional(const gd_setting *s, int *out, const char *text) {
    if (text == NULL || text[0] == '\0') {
        *out = 0;
        return GD_OK;
    }
    return gd_setting_parse(s, out, text);
}

gd_status gd_setting_parse(const gd_setting *s, int *out, const char *text) {
    for (int v = 0; v < 2; v++) {
        if (text != NULL && strcmp(text, s->names[v]) == 0) {
            *out = v;
            return GD_OK;
        }
    }
    return gd_fail(GD_ERR_INVALID, "%s must be %s or %s, not '%s'", s->option, s->names[0],
                   s->names[1], text ? text : "");
}
