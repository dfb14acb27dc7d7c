/* x/auth: account store, queries (Account, AccountInfo), genesis. */
#include "chain/module/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/json_util.h"
#include "chain/wire/json_bytes.h"
#include "common/hash.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"

#define GD_AUTH_PREFIX 0x01
#define GD_AUTH_KEY_NEXT_NUMBER 0x00
#define GD_AUTH_KEY_ACCOUNT 0x01
#define GD_ACCOUNT_KIND_BASE 1
#define GD_ACCOUNT_KIND_MODULE 2

static const char *const gd_pubkey_type_url = "/cosmos.crypto.secp256k1.PubKey";

static gd_status gd_auth_key(uint8_t *key, size_t *key_len, const char *address) {
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t raw_len;
    GD_TRY(gd_address_decode(raw, &raw_len, address, GD_ADDRESS_PREFIX));
    key[0] = GD_AUTH_PREFIX;
    key[1] = GD_AUTH_KEY_ACCOUNT;
    memcpy(key + 2, raw, raw_len);
    *key_len = 2 + raw_len;
    return GD_OK;
}

/* Fills a BaseAccount message; pk_buf holds the packed PubKey. */
static void gd_base_account_fill(Cosmos__Auth__V1beta1__BaseAccount *base,
                                 Google__Protobuf__Any *pk_any, uint8_t pk_buf[64],
                                 const gd_account *a) {
    cosmos__auth__v1beta1__base_account__init(base);
    base->address = (char *)a->address;
    base->account_number = a->number;
    base->sequence = a->sequence;
    if (a->has_pubkey) {
        Cosmos__Crypto__Secp256k1__PubKey pk = COSMOS__CRYPTO__SECP256K1__PUB_KEY__INIT;
        pk.key.data = (uint8_t *)a->pubkey;
        pk.key.len = GD_PUBKEY_LEN;
        google__protobuf__any__init(pk_any);
        pk_any->type_url = (char *)gd_pubkey_type_url;
        pk_any->value.data = pk_buf;
        pk_any->value.len = cosmos__crypto__secp256k1__pub_key__pack(&pk, pk_buf);
        base->pub_key = pk_any;
    }
}

/* Serializes the account as its protobuf message (BaseAccount or
 * ModuleAccount) into out, and says which. */
static gd_status gd_account_pack(const gd_account *a, gd_buf *out, int *kind) {
    Cosmos__Auth__V1beta1__BaseAccount base;
    Google__Protobuf__Any pk_any;
    uint8_t pk_buf[64];
    gd_base_account_fill(&base, &pk_any, pk_buf, a);
    const ProtobufCMessage *msg = &base.base;
    Cosmos__Auth__V1beta1__ModuleAccount mod = COSMOS__AUTH__V1BETA1__MODULE_ACCOUNT__INIT;
    if (a->is_module) {
        mod.base_account = &base;
        mod.name = (char *)a->module_name;
        msg = &mod.base;
    }
    *kind = a->is_module ? GD_ACCOUNT_KIND_MODULE : GD_ACCOUNT_KIND_BASE;
    size_t n = protobuf_c_message_get_packed_size(msg);
    out->len = 0;
    GD_TRY(gd_buf_reserve(out, n + 1));
    out->len = protobuf_c_message_pack(msg, out->data);
    return GD_OK;
}

static gd_status gd_account_from_base(gd_account *out, const Cosmos__Auth__V1beta1__BaseAccount *b) {
    memset(out, 0, sizeof *out);
    if (b == NULL || b->address == NULL || strlen(b->address) >= sizeof out->address)
        return gd_fail(GD_ERR_PARSE, "stored account is malformed");
    strcpy(out->address, b->address);
    out->number = b->account_number;
    out->sequence = b->sequence;
    if (b->pub_key) {
        Cosmos__Crypto__Secp256k1__PubKey *pk = cosmos__crypto__secp256k1__pub_key__unpack(
            NULL, b->pub_key->value.len, b->pub_key->value.data);
        if (pk == NULL || pk->key.len != GD_PUBKEY_LEN) {
            if (pk)
                cosmos__crypto__secp256k1__pub_key__free_unpacked(pk, NULL);
            return gd_fail(GD_ERR_PARSE, "stored account has a malformed public key");
        }
        memcpy(out->pubkey, pk->key.data, GD_PUBKEY_LEN);
        out->has_pubkey = true;
        cosmos__crypto__secp256k1__pub_key__free_unpacked(pk, NULL);
    }
    return GD_OK;
}

