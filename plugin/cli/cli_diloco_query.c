/* query run | round | runs | rewards | diloco-params: the DiLoCo module's
 * state (chain/client/diloco_query.h). --json prints the reference shapes of
 * docs/cli.md; text output is the same tree as "key: value" lines, with
 * the denom after every amount. */
#include <string.h>
#include <time.h>

#include "chain/client/diloco_query.h"
#include "chain/keys/address.h"
#include "common/clock.h"
#include "common/parse.h"
#include "plugin/cli/cli_query_denoms.h"
#include "plugin/cli/cli_round_hint.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "plugin/member/round_driver.h"

/* What a query command asks for. */
typedef struct gd_dq_key {
    uint64_t run, round;
    char address[GD_ADDRESS_STR_MAX];
    int want;     /* query round --wait-window: a gd_window */
    long wait_ms; /* and how long at most */
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
            gd_diloco_query_run(rpc, &r, k->run, NULL), gd_diloco_run_json)
/* A round that does not exist (yet) gets the hint of when it will. */
static gd_status gd_dq_round(gd_rpc *rpc, const gd_dq_key *k, json_t **out) {
    Gonka__Diloco__V1__QueryRoundResponse *r = NULL;
    gd_query_error err;
    memset(&err, 0, sizeof err);
    gd_status s = gd_diloco_query_round(rpc, &r, k->run, k->round, &err);
    if (s != GD_OK && gd_cli_is_unknown_round(&err.abci)) {
        char detail[1024], hint[1024];
        snprintf(detail, sizeof detail, "%s", gd_error_detail());
        gd_cli_round_hint(rpc, hint, sizeof hint, k->run, k->round);
        return hint[0] ? gd_fail(s, "%s: %s", detail, hint) : gd_fail(s, "%s", detail);
    }
    GD_TRY(s);
    *out = gd_diloco_round_json(r);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return GD_OK;
}
GD_DQ_FETCH(gd_dq_rewards, Gonka__Diloco__V1__QueryRewardsResponse,
            gd_diloco_query_rewards(rpc, &r, k->address, NULL), gd_diloco_rewards_json)

/* Opens the node, queries it and prints the answer as JSON or as the tree. */
static int gd_dq_print(gd_cli *cli, gd_args *args, gd_dq_fetch fetch, const gd_dq_key *k) {
    gd_rpc *rpc = NULL;
    int rc = gd_cli_open_rpc(cli, args, &rpc);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    json_t *j = NULL;
    bool json = gd_flag(args, "json");
    gd_status s = fetch(rpc, k, &j);
    if (s == GD_OK && j != NULL && !json)
        s = gd_cli_name_denoms(rpc, k->run, j);
    gd_rpc_close(rpc);
    if (s != GD_OK) {
        json_decref(j);
        return gd_cli_fail(cli, s);
    }
    return json ? gd_cli_print_json(cli, j) : gd_cli_print_tree(cli, j);
}

/* Positional argument i as an integer. */
static int gd_dq_positional(gd_cli *cli, gd_args *args, uint64_t *out, int i,
                            const char *name) {
    if (gd_parse_u64(out, args->positional[i]) != GD_OK)
        return gd_cli_usage(cli, args, "%s wants a non-negative integer, got '%.40s'", name,
                            args->positional[i]);
    return GD_CLI_CONTINUE;
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
    int rc = gd_dq_positional(cli, args, &k.run, 0, "RUN");
    return rc != GD_CLI_CONTINUE ? rc : gd_dq_print(cli, args, gd_dq_run, &k);
}

/* --wait-window NAME: the window's index, or GD_WINDOW_NONE if not one. */
static gd_window gd_dq_window_named(const char *name) {
    for (int w = GD_WINDOW_TRAIN; w < GD_WINDOW_OVER; w++)
        if (strcmp(gd_window_name((gd_window)w), name) == 0)
            return (gd_window)w;
    return GD_WINDOW_NONE;
}

/* The window the next block falls in, from a round answer's JSON: what a
 * transaction sent now is delivered in. */
static gd_window gd_dq_next_window(const json_t *j) {
    const json_t *w = json_object_get(json_object_get(j, "round"), "windows");
    gd_round_windows rw = {
        json_integer_value(json_object_get(w, "train_start")),
        json_integer_value(json_object_get(w, "commit_start")),
        json_integer_value(json_object_get(w, "reveal_start")),
        json_integer_value(json_object_get(w, "verify_start")),
        json_integer_value(json_object_get(w, "open_start")),
        json_integer_value(json_object_get(w, "dispute_start")),
        json_integer_value(json_object_get(w, "dispute_open_start")),
        json_integer_value(json_object_get(w, "attest_start")),
        json_integer_value(json_object_get(w, "attest_open_start")),
        json_integer_value(json_object_get(w, "end"))};
    return gd_round_window_at(&rw, json_integer_value(json_object_get(j, "height")) + 1);
}

