/* Leveled logging to stderr with a subsystem tag.
 *
 * Arguments are evaluated only when the level is enabled. The level is read
 * once from GD_LOG (error|warn|info|debug) or set with gd_log_set_level().
 * Never pass secrets to a log call. */
#ifndef GD_COMMON_LOG_H
#define GD_COMMON_LOG_H

#include "common/status.h"

typedef enum gd_log_level {
    GD_LOG_ERROR = 0,
    GD_LOG_WARN = 1,
    GD_LOG_INFO = 2,
    GD_LOG_DEBUG = 3,
} gd_log_level;

extern int gd_log_threshold;

void gd_log_set_level(gd_log_level level);

/* Parses "error", "warn", "info" or "debug". Returns GD_ERR_INVALID otherwise. */
gd_status gd_log_level_parse(gd_log_level *out, const char *text) GD_MUST_CHECK;

void gd_log_write(gd_log_level level, const char *subsystem, const char *fmt, ...) GD_PRINTF(3, 4);

#define GD_LOG(level, subsystem, ...)                         \
    do {                                                      \
        if ((int)(level) <= gd_log_threshold)                 \
            gd_log_write((level), (subsystem), __VA_ARGS__);  \
    } while (0)

#define GD_LOG_ERROR(sub, ...) GD_LOG(GD_LOG_ERROR, sub, __VA_ARGS__)
#define GD_LOG_WARN(sub, ...) GD_LOG(GD_LOG_WARN, sub, __VA_ARGS__)
#define GD_LOG_INFO(sub, ...) GD_LOG(GD_LOG_INFO, sub, __VA_ARGS__)
#define GD_LOG_DEBUG(sub, ...) GD_LOG(GD_LOG_DEBUG, sub, __VA_ARGS__)

#endif
