/* gonka-localnet: a single-process Gonka-compatible chain node for the
 * integration tests and the demo (init, start, export). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/epochs.h"
#include "chain/wire/gas_price.h"
#include "common/cli.h"
#include "common/log.h"
#include "common/parse.h"
#include "localnet/init.h"
#include "localnet/node.h"
#include "localnet/rpc_server.h"

static volatile sig_atomic_t gd_stop;

static void gd_on_signal(int sig) {
    (void)sig;
    gd_stop = 1;
}

/* What a newcomer needs next: which address holds the funds and which
 * file signs for it. A long list stops after GD_ACCOUNTS_SHOWN; the
 * index file has them all. */
#define GD_ACCOUNTS_SHOWN 20

static void gd_print_accounts(gd_cli *cli, const char *home, const json_t *funded) {
    size_t i;
    const json_t *a;
    json_array_foreach(funded, i, a) {
        if (i == GD_ACCOUNTS_SHOWN) {
            fprintf(cli->out, "  ... and %zu more\n", json_array_size(funded) - i);
            break;
        }
        fprintf(cli->out, "  account %zu: %s  key %s/%s\n", i,
                json_string_value(json_object_get(a, "address")), home,
                json_string_value(json_object_get(a, "key_file")));
    }
    fprintf(cli->out, "accounts listed in %s/keys/accounts.json\n", home);
}

static int gd_run_init(gd_cli *cli, gd_args *args) {
    gd_init_options opt = {.home = gd_arg(args, "home"), .chain_id = gd_arg(args, "chain-id")};
    if (opt.home == NULL)
        return gd_cli_usage(cli, args, "--home DIR is required");
    if (opt.chain_id == NULL)
        opt.chain_id = "prod-sim";
    uint64_t n = 0;
    const char *accounts = gd_arg(args, "accounts");
    if (accounts == NULL || gd_parse_u64(&n, accounts) != GD_OK || n == 0)
        return gd_cli_usage(cli, args, "--accounts N (a positive integer) is required");
    opt.accounts = (size_t)n;
    const char *balance = gd_arg(args, "balance");
    if (gd_coin_parse(&opt.balance, balance ? balance : "1000000000000ngonka") != GD_OK ||
        strcmp(opt.balance.amount, "0") == 0)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--balance"));
    gd_epoch_params_localnet(&opt.epoch_params);
    const char *len = gd_arg(args, "epoch-length");
    if (len) {
        int64_t v;
        if (gd_parse_i64(&v, len) != GD_OK || v <= 0)
            return gd_cli_usage(cli, args, "--epoch-length wants a positive integer");
        opt.epoch_params.epoch_length = v;
        /* Keep the first PoC 20 blocks in, as in the default. */
        opt.epoch_params.epoch_shift = v > 20 ? v - 20 : 0;
    }
    opt.genesis_time = gd_arg(args, "genesis-time");
    const char *authority = gd_arg(args, "diloco-authority");
    if (authority && gd_parse_u64(&n, authority) != GD_OK)
        return gd_cli_usage(cli, args, "--diloco-authority wants an account index");
    opt.diloco_authority = authority ? (size_t)n : 0;
    opt.diloco_run_spec = gd_arg(args, "diloco-run");
    const char *pool = gd_arg(args, "diloco-pool");
    if (pool && !opt.diloco_run_spec)
        return gd_cli_usage(cli, args, "--diloco-pool goes with --diloco-run");
    if (gd_coin_parse(&opt.diloco_pool, pool ? pool : "1000000000ngonka") != GD_OK ||
        strcmp(opt.diloco_pool.amount, "0") == 0)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--diloco-pool"));
    opt.min_gas_price = gd_arg(args, "min-gas-price");
    json_t *funded = NULL;
    gd_status s = gd_localnet_init(&opt, &funded);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    fprintf(cli->out, "initialised %s: chain %s, %zu accounts of %s%s (keys in %s/keys), "
            "minimum gas price %s\n", opt.home, opt.chain_id, opt.accounts, opt.balance.amount,
            opt.balance.denom, opt.home,
            opt.min_gas_price ? opt.min_gas_price : GD_GAS_PRICE_DEFAULT);
    gd_print_accounts(cli, opt.home, funded);
    json_decref(funded);
    return GD_EXIT_OK;
}

