/* The gonka-diloco command line, run in-process: exact JSON shapes, exit
 * codes, error messages, and online commands against the scripted node. */
#include <stdlib.h>
#include <sys/stat.h>

#include "chain/keys/address.h"
#include "chain/wire/gas_price.h"
#include "chain/wire/tx_decode.h"
#include "common/base64.h"
#include "plugin/cli/cli.h"
#include "tests/support/cli_run.h"
#include "tests/support/fake_node.h"
#include "tests/support/testkit.h"

static void test_keys(void) {
    const char *k1 = path_in_tmp("k1.key");
    run_result r = run("keys", "new", "--out", k1, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    const char *addr = json_str(r.json, "address");
    CHECK(addr && strncmp(addr, "gonka1", 6) == 0 && gd_address_check(addr) == GD_OK);
    CHECK(json_str(r.json, "pubkey") && strlen(json_str(r.json, "pubkey")) == 66);
    struct stat st;
    CHECK(stat(k1, &st) == 0 && (st.st_mode & 0777) == 0600);
    char *saved_addr = strdup(addr);
    run_free(&r);

    r = run("keys", "show", "--key", k1, "--json", NULL);
    CHECK(r.rc == 0 && r.json && json_object_size(r.json) == 2);
    CHECK_STR_EQ(json_str(r.json, "address"), saved_addr);
    run_free(&r);
    r = run("keys", "show", "--key", k1, NULL);
    CHECK(r.rc == 0 && strstr(r.out, saved_addr) && strstr(r.out, "pubkey:"));
    run_free(&r);

    /* Never overwritten. */
    r = run("keys", "new", "--out", k1, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "refusing to overwrite"));
    run_free(&r);
    /* A group-readable key file is refused with the fix. */
    CHECK(chmod(k1, 0640) == 0);
    r = run("keys", "show", "--key", k1, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "chmod 600"));
    run_free(&r);
    free(saved_addr);

    /* Import from hex: the generator key 1*G. */
    const char *k2 = path_in_tmp("k2.key");
    r = run("keys", "import", "--hex",
            "0000000000000000000000000000000000000000000000000000000000000001", "--out", k2,
            "--json", NULL);
    CHECK(r.rc == 0);
    CHECK_STR_EQ(json_str(r.json, "pubkey"),
                 "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798");
    run_free(&r);
    r = run("keys", "import", "--hex", "1234", "--out", path_in_tmp("k3.key"), NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--hex"));
    run_free(&r);
    r = run("keys", "import", "--hex",
            "0000000000000000000000000000000000000000000000000000000000000000", "--out",
            path_in_tmp("k3.key"), NULL);
    CHECK(r.rc == 2);
    run_free(&r);

    /* Import from a mnemonic file at Gonka's path and at the Hub's path. */
    const char *m = "economy stock theory fatal elder harbor betray wasp final emotion task "
                    "crumble siren bottom lizard educate guess current outdoor pair theory focus "
                    "wife stone\n";
    const char *mf = gd_test_write_file("m.txt", m, strlen(m), 0600);
    r = run("keys", "import", "--mnemonic-file", mf, "--out", path_in_tmp("k4.key"),
            "--hd-path", "m/44'/118'/0'/0/0", "--json", NULL);
    CHECK(r.rc == 0);
    CHECK_STR_EQ(json_str(r.json, "address"), "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc");
    run_free(&r);
    r = run("keys", "import", "--mnemonic-file", mf, "--out", path_in_tmp("k5.key"), "--json",
            NULL);
    CHECK(r.rc == 0);
    CHECK(strcmp(json_str(r.json, "address"), "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc") != 0);
    run_free(&r);
    const char *badm = gd_test_write_file("bad.txt", "abandon abandon\n", 16, 0600);
    r = run("keys", "import", "--mnemonic-file", badm, "--out", path_in_tmp("k6.key"), NULL);
    CHECK(r.rc == 2 && strstr(r.err, "words"));
    run_free(&r);
    const char *openm = gd_test_write_file("open.txt", m, strlen(m), 0644);
    r = run("keys", "import", "--mnemonic-file", openm, "--out", path_in_tmp("k7.key"), NULL);
    CHECK(r.rc == 1 && strstr(r.err, "chmod 600"));
    run_free(&r);
    r = run("keys", "import", "--out", path_in_tmp("k8.key"), NULL);
    CHECK(r.rc == 2 && strstr(r.err, "exactly one"));
    run_free(&r);
}

