/* Log sink: one line per call, "time level subsystem: message", or one
 * JSON object per line; levels per subsystem (common/log.h). */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gd_log_threshold = GD_LOG_WARN;

static const char *const gd_log_names[] = {"error", "warn", "info", "debug"};

/* The levels in force: a default and some subsystems' own. Read by every
 * thread that logs, changed by a SIGHUP's reload: under a lock. */
typedef struct gd_log_levels {
    int fallback;
    size_t n;
    struct {
        char name[32];
        int level;
    } sub[GD_LOG_SUBSYSTEMS];
} gd_log_levels;

static gd_log_levels gd_log_config = {GD_LOG_WARN, 0, {{"", 0}}};
static gd_log_format gd_log_style = GD_LOG_TEXT;
static pthread_mutex_t gd_log_mu = PTHREAD_MUTEX_INITIALIZER;

static void gd_log_apply(const gd_log_levels *l) {
    int most = l->fallback;
    for (size_t i = 0; i < l->n; i++)
        most = l->sub[i].level > most ? l->sub[i].level : most;
    pthread_mutex_lock(&gd_log_mu);
    gd_log_config = *l;
    gd_log_threshold = most;
    pthread_mutex_unlock(&gd_log_mu);
}

gd_status gd_log_level_parse(gd_log_level *out, const char *text) {
    for (int i = 0; i < 4; i++) {
        if (strcmp(text, gd_log_names[i]) == 0) {
            *out = (gd_log_level)i;
            return GD_OK;
        }
    }
    return gd_fail(GD_ERR_INVALID, "unknown log level '%.40s' (use error, warn, info or debug)",
                   text);
}

/* "LEVEL[,SUBSYSTEM=LEVEL...]" into l. */
static gd_status gd_log_spec_parse(gd_log_levels *l, const char *spec) {
    memset(l, 0, sizeof *l);
    if (strlen(spec) > GD_LOG_SPEC_MAX)
        return gd_fail(GD_ERR_INVALID, "log level spec is over %d bytes", GD_LOG_SPEC_MAX);
    size_t len = strlen(spec);
    if (len > 0 && (spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,") != NULL))
        return gd_fail(GD_ERR_INVALID, "log level spec '%.40s' has an empty part", spec);
    char text[GD_LOG_SPEC_MAX + 1];
    snprintf(text, sizeof text, "%s", spec);
    char *save = NULL;
    bool first = true;
    for (char *part = strtok_r(text, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        gd_log_level level;
        if (first && eq == NULL) {
            GD_TRY(gd_log_level_parse(&level, part));
            l->fallback = (int)level;
        } else if (eq == NULL || eq == part || (size_t)(eq - part) >= sizeof l->sub[0].name) {
            return gd_fail(GD_ERR_INVALID,
                           "log level spec: '%.40s' is not SUBSYSTEM=LEVEL (the default level "
                           "comes first: \"info,http=debug\")",
                           part);
        } else if (l->n == GD_LOG_SUBSYSTEMS) {
            return gd_fail(GD_ERR_INVALID, "log level spec: more than %d subsystems",
                           GD_LOG_SUBSYSTEMS);
        } else {
            *eq = '\0';
            GD_TRY(gd_log_level_parse(&level, eq + 1));
            snprintf(l->sub[l->n].name, sizeof l->sub[l->n].name, "%s", part);
            l->sub[l->n++].level = (int)level;
        }
        if (first && eq != NULL)
            l->fallback = GD_LOG_WARN; /* "http=debug" alone: the rest at the default */
        first = false;
    }
    if (first)
        return gd_fail(GD_ERR_INVALID, "log level spec is empty");
    return GD_OK;
}

gd_status gd_log_spec_check(const char *spec) {
    gd_log_levels l;
    return gd_log_spec_parse(&l, spec);
}

gd_status gd_log_configure(const char *spec) {
    gd_log_levels l;
    GD_TRY(gd_log_spec_parse(&l, spec));
    gd_log_apply(&l);
    return GD_OK;
}

void gd_log_set_level(gd_log_level level) {
    gd_log_levels l = {(int)level, 0, {{"", 0}}};
    gd_log_apply(&l);
}

bool gd_log_enabled(gd_log_level level, const char *subsystem) {
    pthread_mutex_lock(&gd_log_mu);
    int at = gd_log_config.fallback;
    for (size_t i = 0; i < gd_log_config.n; i++)
        if (strcmp(gd_log_config.sub[i].name, subsystem) == 0)
            at = gd_log_config.sub[i].level;
    pthread_mutex_unlock(&gd_log_mu);
    return (int)level <= at;
}

void gd_log_set_format(gd_log_format format) {
    pthread_mutex_lock(&gd_log_mu);
    gd_log_style = format;
    pthread_mutex_unlock(&gd_log_mu);
}

gd_status gd_log_format_parse(gd_log_format *out, const char *text) {
    if (strcmp(text, "text") == 0 || strcmp(text, "json") == 0) {
        *out = text[0] == 'j' ? GD_LOG_JSON : GD_LOG_TEXT;
        return GD_OK;
    }
    return gd_fail(GD_ERR_INVALID, "unknown log format '%.40s' (use text or json)", text);
}

/* Reads GD_LOG once at startup so tunables are fixed for the process. */
__attribute__((constructor)) static void gd_log_init_from_env(void) {
    const char *env = getenv("GD_LOG");
    if (env != NULL && gd_log_configure(env) != GD_OK)
        fprintf(stderr, "GD_LOG ignored: %s\n", gd_error_detail());
}

/* text as a JSON string's body into out (cap bytes, always terminated). */
static size_t gd_log_json_escape(char *out, size_t cap, const char *text) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && n + 7 < cap; p++) {
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", *p);
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n] = '\0';
    return n;
}

void gd_log_write(gd_log_level level, const char *subsystem, const char *fmt, ...) {
    if (!gd_log_enabled(level, subsystem))
        return;
    char stamp[32], message[2048], line[4608];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&gd_log_mu);
    gd_log_format style = gd_log_style;
    pthread_mutex_unlock(&gd_log_mu);
    if (style == GD_LOG_JSON) {
        char sub[80], msg[4096];
        gd_log_json_escape(sub, sizeof sub, subsystem);
        gd_log_json_escape(msg, sizeof msg, message);
        snprintf(line, sizeof line,
                 "{\"time\":\"%s\",\"level\":\"%s\",\"subsystem\":\"%s\",\"message\":\"%s\"}\n",
                 stamp, gd_log_names[level], sub, msg);
    } else {
        snprintf(line, sizeof line, "%s %-5s %s: %s\n", stamp, gd_log_names[level], subsystem,
                 message);
    }
    /* One fputs per line keeps lines from concurrent threads whole. */
    fputs(line, stderr);
}
