/* Transactions: the Cosmos SDK's simd vector reproduced byte for byte,
 * decode round trips, and the strict decoder's refusals. */
#include <stdlib.h>

#include "chain/keys/address.h"
#include "chain/wire/coin.h"
#include "chain/wire/msg.h"
#include "chain/wire/pb_strict.h"
#include "chain/wire/tx.h"
#include "chain/wire/tx_decode.h"
#include "common/hash.h"
#include "cosmos/bank/v1beta1/tx.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "tests/support/vectors.h"

#define SIMD "sign_direct_simd.txt"

static void gd_simd_request(gd_tx_request *req, gd_any *msg, gd_coin *fee, gd_key *key) {
    gd_coin amount;
    CHECK_OK(gd_key_from_mnemonic(key, gd_vectors_value(SIMD, "mnemonic"), NULL,
                                  gd_vectors_value(SIMD, "path")));
    CHECK_OK(gd_coin_parse(&amount, gd_vectors_value(SIMD, "amount")));
    CHECK_OK(gd_coin_parse(fee, gd_vectors_value(SIMD, "fees")));
    CHECK_OK(gd_msg_send_prefixed(msg, "cosmos", gd_vectors_value(SIMD, "from"),
                                  gd_vectors_value(SIMD, "to"), &amount, 1));
    *req = (gd_tx_request){
        .msgs = msg,
        .n_msgs = 1,
        .fees = fee,
        .n_fees = 1,
        .gas_limit = (uint64_t)atoll(gd_vectors_value(SIMD, "gas")),
        .chain_id = gd_vectors_value(SIMD, "chain_id"),
        .account_number = (uint64_t)atoll(gd_vectors_value(SIMD, "account_number")),
        .sequence = (uint64_t)atoll(gd_vectors_value(SIMD, "sequence")),
    };
}

static void test_simd_vector(void) {
    gd_tx_request req;
    gd_any msg = {0};
    gd_coin fee;
    gd_key key;
    gd_simd_request(&req, &msg, &fee, &key);
    gd_buf body = {0}, auth = {0}, doc = {0};
    CHECK_OK(gd_tx_encode_body(&body, &req));
    CHECK_HEX_EQ(body.data, body.len, gd_vectors_value(SIMD, "body_bytes"));
    CHECK_OK(gd_tx_encode_auth_info(&auth, &req, key.pubkey));
    CHECK_HEX_EQ(auth.data, auth.len, gd_vectors_value(SIMD, "auth_info_bytes"));
    CHECK_OK(gd_tx_encode_sign_doc(&doc, body.data, body.len, auth.data, auth.len, req.chain_id,
                                   req.account_number));
    CHECK_HEX_EQ(doc.data, doc.len, gd_vectors_value(SIMD, "sign_bytes"));
    gd_signed_tx tx = {0};
    CHECK_OK(gd_tx_sign(&tx, &key, &req));
    CHECK_HEX_EQ(tx.raw.data, tx.raw.len, gd_vectors_value(SIMD, "tx_bytes"));
    uint8_t h[32];
    gd_sha256(h, tx.raw.data, tx.raw.len);
    CHECK(memcmp(h, tx.hash, 32) == 0);
    for (int i = 0; i < 64; i++)
        CHECK(tx.hash_hex[i] < 'a'); /* upper-case hex */

    /* Decoding gives back the same fields and a valid signature. */
    gd_decoded_tx *dec = NULL;
    CHECK_OK(gd_tx_decode(&dec, tx.raw.data, tx.raw.len));
    CHECK_OK(gd_decoded_tx_verify(dec, "simd-testing", 1));
    CHECK_STATUS(gd_decoded_tx_verify(dec, "simd-testing", 2), GD_ERR_CRYPTO);
    CHECK_STATUS(gd_decoded_tx_verify(dec, "other-chain", 1), GD_ERR_CRYPTO);
    json_t *j = gd_decoded_tx_to_json(dec);
    CHECK(j != NULL);
    const char *to = json_string_value(
        json_object_get(json_array_get(json_object_get(json_object_get(j, "body"), "messages"), 0),
                        "to_address"));
    CHECK_STR_EQ(to, gd_vectors_value(SIMD, "to"));
    json_decref(j);
    gd_decoded_tx_free(dec);
    gd_signed_tx_free(&tx);
    gd_buf_free(&body);
    gd_buf_free(&auth);
    gd_buf_free(&doc);
    gd_any_free(&msg);
}