/* --hex is wiped from argv once read, so it stops showing in the process list. */
static void test_hex_wiped_from_argv(void) {
    char hex[] = "0000000000000000000000000000000000000000000000000000000000000002";
    char *argv[] = {"gonka-diloco", "keys", "import", "--hex", hex, "--out",
                    (char *)path_in_tmp("wipe.key"), NULL};
    FILE *devnull = fopen("/dev/null", "w");
    CHECK(gd_cli_main(devnull, 7, argv, devnull) == 0);
    fclose(devnull);
    for (size_t i = 0; i < sizeof hex - 1; i++)
        CHECK(hex[i] == '\0');
}

static const char *make_key(const char *name, const char *hex) {
    const char *p = path_in_tmp(name);
    run_result r = run("keys", "import", "--hex", hex, "--out", p, NULL);
    CHECK(r.rc == 0);
    run_free(&r);
    return p;
}

static void test_tx_send_offline(void) {
    const char *key = make_key("off.key",
                               "3333333333333333333333333333333333333333333333333333333333333333");
    run_result r = run("tx", "send", "--key", key, "--to",
                       "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", "--amount", "1000ngonka",
                       "--chain-id", "prod-sim", "--offline", "--account-number", "4",
                       "--sequence", "2", "--memo", "hi", "--fees", "10ngonka", "--gas", "150000",
                       "--json", NULL);
    CHECK(r.rc == 0 && r.json && json_object_size(r.json) == 2);
    const char *b64 = json_str(r.json, "tx_base64");
    const char *hash = json_str(r.json, "txhash");
    CHECK(b64 && hash && strlen(hash) == 64);
    uint8_t raw[4096];
    size_t n = 0;
    CHECK_OK(gd_base64_decode(raw, sizeof raw, &n, b64, strlen(b64)));
    gd_decoded_tx *dec = NULL;
    CHECK_OK(gd_tx_decode(&dec, raw, n));
    CHECK_OK(gd_decoded_tx_verify(dec, "prod-sim", 4));
    json_t *j = gd_decoded_tx_to_json(dec);
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "body"), "memo")), "hi");
    json_t *si = json_array_get(json_object_get(json_object_get(j, "auth_info"), "signer_infos"), 0);
    CHECK_STR_EQ(json_string_value(json_object_get(si, "sequence")), "2");
    json_t *fee = json_object_get(json_object_get(j, "auth_info"), "fee");
    CHECK_STR_EQ(json_string_value(json_object_get(fee, "gas_limit")), "150000");
    json_decref(j);
    gd_decoded_tx_free(dec);

    /* Same inputs, same bytes: signing is deterministic. */
    run_result again = run("tx", "send", "--key", key, "--to",
                           "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", "--amount",
                           "1000ngonka", "--chain-id", "prod-sim", "--offline", "--account-number",
                           "4", "--sequence", "2", "--memo", "hi", "--fees", "10ngonka", "--gas",
                           "150000", "--json", NULL);
    CHECK_STR_EQ(json_str(again.json, "txhash"), hash);
    run_free(&again);

    /* tx decode checks the signature. */
    run_result d = run("tx", "decode", b64, "--chain-id", "prod-sim", "--account-number", "4", NULL);
    CHECK(d.rc == 0 && d.json);
    CHECK_STR_EQ(json_str(d.json, "signature"), "valid");
    CHECK_STR_EQ(json_str(d.json, "txhash"), hash);
    run_free(&d);
    d = run("tx", "decode", b64, "--chain-id", "prod-sim", "--account-number", "5", NULL);
    CHECK(d.rc == 1 && strstr(d.err, "does not verify"));
    run_free(&d);
    d = run("tx", "decode", "AAAA", NULL);
    CHECK(d.rc == 2 && strstr(d.err, "not a valid transaction"));
    run_free(&d);
    run_free(&r);

    /* Human output names both values. */
    r = run("tx", "send", "--key", key, "--to", "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc",
            "--amount", "5ngonka", "--chain-id", "prod-sim", "--offline", "--account-number", "0",
            "--sequence", "0", NULL);
    CHECK(r.rc == 0 && strstr(r.out, "tx_base64: ") && strstr(r.out, "txhash: "));
    run_free(&r);
}

