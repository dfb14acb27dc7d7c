/* node init: a node's home (node.yaml, and a key if none is given); node
 * duties: what the round driver would do now for an address, read from a
 * node (a dry run of the daemon's decisions: nothing is sent). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "chain/client/diloco_query.h"
#include "chain/client/submit.h"
#include "chain/keys/address.h"
#include "chain/keys/bip39.h"
#include "chain/keys/keyfile.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/gas_price.h"
#include "common/file.h"
#include "common/secure.h"
#include "plugin/cli/cli_util.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/hardware_class.h"
#include "plugin/member/member_settings.h"
#include "plugin/member/round_driver.h"
#include "plugin/member/run_config.h"
#include "plugin/ports/chain_reader.h"

/* --roles worker,validator (either or both). */
static int gd_node_roles(gd_cli *cli, gd_args *args, unsigned *roles) {
    const char *text = gd_arg(args, "roles");
    *roles = GD_ROLE_WORKER | GD_ROLE_VALIDATOR;
    if (text == NULL)
        return GD_CLI_CONTINUE;
    *roles = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned bit = gd_role_of(t);
        if (bit == 0)
            return gd_cli_usage(cli, args, "--roles wants worker, validator or both, got '%.40s'",
                                t);
        *roles |= bit;
    }
    if (*roles == 0 || strlen(text) >= sizeof buf)
        return gd_cli_usage(cli, args, "--roles wants worker, validator or both");
    return GD_CLI_CONTINUE;
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
    gd_duty_config cfg = {0, false};
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &run, "run", UINT64_MAX, true)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_address_opt(cli, args, address, "address", true)) != GD_CLI_CONTINUE ||
        (rc = gd_node_roles(cli, args, &cfg.roles)) != GD_CLI_CONTINUE)
        return rc;
    gd_member_journal j;
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
    if ((rc = gd_cli_open_rpc(cli, args, &rpc)) != GD_CLI_CONTINUE)
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

/* ---- node init ------------------------------------------------------------------------ */

/* A new key in the home: node.key, and its mnemonic in node.mnemonic (both
 * 0600, for the operator to back up; neither is printed). */
static gd_status gd_node_new_key(const char *home, char *key_path, size_t cap,
                                 char address[GD_ADDRESS_STR_MAX]) {
    char mnemonic_path[GD_SETTINGS_TEXT_MAX];
    int n = snprintf(key_path, cap, "%s/node.key", home);
    int m = snprintf(mnemonic_path, sizeof mnemonic_path, "%s/node.mnemonic", home);
    if (n < 0 || (size_t)n >= cap || m < 0 || (size_t)m >= sizeof mnemonic_path)
        return gd_fail(GD_ERR_LIMIT, "--home path too long");
    gd_key key;
    char mnemonic[GD_BIP39_MNEMONIC_MAX + 2];
    gd_status s = gd_key_generate(&key, mnemonic, sizeof mnemonic);
    if (s == GD_OK) {
        size_t len = strlen(mnemonic);
        mnemonic[len] = '\n';
        s = gd_file_create_private(mnemonic_path, mnemonic, len + 1);
    }
    gd_wipe(mnemonic, sizeof mnemonic);
    if (s == GD_OK)
        s = gd_keyfile_write(key_path, &key);
    if (s == GD_OK)
        s = gd_address_from_pubkey(address, GD_ADDRESS_STR_MAX, "gonka", key.pubkey);
    gd_key_wipe(&key);
    return s;
}

/* The collateral node.yaml bonds: at least the run's min_collateral, read
 * from the chain, since a join below it is refused and pays its fee every
 * time it is tried. Without --collateral it is that minimum; with one it is
 * checked against it (not when the chain cannot be reached: then said). */