static gd_status gd_account_unpack(gd_account *out, const uint8_t *v, size_t len) {
    if (len < 1)
        return gd_fail(GD_ERR_PARSE, "stored account is empty");
    gd_status s;
    if (v[0] == GD_ACCOUNT_KIND_BASE) {
        Cosmos__Auth__V1beta1__BaseAccount *b =
            cosmos__auth__v1beta1__base_account__unpack(NULL, len - 1, v + 1);
        s = gd_account_from_base(out, b);
        if (b)
            cosmos__auth__v1beta1__base_account__free_unpacked(b, NULL);
        return s;
    }
    if (v[0] == GD_ACCOUNT_KIND_MODULE) {
        Cosmos__Auth__V1beta1__ModuleAccount *m =
            cosmos__auth__v1beta1__module_account__unpack(NULL, len - 1, v + 1);
        s = m ? gd_account_from_base(out, m->base_account) : gd_fail(GD_ERR_PARSE, "bad account");
        if (s == GD_OK) {
            out->is_module = true;
            snprintf(out->module_name, sizeof out->module_name, "%s", m->name ? m->name : "");
        }
        if (m)
            cosmos__auth__v1beta1__module_account__free_unpacked(m, NULL);
        return s;
    }
    return gd_fail(GD_ERR_PARSE, "stored account has unknown kind %u", v[0]);
}

gd_status gd_auth_get(gd_ctx *ctx, gd_account *out, const char *address) {
    uint8_t key[2 + GD_ADDRESS_RAW_MAX];
    size_t key_len;
    const uint8_t *v;
    size_t vlen;
    GD_TRY(gd_auth_key(key, &key_len, address));
    gd_status s = gd_ctx_get(ctx, key, key_len, &v, &vlen);
    if (s != GD_OK)
        return s;
    return gd_account_unpack(out, v, vlen);
}

gd_status gd_auth_set(gd_ctx *ctx, const gd_account *a) {
    uint8_t key[2 + GD_ADDRESS_RAW_MAX];
    size_t key_len;
    GD_TRY(gd_auth_key(key, &key_len, a->address));
    gd_buf buf = {0};
    int kind;
    gd_status s = gd_account_pack(a, &buf, &kind);
    if (s == GD_OK) {
        /* The kind byte goes first: shift the message by one. */
        memmove(buf.data + 1, buf.data, buf.len);
        buf.data[0] = (uint8_t)kind;
        s = gd_ctx_set(ctx, key, key_len, buf.data, buf.len + 1);
    }
    gd_buf_free(&buf);
    return s;
}

static gd_status gd_auth_next_number(gd_ctx *ctx, uint64_t *number) {
    const uint8_t key[2] = {GD_AUTH_PREFIX, GD_AUTH_KEY_NEXT_NUMBER};
    const uint8_t *v;
    size_t vlen;
    uint64_t next = 0;
    gd_status s = gd_ctx_get(ctx, key, 2, &v, &vlen);
    if (s == GD_OK && vlen == 8)
        for (int i = 0; i < 8; i++)
            next = next << 8 | v[i];
    else if (s != GD_ERR_NOT_FOUND && s != GD_OK)
        return s;
    *number = next;
    uint8_t enc[8];
    for (int i = 0; i < 8; i++)
        enc[i] = (uint8_t)((next + 1) >> (56 - 8 * i));
    return gd_ctx_set(ctx, key, 2, enc, 8);
}