/* The fee an offline-signed `tx send` carries ("500ngonka", "" for none). */
static const char *offline_fee(const char *key, const char *a1, const char *a2, const char *a3,
                               const char *a4) {
    static char fee[256];
    run_result r = run("tx", "send", "--key", key, "--to",
                       "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", "--amount", "1ngonka",
                       "--chain-id", "prod-sim", "--offline", "--account-number", "0",
                       "--sequence", "0", "--json", a1, a2, a3, a4, NULL);
    fee[0] = '\0';
    CHECK(r.rc == 0 && r.json);
    const char *b64 = json_str(r.json, "tx_base64");
    uint8_t raw[4096];
    size_t n = 0;
    gd_decoded_tx *dec = NULL;
    if (b64 && gd_base64_decode(raw, sizeof raw, &n, b64, strlen(b64)) == GD_OK &&
        gd_tx_decode(&dec, raw, n) == GD_OK) {
        json_t *j = gd_decoded_tx_to_json(dec);
        json_t *amount = json_object_get(json_object_get(json_object_get(j, "auth_info"), "fee"),
                                         "amount");
        for (size_t i = 0; i < json_array_size(amount); i++) {
            json_t *c = json_array_get(amount, i);
            size_t used = strlen(fee);
            snprintf(fee + used, sizeof fee - used, "%s%s%s", i ? "," : "",
                     json_string_value(json_object_get(c, "amount")),
                     json_string_value(json_object_get(c, "denom")));
        }
        json_decref(j);
        gd_decoded_tx_free(dec);
    }
    run_free(&r);
    return fee;
}

/* Without --fees the client pays gas x the default gas price, localnet's
 * minimum; --gas-prices changes the price, --fees replaces it. */
static void test_tx_send_fees(void) {
    const char *key = make_key("fee.key",
                               "6666666666666666666666666666666666666666666666666666666666666666");
    CHECK_STR_EQ(offline_fee(key, NULL, NULL, NULL, NULL), "500ngonka");
    CHECK_STR_EQ(offline_fee(key, "--gas", "3000000", NULL, NULL), "7500ngonka");
    CHECK_STR_EQ(offline_fee(key, "--gas", "200001", NULL, NULL), "501ngonka");
    CHECK_STR_EQ(offline_fee(key, "--gas-prices", "0.01ngonka", "--gas", "150000"), "1500ngonka");
    CHECK_STR_EQ(offline_fee(key, "--gas-prices", "0", NULL, NULL), "");
    CHECK_STR_EQ(offline_fee(key, "--gas-prices", "0ngonka", NULL, NULL), "");
    CHECK_STR_EQ(offline_fee(key, "--fees", "7ngonka", NULL, NULL), "7ngonka");
    CHECK_STR_EQ(offline_fee(key, "--fees", "0ngonka", NULL, NULL), "");
    run_result r = run("tx", "send", "--help", NULL);
    CHECK(r.rc == 0 && strstr(r.out, "--gas-prices") && strstr(r.out, GD_GAS_PRICE_DEFAULT));
    run_free(&r);
}