/* Zero values are omitted: account number 0 gives no SignDoc field 4, an
 * empty memo no TxBody field 2, sequence 0 no SignerInfo field 3. */
static void test_zero_fields_omitted(void) {
    gd_buf doc = {0};
    CHECK_OK(gd_tx_encode_sign_doc(&doc, (const uint8_t *)"\x01", 1, (const uint8_t *)"\x02", 1,
                                   "c", 0));
    CHECK_HEX_EQ(doc.data, doc.len, "0a0101120102" "1a0163");
    gd_buf_free(&doc);
}

static void test_roundtrip_fields(void) {
    gd_key key;
    CHECK_OK(gd_key_from_hex(&key, "1111111111111111111111111111111111111111111111111111111111111111"));
    char from[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_address_from_pubkey(from, sizeof from, "gonka", key.pubkey));
    gd_coin coins[3];
    size_t n = 0;
    CHECK_OK(gd_coins_parse(coins, 3, &n, "5stake,1000ngonka", 1));
    gd_any msg = {0};
    CHECK_OK(gd_msg_send(&msg, from, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", coins, n));
    gd_coin fee;
    CHECK_OK(gd_coin_parse(&fee, "7ngonka"));
    gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .memo = "round \"trip\" \xe2\x9c\x93",
                         .timeout_height = 123456789, .fees = &fee, .n_fees = 1,
                         .gas_limit = 300000, .chain_id = "prod-sim", .account_number = 9,
                         .sequence = 41};
    gd_signed_tx tx = {0};
    CHECK_OK(gd_tx_sign(&tx, &key, &req));
    Cosmos__Tx__V1beta1__TxRaw *raw =
        cosmos__tx__v1beta1__tx_raw__unpack(NULL, tx.raw.len, tx.raw.data);
    CHECK(raw != NULL && raw->n_signatures == 1 && raw->signatures[0].len == 64);
    Cosmos__Tx__V1beta1__TxBody *body =
        cosmos__tx__v1beta1__tx_body__unpack(NULL, raw->body_bytes.len, raw->body_bytes.data);
    Cosmos__Tx__V1beta1__AuthInfo *auth = cosmos__tx__v1beta1__auth_info__unpack(
        NULL, raw->auth_info_bytes.len, raw->auth_info_bytes.data);
    CHECK(body && auth);
    CHECK_STR_EQ(body->memo, req.memo);
    CHECK(body->timeout_height == 123456789);
    CHECK(body->n_messages == 1);
    CHECK_STR_EQ(body->messages[0]->type_url, "/cosmos.bank.v1beta1.MsgSend");
    Cosmos__Bank__V1beta1__MsgSend *send = cosmos__bank__v1beta1__msg_send__unpack(
        NULL, body->messages[0]->value.len, body->messages[0]->value.data);
    CHECK(send && send->n_amount == 2);
    CHECK_STR_EQ(send->from_address, from);
    CHECK_STR_EQ(send->amount[0]->denom, "ngonka"); /* sorted by denom */
    CHECK_STR_EQ(send->amount[0]->amount, "1000");
    CHECK_STR_EQ(send->amount[1]->denom, "stake");
    CHECK(auth->n_signer_infos == 1 && auth->signer_infos[0]->sequence == 41);
    CHECK(auth->fee && auth->fee->gas_limit == 300000 && auth->fee->n_amount == 1);
    CHECK_STR_EQ(auth->fee->amount[0]->amount, "7");
    /* Re-packing the decoded messages gives identical bytes (canonical). */
    uint8_t again[4096];
    CHECK(cosmos__tx__v1beta1__tx_raw__pack(raw, again) == tx.raw.len);
    CHECK(memcmp(again, tx.raw.data, tx.raw.len) == 0);
    cosmos__bank__v1beta1__msg_send__free_unpacked(send, NULL);
    cosmos__tx__v1beta1__auth_info__free_unpacked(auth, NULL);
    cosmos__tx__v1beta1__tx_body__free_unpacked(body, NULL);
    cosmos__tx__v1beta1__tx_raw__free_unpacked(raw, NULL);

    gd_decoded_tx *dec = NULL;
    CHECK_OK(gd_tx_decode(&dec, tx.raw.data, tx.raw.len));
    CHECK_OK(gd_decoded_tx_verify(dec, "prod-sim", 9));
    char signer[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_decoded_tx_signer(dec, signer, sizeof signer));
    CHECK_STR_EQ(signer, from);
    gd_decoded_tx_free(dec);
    gd_signed_tx_free(&tx);
    gd_any_free(&msg);
}

static void test_request_checks(void) {
    gd_key key;
    CHECK_OK(gd_key_from_hex(&key, "1111111111111111111111111111111111111111111111111111111111111111"));
    gd_any msg = {0};
    gd_coin c;
    CHECK_OK(gd_coin_parse(&c, "1ngonka"));
    CHECK_STATUS(gd_msg_send(&msg, "gonka1bad", "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", &c, 1),
                 GD_ERR_INVALID);
    char from[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_address_from_pubkey(from, sizeof from, "gonka", key.pubkey));
    CHECK_STATUS(gd_msg_send(&msg, from, "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6", &c, 1),
                 GD_ERR_INVALID);
    gd_coin zero;
    CHECK_OK(gd_coin_parse(&zero, "0ngonka"));
    CHECK_STATUS(gd_msg_send(&msg, from, from, &zero, 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_msg_send(&msg, from, from, &c, 0), GD_ERR_INVALID);
    CHECK_OK(gd_msg_send(&msg, from, from, &c, 1));
    gd_signed_tx tx = {0};
    gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .gas_limit = 1, .chain_id = ""};
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    req.chain_id = "a-chain-id-that-is-much-longer-than-fifty-characters-long";
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    req.chain_id = "ok";
    req.gas_limit = 0;
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    req.gas_limit = 1;
    req.n_msgs = 0;
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    /* Strings a node would refuse to decode are never signed. */
    req.n_msgs = 1;
    req.memo = "caf\xc3";
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "memo is not valid UTF-8"));
    req.memo = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"; /* café € and an emoji */
    CHECK_OK(gd_tx_sign(&tx, &key, &req));
    gd_signed_tx_free(&tx);
    req.memo = NULL;
    req.chain_id = "ok\xff";
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    req.chain_id = "ok";
    gd_any odd = msg;
    snprintf(odd.type_url, sizeof odd.type_url, "/cosmos.bank.v1beta1.MsgSend\xed\xa0\x80");
    req.msgs = &odd;
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "type URL is not valid UTF-8"));
    gd_signed_tx_free(&tx);
    gd_any_free(&msg);
}

