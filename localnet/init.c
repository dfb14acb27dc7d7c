/* Home directory creation for a new localnet chain. */
#include "localnet/init.h"

#include <errno.h>
#include <stdlib.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "chain/keys/address.h"
#include "chain/keys/bip39.h"
#include "chain/keys/keyfile.h"
#include "chain/keys/keys.h"
#include "chain/module/auth.h"
#include "chain/module/json_util.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/gas_price.h"
#include "common/file.h"
#include "common/log.h"
#include "common/rfc3339.h"
#include "common/secure.h"
#include "localnet/validator.h"

#define GD_LOCALNET_ACCOUNTS_MAX 100000
#define GD_SPEC_JSON_MAX (1u << 20) /* a run spec file, as sim and tx create-run read it */

static gd_status gd_mkdir_private(const char *path) {
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return gd_fail(GD_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    return GD_OK;
}

static json_t *gd_epoch_params_json(const gd_epoch_params *p) {
    return json_pack(
        "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "epoch_length",
        gd_json_i64_str(p->epoch_length), "epoch_multiplier", gd_json_i64_str(p->epoch_multiplier),
        "epoch_shift", gd_json_i64_str(p->epoch_shift), "default_unit_of_compute_price",
        gd_json_i64_str(p->default_unit_of_compute_price), "poc_stage_duration",
        gd_json_i64_str(p->poc_stage_duration), "poc_exchange_duration",
        gd_json_i64_str(p->poc_exchange_duration), "poc_validation_delay",
        gd_json_i64_str(p->poc_validation_delay), "poc_validation_duration",
        gd_json_i64_str(p->poc_validation_duration), "set_new_validators_delay",
        gd_json_i64_str(p->set_new_validators_delay), "inference_validation_cutoff",
        gd_json_i64_str(p->inference_validation_cutoff), "inference_pruning_epoch_threshold",
        gd_json_u64_str(p->inference_pruning_epoch_threshold));
}

/* app_state.diloco: the authority, and run 1 when a spec file is given.
 * The run's pool goes to the module account through auth and bank. */
static gd_status gd_diloco_genesis(const gd_init_options *opt, json_t **out,
                                   const char *authority, json_t *accounts, json_t *balances) {
    json_t *state = json_pack("{s:{s:s}}", "params", "authority", authority);
    if (state == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    *out = state;
    if (opt->diloco_run_spec == NULL)
        return GD_OK;
    json_error_t err;
    gd_buf text = {0};
    GD_TRY(gd_file_read(&text, opt->diloco_run_spec, GD_SPEC_JSON_MAX));
    json_t *spec_json =
        json_loadb((const char *)text.data, text.len, JSON_REJECT_DUPLICATES, &err);
    gd_buf_free(&text);
    if (spec_json == NULL)
        return gd_fail(GD_ERR_PARSE, "%s: %s (line %d)", opt->diloco_run_spec, err.text,
                       err.line);
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    gd_status s = gd_diloco_spec_from_json(&spec, spec_json);
    if (s == GD_OK && strcmp(opt->diloco_pool.denom, spec->reward_per_epoch->denom) != 0)
        s = gd_fail(GD_ERR_INVALID, "--diloco-pool is in %s, the run pays in %s",
                    opt->diloco_pool.denom, spec->reward_per_epoch->denom);
    /* The chain's epochs are known here (--epoch-length), so a run that
     * could never open a round is refused now rather than idling. */
    if (s == GD_OK && gd_diloco_spec_epoch_check(spec, &opt->epoch_params) != GD_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", gd_error_detail());
        s = gd_fail(GD_ERR_INVALID, "%s; a longer --epoch-length fits it", why);
    }
    gd_diloco_spec_free(spec);
    if (s != GD_OK) {
        json_decref(spec_json);
        return gd_fail_context(GD_ERR_INVALID, "%s", opt->diloco_run_spec);
    }
    char module[GD_ADDRESS_STR_MAX];
    GD_TRY(gd_auth_module_address(module, sizeof module, "diloco"));
    json_object_set_new(state, "runs",
                        json_pack("[{s:o,s:s}]", "spec", spec_json, "pool",
                                  opt->diloco_pool.amount));
    json_array_append_new(accounts,
                          json_pack("{s:s,s:{s:s,s:o,s:s},s:s,s:[]}", "@type",
                                    "/cosmos.auth.v1beta1.ModuleAccount", "base_account",
                                    "address", module, "account_number",
                                    gd_json_u64_str(opt->accounts), "sequence", "0", "name",
                                    "diloco", "permissions"));
    json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", module, "coins",
                                              "denom", opt->diloco_pool.denom, "amount",
                                              opt->diloco_pool.amount));
    return GD_OK;
}

