/* The submission path shared by every transaction command (cli_submit.h). */
#include "plugin/cli/cli_submit.h"

#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "plugin/cli/cli_round_hint.h"

/* Prints j (consumed) with the command's extra keys (NULL: none) in it. */
static int gd_cli_print_json_extra(gd_cli *cli, json_t *j, const json_t *extra) {
    if (j && extra && json_object_update(j, (json_t *)extra) != 0) {
        json_decref(j);
        j = NULL;
    }
    return gd_cli_print_json(cli, j);
}

static int gd_cli_print_submit_extra(gd_cli *cli, gd_args *args, const gd_submit_result *r,
                                     const json_t *extra) {
    if (gd_flag(args, "json")) {
        const gd_abci_code *c = r->included ? &r->deliver : &r->check;
        json_t *j = json_pack("{s:s,s:b,s:I,s:i,s:s,s:s,s:I,s:I,s:I,s:I}", "txhash", r->txhash,
                              "included", r->included, "height", (json_int_t)r->height, "code",
                              (int)c->code, "codespace", c->codespace, "log", c->log,
                              "gas_wanted", (json_int_t)r->gas_wanted, "gas_used",
                              (json_int_t)r->gas_used, "account_number",
                              (json_int_t)r->account_number, "sequence",
                              (json_int_t)r->sequence);
        if (j && r->fee[0]) /* known when this command signed it */
            json_object_set_new(j, "fee", json_string(r->fee));
        return gd_cli_print_json_extra(cli, j, extra);
    }
    fprintf(cli->out, "txhash: %s\n", r->txhash);
    if (r->included)
        fprintf(cli->out, "height: %lld\ncode:   %u\ngas:    %lld used of %lld\n",
                (long long)r->height, r->deliver.code, (long long)r->gas_used,
                (long long)r->gas_wanted);
    if (r->included && r->fee[0])
        fprintf(cli->out, "fee:    %s\n", r->fee);
    if (!r->included)
        fprintf(cli->out, "accepted into the mempool (not waiting for a block)\n");
    return GD_EXIT_OK;
}

int gd_cli_print_submit(gd_cli *cli, gd_args *args, const gd_submit_result *r) {
    return gd_cli_print_submit_extra(cli, args, r, NULL);
}

static int gd_cli_submit_failed_extra(gd_cli *cli, gd_args *args, const gd_submit_result *r,
                                      gd_status s, const json_t *extra) {
    if (gd_flag(args, "json") && r->txhash[0]) {
        const gd_abci_code *c = r->included ? &r->deliver : &r->check;
        json_t *j = json_pack("{s:s,s:b,s:I,s:i,s:s,s:s}", "txhash", r->txhash, "included",
                              r->included, "height", (json_int_t)r->height, "code",
                              (int)c->code, "codespace", c->codespace, "log", c->log);
        gd_cli_print_json_extra(cli, j, extra);
    }
    return gd_cli_fail(cli, s);
}

int gd_cli_submit_failed(gd_cli *cli, gd_args *args, const gd_submit_result *r, gd_status s) {
    return gd_cli_submit_failed_extra(cli, args, r, s, NULL);
}

/* --gas N|auto and --gas-adjustment. */
static int gd_cli_tx_gas(gd_cli *cli, gd_args *args, gd_cli_tx *tx) {
    const char *gas = gd_arg(args, "gas");
    int rc;
    if (gas && strcmp(gas, "auto") == 0) {
        if (tx->offline)
            return gd_cli_usage(cli, args, "--gas auto needs a node; give a number with "
                                           "--offline");
        tx->opt.gas_auto = true;
    } else if ((rc = gd_cli_u64_opt(cli, args, &tx->req.gas_limit, "gas")) != GD_CLI_CONTINUE) {
        return rc;
    }
    if (tx->req.gas_limit == 0)
        return gd_cli_usage(cli, args, "--gas must be positive");
    const char *adj = gd_arg(args, "gas-adjustment");
    if (adj) {
        char *end = NULL;
        tx->opt.gas_adjustment = strtod(adj, &end);
        if (end == adj || *end != '\0' ||
            !(tx->opt.gas_adjustment >= 1.0 && tx->opt.gas_adjustment <= 10))
            return gd_cli_usage(cli, args, "--gas-adjustment wants a number from 1 to 10");
    }
    return GD_CLI_CONTINUE;
}

