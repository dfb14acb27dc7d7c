/* Gas prices and the fee they ask for: what localnet requires and what the
 * client pays come from the same code. */
#include "chain/wire/gas_price.h"
#include "chain/wire/msg.h"
#include "chain/wire/tx.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "tests/support/testkit.h"

static const char *fee_of(const char *price, uint64_t gas) {
    static char amount[GD_AMOUNT_DIGITS_MAX + 1];
    gd_gas_price p;
    CHECK_OK(gd_gas_price_parse(&p, price));
    gd_gas_price_fee(&p, gas, amount);
    return amount;
}

static void test_parse(void) {
    gd_gas_price p;
    char text[GD_GAS_PRICE_TEXT_MAX + 1];
    CHECK_OK(gd_gas_price_parse(&p, GD_GAS_PRICE_DEFAULT));
    CHECK(p.integer == 0 && p.fraction == 2500000000000000ull);
    CHECK_STR_EQ(p.denom, "ngonka");
    CHECK(!gd_gas_price_is_zero(&p));
    gd_gas_price_format(&p, text);
    CHECK_STR_EQ(text, "0.0025ngonka");
    CHECK_OK(gd_gas_price_parse(&p, "12ngonka"));
    CHECK(p.integer == 12 && p.fraction == 0);
    gd_gas_price_format(&p, text);
    CHECK_STR_EQ(text, "12ngonka");
    CHECK_OK(gd_gas_price_parse(&p, "007.500ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"));
    CHECK(p.integer == 7 && p.fraction == 500000000000000000ull);
    CHECK_OK(gd_gas_price_parse(&p, "999999999999.999999999999999999ngonka"));
    /* Zero: with or without a denom, it asks for no fee. */
    const char *zeros[] = {"0", "0.0", "0ngonka", "0.000ngonka"};
    for (size_t i = 0; i < sizeof zeros / sizeof zeros[0]; i++) {
        CHECK_OK(gd_gas_price_parse(&p, zeros[i]));
        CHECK(gd_gas_price_is_zero(&p));
    }
    CHECK_OK(gd_gas_price_parse(&p, "0"));
    gd_gas_price_format(&p, text);
    CHECK_STR_EQ(text, "0");
    const char *bad[] = {"",          "x",          "ngonka",      "1",         "0.5",
                         "-1ngonka",  "1 ngonka",   "1.5ng",       ".ngonka",   "1e3ngonka!",
                         "0.0000000000000000001ngonka", "1000000000000ngonka", NULL};
    for (size_t i = 0; bad[i]; i++) {
        gd_status s = gd_gas_price_parse(&p, bad[i]);
        if (s != GD_ERR_INVALID)
            fprintf(stderr, "accepted '%s'\n", bad[i]);
        CHECK(s == GD_ERR_INVALID);
    }
    CHECK_STATUS(gd_gas_price_parse(&p, NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_gas_price_parse(&p, "x"), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), GD_GAS_PRICE_DEFAULT) != NULL);
}

static void test_fee(void) {
    /* ceil(gas x price), as the SDK's min-gas-price check computes it. */
    CHECK_STR_EQ(fee_of(GD_GAS_PRICE_DEFAULT, 200000), "500");
    CHECK_STR_EQ(fee_of(GD_GAS_PRICE_DEFAULT, 3000000), "7500");
    CHECK_STR_EQ(fee_of(GD_GAS_PRICE_DEFAULT, 200001), "501");
    CHECK_STR_EQ(fee_of(GD_GAS_PRICE_DEFAULT, 1), "1");
    CHECK_STR_EQ(fee_of(GD_GAS_PRICE_DEFAULT, 0), "0");
    CHECK_STR_EQ(fee_of("0.01ngonka", 200000), "2000");
    CHECK_STR_EQ(fee_of("2ngonka", 21), "42");
    CHECK_STR_EQ(fee_of("0.000000000000000001ngonka", 1), "1");
    CHECK_STR_EQ(fee_of("0ngonka", 1000000), "0");
    /* The largest inputs are exact: (2^64 - 1) x (10^12 - 10^-18). */
    CHECK_STR_EQ(fee_of("999999999999.999999999999999999ngonka", UINT64_MAX),
                 "18446744073709551614999999999982");
}

/* Signing with a price puts ceil(gas x price) in the fee; fees and a price
 * together are refused. */
static void test_signed_fee(void) {
    gd_key key;
    CHECK_OK(gd_key_from_hex(&key, "1111111111111111111111111111111111111111111111111111111111111111"));
    gd_coin coin;
    CHECK_OK(gd_coin_parse(&coin, "1ngonka"));
    gd_any msg = {0};
    CHECK_OK(gd_msg_send(&msg, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc",
                         "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", &coin, 1));
    gd_gas_price price;
    CHECK_OK(gd_gas_price_parse(&price, GD_GAS_PRICE_DEFAULT));
    gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .gas_limit = 123457, .gas_price = &price,
                         .chain_id = "prod-sim"};
    gd_coin fees[GD_COINS_MAX];
    CHECK(gd_tx_fee_coins(&req, fees) == 1);
    CHECK_STR_EQ(fees[0].amount, "309"); /* 308.6425 */
    CHECK_STR_EQ(fees[0].denom, "ngonka");
    gd_buf auth = {0};
    CHECK_OK(gd_tx_encode_auth_info(&auth, &req, key.pubkey));
    Cosmos__Tx__V1beta1__AuthInfo *ai =
        cosmos__tx__v1beta1__auth_info__unpack(NULL, auth.len, auth.data);
    CHECK(ai && ai->fee && ai->fee->gas_limit == 123457 && ai->fee->n_amount == 1);
    CHECK_STR_EQ(ai->fee->amount[0]->amount, "309");
    CHECK_STR_EQ(ai->fee->amount[0]->denom, "ngonka");
    cosmos__tx__v1beta1__auth_info__free_unpacked(ai, NULL);
    gd_buf_free(&auth);
    /* A zero price: no fee coin at all (the SDK refuses zero coins). */
    CHECK_OK(gd_gas_price_parse(&price, "0ngonka"));
    CHECK(gd_tx_fee_coins(&req, fees) == 0);
    CHECK_OK(gd_tx_encode_auth_info(&auth, &req, key.pubkey));
    ai = cosmos__tx__v1beta1__auth_info__unpack(NULL, auth.len, auth.data);
    CHECK(ai && ai->fee && ai->fee->n_amount == 0);
    cosmos__tx__v1beta1__auth_info__free_unpacked(ai, NULL);
    gd_buf_free(&auth);
    req.fees = &coin;
    req.n_fees = 1;
    gd_signed_tx tx = {0};
    CHECK_STATUS(gd_tx_sign(&tx, &key, &req), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "not both") != NULL);
    req.gas_price = NULL;
    CHECK(gd_tx_fee_coins(&req, fees) == 1);
    CHECK_STR_EQ(fees[0].amount, "1");
    CHECK_OK(gd_tx_sign(&tx, &key, &req));
    gd_signed_tx_free(&tx);
    gd_any_free(&msg);
    gd_key_wipe(&key);
}

int main(void) {
    RUN_TEST(test_parse);
    RUN_TEST(test_fee);
    RUN_TEST(test_signed_fee);
    return gd_test_finish();
}
