/* gonka-diloco node check: whether this host can take part in its run, one
 * line per check with a fix (plugin/cli/cli_preflight.h). */
#include <stdio.h>
#include <string.h>

#include "plugin/cli/cli.h"
#include "plugin/cli/cli_preflight.h"
#include "plugin/cli/cli_util.h"

static const char *const gd_check_words[3] = {"ok", "warn", "FAIL"};

static int gd_run_node_check(gd_cli *cli, gd_args *args) {
    const char *path = gd_arg(args, "config");
    if (path == NULL)
        return gd_cli_usage(cli, args, "--config DIR/node.yaml is required");
    static gd_member_settings s;
    gd_status st = gd_member_settings_load(&s, path);
    if (st != GD_OK)
        return gd_cli_fail(cli, st);
    static gd_preflight p;
    gd_preflight_host(&p, &s, false);
    size_t fails = 0;
    for (size_t i = 0; i < p.n; i++)
        fails += p.checks[i].level == GD_CHECK_FAIL;
    if (gd_flag(args, "json")) {
        json_t *checks = json_array();
        for (size_t i = 0; i < p.n; i++) {
            const gd_preflight_check *c = &p.checks[i];
            json_array_append_new(checks,
                                  json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", c->name, "status",
                                            gd_check_words[c->level], "detail", c->detail, "fix",
                                            c->fix, "heals", c->heals));
        }
        int rc = gd_cli_print_json(cli, json_pack("{s:b,s:o}", "ok", fails == 0, "checks", checks));
        return rc != 0 ? rc : fails ? GD_EXIT_FAIL : GD_EXIT_OK;
    }
    for (size_t i = 0; i < p.n; i++) {
        const gd_preflight_check *c = &p.checks[i];
        fprintf(cli->out, "%-4s %-10s %s%s%s\n", gd_check_words[c->level], c->name, c->detail,
                c->fix[0] ? "; fix: " : "", c->fix);
    }
    fprintf(cli->out, fails ? "%zu check%s failed\n" : "this host can take part in run %zu\n",
            fails ? fails : (size_t)s.run, fails == 1 ? "" : "s");
    return fails ? GD_EXIT_FAIL : GD_EXIT_OK;
}

static const gd_opt_spec gd_node_check_opts[] = {
    {"config", "FILE", "the node's node.yaml"},
    {"json", NULL, "print {\"ok\", \"checks\": [{\"name\", \"status\", \"detail\", \"fix\", \"heals\"}]}"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_node_check = {
    "node check", "", 0, 0,
    "Check whether this host can take part in its run, one line per check with a fix.",
    "Checks the key file, state_dir (writable, lockable, room for the run's rounds), the\n"
    "listen address, the backend, the chain (reachable, its id, the clock against its last\n"
    "block), the run (it exists and has room, takes this hardware class, how many members\n"
    "the class has), the collateral against the run's minimum, the balance against it and\n"
    "the fees, and, beside a running daemon, that public_url answers. Exit 0 when nothing\n"
    "failed, 1 otherwise. `run` makes the same checks before its first transaction.",
    gd_node_check_opts, gd_run_node_check,
};
