/* Coin amounts as the Cosmos CLI parses them. */
#include "chain/wire/coin.h"
#include "tests/support/testkit.h"

static void test_parse_one(void) {
    gd_coin c;
    CHECK_OK(gd_coin_parse(&c, "1000ngonka"));
    CHECK_STR_EQ(c.amount, "1000");
    CHECK_STR_EQ(c.denom, "ngonka");
    CHECK_OK(gd_coin_parse(&c, "007ngonka"));
    CHECK_STR_EQ(c.amount, "7");
    CHECK_OK(gd_coin_parse(&c, "0ngonka"));
    CHECK_STR_EQ(c.amount, "0");
    CHECK_OK(gd_coin_parse(&c, "5ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"));
    /* Up to 2^256 - 1 (cosmos math.Int); one more is refused. */
    CHECK_OK(gd_coin_parse(&c, "99999999999999999999999999999999999999999999999999999999999999999999999999999ngonka"));
    CHECK_OK(gd_coin_parse(&c, "115792089237316195423570985008687907853269984665640564039457584007913129639935ngonka"));
    CHECK(gd_coin_parse(&c, "115792089237316195423570985008687907853269984665640564039457584007913129639936ngonka") != GD_OK);
    CHECK(gd_coin_parse(&c, "999999999999999999999999999999999999999999999999999999999999999999999999999999ngonka") != GD_OK);
    CHECK(gd_coin_parse(&c, "1000000000000000000000000000000000000000000000000000000000000000000000000000000ngonka") != GD_OK);
    const char *bad[] = {"", "ngonka", "1000", "-5ngonka", "1.5ngonka", "10 ngonka", "10ng",
                         "10ngonka!", "10Ngonka ", "12345678901234567890x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(gd_coin_parse(&c, bad[i]) != GD_OK);
    CHECK_STATUS(gd_coin_parse(&c, "1.5gonka"), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "1000000000ngonka") != NULL);
}

static void test_parse_list(void) {
    gd_coin c[4];
    size_t n;
    CHECK_OK(gd_coins_parse(c, 4, &n, "5stake,10ngonka,1atom", 1));
    CHECK(n == 3);
    CHECK_STR_EQ(c[0].denom, "atom");
    CHECK_STR_EQ(c[1].denom, "ngonka");
    CHECK_STR_EQ(c[2].denom, "stake");
    CHECK_OK(gd_coins_parse(c, 4, &n, "", 0));
    CHECK(n == 0);
    CHECK_OK(gd_coins_parse(c, 4, &n, "0ngonka", 0));
    CHECK(n == 0); /* zero fees are dropped, as sdk.NewCoins does */
    CHECK_STATUS(gd_coins_parse(c, 4, &n, "0ngonka", 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_coins_parse(c, 4, &n, "1ngonka,2ngonka", 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_coins_parse(c, 4, &n, "1ngonka,", 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_coins_parse(c, 4, &n, ",1ngonka", 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_coins_parse(c, 2, &n, "1aaa,1bbb,1ccc", 1), GD_ERR_LIMIT);
}

static void test_checks(void) {
    CHECK_OK(gd_denom_check("ngonka"));
    CHECK(gd_denom_check("ab") != GD_OK);
    CHECK(gd_denom_check("1abc") != GD_OK);
    CHECK_OK(gd_amount_check("0"));
    CHECK(gd_amount_check("01") != GD_OK);
    CHECK(gd_amount_check("") != GD_OK);
}

int main(void) {
    RUN_TEST(test_parse_one);
    RUN_TEST(test_parse_list);
    RUN_TEST(test_checks);
    return gd_test_finish();
}