static int gd_node_args(gd_cli *cli, gd_args *args, gd_node_config *cfg) {
    gd_node_config_default(cfg);
    const char *home = gd_arg(args, "home");
    if (home == NULL)
        return gd_cli_usage(cli, args, "--home DIR is required");
    if (strlen(home) >= sizeof cfg->home)
        return gd_cli_usage(cli, args, "--home path is too long");
    snprintf(cfg->home, sizeof cfg->home, "%s", home);
    const char *bt = gd_arg(args, "block-time");
    if (bt) {
        int64_t ms;
        if (gd_parse_duration_ms(bt, &ms) != GD_OK || ms < 10 || ms > 3600000)
            return gd_cli_usage(cli, args, "--block-time wants a duration from 10ms to 1h");
        cfg->block_time_ms = (long)ms;
    }
    const char *price = gd_arg(args, "min-gas-price");
    if (price && (price[0] == '\0' || strlen(price) >= sizeof cfg->min_gas_price))
        return gd_cli_usage(cli, args, "--min-gas-price wants a price such as "
                                       GD_GAS_PRICE_DEFAULT ", or 0");
    if (price)
        snprintf(cfg->min_gas_price, sizeof cfg->min_gas_price, "%s", price);
    const char *mp = gd_arg(args, "mempool-size");
    if (mp) {
        uint64_t v;
        if (gd_parse_u64(&v, mp) != GD_OK || v == 0 || v > 1000000)
            return gd_cli_usage(cli, args, "--mempool-size wants 1 to 1000000");
        cfg->mempool_max = (size_t)v;
    }
    cfg->deterministic_time = gd_flag(args, "deterministic-time");
    cfg->check_invariants = gd_flag(args, "check-invariants");
    return -1;
}

/* --rpc-max-connections, --rpc-max-per-address, --rpc-idle-timeout. */
static int gd_rpc_limit_args(gd_cli *cli, gd_args *args, gd_rpc_limits *l) {
    *l = gd_rpc_limits_default();
    const char *max = gd_arg(args, "rpc-max-connections");
    const char *per = gd_arg(args, "rpc-max-per-address");
    const char *idle = gd_arg(args, "rpc-idle-timeout");
    uint64_t v;
    if (max && (gd_parse_u64(&v, max) != GD_OK || v == 0 || v > 100000))
        return gd_cli_usage(cli, args, "--rpc-max-connections wants 1 to 100000");
    if (max)
        l->max_connections = (uint32_t)v;
    if (per && (gd_parse_u64(&v, per) != GD_OK || v == 0 || v > l->max_connections))
        return gd_cli_usage(cli, args, "--rpc-max-per-address wants 1 to "
                                       "--rpc-max-connections");
    if (per)
        l->max_connections_per_ip = (uint32_t)v;
    else if (l->max_connections_per_ip > l->max_connections)
        l->max_connections_per_ip = l->max_connections;
    int64_t ms;
    if (idle && (gd_parse_duration_ms(idle, &ms) != GD_OK || ms < 1000 || ms > 3600000 ||
                 ms % 1000 != 0))
        return gd_cli_usage(cli, args, "--rpc-idle-timeout wants whole seconds from 1s to 1h");
    if (idle)
        l->idle_timeout_s = (uint32_t)(ms / 1000);
    return -1;
}

