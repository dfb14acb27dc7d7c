/* tx send | broadcast | decode. */
#include <stdlib.h>
#include <string.h>

#include "chain/address.h"
#include "chain/submit.h"
#include "chain/tx_decode.h"
#include "common/base64.h"
#include "common/file.h"
#include "plugin/cli_util.h"

/* Prints the outcome of an online submission. */
static int gd_print_submit(gd_cli *cli, gd_args *args, const gd_submit_result *r) {
    if (gd_flag(args, "json")) {
        const gd_abci_code *c = r->included ? &r->deliver : &r->check;
        json_t *j = json_pack("{s:s,s:b,s:I,s:i,s:s,s:s,s:I,s:I,s:I,s:I}", "txhash", r->txhash,
                              "included", r->included, "height", (json_int_t)r->height, "code",
                              (int)c->code, "codespace", c->codespace, "log", c->log,
                              "gas_wanted", (json_int_t)r->gas_wanted, "gas_used",
                              (json_int_t)r->gas_used, "account_number",
                              (json_int_t)r->account_number, "sequence",
                              (json_int_t)r->sequence);
        return gd_cli_print_json(cli, j);
    }
    fprintf(cli->out, "txhash: %s\n", r->txhash);
    if (r->included)
        fprintf(cli->out, "height: %lld\ncode:   %u\ngas:    %lld used of %lld\n",
                (long long)r->height, r->deliver.code, (long long)r->gas_used,
                (long long)r->gas_wanted);
    else
        fprintf(cli->out, "accepted into the mempool (not waiting for a block)\n");
    return GD_EXIT_OK;
}

/* After a failed submission, print what is known (hash, code) then the error. */
static int gd_submit_failed(gd_cli *cli, gd_args *args, const gd_submit_result *r,
                            gd_status s) {
    if (gd_flag(args, "json") && r->txhash[0]) {
        const gd_abci_code *c = r->included ? &r->deliver : &r->check;
        json_t *j = json_pack("{s:s,s:b,s:I,s:i,s:s,s:s}", "txhash", r->txhash, "included",
                              r->included, "height", (json_int_t)r->height, "code",
                              (int)c->code, "codespace", c->codespace, "log", c->log);
        gd_cli_print_json(cli, j);
    }
    return gd_cli_fail(cli, s);
}