gd_status gd_auth_create(gd_ctx *ctx, gd_account *out, const char *address) {
    memset(out, 0, sizeof *out);
    if (strlen(address) >= sizeof out->address)
        return gd_fail(GD_ERR_INVALID, "address too long");
    strcpy(out->address, address);
    GD_TRY(gd_auth_next_number(ctx, &out->number));
    return gd_auth_set(ctx, out);
}

gd_status gd_auth_module_address(char *out, size_t cap, const char *name) {
    uint8_t h[GD_SHA256_LEN];
    gd_sha256(h, name, strlen(name));
    return gd_address_encode(out, cap, GD_ADDRESS_PREFIX, h, 20);
}

gd_status gd_auth_module_account(gd_ctx *ctx, gd_account *out, const char *name) {
    char address[GD_ADDRESS_STR_MAX];
    GD_TRY(gd_auth_module_address(address, sizeof address, name));
    gd_status s = gd_auth_get(ctx, out, address);
    if (s == GD_OK) {
        if (!out->is_module)
            return gd_fail(GD_ERR_PARSE, "account %s of module %s is not a module account",
                           address, name);
        return GD_OK;
    }
    if (s != GD_ERR_NOT_FOUND)
        return s;
    GD_TRY(gd_auth_create(ctx, out, address));
    out->is_module = true;
    snprintf(out->module_name, sizeof out->module_name, "%s", name);
    return gd_auth_set(ctx, out);
}

/* --- queries ------------------------------------------------------------- */

/* Reads the requested address, answering InvalidArgument (code 18) or
 * NotFound (code 22) the way the SDK's gRPC query server does. */
static gd_status gd_auth_query_lookup(gd_ctx *ctx, const char *address, gd_account *acc) {
    if (address == NULL || address[0] == '\0')
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "rpc error: code = InvalidArgument desc = empty address string is not "
                           "allowed");
    if (gd_address_check(address) != GD_OK)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "rpc error: code = InvalidArgument desc = %s", gd_error_detail());
    gd_status s = gd_auth_get(ctx, acc, address);
    if (s == GD_ERR_NOT_FOUND)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_KEY_NOT_FOUND,
                           "rpc error: code = NotFound desc = account %s not found", address);
    return s;
}

static gd_status gd_auth_query_account_info(gd_app *app, gd_ctx *ctx, const uint8_t *req,
                                       size_t len, gd_buf *resp) {
    (void)app;
    Cosmos__Auth__V1beta1__QueryAccountInfoRequest *r =
        cosmos__auth__v1beta1__query_account_info_request__unpack(NULL, len, req);
    if (r == NULL)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "rpc error: code = InvalidArgument desc = the request does not decode");
    gd_account acc;
    gd_status s = gd_auth_query_lookup(ctx, r->address, &acc);
    cosmos__auth__v1beta1__query_account_info_request__free_unpacked(r, NULL);
    GD_TRY(s);
    Cosmos__Auth__V1beta1__BaseAccount base;
    Google__Protobuf__Any pk_any;
    uint8_t pk_buf[64];
    gd_base_account_fill(&base, &pk_any, pk_buf, &acc);
    Cosmos__Auth__V1beta1__QueryAccountInfoResponse out =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_RESPONSE__INIT;
    out.info = &base;
    GD_TRY(gd_buf_reserve(resp, protobuf_c_message_get_packed_size(&out.base) + 1));
    resp->len = protobuf_c_message_pack(&out.base, resp->data);
    return GD_OK;
}