/* Go's utf8.Valid: shortest forms, no surrogates, nothing past U+10FFFF. */
static void test_utf8(void) {
    static const struct {
        const char *s;
        bool valid;
    } cases[] = {
        {"", true},
        {"plain ascii", true},
        {"\xc2\x80", true},             /* U+0080 */
        {"\xdf\xbf", true},             /* U+07FF */
        {"\xe0\xa0\x80", true},         /* U+0800 */
        {"\xed\x9f\xbf", true},         /* U+D7FF */
        {"\xee\x80\x80", true},         /* U+E000 */
        {"\xef\xbf\xbf", true},         /* U+FFFF */
        {"\xf0\x90\x80\x80", true},     /* U+10000 */
        {"\xf4\x8f\xbf\xbf", true},     /* U+10FFFF */
        {"\x80", false},                /* a lone continuation byte */
        {"\xc0\x80", false},            /* overlong NUL */
        {"\xc1\xbf", false},            /* overlong */
        {"\xe0\x9f\xbf", false},        /* overlong U+07FF */
        {"\xed\xa0\x80", false},        /* surrogate U+D800 */
        {"\xed\xbf\xbf", false},        /* surrogate U+DFFF */
        {"\xf0\x8f\xbf\xbf", false},    /* overlong U+FFFF */
        {"\xf4\x90\x80\x80", false},    /* U+110000 */
        {"\xf5\x80\x80\x80", false},
        {"\xff", false},
        {"\xc3", false},                /* truncated */
        {"\xe2\x82", false},
        {"\xf0\x9f\x98", false},
        {"\xe2\x28\xa1", false},        /* a bad continuation */
        {"ok\xc3\xa9ok", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = gd_utf8_valid(cases[i].s, strlen(cases[i].s));
        if (got != cases[i].valid)
            fprintf(stderr, "utf8 case %zu: got %d\n", i, got);
        CHECK(got == cases[i].valid);
    }
}

/* The bytes of needle in buf replaced by patch (same length), once. */
static bool patch_bytes(uint8_t *buf, size_t len, const char *needle, const char *patch) {
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, needle, n) == 0) {
            memcpy(buf + i, patch, n);
            return true;
        }
    return false;
}

