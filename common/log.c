/* Log sink: one line per call, "time level subsystem: message". */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gd_log_threshold = GD_LOG_WARN;

static const char *const gd_log_names[] = {"error", "warn", "info", "debug"};

/* Reads GD_LOG once at startup so tunables are fixed for the process. */
__attribute__((constructor)) static void gd_log_init_from_env(void) {
    const char *env = getenv("GD_LOG");
    gd_log_level level;
    if (env != NULL && gd_log_level_parse(&level, env) == GD_OK)
        gd_log_threshold = (int)level;
}

void gd_log_set_level(gd_log_level level) { gd_log_threshold = (int)level; }

gd_status gd_log_level_parse(gd_log_level *out, const char *text) {
    for (int i = 0; i < 4; i++) {
        if (strcmp(text, gd_log_names[i]) == 0) {
            *out = (gd_log_level)i;
            return GD_OK;
        }
    }
    return gd_fail(GD_ERR_INVALID, "unknown log level '%s' (use error, warn, info or debug)", text);
}

void gd_log_write(gd_log_level level, const char *subsystem, const char *fmt, ...) {
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s: ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, gd_log_names[level], subsystem);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* One fputs per line keeps lines from concurrent threads whole. */
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len] = '\n';
        line[len + 1] = '\0';
    }
    fputs(line, stderr);
}
