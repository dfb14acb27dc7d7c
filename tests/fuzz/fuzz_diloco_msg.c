/* The DiLoCo module's message decoders and handlers: arbitrary bytes as
 * each of its ten messages (the first input byte picks which, in the order
 * of the module's message routes; the second how many blocks into the run's
 * first round), decoded as the router decodes them (gd_msg_route_decode),
 * through the message's stateless checks and, when they pass, its execution
 * against a chain with a run, four members and a round in progress. Nothing
 * may crash, and a message that executes must leave every invariant
 * holding. */
#include <string.h>

#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/module/app.h"
#include "chain/module/auth.h"
#include "chain/module/diloco.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_MEMBERS 4 /* the run's min_class_members */

/* Accounts 0 (the authority) to 3, from fixed secrets 0x11, 0x22, ... (the
 * seed corpus names the same addresses). */
static void fuzz_address(char *out, size_t cap, int i) {
    uint8_t secret[32];
    memset(secret, 0x11 * (i + 1), sizeof secret);
    gd_key key;
    FUZZ_ASSERT(gd_key_from_secret(&key, secret) == GD_OK);
    FUZZ_ASSERT(gd_address_from_pubkey(out, cap, "gonka", key.pubkey) == GD_OK);
    gd_key_wipe(&key);
}

static json_t *fuzz_spec(void) {
    return json_pack(
        "{s:s,s:s,s:i,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s,"
        "s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i},s:s,s:s,s:s,s:i,s:i,s:i,s:i,"
        "s:s,s:s,s:i,s:i,s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:b,s:s,s:i,s:b,"
        "s:[s],s:i,s:i,s:s,s:s,s:i,s:i,s:i,s:s,s:s}",
        "model", "tiny", "layout_digest",
        "1111111111111111111111111111111111111111111111111111111111111111", "seed", 1,
        "data_spec", "synthetic:markov:1", "initial_state_hash",
        "2222222222222222222222222222222222222222222222222222222222222222", "h_min", 2, "h_max",
        4, "segment_steps", 2, "tokens_per_step", 64, "outer_lr_ppm", 700000,
        "outer_momentum_ppm", 900000, "codec", "int8", "windows", "train", 1, "commit", 1,
        "reveal", 1, "verify", 2, "open", 1, "dispute", 2, "attest", 2, "dispute_open", 1,
        "attest_open", 1, "reward_per_epoch", "1000ngonka", "min_collateral", "1000ngonka",
        "fail_bond", "10ngonka", "checks_per_commit", 2, "double_check_ppm", 500000,
        "recheck_validators", 1, "validator_share_ppm", 200000,
        "inner_lr", "0.003", "inner_min_lr", "0.0003", "inner_warmup_steps", 10,
        "inner_schedule_steps", 1000, "adam_beta1", "0.9", "adam_beta2", "0.95", "adam_eps",
        "0.00000001", "weight_decay", "0.1", "grad_clip", "1", "batch", 4, "seq_len", 16,
        "micro_batch", 2, "clip_factor", "2", "error_feedback", 1, "error_feedback_decay", "1",
        "chunk_elems", 1024, "overlap", 0, "hw_classes", "cpu", "min_class_members", 4,
        "avail_chunks", 2, "cheat_slash", "1000ngonka", "skip_slash", "10ngonka",
        "suspend_rounds", 2, "max_members", 16, "attest_share_ppm", 50000, "data_digest",
        "3333333333333333333333333333333333333333333333333333333333333333", "withhold_slash",
        "500ngonka");
}

/* Genesis: the accounts funded, run 1 with its pool and the members'
 * collateral held by the module account. Epoch 0 runs no PoC, so the
 * round opens in block 1 (its nine windows, twelve blocks, end before 20). */