/* A transaction whose memo or type URL is not UTF-8 does not decode. */
static void test_decoder_refuses_invalid_utf8(void) {
    gd_key key;
    CHECK_OK(gd_key_from_hex(&key, "1111111111111111111111111111111111111111111111111111111111111111"));
    char from[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_address_from_pubkey(from, sizeof from, "gonka", key.pubkey));
    gd_any msg = {0};
    gd_coin c;
    CHECK_OK(gd_coin_parse(&c, "1ngonka"));
    CHECK_OK(gd_msg_send(&msg, from, from, &c, 1));
    gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .gas_limit = 1, .chain_id = "ok",
                         .memo = "memo-QQQQ"};
    gd_signed_tx tx = {0};
    CHECK_OK(gd_tx_sign(&tx, &key, &req));
    gd_decoded_tx *dec = NULL;
    CHECK_OK(gd_tx_decode(&dec, tx.raw.data, tx.raw.len));
    gd_decoded_tx_free(dec);
    dec = NULL;
    uint8_t raw[1024];
    CHECK(tx.raw.len <= sizeof raw);
    memcpy(raw, tx.raw.data, tx.raw.len);
    CHECK(patch_bytes(raw, tx.raw.len, "QQQQ", "\xff\xfe\xc0\x80"));
    CHECK_STATUS(gd_tx_decode(&dec, raw, tx.raw.len), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "TxBody.memo is not valid UTF-8"));
    memcpy(raw, tx.raw.data, tx.raw.len);
    CHECK(patch_bytes(raw, tx.raw.len, "MsgSend", "Msg\xedSnd"));
    CHECK_STATUS(gd_tx_decode(&dec, raw, tx.raw.len), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "Any.type_url is not valid UTF-8"));
    /* The public key's type URL, in the auth info. */
    memcpy(raw, tx.raw.data, tx.raw.len);
    CHECK(patch_bytes(raw, tx.raw.len, "secp256k1", "secp256\xf4\x90"));
    CHECK_STATUS(gd_tx_decode(&dec, raw, tx.raw.len), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "not valid UTF-8"));
    /* Inside a message the strings are the module's to check; the JSON
     * shows such a message as its bytes rather than a null address. */
    memcpy(raw, tx.raw.data, tx.raw.len);
    CHECK(patch_bytes(raw, tx.raw.len, "gonka1", "gonk\xff" "1"));
    CHECK_OK(gd_tx_decode(&dec, raw, tx.raw.len));
    json_t *j = dec ? gd_decoded_tx_to_json(dec) : NULL;
    json_t *m0 = json_array_get(json_object_get(json_object_get(j, "body"), "messages"), 0);
    CHECK(m0 && json_object_get(m0, "value_base64") && !json_object_get(m0, "from_address"));
    json_decref(j);
    gd_decoded_tx_free(dec);
    gd_signed_tx_free(&tx);
    gd_any_free(&msg);
}