static void test_tx_send_bad_input(void) {
    const char *key = make_key("bad.key",
                               "4444444444444444444444444444444444444444444444444444444444444444");
    const char *to = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc";
    struct {
        const char *args[16];
        int rc;
        const char *msg;
    } cases[] = {
        {{"--to", "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahd", "--amount", "1ngonka"}, 2,
         "checksum"},
        {{"--to", "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6", "--amount", "1ngonka"}, 2,
         "prefix"},
        {{"--to", to, "--amount", "abc"}, 2, "--amount"},
        {{"--to", to, "--amount", "0ngonka"}, 2, "positive"},
        {{"--to", to, "--amount", "1.5gonka"}, 2, "whole numbers"},
        {{"--to", to, "--amount", "1ngonka", "--fees", "x"}, 2, "--fees"},
        {{"--to", to, "--amount", "1ngonka", "--gas-prices", "x"}, 2, "--gas-prices"},
        {{"--to", to, "--amount", "1ngonka", "--gas-prices", "0.5"}, 2, "--gas-prices"},
        {{"--to", to, "--amount", "1ngonka", "--fees", "1ngonka", "--gas-prices", "1ngonka"}, 2,
         "not both"},
        {{"--to", to, "--amount", "1ngonka", "--gas", "-1"}, 2, "--gas"},
        {{"--to", to, "--amount", "1ngonka", "--gas", "0"}, 2, "--gas"},
        {{"--to", to, "--amount", "1ngonka", "--gas", "auto"}, 2, "--gas auto"},
        {{"--to", to, "--amount", "1ngonka", "--sequence", "x"}, 2, "--sequence"},
        {{"--amount", "1ngonka"}, 2, "--to"},
        {{"--to", to}, 2, "--amount"},
        {{"--to", to, "--amount", "1ngonka", "--bogus"}, 2, "unknown option --bogus"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[40] = {"tx", "send", "--key", key, "--offline", "--chain-id", "c",
                                "--account-number", "1"};
        int argc = 9;
        bool has_seq = false;
        for (int k = 0; cases[i].args[k]; k++) {
            has_seq |= strcmp(cases[i].args[k], "--sequence") == 0;
            argv[argc++] = cases[i].args[k];
        }
        if (!has_seq) {
            argv[argc++] = "--sequence";
            argv[argc++] = "1";
        }
        argv[argc] = NULL;
        run_result r = run(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7],
                           argv[8], argv[9], argv[10], argv[11], argv[12], argv[13], argv[14],
                           argv[15], argv[16], argv[17], argv[18], NULL);
        bool ok = r.rc == cases[i].rc && strstr(r.err, cases[i].msg) != NULL &&
                  strncmp(r.err, "error: ", 7) == 0 && strchr(r.err, '\n') == r.err + strlen(r.err) - 1;
        if (!ok)
            fprintf(stderr, "case %zu: rc %d, err '%s'\n", i, r.rc, r.err);
        CHECK(ok);
        CHECK(r.out[0] == '\0');
        run_free(&r);
    }
    run_result r = run("tx", "send", "--key", key, "--to", to, "--amount", "1ngonka", "--offline",
                       NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--chain-id"));
    run_free(&r);
    r = run("tx", "send", "--key", path_in_tmp("missing.key"), "--to", to, "--amount", "1ngonka",
            "--offline", "--chain-id", "c", "--account-number", "0", "--sequence", "0", NULL);
    CHECK(r.rc == 1 && strstr(r.err, "cannot open"));
    run_free(&r);
}

static void test_online(void) {
    const char *key = make_key("on.key",
                               "5555555555555555555555555555555555555555555555555555555555555555");
    run_result show = run("keys", "show", "--key", key, "--json", NULL);
    char from[GD_ADDRESS_STR_MAX];
    snprintf(from, sizeof from, "%s", json_str(show.json, "address"));
    run_free(&show);
    fake_node node;
    fake_node_init(&node, from);
    node.sequence = node.reported_sequence = 2;
    gd_mock_server *srv = gd_mock_start(fake_node_handler, &node);
    const char *url = gd_mock_url(srv);
    const char *to = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc";

    run_result r = run("tx", "send", "--key", key, "--to", to, "--amount", "1000ngonka",
                       "--chain-id", "prod-sim", "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK(json_integer_value(json_object_get(r.json, "code")) == 0);
    CHECK(json_integer_value(json_object_get(r.json, "height")) == 101);
    CHECK(json_integer_value(json_object_get(r.json, "sequence")) == 2);
    CHECK(json_is_true(json_object_get(r.json, "included")));
    CHECK_STR_EQ(json_str(r.json, "txhash"), node.last_txhash);
    CHECK_STR_EQ(json_str(r.json, "fee"), "500ngonka"); /* the default gas price */
    CHECK_STR_EQ(node.last_tx_fee, "500ngonka");
    run_free(&r);
    /* --gas auto: the fee follows the simulated limit (80000 x 0.0025). */
    r = run("tx", "send", "--key", key, "--to", to, "--amount", "1ngonka", "--gas", "auto",
            "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK_STR_EQ(json_str(r.json, "fee"), "200ngonka");
    CHECK(node.last_tx_gas == 80000);
    CHECK_STR_EQ(node.last_tx_fee, "200ngonka");
    run_free(&r);

    /* Without --chain-id the node's network is used. */
    r = run("tx", "send", "--key", key, "--to", to, "--amount", "1ngonka", "--node", url, NULL);
    CHECK(r.rc == 0 && strstr(r.out, "txhash: ") && strstr(r.out, "height: ") &&
          strstr(r.out, "fee:    500ngonka\n"));
    run_free(&r);

    /* A stale sequence is resolved; a wrong chain-id is explained. */
    node.reported_sequence = 0;
    r = run("tx", "send", "--key", key, "--to", to, "--amount", "1ngonka", "--node", url, NULL);
    CHECK(r.rc == 0);
    run_free(&r);
    r = run("tx", "send", "--key", key, "--to", to, "--amount", "1ngonka", "--node", url,
            "--chain-id", "wrong-chain", NULL);
    CHECK(r.rc == 1 && strstr(r.err, "code 4") && strstr(r.err, "'prod-sim'"));
    run_free(&r);

    /* Offline-signed bytes broadcast later. */
    r = run("tx", "send", "--key", key, "--to", to, "--amount", "3ngonka", "--chain-id", "prod-sim",
            "--offline", "--account-number", "7", "--sequence", "4", "--json", NULL);
    char b64[4096];
    snprintf(b64, sizeof b64, "%s", json_str(r.json, "tx_base64"));
    run_free(&r);
    node.sequence = 4;
    r = run("tx", "broadcast", b64, "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json && json_is_true(json_object_get(r.json, "included")));
    run_free(&r);

    /* Queries. */
    node.reported_sequence = 5;
    r = run("query", "account", from, "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && json_integer_value(json_object_get(r.json, "account_number")) == 7 &&
          json_integer_value(json_object_get(r.json, "sequence")) == 5);
    run_free(&r);
    r = run("query", "account", to, "--node", url, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "does not exist on chain yet"));
    run_free(&r);
    r = run("query", "balance", from, "--node", url, "--json", NULL);
    CHECK(r.rc == 0);
    CHECK_STR_EQ(json_str(r.json, "amount"), "1000000");
    CHECK_STR_EQ(json_str(r.json, "denom"), "ngonka");
    run_free(&r);
    r = run("query", "balance", from, "--node", url, NULL);
    CHECK(r.rc == 0 && strcmp(r.out, "1000000ngonka\n") == 0);
    run_free(&r);
    r = run("query", "balance", "gonka1nope", "--node", url, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "invalid address"));
    run_free(&r);
    r = run("query", "epoch", "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK(json_integer_value(json_object_get(json_object_get(r.json, "stages"),
                                             "set_new_validators")) == 87065);
    CHECK_STR_EQ(json_str(r.json, "phase"), "Inference");
    run_free(&r);
    r = run("status", "--node", url, "--json", NULL);
    CHECK(r.rc == 0);
    CHECK_STR_EQ(json_str(r.json, "network"), "prod-sim");
    run_free(&r);
    gd_mock_stop(srv);

    /* A node that is not there. */
    char refused[64];
    gd_mock_refused_url(refused, sizeof refused);
    r = run("status", "--node", refused, "--retries", "0", NULL);
    CHECK(r.rc == 1 && strstr(r.err, "cannot connect"));
    run_free(&r);
    r = run("status", "--node", "localhost:1", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "http://"));
    run_free(&r);
    r = run("status", "--timeout", "forever", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--timeout"));
    run_free(&r);
}

