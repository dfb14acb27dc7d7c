/* query account | balance | epoch, status, epoch-clock. */
#include <string.h>

#include "chain/client/query.h"
#include "common/parse.h"
#include "plugin/cli/cli_util.h"

static int gd_run_query_account(gd_cli *cli, gd_args *args) {
    const char *address = args->positional[0];
    if (gd_address_check(address) != GD_OK)
        return gd_cli_fail(cli, GD_ERR_INVALID);
    gd_rpc *rpc = NULL;
    int rc = gd_cli_open_rpc(cli, args, &rpc);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_account_info acc;
    gd_status s = gd_query_account_info(rpc, &acc, address, NULL);
    gd_rpc_close(rpc);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    char pubkey[2 * GD_PUBKEY_LEN + 1] = "";
    if (acc.has_pubkey)
        gd_hex_encode(pubkey, acc.pubkey, GD_PUBKEY_LEN, false);
    if (gd_flag(args, "json"))
        return gd_cli_print_json(
            cli, json_pack("{s:s,s:I,s:I,s:o}", "address", acc.address, "account_number",
                           (json_int_t)acc.account_number, "sequence", (json_int_t)acc.sequence,
                           "pubkey", acc.has_pubkey ? json_string(pubkey) : json_null()));
    fprintf(cli->out, "address:        %s\naccount_number: %llu\nsequence:       %llu\npubkey:   "
                      "      %s\n",
            acc.address, (unsigned long long)acc.account_number,
            (unsigned long long)acc.sequence, acc.has_pubkey ? pubkey : "(none on chain yet)");
    return GD_EXIT_OK;
}

static int gd_run_query_balance(gd_cli *cli, gd_args *args) {
    const char *address = args->positional[0];
    const char *denom = gd_arg(args, "denom");
    if (denom == NULL)
        denom = GD_DENOM_DEFAULT;
    if (gd_address_check(address) != GD_OK || gd_denom_check(denom) != GD_OK)
        return gd_cli_fail(cli, GD_ERR_INVALID);
    gd_rpc *rpc = NULL;
    int rc = gd_cli_open_rpc(cli, args, &rpc);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_coin coin;
    gd_status s = gd_query_balance(rpc, &coin, address, denom, NULL);
    gd_rpc_close(rpc);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    if (gd_flag(args, "json"))
        /* Amounts stay strings: they can exceed 2^53 (cosmos math.Int). */
        return gd_cli_print_json(cli, json_pack("{s:s,s:s,s:s}", "address", address, "denom",
                                                coin.denom, "amount", coin.amount));
    fprintf(cli->out, "%s%s\n", coin.amount, coin.denom);
    return GD_EXIT_OK;
}

/* Prints EpochInfo with the computed stages and phase. */
static int gd_print_epoch(gd_cli *cli, gd_args *args, const gd_epoch_info *info) {
    gd_epoch_stages st;
    gd_epoch_stages_compute(&st, &info->epoch, &info->params);
    gd_epoch_phase phase = gd_epoch_phase_at(&info->epoch, &info->params, info->block_height);
    uint64_t effective = gd_epoch_effective_index(&info->epoch, &info->params, info->block_height);
    const struct {
        const char *name;
        int64_t value;
    } stages[] = {
        {"poc_start", st.poc_start},
        {"poc_generation_wind_down", st.poc_generation_wind_down},
        {"poc_generation_end", st.poc_generation_end},
        {"poc_exchange_deadline", st.poc_exchange_deadline},
        {"poc_validation_start", st.poc_validation_start},
        {"poc_validation_wind_down", st.poc_validation_wind_down},
        {"poc_validation_end", st.poc_validation_end},
        {"set_new_validators", st.set_new_validators},
        {"claim_money", st.claim_money},
        {"inference_validation_cutoff", st.inference_validation_cutoff},
        {"next_poc_start", st.next_poc_start},
    };
    const size_t n = sizeof stages / sizeof stages[0];
    const gd_epoch_params *p = &info->params;
    if (gd_flag(args, "json")) {
        json_t *js = json_object();
        for (size_t i = 0; js && i < n; i++)
            json_object_set_new(js, stages[i].name, json_integer(stages[i].value));
        json_t *jp = json_pack(
            "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "epoch_length",
            (json_int_t)p->epoch_length, "epoch_multiplier", (json_int_t)p->epoch_multiplier,
            "epoch_shift", (json_int_t)p->epoch_shift, "default_unit_of_compute_price",
            (json_int_t)p->default_unit_of_compute_price, "poc_stage_duration",
            (json_int_t)p->poc_stage_duration, "poc_exchange_duration",
            (json_int_t)p->poc_exchange_duration, "poc_validation_delay",
            (json_int_t)p->poc_validation_delay, "poc_validation_duration",
            (json_int_t)p->poc_validation_duration, "set_new_validators_delay",
            (json_int_t)p->set_new_validators_delay, "inference_validation_cutoff",
            (json_int_t)p->inference_validation_cutoff, "inference_pruning_epoch_threshold",
            (json_int_t)p->inference_pruning_epoch_threshold);
        return gd_cli_print_json(
            cli, json_pack("{s:I,s:{s:I,s:I},s:o,s:o,s:s,s:I,s:I}", "block_height",
                           (json_int_t)info->block_height, "latest_epoch", "index",
                           (json_int_t)info->epoch.index, "poc_start_block_height",
                           (json_int_t)info->epoch.poc_start_block_height, "params", jp,
                           "stages", js, "phase", gd_epoch_phase_name(phase),
                           "effective_epoch", (json_int_t)effective, "blocks_to_next_poc",
                           (json_int_t)(st.next_poc_start - info->block_height)));
    }
    fprintf(cli->out,
            "block height:     %lld\n"
            "latest epoch:     %llu (PoC started at %lld)\n"
            "effective epoch:  %llu\n"
            "phase:            %s\n"
            "next PoC in:      %lld blocks\n"
            "stages:\n",
            (long long)info->block_height, (unsigned long long)info->epoch.index,
            (long long)info->epoch.poc_start_block_height, (unsigned long long)effective,
            gd_epoch_phase_name(phase), (long long)(st.next_poc_start - info->block_height));
    for (size_t i = 0; i < n; i++)
        fprintf(cli->out, "  %-28s %lld\n", stages[i].name, (long long)stages[i].value);
    fprintf(cli->out,
            "params: epoch_length %lld, epoch_shift %lld, poc_stage %lld, exchange %lld, "
            "validation delay %lld, validation %lld, set-new-validators delay %lld, "
            "inference-validation cutoff %lld\n",
            (long long)p->epoch_length, (long long)p->epoch_shift,
            (long long)p->poc_stage_duration, (long long)p->poc_exchange_duration,
            (long long)p->poc_validation_delay, (long long)p->poc_validation_duration,
            (long long)p->set_new_validators_delay, (long long)p->inference_validation_cutoff);
    return GD_EXIT_OK;
}

