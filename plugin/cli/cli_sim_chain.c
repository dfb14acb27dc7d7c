/* sim --chain: the run played by members in one process (plugin/sim/sim_net.h)
 * over the training module's state machine, with the same round driver,
 * engine and duties the daemon runs: W workers and V validators join, train,
 * report, check, aggregate, attest and claim; each round's outcome, agreed
 * state hash and the eval loss of G are printed. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/diloco_spec.h"
#include "common/bytes.h"
#include "common/mem.h"
#include "common/parse.h"
#include "plugin/cli/cli_sim_chain.h"
#include "plugin/cli/cli_util.h"
#include "plugin/member/round_driver.h"
#include "plugin/sim/sim_net.h"

/* Incentive knobs a run of a few members can meet: one validator per check,
 * one re-checker, a class as small as the members; windows of a few blocks
 * (the members step once per block, in one process). */
static gd_status gd_sim_chain_spec(json_t *j) {
    json_t *w = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "train", 2, "commit", 2,
                          "reveal", 2, "verify", 2, "open", 2, "dispute", 2, "dispute_open", 2,
                          "attest", 2, "attest_open", 2);
    if (w == NULL || json_object_set_new(j, "windows", w) != 0 ||
        json_object_set_new(j, "double_check_ppm", json_integer(0)) != 0 ||
        json_object_set_new(j, "recheck_validators", json_integer(1)) != 0 ||
        json_object_set_new(j, "checks_per_commit", json_integer(2)) != 0 ||
        /* 1 + one validator + one re-checker: the least the spec check allows */
        json_object_set_new(j, "min_class_members", json_integer(3)) != 0 ||
        json_object_set_new(j, "hw_classes", json_pack("[s]", "sim")) != 0)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    GD_TRY(gd_diloco_spec_from_json(&spec, j));
    gd_diloco_spec_free(spec);
    return GD_OK;
}

typedef struct gd_sim_chain_round {
    uint64_t round;
    const char *phase;
    size_t commitments, aggregated, checks_passed;
    char state_hash[65];
    double eval;
} gd_sim_chain_round;

static gd_status gd_sim_chain_outcome(gd_sim_net *net, gd_sim_chain_round *out, uint64_t r) {
    Gonka__Diloco__V1__QueryRoundResponse *q = NULL;
    GD_TRY(gd_sim_net_round(net, &q, r));
    memset(out, 0, sizeof *out);
    out->round = r;
    bool done = q->round->phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE;
    out->phase = done ? "done" : "void";
    out->commitments = q->n_commitments;
    out->aggregated = q->round->n_aggregation_set;
    for (size_t i = 0; i < q->n_assignments; i++)
        out->checks_passed +=
            q->assignments[i]->outcome == GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_PASSED;
    if (q->round->next_state_hash.len == 32)
        gd_hex_encode(out->state_hash, q->round->next_state_hash.data, 32, false);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    out->eval = gd_member_eval_loss(gd_sim_net_member(net, 0), 8);
    return GD_OK;
}

int gd_sim_chain_run(gd_cli *cli, gd_args *args, const Gonka__Diloco__V1__RunSpec *spec,
                     uint32_t workers, uint32_t rounds, int threads) {
    uint64_t validators = 1;
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &validators, "validators", GD_SIM_NET_MAX, false)) !=
        GD_CLI_CONTINUE)
        return rc;
    const char *budget_text = gd_arg(args, "memory-budget");
    uint64_t budget = 0;
    if (budget_text != NULL && strcmp(budget_text, "0") != 0 &&
        gd_parse_size(&budget, budget_text) != GD_OK)
        return gd_cli_usage(cli, args, "--memory-budget: %s", gd_error_detail());
    uint32_t members = workers + (uint32_t)validators;
    if (members < 3 || members > GD_SIM_NET_MAX)
        return gd_cli_usage(cli, args, "--chain needs 3 to %d members (workers + validators)",
                            GD_SIM_NET_MAX);
    json_t *j = gd_diloco_spec_to_json(spec);
    gd_status s = j ? gd_sim_chain_spec(j) : gd_fail(GD_ERR_NOMEM, "out of memory");
    unsigned roles[GD_SIM_NET_MAX];
    for (uint32_t i = 0; i < members; i++)
        roles[i] = i < workers ? GD_ROLE_WORKER : GD_ROLE_VALIDATOR;
    char dir[] = "/tmp/gd-sim-chain-XXXXXX";
    if (s == GD_OK && mkdtemp(dir) == NULL)
        s = gd_fail(GD_ERR_IO, "cannot create a state directory under /tmp");
    const char *collateral = json_string_value(json_object_get(j, "min_collateral"));
    gd_sim_net *net = NULL;
    if (s == GD_OK)
        s = gd_sim_net_open(&net, j, members, roles, collateral, dir, threads);
    for (uint32_t i = 0; s == GD_OK && i < members; i++)
        gd_member_set_memory_budget(gd_sim_net_member(net, i), budget);
    json_decref(j);
    bool json = gd_flag(args, "json");
    json_t *out = json ? json_array() : NULL;
    size_t refused_total = 0;
    uint64_t next = 0;
    /* Blocks until `rounds` rounds are over, at most 200 blocks a round. */
    for (uint64_t b = 0; s == GD_OK && next < rounds && b < 200ull * (rounds + 1); b++) {
        size_t refused = 0;
        s = gd_sim_net_block(net, &refused);
        refused_total += refused;
        uint64_t cur = 0;
        if (s != GD_OK || !gd_sim_net_current_round(net, &cur) || cur <= next)
            continue;
        gd_sim_chain_round o;
        s = gd_sim_chain_outcome(net, &o, next);
        if (s != GD_OK)
            break;
        if (json)
            json_array_append_new(out, json_pack("{s:I,s:s,s:I,s:I,s:I,s:s,s:o}", "round",
                                                 (json_int_t)o.round, "phase", o.phase,
                                                 "commitments", (json_int_t)o.commitments,
                                                 "aggregated", (json_int_t)o.aggregated,
                                                 "checks_passed", (json_int_t)o.checks_passed,
                                                 "state_hash", o.state_hash,
                                                 "eval_loss", isfinite(o.eval) ? json_real(o.eval)
                                                                               : json_null()));
        else
            fprintf(cli->out,
                    "round %3" PRIu64 "  %s  commitments %zu  aggregated %zu  checks passed %zu  "
                    "eval %.4f  state %.16s\n",
                    o.round, o.phase, o.commitments, o.aggregated, o.checks_passed, o.eval,
                    o.state_hash);
        fflush(cli->out); /* a log of a killed run holds every round it finished */
        next++;
    }
    if (s == GD_OK && next < rounds)
        s = gd_fail(GD_ERR_INVALID, "only %" PRIu64 " of %u rounds ended", next, rounds);
    gd_sim_net_close(net);
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (strncmp(dir, "/tmp/gd-sim-chain-", 18) == 0 && system(cmd) != 0)
        fprintf(cli->err, "warning: could not remove %s\n", dir);
    if (s != GD_OK) {
        json_decref(out);
        return gd_cli_fail(cli, s);
    }
    if (json)
        return gd_cli_print_json(
            cli, json_pack("{s:o,s:I,s:I}", "rounds", out, "refused", (json_int_t)refused_total,
                           "peak_rss_bytes", (json_int_t)gd_mem_peak_bytes()));
    fprintf(cli->out, "%u workers, %u validators; %zu transactions refused\n", workers,
            (unsigned)validators, refused_total);
    return refused_total == 0 ? GD_EXIT_OK : GD_EXIT_FAIL;
}
