/* Strict transaction decoding. */
#include "chain/wire/tx_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/json_bytes.h"
#include "chain/wire/pb_json.h"
#include "chain/wire/pb_strict.h"
#include "chain/wire/tx.h"
#include "common/base64.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "cosmos/bank/v1beta1/tx.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "gonka/diloco/v1/tx.pb-c.h"

struct gd_decoded_tx {
    Cosmos__Tx__V1beta1__TxRaw *raw;
    Cosmos__Tx__V1beta1__TxBody *body;
    Cosmos__Tx__V1beta1__AuthInfo *auth;
};

/* Reads a varint, requiring the minimal encoding. */
static gd_status gd_pb_varint(uint64_t *out, const uint8_t *p, size_t len, size_t *pos) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= len)
            return gd_fail(GD_ERR_PARSE, "truncated varint");
        uint8_t b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (b == 0 && shift > 0)
                return gd_fail(GD_ERR_PARSE, "non-minimal varint");
            *out = v;
            return GD_OK;
        }
    }
    return gd_fail(GD_ERR_PARSE, "varint too long");
}

/* ADR-027 for TxRaw: only fields 1..3, wire type 2, in ascending order
 * (field 3 may repeat), minimal varints. */
static gd_status gd_txraw_check_canonical(const uint8_t *p, size_t len) {
    size_t pos = 0;
    uint64_t last = 0;
    while (pos < len) {
        uint64_t tag = 0, n = 0;
        GD_TRY(gd_pb_varint(&tag, p, len, &pos));
        uint64_t field = tag >> 3, wire = tag & 7;
        if (field < 1 || field > 3)
            return gd_fail(GD_ERR_PARSE, "TxRaw has unknown field %llu",
                           (unsigned long long)field);
        if (wire != 2)
            return gd_fail(GD_ERR_PARSE, "TxRaw field %llu has wire type %llu, expected 2",
                           (unsigned long long)field, (unsigned long long)wire);
        if (field < last || (field == last && field != 3))
            return gd_fail(GD_ERR_PARSE, "TxRaw fields are not in ascending order");
        last = field;
        GD_TRY(gd_pb_varint(&n, p, len, &pos));
        if (n > len - pos)
            return gd_fail(GD_ERR_PARSE, "TxRaw field %llu overruns the input",
                           (unsigned long long)field);
        pos += (size_t)n;
    }
    return GD_OK;
}