static int gd_run_start(gd_cli *cli, gd_args *args) {
    gd_node_config cfg;
    int rc = gd_node_args(cli, args, &cfg);
    if (rc >= 0)
        return rc;
    gd_rpc_limits limits;
    rc = gd_rpc_limit_args(cli, args, &limits);
    if (rc >= 0)
        return rc;
    if (!gd_arg(args, "log-level") && !getenv("GD_LOG"))
        gd_log_set_level(GD_LOG_INFO); /* one line per block by default */
    const char *listen = gd_arg(args, "rpc");
    gd_node *node = NULL;
    gd_status s = gd_node_open(&node, &cfg);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    gd_rpc_server *server = NULL;
    char bound[80];
    s = gd_rpc_server_start(&server, node, listen ? listen : "127.0.0.1:26657", &limits, bound,
                            sizeof bound);
    if (s != GD_OK) {
        gd_node_close(node);
        return gd_cli_fail(cli, s);
    }
    const char *addr_file = gd_arg(args, "rpc-addr-file");
    if (addr_file) {
        FILE *f = fopen(addr_file, "w");
        if (f == NULL || fprintf(f, "%s\n", bound) < 0 || fclose(f) != 0) {
            gd_rpc_server_stop(server);
            gd_node_close(node);
            return gd_cli_fail(cli, gd_fail(GD_ERR_IO, "cannot write %s", addr_file));
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = gd_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    s = gd_node_run_blocks(node, &gd_stop);
    gd_rpc_server_stop(server);
    gd_node_close(node);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    GD_LOG_INFO("localnet", "stopped");
    return GD_EXIT_OK;
}

static int gd_run_export(gd_cli *cli, gd_args *args) {
    gd_node_config cfg;
    int rc = gd_node_args(cli, args, &cfg);
    if (rc >= 0)
        return rc;
    gd_node *node = NULL;
    gd_status s = gd_node_open(&node, &cfg);
    json_t *genesis = NULL;
    if (s == GD_OK)
        s = gd_node_export(node, &genesis);
    gd_node_close(node);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    json_dumpf(genesis, cli->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', cli->out);
    json_decref(genesis);
    return GD_EXIT_OK;
}

static const gd_opt_spec gd_init_opts[] = {
    {"home", "DIR", "directory for genesis, keys and data (created 0700)"},
    {"chain-id", "ID", "chain id (default prod-sim)"},
    {"accounts", "N", "number of funded accounts; their keys go to DIR/keys (0600)"},
    {"balance", "COINS", "balance of each account (default 1000000000000ngonka)"},
    {"epoch-length", "N", "blocks per Gonka epoch (default 100; PoC starts 20 blocks in)"},
    {"genesis-time", "TIME",
     "RFC 3339 genesis time, such as 2026-01-31T12:00:00Z, years 0001-9999 (default now)"},
    {"diloco-authority", "N", "account index that may create DiLoCo runs (default 0)"},
    {"diloco-run", "SPEC.json", "also create DiLoCo run 1 in genesis from this RunSpec"},
    {"diloco-pool", "COIN", "that run's reward pool (default 1000000000ngonka)"},
    {"min-gas-price", "PRICE",
     "minimum gas price recorded in DIR/app.json for start (default " GD_GAS_PRICE_DEFAULT
     "; 0 accepts zero fees)"},
    {NULL, NULL, NULL},
};

static const gd_command gd_cmd_init = {
    "init", "", 0, 0,
    "Create a localnet home: genesis with N funded accounts, their key files, a validator key.",
    NULL, gd_init_opts, gd_run_init,
};

static const gd_opt_spec gd_start_opts[] = {
    {"home", "DIR", "the home made by init"},
    {"rpc", "HOST:PORT",
     "RPC listen address (default 127.0.0.1:26657; port 0 picks one; warns off loopback)"},
    {"rpc-max-connections", "N", "RPC connections from all clients together (default 256)"},
    {"rpc-max-per-address", "N", "RPC connections from one client address (default 32)"},
    {"rpc-idle-timeout", "DURATION",
     "close an RPC connection silent this long, or whose request has not arrived whole this "
     "long after it opened or after its previous answer; whole seconds (default 10s)"},
    {"rpc-addr-file", "FILE", "write the bound RPC address (host:port) here once listening"},
    {"block-time", "DURATION", "time between blocks (default 500ms)"},
    {"check-invariants", NULL, "check every module's invariants after each block; stop if one breaks"},
    {"min-gas-price", "PRICE",
     "minimum gas price; fee >= ceil(gas x PRICE) (default: DIR/app.json's, else "
     GD_GAS_PRICE_DEFAULT "; 0 accepts zero fees)"},
    {"mempool-size", "N", "most transactions waiting (default 10000)"},
    {"deterministic-time", NULL,
     "block times from genesis time + height x block time (never before the last block's)"},
    {NULL, NULL, NULL},
};

static const gd_command gd_cmd_start = {
    "start", "", 0, 0,
    "Run the node: CometBFT 0.38 JSON-RPC on loopback and a block every --block-time.",
    "State is kept in DIR/data/chain.db (SQLite, one transaction per block); the node\n"
    "resumes from the last committed block after a crash or kill. Stop with Ctrl-C or\n"
    "SIGTERM. Logs at info level (one line per block, one per rejected transaction)\n"
    "unless --log-level or GD_LOG says otherwise; other commands log warnings only.",
    gd_start_opts, gd_run_start,
};

static const gd_opt_spec gd_export_opts[] = {
    {"home", "DIR", "the home made by init"},
    {NULL, NULL, NULL},
};

static const gd_command gd_cmd_export = {
    "export", "", 0, 0,
    "Print the current committed state as a genesis document (JSON).",
    NULL, gd_export_opts, gd_run_export,
};

static const gd_command *const gd_commands[] = {&gd_cmd_init, &gd_cmd_start, &gd_cmd_export};

int main(int argc, char **argv) {
    static const gd_cli_program program = {
        .name = "gonka-localnet",
        .summary = "a local single-validator Gonka-compatible chain node.",
        .version = GD_VERSION,
        .commands = gd_commands,
        .n_commands = sizeof gd_commands / sizeof gd_commands[0],
    };
    return gd_cli_run(&program, stdout, argc, argv, stderr);
}