static gd_app *fuzz_app(void) {
    char addr[FUZZ_MEMBERS + 1][GD_ADDRESS_STR_MAX], module[GD_ADDRESS_STR_MAX];
    for (int i = 0; i <= FUZZ_MEMBERS; i++)
        fuzz_address(addr[i], sizeof addr[i], i);
    FUZZ_ASSERT(gd_auth_module_address(module, sizeof module, "diloco") == GD_OK);
    json_t *accounts = json_array(), *balances = json_array(), *members = json_array();
    for (int i = 0; i <= FUZZ_MEMBERS; i++) {
        json_array_append_new(accounts, json_pack("{s:s,s:s,s:i}", "@type",
                                                  "/cosmos.auth.v1beta1.BaseAccount", "address",
                                                  addr[i], "account_number", i));
        json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", addr[i],
                                                  "coins", "denom", "ngonka", "amount", "100000"));
        if (i > 0)
            json_array_append_new(members, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1",
                                                     "address", addr[i], "artifact_url",
                                                     "http://h", "hw_class", "cpu",
                                                     "collateral", "1000", "rank", i - 1));
    }
    json_array_append_new(accounts, json_pack("{s:s,s:{s:s,s:i},s:s}", "@type",
                                              "/cosmos.auth.v1beta1.ModuleAccount",
                                              "base_account", "address", module,
                                              "account_number", 9, "name", "diloco"));
    json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", module, "coins",
                                              "denom", "ngonka", "amount", "9000"));
    json_t *genesis = json_pack(
        "{s:s,s:{s:{s:o},s:{s:o},s:{s:{s:s},s:[{s:o,s:s,s:i}],s:o}}}", "chain_id", "prod-sim",
        "app_state", "auth", "accounts", accounts, "bank", "balances", balances, "diloco",
        "params", "authority", addr[0], "runs", "spec", fuzz_spec(), "pool", "5000",
        "next_rank", FUZZ_MEMBERS, "members", members);
    gd_app *app = NULL;
    FUZZ_ASSERT(genesis && gd_app_new(&app, NULL) == GD_OK);
    FUZZ_ASSERT(gd_app_register_standard(app) == GD_OK);
    FUZZ_ASSERT(gd_app_init_chain(app, genesis) == GD_OK);
    json_decref(genesis);
    return app;
}

static void fuzz_block(gd_app *app) {
    int64_t h = gd_app_height(app) + 1;
    uint8_t hash[32], app_hash[32];
    memset(hash, (int)h, sizeof hash);
    gd_events events = {0};
    FUZZ_ASSERT(gd_app_begin_block(app, h, hash, &events) == GD_OK);
    FUZZ_ASSERT(gd_app_end_block(app, &events) == GD_OK);
    FUZZ_ASSERT(gd_app_commit(app, app_hash) == GD_OK);
    gd_events_free(&events);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    const gd_module *m = &gd_diloco_module;
    const gd_msg_route *route = &m->msgs[data[0] % m->n_msgs];
    gd_app *app = fuzz_app();
    for (int b = 0; b <= data[1] % 14; b++)
        fuzz_block(app);
    gd_kv *kv = NULL;
    FUZZ_ASSERT(gd_cache_new(&kv, gd_store_view(gd_app_store(app))) == GD_OK);
    gd_gas_meter gas = {0, 0};
    gd_events events = {0};
    uint8_t hash[32];
    memset(hash, 0x5a, sizeof hash);
    gd_ctx ctx = {.kv = kv, .gas = &gas, .events = &events, .mode = GD_EXEC_DELIVER,
                  .height = gd_app_height(app), .chain_id = "prod-sim", .block_hash = hash};
    char signer[GD_ADDRESS_STR_MAX];
    gd_buf response = {0};
    ProtobufCMessage *msg = NULL;
    if (gd_msg_route_decode(route, &ctx, &msg, data + 2, size - 2) == GD_OK &&
        route->validate(&ctx, msg, signer, sizeof signer) == GD_OK &&
        route->execute(app, &ctx, msg, &response) == GD_OK) {
        FUZZ_ASSERT(gd_cache_write(kv) == GD_OK);
        FUZZ_ASSERT(gd_app_check_invariants(app) == GD_OK);
    }
    if (msg != NULL)
        protobuf_c_message_free_unpacked(msg, NULL);
    gd_buf_free(&response);
    gd_events_free(&events);
    gd_cache_free(kv);
    gd_app_free(app);
    return 0;
}