static void test_help_and_usage(void) {
    const char *commands[][2] = {{"keys", "new"},    {"keys", "import"}, {"keys", "show"},
                                 {"tx", "send"},     {"tx", "broadcast"}, {"tx", "decode"},
                                 {"query", "account"}, {"query", "balance"},
                                 {"query", "epoch"}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        run_result r = run(commands[i][0], commands[i][1], "--help", NULL);
        CHECK(r.rc == 0 && strstr(r.out, "Usage: gonka-diloco") && strstr(r.out, "--log-level"));
        run_free(&r);
    }
    run_result r = run("status", "--help", NULL);
    CHECK(r.rc == 0 && strstr(r.out, "--node URL"));
    run_free(&r);
    r = run("--help", NULL);
    CHECK(r.rc == 0 && strstr(r.out, "keys new") && strstr(r.out, "query epoch"));
    run_free(&r);
    r = run(NULL);
    CHECK(r.rc == 2);
    run_free(&r);
    r = run("frobnicate", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "unknown command"));
    run_free(&r);
    r = run("keys", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "keys import"));
    run_free(&r);
    r = run("keys", "delete", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "unknown command 'keys delete'"));
    run_free(&r);
    r = run("keys", "show", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--key"));
    run_free(&r);
    r = run("keys", "show", "--key", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "needs a value"));
    run_free(&r);
    r = run("keys", "show", "--json=1", "--key", "x", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "takes no value"));
    run_free(&r);
    r = run("query", "balance", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "missing argument"));
    run_free(&r);
    r = run("query", "balance", "a", "b", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "unexpected argument"));
    run_free(&r);
    r = run("status", "--log-level", "loud", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "log level"));
    run_free(&r);
    r = run("--version", NULL);
    CHECK(r.rc == 0 && strstr(r.out, "gonka-diloco "));
    run_free(&r);
}

