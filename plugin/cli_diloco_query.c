/* query run | round | runs | rewards | diloco-params: the DiLoCo module's
 * state (chain/diloco_query.h). --json prints the reference shapes of
 * docs/cli.md; text output is the same tree as "key: value" lines. */
#include "chain/address.h"
#include "chain/diloco_query.h"
#include "common/parse.h"
#include "plugin/cli_util.h"

/* What a query command asks for. */
typedef struct gd_dq_key {
    uint64_t run, round;
    char address[GD_ADDRESS_STR_MAX];
} gd_dq_key;

/* Runs one query and renders its (strictly decoded) answer as JSON. */
typedef gd_status (*gd_dq_fetch)(gd_rpc *rpc, const gd_dq_key *k, json_t **out);

#define GD_DQ_FETCH(name, type, call, to_json)                                                \
    static gd_status name(gd_rpc *rpc, const gd_dq_key *k, json_t **out) {                    \
        type *r = NULL;                                                                       \
        (void)k;                                                                              \
        GD_TRY(call);                                                                         \
        *out = to_json(r);                                                                    \
        protobuf_c_message_free_unpacked(&r->base, NULL);                                     \
        return GD_OK;                                                                         \
    }

GD_DQ_FETCH(gd_dq_params, Gonka__Diloco__V1__QueryParamsResponse,
            gd_diloco_query_params(rpc, &r, NULL), gd_diloco_params_json)
GD_DQ_FETCH(gd_dq_runs, Gonka__Diloco__V1__QueryRunsResponse,
            gd_diloco_query_runs(rpc, &r, NULL), gd_diloco_runs_json)
GD_DQ_FETCH(gd_dq_run, Gonka__Diloco__V1__QueryRunResponse,
            gd_diloco_query_run(rpc, k->run, &r, NULL), gd_diloco_run_json)
GD_DQ_FETCH(gd_dq_round, Gonka__Diloco__V1__QueryRoundResponse,
            gd_diloco_query_round(rpc, k->run, k->round, &r, NULL), gd_diloco_round_json)
GD_DQ_FETCH(gd_dq_rewards, Gonka__Diloco__V1__QueryRewardsResponse,
            gd_diloco_query_rewards(rpc, k->address, &r, NULL), gd_diloco_rewards_json)

/* Opens the node, queries it and prints the answer as JSON or as the tree. */
static int gd_dq_print(gd_cli *cli, gd_args *args, gd_dq_fetch fetch, const gd_dq_key *k) {
    gd_rpc *rpc = NULL;
    int rc = gd_cli_open_rpc(cli, args, &rpc);
    if (rc >= 0)
        return rc;
    json_t *j = NULL;
    gd_status s = fetch(rpc, k, &j);
    gd_rpc_close(rpc);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return gd_flag(args, "json") ? gd_cli_print_json(cli, j) : gd_cli_print_tree(cli, j);
}

/* Positional argument i as an integer. */
static int gd_dq_positional(gd_cli *cli, gd_args *args, int i, const char *name,
                            uint64_t *out) {
    if (gd_parse_u64(args->positional[i], out) != GD_OK)
        return gd_cli_usage(cli, args, "%s wants a non-negative integer, got '%.40s'", name,
                            args->positional[i]);
    return -1;
}

static int gd_run_query_diloco_params(gd_cli *cli, gd_args *args) {
    gd_dq_key k = {0};
    return gd_dq_print(cli, args, gd_dq_params, &k);
}

static int gd_run_query_runs(gd_cli *cli, gd_args *args) {
    gd_dq_key k = {0};
    return gd_dq_print(cli, args, gd_dq_runs, &k);
}

static int gd_run_query_run(gd_cli *cli, gd_args *args) {
    gd_dq_key k = {0};
    int rc = gd_dq_positional(cli, args, 0, "RUN", &k.run);
    return rc >= 0 ? rc : gd_dq_print(cli, args, gd_dq_run, &k);
}

static int gd_run_query_round(gd_cli *cli, gd_args *args) {
    gd_dq_key k = {0};
    int rc;
    if ((rc = gd_dq_positional(cli, args, 0, "RUN", &k.run)) >= 0 ||
        (rc = gd_dq_positional(cli, args, 1, "ROUND", &k.round)) >= 0)
        return rc;
    return gd_dq_print(cli, args, gd_dq_round, &k);
}

static int gd_run_query_rewards(gd_cli *cli, gd_args *args) {
    gd_dq_key k = {0};
    if (gd_address_canonical(k.address, sizeof k.address, args->positional[0]) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "ADDR"));
    return gd_dq_print(cli, args, gd_dq_rewards, &k);
}

static const gd_opt_spec gd_dq_opts[] = {
    GD_RPC_OPTS,
    {"json", NULL, "print the answer as JSON (shapes in docs/cli.md)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_query_diloco_params = {
    "query diloco-params", "", 0, 0,
    "Show the DiLoCo training module's parameters (the run-creating authority).",
    NULL, gd_dq_opts, gd_run_query_diloco_params,
};

const gd_command gd_cmd_query_runs = {
    "query runs", "", 0, 0,
    "List the DiLoCo training runs with their specs, state hashes and pools.",
    NULL, gd_dq_opts, gd_run_query_runs,
};

const gd_command gd_cmd_query_run = {
    "query run", "RUN", 1, 1,
    "Show a DiLoCo training run, its members (suspended, leaving) and its current round.",
    NULL, gd_dq_opts, gd_run_query_run,
};

const gd_command gd_cmd_query_round = {
    "query round", "RUN ROUND", 2, 2,
    "Show a round of a run: phase, windows, commitments, checks, verdicts, attestations.",
    "Also the availability reports, the check outcomes, the inclusion and aggregation sets,\n"
    "the upheld accusations, the beacon, the members' sealed and revealed secrets, the seed\n"
    "and randomness drawn from them, and the state hashes before and after the round.",
    gd_dq_opts, gd_run_query_round,
};

const gd_command gd_cmd_query_rewards = {
    "query rewards", "ADDR", 1, 1,
    "Show what runs settled to an address, per run and epoch, and whether it is claimed.",
    NULL, gd_dq_opts, gd_run_query_rewards,
};