#define GD_DQ_POLL_MS 100

/* Polls the round until the next block falls in window `want`, then
 * answers as a plain query round does. A round that has not opened is
 * waited for; one past the window is an error. */
static gd_status gd_dq_wait_round(gd_rpc *rpc, const gd_dq_key *k, json_t **out,
                                  gd_window want, long timeout_ms) {
    double deadline = gd_clock_seconds() + (double)timeout_ms / 1e3;
    for (;;) {
        json_t *j = NULL;
        gd_query_error err;
        memset(&err, 0, sizeof err);
        Gonka__Diloco__V1__QueryRoundResponse *r = NULL;
        gd_status s = gd_diloco_query_round(rpc, &r, k->run, k->round, &err);
        bool not_yet = s != GD_OK && gd_cli_is_unknown_round(&err.abci);
        if (s != GD_OK && !not_yet)
            return s;
        if (s == GD_OK) {
            j = gd_diloco_round_json(r);
            protobuf_c_message_free_unpacked(&r->base, NULL);
            if (j == NULL)
                return gd_fail(GD_ERR_NOMEM, "out of memory");
            gd_window at = gd_dq_next_window(j);
            if (at == want) {
                *out = j;
                return GD_OK;
            }
            json_decref(j);
            if (at > want)
                return gd_fail(GD_ERR_LIMIT,
                               "round %llu of run %llu is past its %s window (the next block "
                               "is in its %s window)",
                               (unsigned long long)k->round, (unsigned long long)k->run,
                               gd_window_name(want), gd_window_name(at));
        }
        if (gd_clock_seconds() > deadline) {
            if (not_yet)
                return gd_dq_round(rpc, k, out); /* the error, with its hint */
            return gd_fail(GD_ERR_TIMEOUT, "round %llu of run %llu did not reach its %s window "
                                           "in %ld ms",
                           (unsigned long long)k->round, (unsigned long long)k->run,
                           gd_window_name(want), timeout_ms);
        }
        gd_error_clear();
        struct timespec ts = {0, GD_DQ_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static gd_status gd_dq_round_waited(gd_rpc *rpc, const gd_dq_key *k, json_t **out) {
    return gd_dq_wait_round(rpc, k, out, (gd_window)k->want, k->wait_ms);
}

static int gd_run_query_round(gd_cli *cli, gd_args *args) {
    gd_dq_key k = {0};
    int rc;
    if ((rc = gd_dq_positional(cli, args, &k.run, 0, "RUN")) != GD_CLI_CONTINUE ||
        (rc = gd_dq_positional(cli, args, &k.round, 1, "ROUND")) != GD_CLI_CONTINUE)
        return rc;
    const char *name = gd_arg(args, "wait-window");
    if (name == NULL)
        return gd_dq_print(cli, args, gd_dq_round, &k);
    k.want = (int)gd_dq_window_named(name);
    if (k.want == GD_WINDOW_NONE)
        return gd_cli_usage(cli, args, "--wait-window is one of train, commit, reveal, verify, "
                                       "open, dispute, dispute_open, attest, attest_open; got "
                                       "'%.40s'",
                            name);
    k.wait_ms = 300000;
    if ((rc = gd_cli_duration_opt(cli, args, "wait-timeout", &k.wait_ms)) != GD_CLI_CONTINUE)
        return rc;
    return gd_dq_print(cli, args, gd_dq_round_waited, &k);
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

static const gd_opt_spec gd_dq_round_opts[] = {
    GD_RPC_OPTS,
    {"json", NULL, "print the answer as JSON (shapes in docs/cli.md)"},
    {"wait-window", "NAME", "first wait until the round is open and the next block is in its "
                            "window NAME (train, commit, ..., attest_open)"},
    {"wait-timeout", "DURATION", "with --wait-window: the longest wait (default 5m)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_query_round = {
    "query round", "RUN ROUND", 2, 2,
    "Show a round of a run: phase, windows, commitments, checks, verdicts, attestations.",
    "Also the availability reports, the check outcomes, the inclusion and aggregation sets,\n"
    "the upheld accusations, the beacon, the members' sealed and revealed secrets, the seed\n"
    "and randomness drawn from them, and the state hashes before and after the round.\n"
    "A round that has not opened is an error that says when it can open and what it\n"
    "waits for; --wait-window waits for it instead.",
    gd_dq_round_opts, gd_run_query_round,
};

const gd_command gd_cmd_query_rewards = {
    "query rewards", "ADDR", 1, 1,
    "Show what runs settled to an address, per run and epoch, and whether it is claimed.",
    NULL, gd_dq_opts, gd_run_query_rewards,
};
