/* gonka-diloco run: the daemon, a thin host of libgonka_diloco
 * (plugin/include/gonka_diloco.h) that steps until SIGINT or SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "plugin/cli/cli.h"
#include "plugin/cli/cli_util.h"
#include "plugin/include/gonka_diloco.h"

static volatile int gd_run_stop;

static void gd_run_on_signal(int sig) {
    (void)sig;
    gd_run_stop = 1;
}

static int gd_run_exit(gd_cli *cli, int rc, const char *why) {
    fprintf(cli->err, "error: %s\n", why);
    return rc == GONKA_DILOCO_ERR_CONFIG ? GD_EXIT_USAGE : GD_EXIT_FAIL;
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
    char why[1024] = "";
    gonka_diloco *h = NULL;
    if ((rc = gonka_diloco_open(config, &h, why, sizeof why)) != GONKA_DILOCO_OK)
        return gd_run_exit(cli, rc, why);
    fprintf(cli->out, "listening on %s\n", gonka_diloco_listen_address(h));
    fflush(cli->out);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = gd_run_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (steps > 0) {
        for (uint64_t i = 0; i < steps && rc == GONKA_DILOCO_OK && !gd_run_stop; i++)
            rc = gonka_diloco_step(h, why, sizeof why);
    } else {
        rc = gonka_diloco_run(h, &gd_run_stop, (unsigned)poll, why, sizeof why);
    }
    gonka_diloco_close(h);
    return rc == GONKA_DILOCO_OK ? GD_EXIT_OK : gd_run_exit(cli, rc, why);
}

static const gd_opt_spec gd_run_opts[] = {
    {"config", "FILE", "the node's node.yaml (gonka-diloco node init writes one)"},
    {"poll-ms", "MS", "how often to read the chain (default 250)"},
    {"steps", "N", "take N steps and exit (0, the default: run until SIGINT or SIGTERM)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_run = {
    "run", "", 0, 0,
    "Run the node: follow the chain and do every duty of its roles, serving its artifacts.",
    "Joins the run if it is not a member (bonding `collateral`), trains each round from the\n"
    "agreed G, commits once its payload is durable, reports, checks, aggregates, attests and\n"
    "claims; serves /v1/status, /metrics and its artifacts on `listen`. A chain outage is\n"
    "retried with backoff; SIGINT or SIGTERM stops it cleanly (docs/node.md).",
    gd_run_opts, gd_run_daemon,
};