static int gd_run_tx_send(gd_cli *cli, gd_args *args) {
    const char *to = gd_arg(args, "to");
    const char *amount = gd_arg(args, "amount");
    const char *chain_id = gd_arg(args, "chain-id");
    const char *gas = gd_arg(args, "gas");
    const char *fees = gd_arg(args, "fees");
    bool offline = gd_flag(args, "offline");
    if (to == NULL)
        return gd_cli_usage(cli, args, "--to ADDR is required");
    if (amount == NULL)
        return gd_cli_usage(cli, args, "--amount COINS is required (e.g. 1000ngonka)");

    gd_tx_request req = {.gas_limit = GD_GAS_DEFAULT, .memo = gd_arg(args, "memo")};
    gd_submit_options opt;
    gd_submit_options_default(&opt);
    int rc;
    if ((rc = gd_cli_u64_opt(cli, args, "timeout-height", &req.timeout_height)) >= 0)
        return rc;
    if (gas && strcmp(gas, "auto") == 0) {
        if (offline)
            return gd_cli_usage(cli, args, "--gas auto needs a node; give a number with "
                                           "--offline");
        opt.gas_auto = true;
    } else if ((rc = gd_cli_u64_opt(cli, args, "gas", &req.gas_limit)) >= 0) {
        return rc;
    }
    if (req.gas_limit == 0)
        return gd_cli_usage(cli, args, "--gas must be positive");
    const char *adj = gd_arg(args, "gas-adjustment");
    if (adj) {
        char *end = NULL;
        opt.gas_adjustment = strtod(adj, &end);
        if (end == adj || *end != '\0' || !(opt.gas_adjustment >= 1.0 && opt.gas_adjustment <= 10))
            return gd_cli_usage(cli, args, "--gas-adjustment wants a number from 1 to 10");
    }
    if (gd_flag(args, "no-wait"))
        opt.wait = false;
    if ((rc = gd_cli_duration_opt(cli, args, "wait-timeout", &opt.wait_timeout_ms)) >= 0)
        return rc;
    if (offline) {
        if (!chain_id)
            return gd_cli_usage(cli, args, "--offline needs --chain-id");
        if (!gd_arg(args, "account-number") || !gd_arg(args, "sequence"))
            return gd_cli_usage(cli, args, "--offline needs --account-number and --sequence");
        if (gd_arg(args, "node"))
            return gd_cli_usage(cli, args, "--offline contacts no node; drop --node");
    } else if (gd_arg(args, "account-number") || gd_arg(args, "sequence")) {
        if (!gd_arg(args, "account-number") || !gd_arg(args, "sequence"))
            return gd_cli_usage(cli, args, "give both --account-number and --sequence, or "
                                           "neither");
        opt.have_account = true;
    }
    if ((rc = gd_cli_u64_opt(cli, args, "account-number", &req.account_number)) >= 0 ||
        (rc = gd_cli_u64_opt(cli, args, "sequence", &req.sequence)) >= 0)
        return rc;

    /* Addresses are re-encoded in canonical lower case; coins sorted. */
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t raw_len;
    char to_canon[GD_ADDRESS_STR_MAX], from[GD_ADDRESS_STR_MAX];
    if (gd_address_decode(raw, &raw_len, to, GD_ADDRESS_PREFIX) != GD_OK ||
        gd_address_encode(to_canon, sizeof to_canon, GD_ADDRESS_PREFIX, raw, raw_len) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--to"));
    gd_coin coins[GD_COINS_MAX], fee_coins[GD_COINS_MAX];
    size_t n_coins = 0, n_fees = 0;
    gd_status s = gd_coins_parse(coins, GD_COINS_MAX, &n_coins, amount, 1);
    if (s != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--amount"));
    if (n_coins == 0)
        return gd_cli_usage(cli, args, "--amount is empty");
    if (fees && gd_coins_parse(fee_coins, GD_COINS_MAX, &n_fees, fees, 0) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--fees"));

    gd_key key;
    if ((rc = gd_cli_load_key(cli, args, &key)) >= 0)
        return rc;
    gd_any msg = {0};
    gd_rpc *rpc = NULL;
    char node_chain_id[64];
    s = gd_address_from_pubkey(from, sizeof from, GD_ADDRESS_PREFIX, key.pubkey);
    if (s == GD_OK)
        s = gd_msg_send(&msg, from, to_canon, coins, n_coins);
    if (s != GD_OK) {
        rc = gd_cli_fail(cli, s);
        goto done;
    }
    req.msgs = &msg;
    req.n_msgs = 1;
    req.fees = fee_coins;
    req.n_fees = n_fees;
    req.chain_id = chain_id;

    if (offline) {
        gd_signed_tx tx = {0};
        s = gd_tx_sign(&tx, &key, &req);
        if (s != GD_OK) {
            rc = gd_cli_fail(cli, s);
            goto done;
        }
        char *b64 = malloc(gd_base64_encoded_len(tx.raw.len) + 1);
        if (b64 == NULL) {
            gd_signed_tx_free(&tx);
            rc = gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
            goto done;
        }
        gd_base64_encode(b64, tx.raw.data, tx.raw.len);
        if (gd_flag(args, "json"))
            rc = gd_cli_print_json(cli, json_pack("{s:s,s:s}", "tx_base64", b64, "txhash",
                                                  tx.hash_hex));
        else {
            fprintf(cli->out, "tx_base64: %s\ntxhash: %s\n", b64, tx.hash_hex);
            rc = GD_EXIT_OK;
        }
        free(b64);
        gd_signed_tx_free(&tx);
        goto done;
    }

    if ((rc = gd_cli_open_rpc(cli, args, &rpc)) >= 0)
        goto done;
    if (chain_id == NULL) {
        /* Like a client config's chain-id: take the node's network. */
        gd_node_status st;
        if ((s = gd_rpc_status(rpc, &st)) != GD_OK) {
            rc = gd_cli_fail(cli, gd_fail_context(s, "reading the chain-id from the node (or "
                                                     "give --chain-id)"));
            goto done;
        }
        snprintf(node_chain_id, sizeof node_chain_id, "%s", st.network);
        req.chain_id = node_chain_id;
    }
    gd_submit_result result;
    s = gd_tx_submit(rpc, &key, &req, &opt, &result);
    rc = s == GD_OK ? gd_print_submit(cli, args, &result) : gd_submit_failed(cli, args, &result, s);
done:
    gd_rpc_close(rpc);
    gd_any_free(&msg);
    gd_key_wipe(&key);
    return rc;
}

/* Reads --tx-base64 or --tx-file (raw bytes or base64 text) into raw.
 * Returns -1 on success; on failure raw is freed and an exit code returned. */
static int gd_cli_read_tx(gd_cli *cli, gd_args *args, const char *positional, gd_buf *raw) {
    const char *b64 = positional ? positional : gd_arg(args, "tx-base64");
    const char *file = gd_arg(args, "tx-file");
    if ((b64 != NULL) == (file != NULL))
        return gd_cli_usage(cli, args, "give the transaction as base64 or with --tx-file FILE");
    gd_buf text = {0};
    const char *src = b64;
    size_t n = b64 ? strlen(b64) : 0;
    bool raw_fallback = false;
    if (file) {
        gd_status s = gd_file_read(file, 4 * GD_TX_MAX_BYTES, &text);
        if (s != GD_OK) {
            gd_buf_free(&text);
            return gd_cli_fail(cli, s);
        }
        /* A file may hold base64 text (as tx send --offline prints) or raw bytes. */
        src = (const char *)text.data;
        n = text.len;
        while (n > 0 && (src[n - 1] == '\n' || src[n - 1] == '\r' || src[n - 1] == ' '))
            n--;
        raw_fallback = true;
    }
    gd_status s = gd_buf_reserve(raw, gd_base64_decoded_max(n) + 1);
    if (s == GD_OK)
        s = gd_base64_decode(raw->data, raw->cap, &raw->len, src ? src : "", n);
    if (s != GD_OK && raw_fallback) {
        raw->len = 0;
        s = gd_buf_append(raw, text.data, text.len);
    }
    gd_buf_free(&text);
    if (s == GD_OK)
        return -1;
    gd_buf_free(raw);
    return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "transaction base64"));
}

static int gd_run_tx_broadcast(gd_cli *cli, gd_args *args) {
    gd_buf raw = {0};
    int rc = gd_cli_read_tx(cli, args, args->n_positional ? args->positional[0] : NULL, &raw);
    if (rc >= 0)
        return rc;
    gd_decoded_tx *dec = NULL;
    gd_status s = gd_tx_decode(&dec, raw.data, raw.len);
    gd_decoded_tx_free(dec);
    if (s != GD_OK) {
        gd_buf_free(&raw);
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "not a valid transaction"));
    }
    gd_rpc *rpc = NULL;
    if ((rc = gd_cli_open_rpc(cli, args, &rpc)) >= 0) {
        gd_buf_free(&raw);
        return rc;
    }
    gd_submit_options opt;
    gd_submit_options_default(&opt);
    opt.wait = !gd_flag(args, "no-wait");
    if ((rc = gd_cli_duration_opt(cli, args, "wait-timeout", &opt.wait_timeout_ms)) >= 0)
        goto out;
    gd_signed_tx tx = {.raw = raw};
    gd_tx_hash(tx.hash, tx.hash_hex, raw.data, raw.len);
    gd_submit_result r;
    s = gd_tx_broadcast_signed(rpc, &tx, &opt, &r);
    rc = s == GD_OK ? gd_print_submit(cli, args, &r) : gd_submit_failed(cli, args, &r, s);
