/* Transaction encoding and SIGN_MODE_DIRECT signing. protobuf-c packs fields
 * in field-number order and skips zero proto3 scalars and NULL submessages,
 * which is the canonical form the SDK expects (see docs/chain-client.md). */
#include "chain/wire/tx.h"

#include <stdio.h>
#include <string.h>

#include "chain/wire/pb_strict.h"
#include "common/hash.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"

static gd_status gd_tx_request_check(const gd_tx_request *req) {
    if (req->n_msgs == 0)
        return gd_fail(GD_ERR_INVALID, "a transaction needs at least one message");
    if (req->chain_id == NULL || req->chain_id[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "chain-id is required");
    if (strlen(req->chain_id) > GD_CHAIN_ID_MAX)
        return gd_fail(GD_ERR_INVALID, "chain-id longer than %d characters", GD_CHAIN_ID_MAX);
    if (req->memo != NULL && strlen(req->memo) > GD_MEMO_MAX)
        return gd_fail(GD_ERR_INVALID, "memo longer than %d bytes", GD_MEMO_MAX);
    /* A node decoding the transaction refuses strings that are not UTF-8
     * (gd_pb_reject_invalid_utf8, as the SDK): do not sign one. */
    if (req->memo != NULL && !gd_utf8_valid(req->memo, strlen(req->memo)))
        return gd_fail(GD_ERR_INVALID, "memo is not valid UTF-8");
    if (!gd_utf8_valid(req->chain_id, strlen(req->chain_id)))
        return gd_fail(GD_ERR_INVALID, "chain-id is not valid UTF-8");
    for (size_t i = 0; i < req->n_msgs; i++)
        if (!gd_utf8_valid(req->msgs[i].type_url, strlen(req->msgs[i].type_url)))
            return gd_fail(GD_ERR_INVALID, "message %zu's type URL is not valid UTF-8", i);
    if (req->gas_limit == 0)
        return gd_fail(GD_ERR_INVALID, "gas limit must be positive");
    if (req->n_fees > GD_COINS_MAX)
        return gd_fail(GD_ERR_INVALID, "at most %d fee coins", GD_COINS_MAX);
    if (req->n_fees > 0 && req->gas_price != NULL)
        return gd_fail(GD_ERR_INVALID, "give fees or a gas price, not both");
    for (size_t i = 0; i < req->n_fees; i++) {
        GD_TRY(gd_denom_check(req->fees[i].denom));
        GD_TRY(gd_amount_check(req->fees[i].amount));
        if (i > 0 && strcmp(req->fees[i - 1].denom, req->fees[i].denom) >= 0)
            return gd_fail(GD_ERR_INVALID, "fee coins must be sorted by denom, no repeats");
    }
    return GD_OK;
}

size_t gd_tx_fee_coins(const gd_tx_request *req, gd_coin out[GD_COINS_MAX]) {
    if (req->n_fees > 0) {
        size_t n = req->n_fees < GD_COINS_MAX ? req->n_fees : GD_COINS_MAX;
        memcpy(out, req->fees, n * sizeof *out);
        return n;
    }
    if (req->gas_price == NULL || gd_gas_price_is_zero(req->gas_price))
        return 0;
    snprintf(out[0].denom, sizeof out[0].denom, "%s", req->gas_price->denom);
    gd_gas_price_fee(req->gas_price, req->gas_limit, out[0].amount);
    return 1;
}

gd_status gd_tx_encode_body(gd_buf *out, const gd_tx_request *req) {
    GD_TRY(gd_tx_request_check(req));
    if (req->n_msgs > 64)
        return gd_fail(GD_ERR_INVALID, "at most 64 messages per transaction");
    Google__Protobuf__Any anys[64];
    Google__Protobuf__Any *any_ptrs[64];
    for (size_t i = 0; i < req->n_msgs; i++) {
        google__protobuf__any__init(&anys[i]);
        anys[i].type_url = (char *)req->msgs[i].type_url;
        anys[i].value.data = req->msgs[i].value.data;
        anys[i].value.len = req->msgs[i].value.len;
        any_ptrs[i] = &anys[i];
    }
    Cosmos__Tx__V1beta1__TxBody body = COSMOS__TX__V1BETA1__TX_BODY__INIT;
    body.n_messages = req->n_msgs;
    body.messages = any_ptrs;
    body.memo = (char *)(req->memo ? req->memo : "");
    body.timeout_height = req->timeout_height;
    return gd_msg_pack(out, &body.base);
}

gd_status gd_tx_encode_auth_info(gd_buf *out, const gd_tx_request *req,
                                 const uint8_t pubkey[GD_PUBKEY_LEN]) {
    GD_TRY(gd_tx_request_check(req));
    uint8_t pk_bytes[GD_PUBKEY_LEN + 2];
    Cosmos__Crypto__Secp256k1__PubKey pk = COSMOS__CRYPTO__SECP256K1__PUB_KEY__INIT;
    pk.key.data = (uint8_t *)pubkey;
    pk.key.len = GD_PUBKEY_LEN;
    size_t pk_len = cosmos__crypto__secp256k1__pub_key__pack(&pk, pk_bytes);

    Google__Protobuf__Any pk_any = GOOGLE__PROTOBUF__ANY__INIT;
    pk_any.type_url = "/cosmos.crypto.secp256k1.PubKey";
    pk_any.value.data = pk_bytes;
    pk_any.value.len = pk_len;

    Cosmos__Tx__V1beta1__ModeInfo__Single single = COSMOS__TX__V1BETA1__MODE_INFO__SINGLE__INIT;
    single.mode = COSMOS__TX__SIGNING__V1BETA1__SIGN_MODE__SIGN_MODE_DIRECT;
    Cosmos__Tx__V1beta1__ModeInfo mode = COSMOS__TX__V1BETA1__MODE_INFO__INIT;
    mode.sum_case = COSMOS__TX__V1BETA1__MODE_INFO__SUM_SINGLE;
    mode.single = &single;

    Cosmos__Tx__V1beta1__SignerInfo signer = COSMOS__TX__V1BETA1__SIGNER_INFO__INIT;
    signer.public_key = &pk_any;
    signer.mode_info = &mode;
    signer.sequence = req->sequence;
    Cosmos__Tx__V1beta1__SignerInfo *signers[1] = {&signer};

    gd_coin fee_coins[GD_COINS_MAX];
    size_t n_fees = gd_tx_fee_coins(req, fee_coins);
    Cosmos__Base__V1beta1__Coin coins[GD_COINS_MAX];
    Cosmos__Base__V1beta1__Coin *coin_ptrs[GD_COINS_MAX];
    for (size_t i = 0; i < n_fees; i++) {
        cosmos__base__v1beta1__coin__init(&coins[i]);
        coins[i].denom = fee_coins[i].denom;
        coins[i].amount = fee_coins[i].amount;
        coin_ptrs[i] = &coins[i];
    }
    Cosmos__Tx__V1beta1__Fee fee = COSMOS__TX__V1BETA1__FEE__INIT;
    fee.n_amount = n_fees;
    fee.amount = coin_ptrs;
    fee.gas_limit = req->gas_limit;

    Cosmos__Tx__V1beta1__AuthInfo auth = COSMOS__TX__V1BETA1__AUTH_INFO__INIT;
    auth.n_signer_infos = 1;
    auth.signer_infos = signers;
    auth.fee = &fee;
    return gd_msg_pack(out, &auth.base);
}

gd_status gd_tx_encode_sign_doc(gd_buf *out, const uint8_t *body, size_t body_len,
                                const uint8_t *auth_info, size_t auth_info_len,
                                const char *chain_id, uint64_t account_number) {
    Cosmos__Tx__V1beta1__SignDoc doc = COSMOS__TX__V1BETA1__SIGN_DOC__INIT;
    doc.body_bytes.data = (uint8_t *)body;
    doc.body_bytes.len = body_len;
    doc.auth_info_bytes.data = (uint8_t *)auth_info;
    doc.auth_info_bytes.len = auth_info_len;
    doc.chain_id = (char *)chain_id;
    doc.account_number = account_number; /* 0 is omitted, as Go does */
    return gd_msg_pack(out, &doc.base);
}

void gd_tx_hash(uint8_t hash[32], char hex[GD_TXHASH_HEX_LEN + 1], const uint8_t *raw,
                size_t len) {
    gd_sha256(hash, raw, len);
    gd_hex_encode(hex, hash, 32, true);
}

gd_status gd_tx_sign(gd_signed_tx *out, const gd_key *key, const gd_tx_request *req) {
    gd_buf body = {0}, auth = {0}, doc = {0};
    uint8_t digest[32], sig[GD_SIGNATURE_LEN];
    gd_status s = gd_tx_encode_body(&body, req);
    if (s == GD_OK)
        s = gd_tx_encode_auth_info(&auth, req, key->pubkey);
    if (s == GD_OK)
        s = gd_tx_encode_sign_doc(&doc, body.data, body.len, auth.data, auth.len, req->chain_id,
                                  req->account_number);
    if (s == GD_OK) {
        gd_sha256(digest, doc.data, doc.len);
        s = gd_key_sign(key, digest, sig);
    }
    if (s == GD_OK) {
        ProtobufCBinaryData sigs[1] = {{GD_SIGNATURE_LEN, sig}};
        Cosmos__Tx__V1beta1__TxRaw raw = COSMOS__TX__V1BETA1__TX_RAW__INIT;
        raw.body_bytes.data = body.data;
        raw.body_bytes.len = body.len;
        raw.auth_info_bytes.data = auth.data;
        raw.auth_info_bytes.len = auth.len;
        raw.n_signatures = 1;
        raw.signatures = sigs;
        s = gd_msg_pack(&out->raw, &raw.base);
    }
    if (s == GD_OK)
        gd_tx_hash(out->hash, out->hash_hex, out->raw.data, out->raw.len);
    gd_buf_free(&body);
    gd_buf_free(&auth);
    gd_buf_free(&doc);
    return s;
}

void gd_signed_tx_free(gd_signed_tx *tx) { gd_buf_free(&tx->raw); }
