/* Leveled logging to stderr with a subsystem tag, as text lines or as JSON
 * objects, one a line.
 *
 * The levels are a spec, "LEVEL[,SUBSYSTEM=LEVEL...]" ("info,http=debug"):
 * a default and up to GD_LOG_SUBSYSTEMS subsystems of their own, read once
 * from GD_LOG and set with gd_log_configure() (node.yaml's log_level).
 * Arguments are evaluated only when some subsystem has the level enabled.
 * Never pass secrets to a log call. */
#ifndef GD_COMMON_LOG_H
#define GD_COMMON_LOG_H

#include <stdbool.h>

#include "common/status.h"

typedef enum gd_log_level {
    GD_LOG_ERROR = 0,
    GD_LOG_WARN = 1,
    GD_LOG_INFO = 2,
    GD_LOG_DEBUG = 3,
} gd_log_level;

typedef enum gd_log_format { GD_LOG_TEXT = 0, GD_LOG_JSON = 1 } gd_log_format;

#define GD_LOG_SUBSYSTEMS 16 /* subsystems a spec may name */
#define GD_LOG_SPEC_MAX 255  /* bytes of a spec */

/* The most verbose level any subsystem has (the macros' first test). */
extern int gd_log_threshold;

/* Every subsystem at level (a spec of one level). */
void gd_log_set_level(gd_log_level level);
/* Applies a level spec; GD_ERR_INVALID naming the part that is wrong, and
 * then nothing changes. */
gd_status gd_log_configure(const char *spec) GD_MUST_CHECK;
/* Checks a level spec without applying it. */
gd_status gd_log_spec_check(const char *spec) GD_MUST_CHECK;
/* Whether a line of level from subsystem is written. */
bool gd_log_enabled(gd_log_level level, const char *subsystem);

void gd_log_set_format(gd_log_format format);
/* "text" or "json". */
gd_status gd_log_format_parse(gd_log_format *out, const char *text) GD_MUST_CHECK;

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