static void test_epoch_clock(void) {
    run_result r = run("epoch-clock", "--epoch", "0", "--poc-start", "0", "--height", "5",
                       "--json", NULL);
    CHECK(r.rc == 0);
    CHECK(json_integer_value(json_object_get(json_object_get(r.json, "stages"),
                                             "next_poc_start")) == 300);
    CHECK_STR_EQ(json_str(r.json, "phase"), "Inference");
    run_free(&r);
    r = run("epoch-clock", "--epoch", "3", "--poc-start", "1000", "--height", "1010",
            "--poc-stage-duration", "7", "--json", NULL);
    CHECK(r.rc == 0);
    CHECK(json_integer_value(json_object_get(json_object_get(r.json, "stages"),
                                             "poc_generation_wind_down")) == 1005);
    CHECK_STR_EQ(json_str(r.json, "phase"), "PoCGenerateWindDown"); /* validation starts at 1012 */
    run_free(&r);
    r = run("epoch-clock", "--epoch", "3", "--poc-start", "1000", "--height", "1010",
            "--epoch-length", "0", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "epoch length must be positive"));
    run_free(&r);
    r = run("epoch-clock", "--epoch", "3", NULL);
    CHECK(r.rc == 2);
    run_free(&r);
    /* Out of range: no silent clamp to 2^62, no height outside the epoch. */
    r = run("epoch-clock", "--epoch", "1", "--poc-start", "10", "--height",
            "9223372036854775807", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "at most 2^62"));
    run_free(&r);
    r = run("epoch-clock", "--epoch", "1", "--poc-start", "100", "--height", "99", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--height 99 is before the epoch's --poc-start 100"));
    run_free(&r);
    r = run("epoch-clock", "--epoch", "1", "--poc-start", "100", "--height", "17380", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "next PoC starts at 17380"));
    run_free(&r);
    r = run("epoch-clock", "--epoch", "1", "--poc-start", "4611686018427387904", "--height",
            "4611686018427387904", "--json", NULL); /* 2^62 itself is in range */
    CHECK(r.rc == 0 && json_integer_value(json_object_get(r.json, "blocks_to_next_poc")) == 17280);
    run_free(&r);
}

int main(void) {
    RUN_TEST(test_keys);
    RUN_TEST(test_hex_wiped_from_argv);
    RUN_TEST(test_tx_send_offline);
    RUN_TEST(test_tx_send_fees);
    RUN_TEST(test_tx_send_bad_input);
    RUN_TEST(test_online);
    RUN_TEST(test_help_and_usage);
    RUN_TEST(test_epoch_clock);
    return gd_test_finish();
}