out:
    gd_rpc_close(rpc);
    gd_buf_free(&raw);
    return rc;
}

static int gd_run_tx_decode(gd_cli *cli, gd_args *args) {
    gd_buf raw = {0};
    int rc = gd_cli_read_tx(cli, args, args->n_positional ? args->positional[0] : NULL, &raw);
    if (rc >= 0)
        return rc;
    gd_decoded_tx *tx = NULL;
    gd_status s = gd_tx_decode(&tx, raw.data, raw.len);
    if (s != GD_OK) {
        gd_buf_free(&raw);
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "not a valid transaction"));
    }
    char txhash[GD_TXHASH_HEX_LEN + 1], signer[GD_ADDRESS_STR_MAX] = "";
    uint8_t hash[32];
    gd_tx_hash(hash, txhash, raw.data, raw.len);
    if (gd_decoded_tx_signer(tx, signer, sizeof signer) != GD_OK)
        signer[0] = '\0';
    const char *chain_id = gd_arg(args, "chain-id");
    uint64_t account_number = 0;
    const char *verified = NULL;
    if ((rc = gd_cli_u64_opt(cli, args, "account-number", &account_number)) >= 0)
        goto done;
    if (chain_id) {
        s = gd_decoded_tx_verify(tx, chain_id, account_number);
        if (s != GD_OK) {
            rc = gd_cli_fail(cli, s);
            goto done;
        }
        verified = "valid";
    }
    json_t *j = gd_decoded_tx_to_json(tx);
    if (j) {
        json_object_set_new(j, "txhash", json_string(txhash));
        json_object_set_new(j, "signer", json_string(signer));
        if (verified)
            json_object_set_new(j, "signature", json_string(verified));
    }
    rc = gd_cli_print_json(cli, j);