gd_status gd_tx_decode(gd_decoded_tx **out, const uint8_t *raw, size_t len) {
    if (len > GD_TX_MAX_BYTES)
        return gd_fail(GD_ERR_LIMIT, "transaction is %zu bytes, more than %d", len,
                       GD_TX_MAX_BYTES);
    if (len == 0)
        return gd_fail(GD_ERR_PARSE, "transaction is empty");
    GD_TRY(gd_txraw_check_canonical(raw, len));
    gd_decoded_tx *tx = calloc(1, sizeof *tx);
    if (tx == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    tx->raw = cosmos__tx__v1beta1__tx_raw__unpack(NULL, len, raw);
    if (tx->raw == NULL) {
        s = gd_fail(GD_ERR_PARSE, "not a protobuf TxRaw");
        goto fail;
    }
    tx->body = cosmos__tx__v1beta1__tx_body__unpack(NULL, tx->raw->body_bytes.len,
                                                     tx->raw->body_bytes.data);
    if (tx->body == NULL) {
        s = gd_fail(GD_ERR_PARSE, "TxRaw.body_bytes is not a TxBody");
        goto fail;
    }
    tx->auth = cosmos__tx__v1beta1__auth_info__unpack(NULL, tx->raw->auth_info_bytes.len,
                                                       tx->raw->auth_info_bytes.data);
    if (tx->auth == NULL) {
        s = gd_fail(GD_ERR_PARSE, "TxRaw.auth_info_bytes is not an AuthInfo");
        goto fail;
    }
    if ((s = gd_pb_reject_unknown(&tx->body->base, true)) != GD_OK ||
        (s = gd_pb_reject_unknown(&tx->auth->base, false)) != GD_OK ||
        (s = gd_pb_reject_invalid_utf8(&tx->body->base)) != GD_OK ||
        (s = gd_pb_reject_invalid_utf8(&tx->auth->base)) != GD_OK)
        goto fail;
    if (tx->body->n_messages == 0) {
        s = gd_fail(GD_ERR_PARSE, "transaction has no messages");
        goto fail;
    }
    if (tx->raw->n_signatures != tx->auth->n_signer_infos) {
        s = gd_fail(GD_ERR_PARSE, "transaction has %zu signatures for %zu signers",
                    tx->raw->n_signatures, tx->auth->n_signer_infos);
        goto fail;
    }
    *out = tx;
    return GD_OK;
fail:
    gd_decoded_tx_free(tx);
    return s;
}

void gd_decoded_tx_free(gd_decoded_tx *tx) {
    if (tx == NULL)
        return;
    if (tx->auth)
        cosmos__tx__v1beta1__auth_info__free_unpacked(tx->auth, NULL);
    if (tx->body)
        cosmos__tx__v1beta1__tx_body__free_unpacked(tx->body, NULL);
    if (tx->raw)
        cosmos__tx__v1beta1__tx_raw__free_unpacked(tx->raw, NULL);
    free(tx);
}

const struct Cosmos__Tx__V1beta1__TxRaw *gd_decoded_tx_raw(const gd_decoded_tx *tx) {
    return tx->raw;
}

const struct Cosmos__Tx__V1beta1__TxBody *gd_decoded_tx_body(const gd_decoded_tx *tx) {
    return tx->body;
}

const struct Cosmos__Tx__V1beta1__AuthInfo *gd_decoded_tx_auth_info(const gd_decoded_tx *tx) {
    return tx->auth;
}

/* The first signer's compressed secp256k1 key, if it has one. */
static gd_status gd_decoded_tx_pubkey(const gd_decoded_tx *tx, uint8_t pubkey[GD_PUBKEY_LEN]) {
    if (tx->auth->n_signer_infos == 0)
        return gd_fail(GD_ERR_PARSE, "transaction has no signer");
    const Google__Protobuf__Any *any = tx->auth->signer_infos[0]->public_key;
    if (any == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "signer carries no public key (it is on chain)");
    if (any->type_url == NULL || strcmp(any->type_url, "/cosmos.crypto.secp256k1.PubKey") != 0)
        return gd_fail(GD_ERR_PARSE, "signer key type '%.80s' is not secp256k1",
                       any->type_url ? any->type_url : "");
    Cosmos__Crypto__Secp256k1__PubKey *pk =
        cosmos__crypto__secp256k1__pub_key__unpack(NULL, any->value.len, any->value.data);
    gd_status s = GD_OK;
    if (pk == NULL || pk->key.len != GD_PUBKEY_LEN || !gd_pubkey_valid(pk->key.data))
        s = gd_fail(GD_ERR_PARSE, "signer public key is not a 33-byte compressed point");
    else
        memcpy(pubkey, pk->key.data, GD_PUBKEY_LEN);
    if (pk)
        cosmos__crypto__secp256k1__pub_key__free_unpacked(pk, NULL);
    return s;
}

gd_status gd_decoded_tx_signer(const gd_decoded_tx *tx, char *address, size_t cap) {
    uint8_t pubkey[GD_PUBKEY_LEN];
    GD_TRY(gd_decoded_tx_pubkey(tx, pubkey));
    return gd_address_from_pubkey(address, cap, GD_ADDRESS_PREFIX, pubkey);
}

gd_status gd_decoded_tx_verify(const gd_decoded_tx *tx, const char *chain_id,
                               uint64_t account_number) {
    uint8_t pubkey[GD_PUBKEY_LEN];
    GD_TRY(gd_decoded_tx_pubkey(tx, pubkey));
    const Cosmos__Tx__V1beta1__ModeInfo *mode = tx->auth->signer_infos[0]->mode_info;
    if (mode == NULL || mode->sum_case != COSMOS__TX__V1BETA1__MODE_INFO__SUM_SINGLE ||
        mode->single == NULL ||
        mode->single->mode != COSMOS__TX__SIGNING__V1BETA1__SIGN_MODE__SIGN_MODE_DIRECT)
        return gd_fail(GD_ERR_PARSE, "only single-signer SIGN_MODE_DIRECT is verified");
    if (tx->raw->signatures[0].len != GD_SIGNATURE_LEN)
        return gd_fail(GD_ERR_CRYPTO, "signature is %zu bytes, expected 64",
                       tx->raw->signatures[0].len);
    gd_buf doc = {0};
    GD_TRY(gd_tx_encode_sign_doc(&doc, tx->raw->body_bytes.data, tx->raw->body_bytes.len,
                                 tx->raw->auth_info_bytes.data, tx->raw->auth_info_bytes.len,
                                 chain_id, account_number));
    uint8_t digest[32];
    gd_sha256(digest, doc.data, doc.len);
    gd_buf_free(&doc);
    if (!gd_signature_verify(pubkey, digest, tx->raw->signatures[0].data))
        return gd_fail(GD_ERR_CRYPTO, "signature does not verify for chain-id '%s' and account "
                                      "number %llu", chain_id,
                       (unsigned long long)account_number);
    return GD_OK;
}

/* --- JSON rendering ---------------------------------------------------- */

static json_t *gd_json_u64(uint64_t v) {
    /* Cosmos JSON renders 64-bit integers as strings. */
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return json_string(buf);
}

static json_t *gd_json_str(const char *s) {
    /* gd_tx_decode refused strings that are not UTF-8; json_string would
     * give NULL for one (rendered as null), never a wrong string. */
    return s ? json_string(s) : json_string("");
}

static json_t *gd_coins_json(Cosmos__Base__V1beta1__Coin *const *coins, size_t n) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        json_array_append_new(arr, json_pack("{s:o?,s:o?}", "denom",
                                             gd_json_str(coins[i]->denom), "amount",
                                             gd_json_str(coins[i]->amount)));
    return arr;
}