static gd_status gd_query_account(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                                  gd_buf *resp) {
    (void)app;
    Cosmos__Auth__V1beta1__QueryAccountRequest *r =
        cosmos__auth__v1beta1__query_account_request__unpack(NULL, len, req);
    if (r == NULL)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "rpc error: code = InvalidArgument desc = the request does not decode");
    gd_account acc;
    gd_status s = gd_auth_query_lookup(ctx, r->address, &acc);
    cosmos__auth__v1beta1__query_account_request__free_unpacked(r, NULL);
    GD_TRY(s);
    gd_buf packed = {0};
    int kind;
    GD_TRY(gd_account_pack(&acc, &packed, &kind));
    Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
    any.type_url = kind == GD_ACCOUNT_KIND_MODULE ? "/cosmos.auth.v1beta1.ModuleAccount"
                                                  : "/cosmos.auth.v1beta1.BaseAccount";
    any.value.data = packed.data;
    any.value.len = packed.len;
    Cosmos__Auth__V1beta1__QueryAccountResponse out =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_RESPONSE__INIT;
    out.account = &any;
    s = gd_buf_reserve(resp, protobuf_c_message_get_packed_size(&out.base) + 1);
    if (s == GD_OK)
        resp->len = protobuf_c_message_pack(&out.base, resp->data);
    gd_buf_free(&packed);
    return s;
}

/* --- genesis ------------------------------------------------------------- */

static gd_status gd_auth_account_from_json(const json_t *j, gd_account *a) {
    memset(a, 0, sizeof *a);
    char type[64];
    GD_TRY(gd_json_str_field(type, sizeof type, j, "@type", false));
    const json_t *base = j;
    if (strcmp(type, "/cosmos.auth.v1beta1.ModuleAccount") == 0) {
        GD_TRY(gd_json_only_keys(j, "module account", "@type", "base_account", "name",
                                 "permissions", NULL));
        GD_TRY(gd_json_str_field(a->module_name, sizeof a->module_name, j, "name", false));
        if (a->module_name[0] == '\0')
            return gd_fail(GD_ERR_PARSE, "module account has an empty name");
        base = json_object_get(j, "base_account");
        a->is_module = true;
        GD_TRY(gd_json_only_keys(base, "module base_account", "address", "pub_key",
                                 "account_number", "sequence", NULL));
    } else if (strcmp(type, "/cosmos.auth.v1beta1.BaseAccount") == 0) {
        GD_TRY(gd_json_only_keys(j, "account", "@type", "address", "pub_key", "account_number",
                                 "sequence", NULL));
    } else {
        return gd_fail(GD_ERR_PARSE, "unsupported account type '%s'", type);
    }
    GD_TRY(gd_json_str_field(a->address, sizeof a->address, base, "address", false));
    if (gd_address_check(a->address) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "account");
    GD_TRY(gd_json_u64_field(&a->number, base, "account_number", true, 0));
    GD_TRY(gd_json_u64_field(&a->sequence, base, "sequence", true, 0));
    const json_t *pk = json_object_get(base, "pub_key");
    if (pk != NULL && !json_is_null(pk)) {
        char pk_type[64];
        size_t n = 0;
        GD_TRY(gd_json_str_field(pk_type, sizeof pk_type, pk, "@type", false));
        if (strcmp(pk_type, gd_pubkey_type_url) != 0)
            return gd_fail(GD_ERR_PARSE, "account %s: unsupported key type '%s'", a->address,
                           pk_type);
        GD_TRY(gd_json_b64_field(a->pubkey, sizeof a->pubkey, pk, "key", false, &n));
        if (n != GD_PUBKEY_LEN || !gd_pubkey_valid(a->pubkey))
            return gd_fail(GD_ERR_PARSE, "account %s: public key is not a compressed point",
                           a->address);
        uint8_t raw[20], dec[GD_ADDRESS_RAW_MAX];
        size_t dec_len;
        gd_address_raw_from_pubkey(raw, a->pubkey);
        if (gd_address_decode(dec, &dec_len, a->address, GD_ADDRESS_PREFIX) != GD_OK ||
            dec_len != 20 || memcmp(raw, dec, 20) != 0)
            return gd_fail(GD_ERR_PARSE, "account %s: public key does not match the address",
                           a->address);
        a->has_pubkey = true;
    }
    if (a->is_module) {
        char expect[GD_ADDRESS_STR_MAX];
        GD_TRY(gd_auth_module_address(expect, sizeof expect, a->module_name));
        if (strcmp(expect, a->address) != 0)
            return gd_fail(GD_ERR_PARSE, "module account %s must have address %s",
                           a->module_name, expect);
    }
    return GD_OK;
}