/* keys/accounts.json: no secret in it, so readable like genesis.json
 * (the home itself is 0700). */
static gd_status gd_write_account_index(const char *home, const json_t *index) {
    char path[600];
    snprintf(path, sizeof path, "%s/keys/accounts.json", home);
    char *text = json_dumps(index, JSON_INDENT(2));
    if (text == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_bytes_part parts[] = {{text, strlen(text)}, {"\n", 1}};
    gd_status s = gd_file_write_atomic(path, parts, 2, 0644);
    free(text);
    return s;
}

gd_status gd_localnet_init(const gd_init_options *opt, json_t **accounts_out) {
    if (accounts_out)
        *accounts_out = NULL;
    char genesis_time[GD_RFC3339_MAX];
    if (opt->genesis_time) {
        /* Stored in UTC, as CometBFT writes it; an offset is applied. */
        gd_time t;
        if (gd_rfc3339_parse(&t, opt->genesis_time) != GD_OK)
            return gd_fail_context(GD_ERR_INVALID, "--genesis-time");
        GD_TRY(gd_rfc3339_format(genesis_time, sizeof genesis_time, t, false));
    }
    if (opt->accounts == 0 || opt->accounts > GD_LOCALNET_ACCOUNTS_MAX)
        return gd_fail(GD_ERR_INVALID, "--accounts must be 1 to %d", GD_LOCALNET_ACCOUNTS_MAX);
    if (opt->chain_id == NULL || opt->chain_id[0] == '\0' || strlen(opt->chain_id) > 50)
        return gd_fail(GD_ERR_INVALID, "--chain-id must be 1 to 50 characters");
    GD_TRY(gd_epoch_params_check(&opt->epoch_params));
    if (opt->diloco_authority >= opt->accounts)
        return gd_fail(GD_ERR_INVALID, "--diloco-authority %zu is not one of the %zu accounts",
                       opt->diloco_authority, opt->accounts);
    const char *price = opt->min_gas_price ? opt->min_gas_price : GD_GAS_PRICE_DEFAULT;
    gd_gas_price parsed;
    if (gd_gas_price_parse(&parsed, price) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "--min-gas-price");
    if (!gd_gas_price_is_zero(&parsed) && strcmp(parsed.denom, opt->balance.denom) != 0)
        GD_LOG_WARN("localnet", "accounts are funded in %s but the minimum gas price is in %s: "
                    "they cannot pay fees", opt->balance.denom, parsed.denom);
    char path[600];
    GD_TRY(gd_mkdir_private(opt->home));
    snprintf(path, sizeof path, "%s/genesis.json", opt->home);
    struct stat st;
    if (stat(path, &st) == 0)
        return gd_fail(GD_ERR_EXISTS, "%s already exists; use another --home", path);
    snprintf(path, sizeof path, "%s/keys", opt->home);
    GD_TRY(gd_mkdir_private(path));
    snprintf(path, sizeof path, "%s/priv_validator_key.json", opt->home);
    GD_TRY(gd_validator_key_create(path));

    json_t *accounts = json_array(), *balances = json_array(), *index = json_array();
    char authority[GD_ADDRESS_STR_MAX] = "";
    gd_status s = accounts && balances && index ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == GD_OK && i < opt->accounts; i++) {
        gd_key key;
        char mnemonic[GD_BIP39_MNEMONIC_MAX + 1], address[GD_ADDRESS_STR_MAX];
        s = gd_key_generate(&key, mnemonic, sizeof mnemonic);
        gd_wipe(mnemonic, sizeof mnemonic);
        if (s == GD_OK)
            s = gd_address_from_pubkey(address, sizeof address, GD_ADDRESS_PREFIX, key.pubkey);
        if (s == GD_OK) {
            snprintf(path, sizeof path, "%s/keys/account-%zu.key", opt->home, i);
            s = gd_keyfile_write(path, &key);
        }
        gd_key_wipe(&key);
        if (s != GD_OK)
            break;
        if (i == opt->diloco_authority)
            snprintf(authority, sizeof authority, "%s", address);
        json_array_append_new(accounts,
                              json_pack("{s:s,s:s,s:n,s:o,s:s}", "@type",
                                        "/cosmos.auth.v1beta1.BaseAccount", "address", address,
                                        "pub_key", "account_number", gd_json_u64_str(i),
                                        "sequence", "0"));
        json_array_append_new(balances,
                              json_pack("{s:s,s:[{s:s,s:s}]}", "address", address, "coins",
                                        "denom", opt->balance.denom, "amount",
                                        opt->balance.amount));
        json_array_append_new(index, json_pack("{s:I,s:s,s:s}", "index", (json_int_t)i, "address",
                                               address, "key_file", path + strlen(opt->home) + 1));
    }
    char now[32];
    if (opt->genesis_time == NULL) {
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    } else {
        snprintf(now, sizeof now, "%s", genesis_time);
    }
    json_t *genesis = NULL, *diloco = NULL;
    if (s == GD_OK)
        s = gd_diloco_genesis(opt, &diloco, authority, accounts, balances);
    if (s == GD_OK)
        genesis = json_pack(
            "{s:s,s:s,s:s,s:s,s:{s:{s:{s:s,s:s,s:s,s:s},s:O},s:{s:{s:b,s:[]},s:O,s:[],s:[],s:[]},"
            "s:{s:{s:o},s:{s:s,s:s}},s:o}}",
            "genesis_time", now, "chain_id", opt->chain_id, "initial_height", "1", "app_hash", "",
            "app_state", "auth", "params", "max_memo_characters", "256", "tx_sig_limit", "7",
            "tx_size_cost_per_byte", "10", "sig_verify_cost_secp256k1", "1000", "accounts",
            accounts, "bank", "params", "default_send_enabled", 1, "send_enabled", "balances",
            balances, "supply", "denom_metadata", "send_enabled", "inference", "params",
            "epoch_params", gd_epoch_params_json(&opt->epoch_params), "latest_epoch", "index", "0",
            "poc_start_block_height", "0", "diloco", diloco);
    else
        json_decref(diloco);
    if (s == GD_OK && genesis == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory building genesis");
    if (s == GD_OK) {
        char *text = json_dumps(genesis, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        snprintf(path, sizeof path, "%s/genesis.json", opt->home);
        FILE *f = text ? fopen(path, "wx") : NULL;
        if (f == NULL || fputs(text, f) < 0 || fputc('\n', f) == EOF)
            s = gd_fail(GD_ERR_IO, "cannot write %s", path);
        if (f && fclose(f) != 0 && s == GD_OK)
            s = gd_fail(GD_ERR_IO, "cannot write %s", path);
        free(text);
    }
    if (s == GD_OK) {
        json_t *app = json_pack("{s:s}", "min_gas_price", price);
        char *text = app ? json_dumps(app, JSON_INDENT(2)) : NULL;
        snprintf(path, sizeof path, "%s/%s", opt->home, GD_LOCALNET_APP_CONFIG);
        FILE *f = text ? fopen(path, "wx") : NULL;
        if (f == NULL || fputs(text, f) < 0 || fputc('\n', f) == EOF)
            s = gd_fail(GD_ERR_IO, "cannot write %s", path);
        if (f && fclose(f) != 0 && s == GD_OK)
            s = gd_fail(GD_ERR_IO, "cannot write %s", path);
        free(text);
        json_decref(app);
    }
    if (s == GD_OK)
        s = gd_write_account_index(opt->home, index);
    json_decref(genesis);
    json_decref(accounts);
    json_decref(balances);
    if (s == GD_OK && accounts_out)
        *accounts_out = json_incref(index);
    json_decref(index);
    return s;
}