static int gd_node_init_collateral(gd_cli *cli, gd_args *args, char *out, size_t cap,
                                   const char *node, uint64_t run) {
    const char *given = gd_arg(args, "collateral");
    gd_coin coin;
    if (given != NULL && gd_coin_parse(&coin, given) != GD_OK)
        return gd_cli_usage(cli, args, "--collateral: %s", gd_error_detail());
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.deadline_ms = 15000;
    gd_rpc *rpc = NULL;
    Gonka__Diloco__V1__QueryRunResponse *q = NULL;
    gd_status s = gd_rpc_open(&rpc, node, &opt);
    if (s == GD_OK)
        s = gd_diloco_query_run(rpc, &q, run, NULL);
    gd_rpc_close(rpc);
    const Cosmos__Base__V1beta1__Coin *min =
        s == GD_OK && q->run && q->run->spec ? q->run->spec->min_collateral : NULL;
    if (s == GD_OK && min == NULL)
        s = gd_fail(GD_ERR_PARSE, "run %" PRIu64 " has no min_collateral", run);
    int rc = GD_CLI_CONTINUE;
    if (s != GD_OK && given == NULL) {
        rc = gd_cli_fail(cli, gd_fail_context(s, "reading run %" PRIu64 "'s min_collateral from "
                                                 "%s (or pass --collateral COIN)",
                                              run, node));
    } else if (s != GD_OK) {
        fprintf(cli->err, "note: --collateral not checked against run %" PRIu64 "'s "
                          "min_collateral: %s\n", run, gd_error_detail());
        snprintf(out, cap, "%s%s", coin.amount, coin.denom);
    } else if (given == NULL) {
        snprintf(out, cap, "%s%s", min->amount, min->denom);
        fprintf(cli->out, "collateral %s: run %" PRIu64 "'s min_collateral\n", out, run);
    } else if (!gd_run_spec_takes_collateral(q->run->spec, &coin)) {
        rc = gd_cli_usage(cli, args, "--collateral %s%s is below run %" PRIu64 "'s min_collateral "
                                     "%s%s: every join would be refused",
                          coin.amount, coin.denom, run, min->amount, min->denom);
    } else {
        snprintf(out, cap, "%s%s", coin.amount, coin.denom);
    }
    if (q)
        protobuf_c_message_free_unpacked(&q->base, NULL);
    return rc;
}

static int gd_run_node_init(gd_cli *cli, gd_args *args) {
    const char *home = gd_arg(args, "home"), *chain_id = gd_arg(args, "chain-id");
    if (home == NULL || chain_id == NULL)
        return gd_cli_usage(cli, args, "--home DIR and --chain-id ID are required");
    gd_member_settings st;
    memset(&st, 0, sizeof st);
    uint64_t run = 1;
    int rc;
    const char *node = gd_arg(args, "node");
    if (node == NULL)
        node = GD_RPC_URL_DEFAULT;
    if ((rc = gd_node_roles(cli, args, &st.roles)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &run, "run", UINT64_MAX, false)) != GD_CLI_CONTINUE)
        return rc;
    /* node.yaml names its key and state_dir by absolute paths, so that
     * `run --config` finds them from any directory. */
    const char *key = gd_arg(args, "key");
    char key_path[PATH_MAX], home_path[PATH_MAX];
    if (key != NULL) {
        gd_key k;
        gd_status ks = realpath(key, key_path) != NULL
                           ? gd_keyfile_read(&k, key_path)
                           : gd_fail(GD_ERR_NOT_FOUND, "%s: %s", key, strerror(errno));
        gd_key_wipe(&k);
        if (ks != GD_OK)
            return gd_cli_fail(cli, gd_fail_context(ks, "--key"));
    }
    if (mkdir(home, 0700) != 0 && errno != EEXIST)
        return gd_cli_fail(cli, gd_fail(GD_ERR_IO, "cannot create %s: %s", home, strerror(errno)));
    if (realpath(home, home_path) == NULL)
        return gd_cli_fail(cli, gd_fail(GD_ERR_IO, "%s: %s", home, strerror(errno)));
    home = home_path;
    char yaml_path[GD_SETTINGS_TEXT_MAX], address[GD_ADDRESS_STR_MAX] = "";
    int n = snprintf(yaml_path, sizeof yaml_path, "%s/node.yaml", home);
    if (n < 0 || (size_t)n >= sizeof yaml_path)
        return gd_cli_usage(cli, args, "--home path too long");
    struct stat sb;
    if (stat(yaml_path, &sb) == 0)
        return gd_cli_fail(cli, gd_fail(GD_ERR_EXISTS, "%s exists: a node home is initialised "
                                                       "once",
                                        yaml_path));
    /* The chain last: what is wrong here is said without waiting on it. */
    if ((rc = gd_node_init_collateral(cli, args, st.collateral, sizeof st.collateral, node,
                                      run)) != GD_CLI_CONTINUE)
        return rc;
    gd_status s = GD_OK;
    if (key != NULL)
        snprintf(st.key, sizeof st.key, "%s", key_path);
    else
        s = gd_node_new_key(home, st.key, sizeof st.key, address);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    snprintf(st.rpc, sizeof st.rpc, "%s", node);
    snprintf(st.chain_id, sizeof st.chain_id, "%s", chain_id);
    snprintf(st.gas_price, sizeof st.gas_price, "%s", GD_GAS_PRICE_DEFAULT);
    st.run = run;
    snprintf(st.hardware_class, sizeof st.hardware_class, "auto");
    snprintf(st.listen_host, sizeof st.listen_host, "0.0.0.0");
    st.listen_port = 8080;
    snprintf(st.public_url, sizeof st.public_url, "http://127.0.0.1:8080");
    snprintf(st.state_dir, sizeof st.state_dir, "%s/state", home);
    snprintf(st.backend, sizeof st.backend, "auto");
    st.gpus = 1;
    snprintf(st.log_level, sizeof st.log_level, "info");
    snprintf(st.log_format, sizeof st.log_format, "text");
    char text[16384];
    s = gd_member_settings_format(&st, text, sizeof text);
    /* What node init writes, run must take: parse it back before writing. */
    gd_member_settings check;
    if (s == GD_OK)
        s = gd_member_settings_parse(&check, text, strlen(text), "--home node.yaml");
    if (s == GD_OK)
        s = gd_file_create_private(yaml_path, text, strlen(text));
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    fprintf(cli->out, "wrote %s\n", yaml_path);
    if (address[0])
        fprintf(cli->out, "new key %s for %s (its mnemonic is in %s/node.mnemonic: back it up, "
                          "then delete it)\n",
                st.key, address, home);
    fprintf(cli->out, "before running: set listen and public_url (where peers fetch this "
                      "node's artifacts), and hardware_class if the run does not list this "
                      "host's (`gonka-diloco node hardware-class` prints it)\n");
    return 0;
}

