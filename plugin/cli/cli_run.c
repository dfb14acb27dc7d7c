/* gonka-diloco run: the daemon, a thin host of libgonka_diloco
 * (plugin/include/gonka_diloco.h) that steps until SIGINT or SIGTERM. A
 * SIGHUP re-reads node.yaml's log_level, and says which other keys changed
 * (they take a restart); it never stops the daemon. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "plugin/cli/cli.h"
#include "plugin/cli/cli_preflight.h"
#include "plugin/cli/cli_util.h"
#include "plugin/include/gonka_diloco.h"
#include "plugin/member/member_settings.h"

static volatile int gd_run_stop;

static void gd_run_on_signal(int sig) {
    (void)sig;
    gd_run_stop = 1;
}

/* SIGHUP's handler only writes a byte to a pipe (async-signal-safe, and
 * whichever thread the signal lands on: OpenBLAS starts threads of its own
 * before main); a thread reads it, where reading a file and logging are
 * safe. */
typedef struct gd_run_hup {
    const char *config;
    gd_member_settings at_start;
    volatile int quit;
    pthread_t thread;
    bool started;
    struct sigaction was; /* the caller's SIGHUP action, restored at stop */
    bool loaded;          /* at_start holds node.yaml as the daemon starts with it */
} gd_run_hup;

static int gd_run_hup_pipe[2] = {-1, -1};

static void gd_run_on_hup_signal(int sig) {
    (void)sig;
    char c = 1;
    ssize_t n = write(gd_run_hup_pipe[1], &c, 1); /* a full pipe: a SIGHUP is pending anyway */
    (void)n;
}

/* The keys whose lines differ between two settings, as node init writes them. */
static void gd_run_changed_keys(char *out, size_t cap, const gd_member_settings *a,
                                const gd_member_settings *b) {
    static char ta[16384], tb[16384];
    out[0] = '\0';
    if (gd_member_settings_format(a, ta, sizeof ta) != GD_OK ||
        gd_member_settings_format(b, tb, sizeof tb) != GD_OK)
        return;
    char *sa = NULL, *sb = NULL;
    char *la = strtok_r(ta, "\n", &sa), *lb = strtok_r(tb, "\n", &sb);
    for (; la && lb; la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb)) {
        while (*la == ' ')
            la++;
        if (strcmp(la, lb + strspn(lb, " ")) == 0 || la[0] == '#' ||
            strncmp(la, "log_level:", 10) == 0 || strncmp(la, "log_format:", 11) == 0)
            continue;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%.*s", n ? ", " : "", (int)strcspn(la, ":"), la);
    }
}

static void gd_run_reload(gd_run_hup *hup) {
    static gd_member_settings now;
    gd_log_format format;
    if (gd_member_settings_load(&now, hup->config) != GD_OK ||
        gd_log_format_parse(&format, now.log_format) != GD_OK ||
        gd_log_configure(now.log_level) != GD_OK) {
        GD_LOG_WARN("run", "SIGHUP: %s not re-read, nothing changed: %s", hup->config,
                    gd_error_detail());
        return;
    }
    gd_log_set_format(format);
    bool same = strcmp(now.log_level, hup->at_start.log_level) == 0 &&
                strcmp(now.log_format, hup->at_start.log_format) == 0;
    char changed[1024];
    gd_run_changed_keys(changed, sizeof changed, &hup->at_start, &now);
    GD_LOG_WARN("run", "SIGHUP: log_level %s%s%s%s%s%s", hup->at_start.log_level,
                same ? " (unchanged)" : " -> ", same ? "" : now.log_level,
                same ? "" : ", log_format ", same ? "" : now.log_format,
                changed[0] ? "" : "; nothing else changed");
    if (changed[0])
        GD_LOG_WARN("run", "SIGHUP: %s changed in %s: restart the daemon to apply", changed,
                    hup->config);
    snprintf(hup->at_start.log_level, sizeof hup->at_start.log_level, "%s", now.log_level);
    snprintf(hup->at_start.log_format, sizeof hup->at_start.log_format, "%s", now.log_format);
}

static void *gd_run_hup_loop(void *arg) {
    gd_run_hup *hup = arg;
    for (;;) {
        char c;
        ssize_t n = read(gd_run_hup_pipe[0], &c, 1);
        if (hup->quit)
            return NULL;
        if (n == 1)
            gd_run_reload(hup);
    }
}

static void gd_run_hup_start(gd_run_hup *hup, const char *config) {
    memset(hup, 0, sizeof *hup);
    hup->config = config;
    hup->loaded = gd_member_settings_load(&hup->at_start, config) == GD_OK;
    if (!hup->loaded || pipe2(gd_run_hup_pipe, O_CLOEXEC) != 0)
        return;
    hup->started = pthread_create(&hup->thread, NULL, gd_run_hup_loop, hup) == 0;
    if (!hup->started) {
        close(gd_run_hup_pipe[0]);
        close(gd_run_hup_pipe[1]);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = gd_run_on_hup_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &sa, &hup->was);
}

static void gd_run_hup_stop(gd_run_hup *hup) {
    if (!hup->started)
        return;
    sigaction(SIGHUP, &hup->was, NULL);
    hup->quit = 1;
    char c = 0;
    ssize_t n = write(gd_run_hup_pipe[1], &c, 1);
    (void)n;
    pthread_join(hup->thread, NULL);
    close(gd_run_hup_pipe[0]);
    close(gd_run_hup_pipe[1]);
    gd_run_hup_pipe[0] = gd_run_hup_pipe[1] = -1;
}