done:
    gd_decoded_tx_free(tx);
    gd_buf_free(&raw);
    return rc;
}

static const gd_opt_spec gd_tx_send_opts[] = {
    {"key", "FILE", "signer's key file"},
    {"to", "ADDR", "recipient gonka1... address"},
    {"amount", "COINS", "amount, e.g. 1000ngonka (1 GNK = 1000000000ngonka)"},
    {"chain-id", "ID", "chain id, e.g. gonka-mainnet (online default: the node's)"},
    {"memo", "TEXT", "transaction memo"},
    {"gas", "N|auto", "gas limit (default 200000); auto simulates first"},
    {"gas-adjustment", "X", "factor on simulated gas with --gas auto (default 1.0)"},
    {"fees", "COINS", "fee, e.g. 100ngonka (default none)"},
    {"timeout-height", "H", "reject the transaction after block H"},
    {"offline", NULL, "sign only: print the transaction, contact no node"},
    {"account-number", "N", "signer's account number (required with --offline)"},
    {"sequence", "S", "signer's sequence (required with --offline)"},
    {"no-wait", NULL, "return once the node accepts it, without waiting for a block"},
    {"wait-timeout", "DURATION", "how long to wait for a block (default 30s)"},
    GD_RPC_OPTS,
    {"json", NULL, "print the result as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_tx_send = {
    "tx send", "", 0, 0,
    "Send coins (cosmos.bank.v1beta1.MsgSend), signed in SIGN_MODE_DIRECT.",
    "Online, the account number and sequence are read from the node, a sequence mismatch\n"
    "(code 32) is resolved by signing again with the sequence the chain expects, and the\n"
    "command waits until the transaction is in a block. With --offline it prints the\n"
    "signed transaction (base64 TxRaw) and its hash; --json prints\n"
    "{\"tx_base64\": ..., \"txhash\": ...}. Broadcast it later with 'tx broadcast'.",
    gd_tx_send_opts, gd_run_tx_send,
};

static const gd_opt_spec gd_tx_broadcast_opts[] = {
    {"tx-base64", "B64", "the signed transaction (as 'tx send --offline' prints it)"},
    {"tx-file", "FILE", "read the transaction (base64 text or raw bytes) from FILE"},
    {"no-wait", NULL, "return once the node accepts it, without waiting for a block"},
    {"wait-timeout", "DURATION", "how long to wait for a block (default 30s)"},
    GD_RPC_OPTS,
    {"json", NULL, "print the result as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_tx_broadcast = {
    "tx broadcast", "[TX_BASE64]", 0, 1,
    "Broadcast a signed transaction (broadcast_tx_sync) and wait for its block.",
    NULL, gd_tx_broadcast_opts, gd_run_tx_broadcast,
};

static const gd_opt_spec gd_tx_decode_opts[] = {
    {"tx-base64", "B64", "the transaction as base64"},
    {"tx-file", "FILE", "read the transaction (base64 text or raw bytes) from FILE"},
    {"chain-id", "ID", "also verify the signature for this chain id"},
    {"account-number", "N", "account number for the signature check (default 0)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_tx_decode = {
    "tx decode", "[TX_BASE64]", 0, 1,
    "Decode a transaction as JSON (with the strict checks a Cosmos SDK node applies).",
    "With --chain-id the SIGN_MODE_DIRECT signature is verified too; a bad signature\n"
    "exits with status 1.",
    gd_tx_decode_opts, gd_run_tx_decode,
};