/* --offline with --account-number and --sequence, or online with both or
 * neither. */
static int gd_cli_tx_account(gd_cli *cli, gd_args *args, gd_cli_tx *tx) {
    bool number = gd_arg(args, "account-number") != NULL;
    bool sequence = gd_arg(args, "sequence") != NULL;
    if (tx->offline) {
        if (!gd_arg(args, "chain-id"))
            return gd_cli_usage(cli, args, "--offline needs --chain-id");
        if (!number || !sequence)
            return gd_cli_usage(cli, args, "--offline needs --account-number and --sequence");
        if (gd_arg(args, "node"))
            return gd_cli_usage(cli, args, "--offline contacts no node; drop --node");
    } else if (number || sequence) {
        if (!number || !sequence)
            return gd_cli_usage(cli, args, "give both --account-number and --sequence, or "
                                           "neither");
        tx->opt.have_account = true;
    }
    int rc;
    if ((rc = gd_cli_u64_opt(cli, args, &tx->req.account_number, "account-number")) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &tx->req.sequence, "sequence")) != GD_CLI_CONTINUE)
        return rc;
    return GD_CLI_CONTINUE;
}

int gd_cli_tx_parse(gd_cli *cli, gd_args *args, gd_cli_tx *tx) {
    memset(tx, 0, sizeof *tx);
    tx->req.gas_limit = GD_GAS_DEFAULT;
    tx->req.memo = gd_arg(args, "memo");
    tx->req.chain_id = gd_arg(args, "chain-id");
    tx->offline = gd_flag(args, "offline");
    gd_submit_options_default(&tx->opt);
    int rc;
    if ((rc = gd_cli_u64_opt(cli, args, &tx->req.timeout_height, "timeout-height")) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_tx_gas(cli, args, tx)) != GD_CLI_CONTINUE)
        return rc;
    if (gd_flag(args, "no-wait"))
        tx->opt.wait = false;
    if ((rc = gd_cli_duration_opt(cli, args, "wait-timeout", &tx->opt.wait_timeout_ms)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_tx_account(cli, args, tx)) != GD_CLI_CONTINUE)
        return rc;
    /* --fees as given, or gas x --gas-prices (the default price when neither
     * is given; localnet's minimum), as the Cosmos CLI's two flags. */
    const char *fees = gd_arg(args, "fees"), *price = gd_arg(args, "gas-prices");
    if (fees && price)
        return gd_cli_usage(cli, args, "give --fees or --gas-prices, not both");
    if (fees && gd_coins_parse(tx->fees, GD_COINS_MAX, &tx->req.n_fees, fees, 0) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--fees"));
    tx->req.fees = tx->fees;
    if (!fees) {
        if (gd_gas_price_parse(&tx->gas_price, price ? price : GD_GAS_PRICE_DEFAULT) != GD_OK)
            return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--gas-prices"));
        tx->req.gas_price = &tx->gas_price;
    }
    return GD_CLI_CONTINUE;
}

int gd_cli_tx_load_key(gd_cli *cli, gd_args *args, gd_cli_tx *tx) {
    int rc = gd_cli_load_key(cli, args, &tx->key);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_status s = gd_address_from_pubkey(tx->signer, sizeof tx->signer, GD_ADDRESS_PREFIX,
                                         tx->key.pubkey);
    return s == GD_OK ? GD_CLI_CONTINUE : gd_cli_fail(cli, s);
}