static json_t *gd_any_json(const Google__Protobuf__Any *any) {
    const char *url = any->type_url ? any->type_url : "";
    if (strcmp(url, "/cosmos.bank.v1beta1.MsgSend") == 0) {
        Cosmos__Bank__V1beta1__MsgSend *m =
            cosmos__bank__v1beta1__msg_send__unpack(NULL, any->value.len, any->value.data);
        /* One whose strings are not UTF-8 shows as its bytes, below. */
        if (m != NULL && gd_pb_reject_invalid_utf8(&m->base) != GD_OK) {
            cosmos__bank__v1beta1__msg_send__free_unpacked(m, NULL);
            m = NULL;
        }
        if (m != NULL) {
            json_t *j = json_pack("{s:s,s:o?,s:o?,s:o?}", "@type", url, "from_address",
                                  gd_json_str(m->from_address), "to_address",
                                  gd_json_str(m->to_address), "amount",
                                  gd_coins_json(m->amount, m->n_amount));
            cosmos__bank__v1beta1__msg_send__free_unpacked(m, NULL);
            return j;
        }
    }
    if (strcmp(url, "/cosmos.crypto.secp256k1.PubKey") == 0) {
        Cosmos__Crypto__Secp256k1__PubKey *pk =
            cosmos__crypto__secp256k1__pub_key__unpack(NULL, any->value.len, any->value.data);
        if (pk != NULL) {
            json_t *j = json_pack("{s:s,s:o?}", "@type", url, "key",
                                  gd_json_base64(pk->key.data, pk->key.len));
            cosmos__crypto__secp256k1__pub_key__free_unpacked(pk, NULL);
            return j;
        }
    }
    /* The DiLoCo module's messages, field by field (strictly decoded). */
    static const struct {
        const char *url;
        const ProtobufCMessageDescriptor *d;
    } known[] = {
        {GD_DILOCO_MSG_CREATE_RUN, &gonka__diloco__v1__msg_create_run__descriptor},
        {GD_DILOCO_MSG_JOIN_RUN, &gonka__diloco__v1__msg_join_run__descriptor},
        {GD_DILOCO_MSG_COMMIT_ROUND, &gonka__diloco__v1__msg_commit_round__descriptor},
        {GD_DILOCO_MSG_REPORT_AVAILABILITY,
         &gonka__diloco__v1__msg_report_availability__descriptor},
        {GD_DILOCO_MSG_SUBMIT_VERDICT, &gonka__diloco__v1__msg_submit_verdict__descriptor},
        {GD_DILOCO_MSG_DISPUTE, &gonka__diloco__v1__msg_dispute__descriptor},
        {GD_DILOCO_MSG_ATTEST_ROUND, &gonka__diloco__v1__msg_attest_round__descriptor},
        {GD_DILOCO_MSG_CLAIM_REWARDS, &gonka__diloco__v1__msg_claim_rewards__descriptor},
        {GD_DILOCO_MSG_RANDOMNESS, &gonka__diloco__v1__msg_randomness__descriptor},
        {GD_DILOCO_MSG_LEAVE_RUN, &gonka__diloco__v1__msg_leave_run__descriptor},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(url, known[i].url) != 0)
            continue;
        ProtobufCMessage *m =
            protobuf_c_message_unpack(known[i].d, NULL, any->value.len, any->value.data);
        json_t *j = m && gd_pb_reject_unknown(m, false) == GD_OK &&
                            gd_pb_reject_invalid_utf8(m) == GD_OK
                        ? gd_pb_to_json(m)
                        : NULL;
        if (m)
            protobuf_c_message_free_unpacked(m, NULL);
        if (j != NULL) {
            json_t *typed = json_pack("{s:s}", "@type", url);
            if (typed && json_object_update(typed, j) == 0) {
                json_decref(j);
                return typed;
            }
            json_decref(typed);
            json_decref(j);
        }
        break;
    }
    return json_pack("{s:o?,s:o?}", "@type", json_string(url), "value_base64",
                     gd_json_base64(any->value.data, any->value.len));
}