static void test_strict_decoder(void) {
    uint8_t tx[1024];
    size_t n = gd_test_unhex(tx, sizeof tx, gd_vectors_value(SIMD, "tx_bytes"));
    gd_decoded_tx *dec = NULL;
    CHECK_OK(gd_tx_decode(&dec, tx, n));
    gd_decoded_tx_free(dec);
    dec = NULL;
    /* Truncations never decode (and never crash). */
    for (size_t cut = 0; cut < n; cut += 7)
        CHECK(gd_tx_decode(&dec, tx, cut) != GD_OK);
    /* Fields out of order: auth_info before body. */
    uint8_t body[512], auth[512], sig[64], swapped[1024];
    size_t nb = gd_test_unhex(body, sizeof body, gd_vectors_value(SIMD, "body_bytes"));
    size_t na = gd_test_unhex(auth, sizeof auth, gd_vectors_value(SIMD, "auth_info_bytes"));
    gd_test_unhex(sig, sizeof sig, gd_vectors_value(SIMD, "signature"));
    size_t o = 0;
    swapped[o++] = 0x12;
    swapped[o++] = (uint8_t)na;
    memcpy(swapped + o, auth, na);
    o += na;
    swapped[o++] = 0x0a;
    swapped[o++] = (uint8_t)(nb | 0x80);
    swapped[o++] = (uint8_t)(nb >> 7);
    memcpy(swapped + o, body, nb);
    o += nb;
    swapped[o++] = 0x1a;
    swapped[o++] = 64;
    memcpy(swapped + o, sig, 64);
    o += 64;
    CHECK_STATUS(gd_tx_decode(&dec, swapped, o), GD_ERR_PARSE);
    /* A non-minimal length varint (0x80 0x00 style padding). */
    uint8_t padded[1024];
    padded[0] = 0x0a;
    padded[1] = (uint8_t)(nb | 0x80);
    padded[2] = (uint8_t)((nb >> 7) | 0x80);
    padded[3] = 0x00;
    memcpy(padded + 4, body, nb);
    CHECK_STATUS(gd_tx_decode(&dec, padded, 4 + nb), GD_ERR_PARSE);
    /* An unknown field 4 in TxRaw. */
    memcpy(padded, tx, n);
    padded[n] = 0x22;
    padded[n + 1] = 0x00;
    CHECK_STATUS(gd_tx_decode(&dec, padded, n + 2), GD_ERR_PARSE);
    /* Wire type 0 for a TxRaw field. */
    uint8_t varint_field[] = {0x08, 0x01};
    CHECK_STATUS(gd_tx_decode(&dec, varint_field, sizeof varint_field), GD_ERR_PARSE);
    CHECK_STATUS(gd_tx_decode(&dec, tx, 0), GD_ERR_PARSE);

    /* Unknown fields: TxBody tolerates non-critical ones (number >= 1024),
     * AuthInfo none, at any depth; field number 0 never. */
    struct {
        const uint8_t *extra;
        size_t len;
        bool in_body;
        gd_status want;
    } cases[] = {
        {(const uint8_t *)"\x88\x40\x01", 3, true, GD_OK},          /* field 1025 varint */
        {(const uint8_t *)"\x30\x01", 2, true, GD_ERR_PARSE},        /* field 6 */
        {(const uint8_t *)"\x20\x01", 2, false, GD_ERR_PARSE},       /* AuthInfo field 4 */
        {(const uint8_t *)"\x88\x40\x01", 3, false, GD_ERR_PARSE},  /* even non-critical */
        {(const uint8_t *)"\x1a\x02\x30\x01", 4, false, GD_ERR_PARSE}, /* Tip{6: 1}, nested */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b2[600], a2[600], out[1400];
        memcpy(b2, body, nb);
        memcpy(a2, auth, na);
        size_t nb2 = nb, na2 = na;
        if (cases[i].in_body) {
            memcpy(b2 + nb, cases[i].extra, cases[i].len);
            nb2 += cases[i].len;
        } else {
            memcpy(a2 + na, cases[i].extra, cases[i].len);
            na2 += cases[i].len;
        }
        size_t k = 0;
        out[k++] = 0x0a;
        out[k++] = (uint8_t)(nb2 | 0x80);
        out[k++] = (uint8_t)(nb2 >> 7);
        memcpy(out + k, b2, nb2);
        k += nb2;
        out[k++] = 0x12;
        out[k++] = (uint8_t)na2;
        memcpy(out + k, a2, na2);
        k += na2;
        out[k++] = 0x1a;
        out[k++] = 64;
        memcpy(out + k, sig, 64);
        k += 64;
        gd_status got = gd_tx_decode(&dec, out, k);
        if (got != cases[i].want)
            fprintf(stderr, "unknown-field case %zu: %s (%s)\n", i, gd_status_name(got),
                    gd_error_detail());
        CHECK(got == cases[i].want);
        if (got == GD_OK)
            gd_decoded_tx_free(dec);
        dec = NULL;
    }
}

int main(void) {
    RUN_TEST(test_simd_vector);
    RUN_TEST(test_zero_fields_omitted);
    RUN_TEST(test_roundtrip_fields);
    RUN_TEST(test_request_checks);
    RUN_TEST(test_strict_decoder);
    RUN_TEST(test_utf8);
    RUN_TEST(test_decoder_refuses_invalid_utf8);
    return gd_test_finish();
}