int gd_cli_tx_rpc(gd_cli *cli, gd_args *args, gd_cli_tx *tx) {
    if (tx->rpc != NULL)
        return GD_CLI_CONTINUE;
    if (tx->offline)
        return gd_cli_usage(cli, args, "this needs the node, which --offline does not contact");
    return gd_cli_open_rpc(cli, args, &tx->rpc);
}

/* Signs without a node and prints the transaction and its hash. */
static int gd_cli_tx_print_signed(gd_cli *cli, gd_args *args, gd_cli_tx *tx) {
    gd_signed_tx signed_tx = {0};
    gd_status s = gd_tx_sign(&signed_tx, &tx->key, &tx->req);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    char *b64 = malloc(gd_base64_encoded_len(signed_tx.raw.len) + 1);
    if (b64 == NULL) {
        gd_signed_tx_free(&signed_tx);
        return gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
    }
    gd_base64_encode(b64, signed_tx.raw.data, signed_tx.raw.len);
    int rc = GD_EXIT_OK;
    if (gd_flag(args, "json"))
        rc = gd_cli_print_json_extra(cli,
                                     json_pack("{s:s,s:s}", "tx_base64", b64, "txhash",
                                               signed_tx.hash_hex),
                                     tx->extra);
    else
        fprintf(cli->out, "tx_base64: %s\ntxhash: %s\n", b64, signed_tx.hash_hex);
    free(b64);
    gd_signed_tx_free(&signed_tx);
    return rc;
}

/* The extra keys as "key: value" lines. */
static void gd_cli_tx_print_extra(gd_cli *cli, gd_args *args, const gd_cli_tx *tx) {
    const char *key;
    json_t *value;
    if (tx->extra == NULL || gd_flag(args, "json"))
        return;
    json_object_foreach(tx->extra, key, value)
        fprintf(cli->out, "%s: %s\n", key, json_string_value(value));
}

int gd_cli_tx_send(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_any *msgs,
                   size_t n_msgs) {
    tx->req.msgs = msgs;
    tx->req.n_msgs = n_msgs;
    gd_cli_tx_print_extra(cli, args, tx);
    if (tx->offline)
        return gd_cli_tx_print_signed(cli, args, tx);
    int rc = gd_cli_tx_rpc(cli, args, tx);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    char node_chain_id[64];
    if (tx->req.chain_id == NULL) {
        /* Like a client config's chain-id: take the node's network. */
        gd_node_status st;
        gd_status s = gd_rpc_status(tx->rpc, &st);
        if (s != GD_OK)
            return gd_cli_fail(cli, gd_fail_context(s, "reading the chain-id from the node (or "
                                                       "give --chain-id)"));
        snprintf(node_chain_id, sizeof node_chain_id, "%s", st.network);
        tx->req.chain_id = node_chain_id;
    }
    gd_submit_result result;
    gd_status s = gd_tx_submit(tx->rpc, &tx->key, &tx->req, &tx->opt, &result);
    tx->req.chain_id = gd_arg(args, "chain-id"); /* node_chain_id goes out of scope */
    const gd_abci_code *code = result.included ? &result.deliver : &result.check;
    if (s != GD_OK && tx->for_round && gd_cli_is_unknown_round(code)) {
        char detail[1024], hint[1024];
        snprintf(detail, sizeof detail, "%s", gd_error_detail());
        gd_cli_round_hint(tx->rpc, hint, sizeof hint, tx->run, tx->round);
        s = hint[0] ? gd_fail(s, "%s: %s", detail, hint) : gd_fail(s, "%s", detail);
    }
    return s == GD_OK ? gd_cli_print_submit_extra(cli, args, &result, tx->extra)
                      : gd_cli_submit_failed_extra(cli, args, &result, s, tx->extra);
}

void gd_cli_tx_end(gd_cli_tx *tx) {
    gd_rpc_close(tx->rpc);
    tx->rpc = NULL;
    gd_key_wipe(&tx->key);
    json_decref(tx->extra);
    tx->extra = NULL;
}