json_t *gd_decoded_tx_to_json(const gd_decoded_tx *tx) {
    json_t *msgs = json_array();
    for (size_t i = 0; msgs && i < tx->body->n_messages; i++)
        json_array_append_new(msgs, gd_any_json(tx->body->messages[i]));
    json_t *body = json_pack("{s:o?,s:o?,s:o?}", "messages", msgs, "memo",
                             gd_json_str(tx->body->memo), "timeout_height",
                             gd_json_u64(tx->body->timeout_height));
    if (body && tx->body->unordered)
        json_object_set_new(body, "unordered", json_true());

    json_t *signers = json_array();
    for (size_t i = 0; signers && i < tx->auth->n_signer_infos; i++) {
        const Cosmos__Tx__V1beta1__SignerInfo *si = tx->auth->signer_infos[i];
        json_t *mode = json_null();
        if (si->mode_info && si->mode_info->sum_case == COSMOS__TX__V1BETA1__MODE_INFO__SUM_SINGLE &&
            si->mode_info->single) {
            const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(
                &cosmos__tx__signing__v1beta1__sign_mode__descriptor,
                si->mode_info->single->mode);
            mode = json_pack("{s:{s:s}}", "single", "mode", ev ? ev->name : "UNKNOWN");
        }
        json_array_append_new(signers,
                              json_pack("{s:o?,s:o?,s:o?}", "public_key",
                                        si->public_key ? gd_any_json(si->public_key) : json_null(),
                                        "mode_info", mode, "sequence",
                                        gd_json_u64(si->sequence)));
    }
    json_t *fee = json_null();
    if (tx->auth->fee)
        fee = json_pack("{s:o?,s:o?,s:o?,s:o?}", "amount",
                        gd_coins_json(tx->auth->fee->amount, tx->auth->fee->n_amount),
                        "gas_limit", gd_json_u64(tx->auth->fee->gas_limit), "payer",
                        gd_json_str(tx->auth->fee->payer), "granter",
                        gd_json_str(tx->auth->fee->granter));
    json_t *auth = json_pack("{s:o?,s:o?}", "signer_infos", signers, "fee", fee);

    json_t *sigs = json_array();
    for (size_t i = 0; sigs && i < tx->raw->n_signatures; i++)
        json_array_append_new(sigs,
                              gd_json_base64(tx->raw->signatures[i].data, tx->raw->signatures[i].len));
    return json_pack("{s:o?,s:o?,s:o?}", "body", body, "auth_info", auth, "signatures", sigs);
}
