/* node duties: what the round driver would do now for an address, read
 * from a node (a dry run of the daemon's decisions: nothing is sent). */
#include <stdio.h>
#include <string.h>

#include "chain/address.h"
#include "plugin/artifact_store.h"
#include "plugin/chain_reader.h"
#include "plugin/cli_util.h"
#include "plugin/round_driver.h"

/* --roles worker,validator (either or both). */
static int gd_node_roles(gd_cli *cli, gd_args *args, unsigned *roles) {
    const char *text = gd_arg(args, "roles");
    *roles = GD_NODE_WORKER | GD_NODE_VALIDATOR;
    if (text == NULL)
        return -1;
    *roles = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "worker") == 0)
            *roles |= GD_NODE_WORKER;
        else if (strcmp(t, "validator") == 0)
            *roles |= GD_NODE_VALIDATOR;
        else
            return gd_cli_usage(cli, args, "--roles wants worker, validator or both, got '%.40s'",
                                t);
    }
    if (*roles == 0 || strlen(text) >= sizeof buf)
        return gd_cli_usage(cli, args, "--roles wants worker, validator or both");
    return -1;
}

static json_t *gd_node_duty_json(const gd_action *a) {
    json_t *j = json_pack("{s:s}", "duty", gd_action_names[a->kind]);
    if (j == NULL)
        return NULL;
    if (a->kind == GD_ACT_CLAIM)
        json_object_set_new(j, "epoch", json_integer((json_int_t)a->epoch));
    else if (a->kind != GD_ACT_JOIN && a->kind != GD_ACT_LEAVE)
        json_object_set_new(j, "round", json_integer((json_int_t)a->round));
    if (a->target[0]) {
        json_object_set_new(j, "target", json_string(a->target));
        json_object_set_new(j, "check", json_integer(a->check));
    }
    return j;
}

static int gd_run_node_duties(gd_cli *cli, gd_args *args) {
    uint64_t run = 0;
    char address[GD_ADDRESS_STR_MAX];
    gd_node_config cfg = {0, false};
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, "run", UINT64_MAX, true, &run)) >= 0 ||
        (rc = gd_cli_address_opt(cli, args, "address", address, true)) >= 0 ||
        (rc = gd_node_roles(cli, args, &cfg.roles)) >= 0)
        return rc;
    gd_node_journal j;
    memset(&j, 0, sizeof j);
    const char *dir = gd_arg(args, "state-dir");
    if (dir != NULL) {
        gd_artifact_store store;
        gd_status s = gd_artifact_store_open(&store, dir);
        if (s == GD_OK)
            s = gd_journal_load(&store, &j);
        if (s != GD_OK)
            return gd_cli_fail(cli, gd_fail_context(s, "--state-dir"));
    }
    gd_rpc *rpc = NULL;
    if ((rc = gd_cli_open_rpc(cli, args, &rpc)) >= 0)
        return rc;
    gd_chain_answers ans;
    gd_chain_view_buf view;
    gd_status s = gd_chain_read_view(rpc, run, address, gd_flag(args, "sealed-next"), &ans, &view);
    gd_rpc_close(rpc);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    gd_action out[64];
    size_t n = 0;
    bool more = gd_round_driver_step(&cfg, &view.view, &j, out, 64, &n);
    const gd_chain_view *v = &view.view;
    json_t *duties = json_array();
    for (size_t i = 0; duties && i < n; i++)
        json_array_append_new(duties, gd_node_duty_json(&out[i]));
    json_t *o = json_pack("{s:I,s:s,s:b,s:o,s:b}", "height", (json_int_t)v->height, "address",
                          address, "member", (int)v->member, "duties", duties, "more",
                          (int)more);
    if (o && v->have_round) {
        json_object_set_new(o, "round", json_integer((json_int_t)v->round.index));
        json_object_set_new(o, "window",
                            json_string(gd_window_name(
                                gd_round_window_at(&v->round.windows, v->height + 1))));
    }
    gd_chain_view_free(&view);
    gd_chain_answers_free(&ans);
    if (o == NULL)
        return gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
    if (gd_flag(args, "json"))
        return gd_cli_print_json(cli, o);
    return gd_cli_print_tree(cli, o);
}

static const gd_opt_spec gd_node_duties_opts[] = {
    {"run", "N", "the run"},
    {"address", "ADDR", "the node's account address"},
    {"roles", "LIST", "worker, validator or both (default both)"},
    {"state-dir", "DIR", "the node's state directory, for its journal (default: none)"},
    {"sealed-next", NULL, "the node sealed its secret for the run's next round"},
    GD_RPC_OPTS,
    {"json", NULL, "print the answer as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_node_duties = {
    "node duties", "", 0, 0,
    "Show what a node's round driver would do now (a dry run: nothing is sent).",
    "Reads the run, its current round, the address's rewards and the epoch clock from the\n"
    "node, and the journal from --state-dir if given, and prints the duties due: those whose\n"
    "window holds the next block and that the chain does not show done.",
    gd_node_duties_opts, gd_run_node_duties,
};