static gd_status gd_auth_init_genesis(gd_app *app, gd_ctx *ctx, const json_t *state) {
    (void)app;
    if (state == NULL)
        return GD_OK;
    GD_TRY(gd_json_only_keys(state, "auth genesis", "params", "accounts", NULL));
    const json_t *accounts = json_object_get(state, "accounts");
    if (accounts != NULL && !json_is_array(accounts))
        return gd_fail(GD_ERR_PARSE, "auth.accounts must be an array");
    uint64_t max_number = 0;
    size_t i;
    const json_t *j;
    json_array_foreach(accounts, i, j) {
        gd_account a, existing;
        if (gd_auth_account_from_json(j, &a) != GD_OK)
            return gd_fail_context(GD_ERR_PARSE, "auth.accounts[%zu]", i);
        if (gd_auth_get(ctx, &existing, a.address) == GD_OK)
            return gd_fail(GD_ERR_PARSE, "auth.accounts[%zu]: duplicate account %s", i,
                           a.address);
        GD_TRY(gd_auth_set(ctx, &a));
        if (a.number + 1 > max_number)
            max_number = a.number + 1;
    }
    /* Account numbers must be unique: check by a sorted copy. */
    size_t n = json_array_size(accounts);
    if (n > 1) {
        uint64_t *nums = malloc(n * sizeof *nums);
        if (nums == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory");
        json_array_foreach(accounts, i, j) {
            const json_t *base = json_object_get(j, "base_account");
            if (gd_json_u64_field(&nums[i], base ? base : j, "account_number", true, 0) != GD_OK)
                nums[i] = 0;
        }
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && nums[b - 1] > nums[b]; b--) {
                uint64_t t = nums[b];
                nums[b] = nums[b - 1];
                nums[b - 1] = t;
            }
        for (size_t a = 1; a < n; a++)
            if (nums[a] == nums[a - 1]) {
                unsigned long long dup = (unsigned long long)nums[a];
                free(nums);
                return gd_fail(GD_ERR_PARSE, "auth.accounts: account number %llu used twice",
                               dup);
            }
        free(nums);
    }
    const uint8_t key[2] = {GD_AUTH_PREFIX, GD_AUTH_KEY_NEXT_NUMBER};
    uint8_t enc[8];
    for (int k = 0; k < 8; k++)
        enc[k] = (uint8_t)(max_number >> (56 - 8 * k));
    return gd_ctx_set(ctx, key, 2, enc, 8);
}

typedef struct gd_auth_export_ctx {
    json_t *accounts;
    gd_status status;
} gd_auth_export_ctx;

static json_t *gd_account_json(const gd_account *a) {
    json_t *pk = json_null();
    if (a->has_pubkey)
        pk = json_pack("{s:s,s:o}", "@type", gd_pubkey_type_url, "key",
                       gd_json_base64(a->pubkey, GD_PUBKEY_LEN));
    if (!a->is_module)
        return json_pack("{s:s,s:s,s:o,s:o,s:o}", "@type", "/cosmos.auth.v1beta1.BaseAccount",
                         "address", a->address, "pub_key", pk, "account_number",
                         gd_json_u64_str(a->number), "sequence", gd_json_u64_str(a->sequence));
    json_t *base = json_pack("{s:s,s:o,s:o,s:o}", "address", a->address, "pub_key", pk,
                             "account_number", gd_json_u64_str(a->number), "sequence",
                             gd_json_u64_str(a->sequence));
    return json_pack("{s:s,s:o,s:s,s:[]}", "@type", "/cosmos.auth.v1beta1.ModuleAccount",
                     "base_account", base, "name", a->module_name, "permissions");
}

