/* Whether this host can take part in its run as node.yaml configures it:
 * the checks of `gonka-diloco node check`, one line each with a fix, which
 * `run` also makes before it sends any transaction (docs/node.md). */
#ifndef GD_PLUGIN_CLI_CLI_PREFLIGHT_H
#define GD_PLUGIN_CLI_CLI_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "plugin/member/member_settings.h"

typedef enum gd_check_level { GD_CHECK_OK, GD_CHECK_WARN, GD_CHECK_FAIL } gd_check_level;

typedef struct gd_preflight_check {
    const char *name;     /* key, state_dir, listen, backend, chain, clock, run, ... */
    gd_check_level level;
    bool heals;           /* a failure that may pass later by itself (the chain is down, the
                           * run not created yet, the account not funded yet) */
    char detail[320];
    char fix[240];        /* empty when there is nothing to do */
} gd_preflight_check;

#define GD_PREFLIGHT_MAX 16

typedef struct gd_preflight {
    gd_preflight_check checks[GD_PREFLIGHT_MAX];
    size_t n;
} gd_preflight;

/* Runs every check on the host of settings s. for_run: `run` before its
 * first transaction (state_dir's lock must be free). Otherwise (`node
 * check`) a daemon holding the lock is expected: then its listen address
 * being taken is too, and public_url must answer. */
void gd_preflight_host(gd_preflight *out, const gd_member_settings *s, bool for_run);

/* Whether a check failed that will not pass by itself: `run` stops on it. */
bool gd_preflight_blocks(const gd_preflight *p);

#endif