static int gd_run_query_epoch(gd_cli *cli, gd_args *args) {
    gd_rpc *rpc = NULL;
    int rc = gd_cli_open_rpc(cli, args, &rpc);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_epoch_info info;
    gd_status s = gd_query_epoch_info(rpc, &info, NULL);
    gd_rpc_close(rpc);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return gd_print_epoch(cli, args, &info);
}

static int gd_run_status(gd_cli *cli, gd_args *args) {
    gd_rpc *rpc = NULL;
    int rc = gd_cli_open_rpc(cli, args, &rpc);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_node_status st;
    gd_status s = gd_rpc_status(rpc, &st);
    gd_rpc_close(rpc);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    if (gd_flag(args, "json"))
        return gd_cli_print_json(
            cli, json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:I,s:b}", "network", st.network,
                           "moniker", st.moniker, "version", st.version, "node_id", st.node_id,
                           "latest_block_height", (json_int_t)st.latest_block_height,
                           "latest_block_hash", st.latest_block_hash, "latest_app_hash",
                           st.latest_app_hash, "latest_block_time", st.latest_block_time,
                           "earliest_block_height", (json_int_t)st.earliest_block_height,
                           "catching_up", st.catching_up));
    fprintf(cli->out,
            "network:       %s\nmoniker:       %s\nversion:       %s\nlatest block:  %lld "
            "(%s)\nblock hash:    %s\napp hash:      %s\ncatching up:   %s\n",
            st.network, st.moniker, st.version, (long long)st.latest_block_height,
            st.latest_block_time, st.latest_block_hash, st.latest_app_hash,
            st.catching_up ? "yes" : "no");
    return GD_EXIT_OK;
}

