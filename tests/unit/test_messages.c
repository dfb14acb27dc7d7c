/* Round trips of every protobuf message the client encodes or decodes:
 * each is filled with non-zero values in every field, packed, unpacked and
 * packed again (bytes must be equal), and the typed decoders must return
 * every value that went in. */
#include <stdlib.h>

#include "chain/client/query.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/tx.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "inference/inference/query.pb-c.h"
#include "tests/support/testkit.h"

/* pack -> unpack -> pack gives identical bytes; returns the first packing. */
static size_t gd_roundtrip(uint8_t *out, size_t cap, const ProtobufCMessage *m) {
    size_t n = protobuf_c_message_get_packed_size(m);
    CHECK(n <= cap);
    protobuf_c_message_pack(m, out);
    ProtobufCMessage *back = protobuf_c_message_unpack(m->descriptor, NULL, n, out);
    CHECK(back != NULL);
    if (back) {
        uint8_t again[4096];
        CHECK(protobuf_c_message_get_packed_size(back) == n);
        protobuf_c_message_pack(back, again);
        CHECK(memcmp(again, out, n) == 0);
        CHECK(back->n_unknown_fields == 0);
        protobuf_c_message_free_unpacked(back, NULL);
    }
    return n;
}

static const uint8_t gd_pk[33] = {2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static void test_tx_messages(void) {
    uint8_t buf[4096];
    Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
    coin.denom = "ngonka";
    coin.amount = "123";
    Cosmos__Base__V1beta1__Coin *coins[1] = {&coin};
    gd_roundtrip(buf, sizeof buf, &coin.base);

    Cosmos__Bank__V1beta1__MsgSend send = COSMOS__BANK__V1BETA1__MSG_SEND__INIT;
    send.from_address = "gonka1a";
    send.to_address = "gonka1b";
    send.n_amount = 1;
    send.amount = coins;
    size_t send_len = gd_roundtrip(buf, sizeof buf, &send.base);
    uint8_t send_bytes[256];
    memcpy(send_bytes, buf, send_len);

    Cosmos__Crypto__Secp256k1__PubKey pk = COSMOS__CRYPTO__SECP256K1__PUB_KEY__INIT;
    pk.key.data = (uint8_t *)gd_pk;
    pk.key.len = 33;
    size_t pk_len = gd_roundtrip(buf, sizeof buf, &pk.base);
    uint8_t pk_bytes[64];
    memcpy(pk_bytes, buf, pk_len);

    Google__Protobuf__Any msg_any = GOOGLE__PROTOBUF__ANY__INIT;
    msg_any.type_url = "/cosmos.bank.v1beta1.MsgSend";
    msg_any.value.data = send_bytes;
    msg_any.value.len = send_len;
    Google__Protobuf__Any *msgs[1] = {&msg_any};
    gd_roundtrip(buf, sizeof buf, &msg_any.base);

    Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
    ts.seconds = 1764400000;
    ts.nanos = 5;
    Cosmos__Tx__V1beta1__TxBody body = COSMOS__TX__V1BETA1__TX_BODY__INIT;
    body.n_messages = 1;
    body.messages = msgs;
    body.memo = "memo";
    body.timeout_height = 99;
    body.unordered = 1;
    body.timeout_timestamp = &ts;
    body.n_extension_options = 1;
    body.extension_options = msgs;
    body.n_non_critical_extension_options = 1;
    body.non_critical_extension_options = msgs;
    size_t body_len = gd_roundtrip(buf, sizeof buf, &body.base);
    uint8_t body_bytes[1024];
    memcpy(body_bytes, buf, body_len);

    Google__Protobuf__Any pk_any = GOOGLE__PROTOBUF__ANY__INIT;
    pk_any.type_url = "/cosmos.crypto.secp256k1.PubKey";
    pk_any.value.data = pk_bytes;
    pk_any.value.len = pk_len;
    Cosmos__Tx__V1beta1__ModeInfo__Single single = COSMOS__TX__V1BETA1__MODE_INFO__SINGLE__INIT;
    single.mode = COSMOS__TX__SIGNING__V1BETA1__SIGN_MODE__SIGN_MODE_DIRECT;
    Cosmos__Tx__V1beta1__ModeInfo mode = COSMOS__TX__V1BETA1__MODE_INFO__INIT;
    mode.sum_case = COSMOS__TX__V1BETA1__MODE_INFO__SUM_SINGLE;
    mode.single = &single;
    gd_roundtrip(buf, sizeof buf, &mode.base);
    Cosmos__Crypto__Multisig__V1beta1__CompactBitArray bits =
        COSMOS__CRYPTO__MULTISIG__V1BETA1__COMPACT_BIT_ARRAY__INIT;
    bits.extra_bits_stored = 3;
    bits.elems.data = (uint8_t *)"\xa0";
    bits.elems.len = 1;
    Cosmos__Tx__V1beta1__ModeInfo *inner[1] = {&mode};
    Cosmos__Tx__V1beta1__ModeInfo__Multi multi = COSMOS__TX__V1BETA1__MODE_INFO__MULTI__INIT;
    multi.bitarray = &bits;
    multi.n_mode_infos = 1;
    multi.mode_infos = inner;
    Cosmos__Tx__V1beta1__ModeInfo mmode = COSMOS__TX__V1BETA1__MODE_INFO__INIT;
    mmode.sum_case = COSMOS__TX__V1BETA1__MODE_INFO__SUM_MULTI;
    mmode.multi = &multi;
    gd_roundtrip(buf, sizeof buf, &mmode.base);

    Cosmos__Tx__V1beta1__SignerInfo signer = COSMOS__TX__V1BETA1__SIGNER_INFO__INIT;
    signer.public_key = &pk_any;
    signer.mode_info = &mode;
    signer.sequence = 12;
    Cosmos__Tx__V1beta1__SignerInfo *signers[1] = {&signer};
    gd_roundtrip(buf, sizeof buf, &signer.base);
    Cosmos__Tx__V1beta1__Fee fee = COSMOS__TX__V1BETA1__FEE__INIT;
    fee.n_amount = 1;
    fee.amount = coins;
    fee.gas_limit = 200000;
    fee.payer = "gonka1p";
    fee.granter = "gonka1g";
    gd_roundtrip(buf, sizeof buf, &fee.base);
    Cosmos__Tx__V1beta1__Tip tip = COSMOS__TX__V1BETA1__TIP__INIT;
    tip.n_amount = 1;
    tip.amount = coins;
    tip.tipper = "gonka1t";
    Cosmos__Tx__V1beta1__AuthInfo auth = COSMOS__TX__V1BETA1__AUTH_INFO__INIT;
    auth.n_signer_infos = 1;
    auth.signer_infos = signers;
    auth.fee = &fee;
    auth.tip = &tip;
    size_t auth_len = gd_roundtrip(buf, sizeof buf, &auth.base);
    uint8_t auth_bytes[1024];
    memcpy(auth_bytes, buf, auth_len);

    Cosmos__Tx__V1beta1__SignDoc doc = COSMOS__TX__V1BETA1__SIGN_DOC__INIT;
    doc.body_bytes.data = body_bytes;
    doc.body_bytes.len = body_len;
    doc.auth_info_bytes.data = auth_bytes;
    doc.auth_info_bytes.len = auth_len;
    doc.chain_id = "gonka-mainnet";
    doc.account_number = 77;
    gd_roundtrip(buf, sizeof buf, &doc.base);
    ProtobufCBinaryData sig = {64, (uint8_t *)"0123456789012345678901234567890123456789012345678901234567890123"};
    Cosmos__Tx__V1beta1__TxRaw raw = COSMOS__TX__V1BETA1__TX_RAW__INIT;
    raw.body_bytes = doc.body_bytes;
    raw.auth_info_bytes = doc.auth_info_bytes;
    raw.n_signatures = 1;
    raw.signatures = &sig;
    gd_roundtrip(buf, sizeof buf, &raw.base);
    Cosmos__Tx__V1beta1__Tx tx = COSMOS__TX__V1BETA1__TX__INIT;
    tx.body = &body;
    tx.auth_info = &auth;
    tx.n_signatures = 1;
    tx.signatures = &sig;
    gd_roundtrip(buf, sizeof buf, &tx.base);
}

static void test_query_messages(void) {
    uint8_t buf[4096], pk_bytes[64];
    size_t n;
    /* AccountInfo with a public key: every field reaches gd_account_info. */
    Cosmos__Crypto__Secp256k1__PubKey pk = COSMOS__CRYPTO__SECP256K1__PUB_KEY__INIT;
    pk.key.data = (uint8_t *)gd_pk;
    pk.key.len = 33;
    size_t pk_len = cosmos__crypto__secp256k1__pub_key__pack(&pk, pk_bytes);
    Google__Protobuf__Any pk_any = GOOGLE__PROTOBUF__ANY__INIT;
    pk_any.type_url = "/cosmos.crypto.secp256k1.PubKey";
    pk_any.value.data = pk_bytes;
    pk_any.value.len = pk_len;
    Cosmos__Auth__V1beta1__BaseAccount acc = COSMOS__AUTH__V1BETA1__BASE_ACCOUNT__INIT;
    acc.address = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc";
    acc.pub_key = &pk_any;
    acc.account_number = 1234567890123ull;
    acc.sequence = 987654321ull;
    Cosmos__Auth__V1beta1__QueryAccountInfoResponse ai =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_RESPONSE__INIT;
    ai.info = &acc;
    n = gd_roundtrip(buf, sizeof buf, &ai.base);
    gd_account_info info;
    CHECK_OK(gd_decode_account_info(&info, buf, n));
    CHECK_STR_EQ(info.address, acc.address);
    CHECK(info.account_number == acc.account_number && info.sequence == acc.sequence);
    CHECK(info.has_pubkey && memcmp(info.pubkey, gd_pk, 33) == 0);
    Cosmos__Auth__V1beta1__QueryAccountInfoRequest air =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_REQUEST__INIT;
    air.address = acc.address;
    gd_roundtrip(buf, sizeof buf, &air.base);
    Google__Protobuf__Any acc_any = GOOGLE__PROTOBUF__ANY__INIT;
    acc_any.type_url = "/cosmos.auth.v1beta1.BaseAccount";
    acc_any.value.data = buf;
    acc_any.value.len = cosmos__auth__v1beta1__base_account__pack(&acc, buf);
    Cosmos__Auth__V1beta1__QueryAccountResponse ar = COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_RESPONSE__INIT;
    ar.account = &acc_any;
    uint8_t buf2[4096];
    gd_roundtrip(buf2, sizeof buf2, &ar.base);

    /* Balance request and answer. */
    Cosmos__Bank__V1beta1__QueryBalanceRequest br = COSMOS__BANK__V1BETA1__QUERY_BALANCE_REQUEST__INIT;
    br.address = acc.address;
    br.denom = "ngonka";
    gd_roundtrip(buf, sizeof buf, &br.base);
    Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
    coin.denom = "ngonka";
    coin.amount = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    Cosmos__Bank__V1beta1__QueryBalanceResponse bal = COSMOS__BANK__V1BETA1__QUERY_BALANCE_RESPONSE__INIT;
    bal.balance = &coin;
    n = gd_roundtrip(buf, sizeof buf, &bal.base);
    gd_coin c;
    CHECK_OK(gd_decode_balance(&c, buf, n));
    CHECK_STR_EQ(c.amount, coin.amount); /* 2^256 - 1, the largest amount */

    /* EpochInfo: all eleven epoch parameters and the epoch. */
    Inference__Inference__EpochParams ep = INFERENCE__INFERENCE__EPOCH_PARAMS__INIT;
    ep.epoch_length = 15391;
    ep.epoch_multiplier = 1;
    ep.epoch_shift = 16980;
    ep.default_unit_of_compute_price = 100;
    ep.poc_stage_duration = 60;
    ep.poc_exchange_duration = 5;
    ep.poc_validation_delay = 6;
    ep.poc_validation_duration = 480;
    ep.set_new_validators_delay = 120;
    ep.inference_validation_cutoff = 2;
    ep.inference_pruning_epoch_threshold = 3;
    ep.inference_pruning_max = 5000;
    ep.poc_pruning_max = 1000;
    Inference__Inference__Decimal dec = INFERENCE__INFERENCE__DECIMAL__INIT;
    dec.value = 1;
    dec.exponent = -1;
    ep.poc_slot_allocation = &dec;
    ep.confirmation_poc_safety_window = 7;
    Inference__Inference__Params params = INFERENCE__INFERENCE__PARAMS__INIT;
    params.epoch_params = &ep;
    Inference__Inference__Epoch epoch = INFERENCE__INFERENCE__EPOCH__INIT;
    epoch.index = 42;
    epoch.poc_start_block_height = 630000;
    epoch.effective_block_height = 630700;
    Inference__Inference__QueryEpochInfoResponse ei = INFERENCE__INFERENCE__QUERY_EPOCH_INFO_RESPONSE__INIT;
    ei.block_height = 640000;
    ei.params = &params;
    ei.latest_epoch = &epoch;
    n = gd_roundtrip(buf, sizeof buf, &ei.base);
    gd_epoch_info e;
    CHECK_OK(gd_decode_epoch_info(&e, buf, n));
    CHECK(e.block_height == 640000 && e.epoch.index == 42 &&
          e.epoch.poc_start_block_height == 630000);
    const gd_epoch_params *p = &e.params;
    CHECK(p->epoch_length == 15391 && p->epoch_multiplier == 1 && p->epoch_shift == 16980 &&
          p->default_unit_of_compute_price == 100 && p->poc_stage_duration == 60 &&
          p->poc_exchange_duration == 5 && p->poc_validation_delay == 6 &&
          p->poc_validation_duration == 480 && p->set_new_validators_delay == 120 &&
          p->inference_validation_cutoff == 2 && p->inference_pruning_epoch_threshold == 3);
    Inference__Inference__QueryEpochInfoRequest eir = INFERENCE__INFERENCE__QUERY_EPOCH_INFO_REQUEST__INIT;
    CHECK(gd_roundtrip(buf, sizeof buf, &eir.base) == 0);

    /* Simulate. */
    Cosmos__Base__Abci__V1beta1__GasInfo gas = COSMOS__BASE__ABCI__V1BETA1__GAS_INFO__INIT;
    gas.gas_wanted = 300000;
    gas.gas_used = 123456;
    Cosmos__Tx__V1beta1__SimulateResponse sim = COSMOS__TX__V1BETA1__SIMULATE_RESPONSE__INIT;
    sim.gas_info = &gas;
    n = gd_roundtrip(buf, sizeof buf, &sim.base);
    uint64_t used;
    CHECK_OK(gd_decode_simulate(buf, n, &used));
    CHECK(used == 123456);
    Cosmos__Tx__V1beta1__SimulateRequest sreq = COSMOS__TX__V1BETA1__SIMULATE_REQUEST__INIT;
    sreq.tx_bytes.data = (uint8_t *)"\x0a\x00";
    sreq.tx_bytes.len = 2;
    gd_roundtrip(buf, sizeof buf, &sreq.base);
}

static void test_decoder_refusals(void) {
    gd_account_info info;
    gd_coin c;
    gd_epoch_info e;
    uint64_t gas;
    /* Not protobuf at all. */
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    CHECK_STATUS(gd_decode_account_info(&info, junk, sizeof junk), GD_ERR_PARSE);
    CHECK_STATUS(gd_decode_balance(&c, junk, sizeof junk), GD_ERR_PARSE);
    CHECK_STATUS(gd_decode_epoch_info(&e, junk, sizeof junk), GD_ERR_PARSE);
    CHECK_STATUS(gd_decode_simulate(junk, sizeof junk, &gas), GD_ERR_PARSE);
    /* Valid protobuf, missing what matters. */
    CHECK_STATUS(gd_decode_account_info(&info, NULL, 0), GD_ERR_PARSE);
    CHECK_STATUS(gd_decode_epoch_info(&e, NULL, 0), GD_ERR_PARSE);
    CHECK_STATUS(gd_decode_simulate(NULL, 0, &gas), GD_ERR_PARSE);
    /* An empty balance answer means zero. */
    CHECK_OK(gd_decode_balance(&c, NULL, 0));
    CHECK_STR_EQ(c.amount, "0");
    /* A balance amount that is not a number is refused. */
    uint8_t bad[32];
    size_t k = 0;
    bad[k++] = 0x0a;
    bad[k++] = 12;
    bad[k++] = 0x0a;
    bad[k++] = 6;
    memcpy(bad + k, "ngonka", 6);
    k += 6;
    bad[k++] = 0x12;
    bad[k++] = 2;
    bad[k++] = '1';
    bad[k++] = 'x';
    CHECK_STATUS(gd_decode_balance(&c, bad, k), GD_ERR_PARSE);
}

int main(void) {
    RUN_TEST(test_tx_messages);
    RUN_TEST(test_query_messages);
    RUN_TEST(test_decoder_refusals);
    return gd_test_finish();
}