/* node check's checks before the first transaction: what fails and will
 * not pass by itself stops the daemon now (a wrong chain id, key, class or
 * collateral, a state_dir in use or not writable, a taken address); the
 * rest is logged, and the daemon waits it out as before. */
static int gd_run_preflight(gd_cli *cli, const gd_member_settings *s) {
    static gd_preflight p;
    gd_preflight_host(&p, s, true);
    const gd_preflight_check *stop = NULL;
    for (size_t i = 0; i < p.n; i++) {
        const gd_preflight_check *c = &p.checks[i];
        if (c->level == GD_CHECK_OK)
            continue;
        if (c->level == GD_CHECK_FAIL && !c->heals && stop == NULL)
            stop = c;
        GD_LOG_WARN("preflight", "%s %s: %s%s%s", c->level == GD_CHECK_FAIL ? "FAIL" : "warn",
                    c->name, c->detail, c->fix[0] ? "; fix: " : "", c->fix);
    }
    if (stop == NULL)
        return GD_CLI_CONTINUE;
    fprintf(cli->err, "error: %s: %s%s%s (gonka-diloco node check --config says the rest)\n",
            stop->name, stop->detail, stop->fix[0] ? "; fix: " : "", stop->fix);
    return GD_EXIT_STOPPED;
}

/* 2: the config is wrong; 3: stopped for what a restart does not cure (the
 * key, the member removed or its join refused, another chain): the
 * systemd unit restarts on neither; 1: the rest (a restart may cure it). */
static int gd_run_exit(gd_cli *cli, int rc, const char *why) {
    fprintf(cli->err, "error: %s\n", why);
    return rc == GONKA_DILOCO_ERR_CONFIG                                     ? GD_EXIT_USAGE
           : rc == GONKA_DILOCO_ERR_KEY || rc == GONKA_DILOCO_ERR_INVALID ? GD_EXIT_STOPPED
                                                                            : GD_EXIT_FAIL;
}

/* Sleeps ms, in slices, so that SIGINT or SIGTERM ends it at once. */
static void gd_run_sleep_ms(unsigned ms) {
    while (ms > 0 && !gd_run_stop) {
        unsigned slice = ms < 100 ? ms : 100;
        struct timespec ts = {0, (long)slice * 1000000L};
        nanosleep(&ts, NULL);
        ms -= slice;
    }
}

static int gd_run_daemon(gd_cli *cli, gd_args *args) {
    const char *config = gd_arg(args, "config");
    if (config == NULL)
        return gd_cli_usage(cli, args, "--config FILE is required");
    uint64_t poll = 250, steps = 0;
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &poll, "poll-ms", 60000, false)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &steps, "steps", UINT32_MAX, false)) != GD_CLI_CONTINUE)
        return rc;
    const char *budget_text = gd_arg(args, "memory-budget");
    uint64_t budget = 0;
    if (budget_text != NULL && strcmp(budget_text, "0") != 0 &&
        gd_parse_size(&budget, budget_text) != GD_OK)
        return gd_cli_usage(cli, args, "--memory-budget: %s", gd_error_detail());
    char why[1024] = "";
    gonka_diloco *h = NULL;
    static gd_run_hup hup;
    gd_run_hup_start(&hup, config);
    if (hup.loaded && (rc = gd_run_preflight(cli, &hup.at_start)) != GD_CLI_CONTINUE) {
        gd_run_hup_stop(&hup);
        return rc;
    }
    if ((rc = gonka_diloco_open(config, &h, why, sizeof why)) != GONKA_DILOCO_OK) {
        gd_run_hup_stop(&hup);
        return gd_run_exit(cli, rc, why);
    }
    if (budget_text != NULL)
        (void)gonka_diloco_set_memory_budget(h, budget);
    fprintf(cli->out, "listening on %s\n", gonka_diloco_listen_address(h));
    fflush(cli->out);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = gd_run_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (steps > 0) {
        /* One step a poll, as run's loop takes them: a step does what the
         * chain's newest block made due, so N steps back to back would
         * mostly see the same block and do nothing. */
        for (uint64_t i = 0; i < steps && rc == GONKA_DILOCO_OK && !gd_run_stop; i++) {
            if (i > 0)
                gd_run_sleep_ms((unsigned)poll);
            rc = gonka_diloco_step(h, why, sizeof why);
        }
    } else {
        rc = gonka_diloco_run(h, &gd_run_stop, (unsigned)poll, why, sizeof why);
    }
    gonka_diloco_close(h);
    gd_run_hup_stop(&hup);
    return rc == GONKA_DILOCO_OK ? GD_EXIT_OK : gd_run_exit(cli, rc, why);
}

static const gd_opt_spec gd_run_opts[] = {
    {"config", "FILE", "the node's node.yaml (gonka-diloco node init writes one)"},
    {"poll-ms", "MS", "how often to read the chain (default 250)"},
    {"memory-budget", "SIZE", "host memory a round may use beside the trainer's (512M, 64G; 0: "
                              "no limit), in place of node.yaml's memory_budget"},
    {"steps", "N", "take N steps, one a poll, and exit (0, the default: run until SIGINT or SIGTERM)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_run = {
    "run", "", 0, 0,
    "Run the node: follow the chain and do every duty of its roles, serving its artifacts.",
    "Joins the run if it is not a member (bonding `collateral`), trains each round from the\n"
    "agreed G, commits once its payload is durable, reports, checks, aggregates, attests and\n"
    "claims; serves /v1/status, /metrics and its artifacts on `listen`. A chain outage is\n"
    "retried with backoff; SIGINT or SIGTERM stops it cleanly; SIGHUP re-reads log_level\n"
    "(docs/node.md).",
    gd_run_opts, gd_run_daemon,
};