static int gd_auth_export_visit(void *p, const uint8_t *key, size_t key_len, const uint8_t *v,
                                size_t vlen) {
    gd_auth_export_ctx *e = p;
    (void)key;
    (void)key_len;
    gd_account a;
    if (gd_account_unpack(&a, v, vlen) != GD_OK) {
        e->status = GD_ERR_PARSE;
        return 1;
    }
    json_t *j = gd_account_json(&a);
    if (j == NULL || json_array_append_new(e->accounts, j) != 0) {
        e->status = gd_fail(GD_ERR_NOMEM, "out of memory exporting accounts");
        return 1;
    }
    return 0;
}

static json_t *gd_auth_export_genesis(gd_app *app, gd_ctx *ctx) {
    (void)app;
    gd_auth_export_ctx e = {json_array(), GD_OK};
    const uint8_t prefix[2] = {GD_AUTH_PREFIX, GD_AUTH_KEY_ACCOUNT};
    if (e.accounts == NULL ||
        gd_kv_iterate_prefix(ctx->kv, prefix, 2, gd_auth_export_visit, &e) != GD_OK ||
        e.status != GD_OK) {
        json_decref(e.accounts);
        return NULL;
    }
    return json_pack("{s:{s:s,s:s,s:s,s:s},s:o}", "params", "max_memo_characters", "256",
                     "tx_sig_limit", "7", "tx_size_cost_per_byte", "10",
                     "sig_verify_cost_secp256k1", "1000", "accounts", e.accounts);
}

/* Sequences only grow and numbers stay below the next number. */
typedef struct gd_auth_inv_ctx {
    uint64_t next;
    gd_status status;
} gd_auth_inv_ctx;

static int gd_auth_inv_visit(void *p, const uint8_t *key, size_t key_len, const uint8_t *v,
                             size_t vlen) {
    gd_auth_inv_ctx *c = p;
    gd_account a;
    (void)key;
    (void)key_len;
    if (gd_account_unpack(&a, v, vlen) != GD_OK) {
        c->status = gd_fail(GD_ERR_PARSE, "invariant auth: undecodable account");
        return 1;
    }
    if (a.number >= c->next) {
        c->status = gd_fail(GD_ERR_PARSE, "invariant auth: account %s has number %llu >= next "
                                          "%llu", a.address, (unsigned long long)a.number,
                            (unsigned long long)c->next);
        return 1;
    }
    return 0;
}

static gd_status gd_auth_invariants(gd_app *app, gd_kv *kv) {
    (void)app;
    const uint8_t nkey[2] = {GD_AUTH_PREFIX, GD_AUTH_KEY_NEXT_NUMBER};
    const uint8_t *v;
    size_t vlen;
    gd_auth_inv_ctx c = {0, GD_OK};
    if (gd_kv_get(kv, nkey, 2, &v, &vlen) == GD_OK && vlen == 8)
        for (int i = 0; i < 8; i++)
            c.next = c.next << 8 | v[i];
    const uint8_t prefix[2] = {GD_AUTH_PREFIX, GD_AUTH_KEY_ACCOUNT};
    GD_TRY(gd_kv_iterate_prefix(kv, prefix, 2, gd_auth_inv_visit, &c));
    return c.status;
}

static const gd_query_route gd_auth_queries[] = {
    {"/cosmos.auth.v1beta1.Query/Account", gd_query_account},
    {"/cosmos.auth.v1beta1.Query/AccountInfo", gd_auth_query_account_info},
};

const gd_module gd_auth_module = {
    .name = "auth",
    .queries = gd_auth_queries,
    .n_queries = sizeof gd_auth_queries / sizeof gd_auth_queries[0],
    .init_genesis = gd_auth_init_genesis,
    .export_genesis = gd_auth_export_genesis,
    .check_invariants = gd_auth_invariants,
};
