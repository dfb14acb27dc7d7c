/* The demo's child processes (plugin/demo/demo_command.c): gonka-localnet and the
 * daemons, each writing to its own log file, and stopped, every one, on
 * every way out of the demo: success, an error, or SIGINT, SIGTERM or
 * SIGHUP, which only set a flag the demo's loops read, so that the stopping
 * is done in one place, by ordinary code. A demo killed by SIGKILL stops
 * nothing itself: each child asked the kernel for SIGTERM when its parent
 * dies (only its temporary home stays behind). Also the removal of the
 * demo's temporary home once nothing writes to it. */
#ifndef GD_PLUGIN_DEMO_DEMO_PROCS_H
#define GD_PLUGIN_DEMO_DEMO_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/status.h"

#define GD_DEMO_PROCS_MAX 32
#define GD_DEMO_PATH_MAX 512

typedef struct gd_demo_proc {
    pid_t pid;   /* 0 once reaped */
    int status;  /* its wait status, once reaped */
    bool waited; /* it ended in gd_demo_wait: a step that was meant to end */
    char name[32];
    char log[GD_DEMO_PATH_MAX];
} gd_demo_proc;

typedef struct gd_demo_procs {
    gd_demo_proc p[GD_DEMO_PROCS_MAX];
    size_t n;
} gd_demo_procs;

/* Starts argv[0] (a path) with argv, stdin from /dev/null and stdout and
 * stderr appended to log; its signals at their defaults. *index (if not
 * NULL) receives its slot. */
gd_status gd_demo_spawn(gd_demo_procs *ps, const char *name, const char *log,
                        char *const argv[], size_t *index) GD_MUST_CHECK;

/* Whether child i still runs (reaping it if it ended). */
bool gd_demo_running(gd_demo_procs *ps, size_t i);

/* Waits up to timeout_ms for child i to end: GD_OK with its exit code (-1
 * if a signal ended it) and the child marked waited, GD_ERR_TIMEOUT, or
 * gd_demo_check_stop's error. */
gd_status gd_demo_wait(gd_demo_procs *ps, size_t i, long timeout_ms, int *exit_code) GD_MUST_CHECK;

/* What ended child i, as text ("exit status 1", "signal 9"). */
void gd_demo_exit_text(const gd_demo_proc *p, char *out, size_t cap);

/* SIGTERM to every running child, up to grace_ms for them to end, then
 * SIGKILL for the rest; every child is reaped when it returns. */
void gd_demo_stop_all(gd_demo_procs *ps, long grace_ms);

/* The last `lines` lines of child i's log to f, each prefixed with its name. */
void gd_demo_log_tail(const gd_demo_proc *p, FILE *f, int lines);

/* Removes dir and everything under it (not following links). */
gd_status gd_demo_remove_tree(const char *dir) GD_MUST_CHECK;

/* SIGINT, SIGTERM and SIGHUP set the stop flag while the demo runs (the
 * previous handlers are put back by gd_demo_signals_restore); SIGPIPE is
 * ignored, so a closed stdout does not end the demo before its cleanup. */
void gd_demo_signals_catch(void);
void gd_demo_signals_restore(void);
/* GD_OK, or GD_ERR_IO "stopped by SIGINT" once a stop signal came. */
gd_status gd_demo_check_stop(void) GD_MUST_CHECK;

/* Sleeps ms milliseconds, less if a stop signal comes. */
void gd_demo_sleep_ms(long ms);

#endif