/* Offline epoch arithmetic: the mainnet parameters, overridable. */
static int gd_run_epoch_clock(gd_cli *cli, gd_args *args) {
    gd_epoch_info info = {0};
    gd_epoch_params_mainnet(&info.params);
    const struct {
        const char *opt;
        int64_t *field;
    } overrides[] = {
        {"epoch-length", &info.params.epoch_length},
        {"epoch-shift", &info.params.epoch_shift},
        {"poc-stage-duration", &info.params.poc_stage_duration},
        {"poc-exchange-duration", &info.params.poc_exchange_duration},
        {"poc-validation-delay", &info.params.poc_validation_delay},
        {"poc-validation-duration", &info.params.poc_validation_duration},
        {"set-new-validators-delay", &info.params.set_new_validators_delay},
        {"inference-validation-cutoff", &info.params.inference_validation_cutoff},
        {"poc-start", &info.epoch.poc_start_block_height},
        {"height", &info.block_height},
    };
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++) {
        const char *v = gd_arg(args, overrides[i].opt);
        if (v && gd_parse_i64(overrides[i].field, v) != GD_OK)
            return gd_cli_usage(cli, args, "--%s wants an integer, got '%.40s'", overrides[i].opt,
                                v);
    }
    int rc = gd_cli_u64_opt(cli, args, &info.epoch.index, "epoch");
    if (rc != GD_CLI_CONTINUE)
        return rc;
    if (!gd_arg(args, "epoch") || !gd_arg(args, "poc-start") || !gd_arg(args, "height"))
        return gd_cli_usage(cli, args, "--epoch, --poc-start and --height are required");
    gd_status s = gd_epoch_params_check(&info.params);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    if (info.block_height < 0 || info.epoch.poc_start_block_height < 0)
        return gd_cli_usage(cli, args, "heights must not be negative");
    /* The clock clamps heights beyond GD_EPOCH_HEIGHT_MAX, and a height
     * outside the epoch belongs to another one: either would print stages
     * of an epoch that is not the one asked about (a negative
     * blocks_to_next_poc among them). */
    if (info.epoch.poc_start_block_height > GD_EPOCH_HEIGHT_MAX ||
        info.block_height > GD_EPOCH_HEIGHT_MAX)
        return gd_cli_usage(cli, args, "heights must be at most 2^62 (%lld)",
                            (long long)GD_EPOCH_HEIGHT_MAX);
    if (info.block_height < info.epoch.poc_start_block_height)
        return gd_cli_usage(cli, args, "--height %lld is before the epoch's --poc-start %lld",
                            (long long)info.block_height,
                            (long long)info.epoch.poc_start_block_height);
    gd_epoch_stages st;
    gd_epoch_stages_compute(&st, &info.epoch, &info.params);
    if (info.block_height >= st.next_poc_start)
        return gd_cli_usage(cli, args,
                            "--height %lld is past epoch %llu: its next PoC starts at %lld",
                            (long long)info.block_height, (unsigned long long)info.epoch.index,
                            (long long)st.next_poc_start);
    return gd_print_epoch(cli, args, &info);
}

static const gd_opt_spec gd_query_account_opts[] = {
    GD_RPC_OPTS,
    {"json", NULL, "print {\"address\", \"account_number\", \"sequence\", \"pubkey\"}"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_query_account = {
    "query account", "ADDR", 1, 1,
    "Show an account's number, sequence and public key (auth AccountInfo).",
    NULL, gd_query_account_opts, gd_run_query_account,
};

static const gd_opt_spec gd_query_balance_opts[] = {
    {"denom", "DENOM", "denomination (default ngonka)"},
    GD_RPC_OPTS,
    {"json", NULL, "print {\"address\", \"denom\", \"amount\"} (amount is a string)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_query_balance = {
    "query balance", "ADDR", 1, 1,
    "Show an account's balance of one denom (bank Balance).",
    NULL, gd_query_balance_opts, gd_run_query_balance,
};

static const gd_opt_spec gd_query_epoch_opts[] = {
    GD_RPC_OPTS,
    {"json", NULL, "print the result as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_query_epoch = {
    "query epoch", "", 0, 0,
    "Show Gonka's EpochInfo with every stage height and the current phase.",
    "Stage heights follow Gonka's epoch context: PoC generation (wind-down at 80%),\n"
    "exchange, validation (wind-down at 80%), set-new-validators, claim-money, the\n"
    "inference-validation cutoff and the next PoC start. DiLoCo rounds run only in the\n"
    "Inference phase and must end before the next PoC.",
    gd_query_epoch_opts, gd_run_query_epoch,
};

static const gd_opt_spec gd_status_opts[] = {
    GD_RPC_OPTS,
    {"json", NULL, "print the result as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_status = {
    "status", "", 0, 0,
    "Show the node's chain id, latest block and sync state (CometBFT /status).",
    NULL, gd_status_opts, gd_run_status,
};

static const gd_opt_spec gd_epoch_clock_opts[] = {
    {"epoch", "N", "epoch index (0 is the genesis epoch, which runs no PoC)"},
    {"poc-start", "H", "the epoch's PoC start height"},
    {"height", "H", "the height to evaluate: from --poc-start to before the next PoC"},
    {"epoch-length", "N", "override (mainnet: 17280)"},
    {"epoch-shift", "N", "override (mainnet: 16980)"},
    {"poc-stage-duration", "N", "override (mainnet: 60)"},
    {"poc-exchange-duration", "N", "override (mainnet: 5)"},
    {"poc-validation-delay", "N", "override (mainnet: 5)"},
    {"poc-validation-duration", "N", "override (mainnet: 480)"},
    {"set-new-validators-delay", "N", "override (mainnet: 120)"},
    {"inference-validation-cutoff", "N", "override (mainnet: 2)"},
    {"json", NULL, "print the result as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_epoch_clock = {
    "epoch-clock", "", 0, 0,
    "Compute Gonka epoch stages and the phase offline, from mainnet or given parameters.",
    "The output is the same as 'query epoch', without a node.",
    gd_epoch_clock_opts, gd_run_epoch_clock,
};