static const gd_opt_spec gd_node_init_opts[] = {
    {"home", "DIR", "the node's home: node.yaml, its key (if new) and state (created 0700)"},
    {"node", "URL", "the chain node's CometBFT RPC (default " GD_RPC_URL_DEFAULT ")"},
    {"chain-id", "ID", "the chain id"},
    {"key", "FILE", "an existing key file (default: a new key in the home)"},
    {"roles", "LIST", "worker, validator or both (default both)"},
    {"run", "N", "the run to take part in (default 1)"},
    {"collateral", "COIN", "the collateral to bond (default: the run's min_collateral, read "
                           "from --node)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_node_init = {
    "node init", "", 0, 0,
    "Create a node's home: DIR/node.yaml with every key (docs/node.md), and a key if none.",
    "node.yaml is written once (mode 0600) and parsed back as the node would read it; a\n"
    "new key goes to DIR/node.key with its mnemonic in DIR/node.mnemonic (both 0600).",
    gd_node_init_opts, gd_run_node_init,
};

/* ---- node hardware-class ---------------------------------------------------------------- */

static int gd_run_node_hardware_class(gd_cli *cli, gd_args *args) {
    char cls[GD_HARDWARE_CLASS_MAX + 1], identity[1024];
    const char *backend = gd_arg(args, "backend") ? gd_arg(args, "backend") : "auto";
    gd_status s = gd_hardware_class_auto(cls, backend, identity, sizeof identity);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    if (gd_flag(args, "json"))
        return gd_cli_print_json(cli, json_pack("{s:s,s:s}", "hardware_class", cls, "identity",
                                                identity));
    fprintf(cli->out, "%s\n", cls);
    fprintf(cli->out, "(%s)\n", identity);
    return 0;
}

static const gd_opt_spec gd_node_hardware_class_opts[] = {
    {"json", NULL, "print {\"hardware_class\", \"identity\"}"},
    {"backend", "NAME", "cpu, cuda or auto (default auto: cuda where a GPU is usable)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_node_hardware_class = {
    "node hardware-class", "", 0, 0,
    "Show the hardware class `hardware_class: auto` gives this host, and what it is made of.",
    "The class is the backend and architecture with a digest of what decides the bits of\n"
    "the results (processor model, BLAS build and core, compiler); a run's authority lists\n"
    "the classes its members may declare.",
    gd_node_hardware_class_opts, gd_run_node_hardware_class,
};

/* ---- node leave --------------------------------------------------------------------- */

/* Records the wish beside the node's journal (a running node takes it at
 * its next step and stops sealing secrets for later rounds; the journal
 * is the node's alone to write), then sends MsgLeaveRun unless the chain
 * shows it sent. */
static int gd_run_node_leave(gd_cli *cli, gd_args *args) {
    const char *path = gd_arg(args, "config");
    if (path == NULL)
        return gd_cli_usage(cli, args, "--config DIR/node.yaml is required");
    gd_member_settings st;
    gd_status s = gd_member_settings_load(&st, path);
    gd_artifact_store store;
    if (s == GD_OK)
        s = gd_artifact_store_open(&store, st.state_dir);
    if (s == GD_OK)
        s = gd_leave_request_save(&store);
    gd_key key;
    char address[GD_ADDRESS_STR_MAX];
    bool have_key = false;
    if (s == GD_OK)
        s = gd_keyfile_read(&key, st.key);
    have_key = s == GD_OK;
    if (s == GD_OK)
        s = gd_address_from_pubkey(address, sizeof address, "gonka", key.pubkey);
    gd_rpc_options ro;
    gd_rpc_options_default(&ro);
    gd_rpc *rpc = NULL;
    if (s == GD_OK)
        s = gd_rpc_open(&rpc, st.rpc, &ro);
    gd_chain_answers ans = {0};
    gd_chain_view_buf view = {0};
    if (s == GD_OK)
        s = gd_chain_read_view(rpc, st.run, address, false, &ans, &view);
    const char *said = "left";
    gd_submit_result res;
    memset(&res, 0, sizeof res);
    if (s == GD_OK && !view.view.member) {
        said = "not a member";
    } else if (s == GD_OK && view.view.leaving) {
        said = "already leaving";
    } else if (s == GD_OK) {
        gd_any msg = {0};
        gd_gas_price price;
        s = gd_gas_price_parse(&price, st.gas_price);
        if (s == GD_OK)
            s = gd_diloco_msg_leave_run(&msg, address, st.run);
        gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .gas_price = &price,
                             .chain_id = st.chain_id};
        gd_submit_options opt;
        gd_submit_options_default(&opt);
        opt.gas_auto = true;
        opt.gas_adjustment = 1.5;
        if (s == GD_OK)
            s = gd_tx_submit(rpc, &key, &req, &opt, &res);
        gd_any_free(&msg);
    }
    gd_chain_view_free(&view);
    gd_chain_answers_free(&ans);
    gd_rpc_close(rpc);
    if (have_key)
        gd_key_wipe(&key);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    if (gd_flag(args, "json")) {
        json_t *o = json_pack("{s:s,s:s,s:I}", "address", address, "result", said, "run",
                              (json_int_t)st.run);
        if (o && res.txhash[0]) {
            json_object_set_new(o, "txhash", json_string(res.txhash));
            json_object_set_new(o, "height", json_integer((json_int_t)res.height));
            json_object_set_new(o, "fee", json_string(res.fee));
        }
        return gd_cli_print_json(cli, o);
    }
    fprintf(cli->out, "%s: %s run %llu%s%s\n", address, said, (unsigned long long)st.run,
            res.txhash[0] ? ", tx " : "", res.txhash);
    return 0;
}

static const gd_opt_spec gd_node_leave_opts[] = {
    {"config", "FILE", "the node's node.yaml"},
    {"json", NULL, "print {\"address\", \"result\", \"run\", \"txhash\", \"height\", \"fee\"}"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_node_leave = {
    "node leave", "", 0, 0,
    "Leave the node's run: stop taking part in later rounds and get the collateral back.",
    "Records the wish in the node's state_dir (a running node seals no secret for later rounds)\n"
    "and sends MsgLeaveRun unless the chain shows it sent. The collateral is paid back at once\n"
    "if no live round holds the member, else when that round is over.",
    gd_node_leave_opts, gd_run_node_leave,
};
