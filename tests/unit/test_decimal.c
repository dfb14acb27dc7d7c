/* Canonical decimal strings (chain/wire/decimal.h): every spelling the grammar
 * allows parses to its exact value, every other spelling is refused, and
 * the order is the order of the values. */
#include <string.h>

#include "chain/wire/decimal.h"
#include "tests/support/testkit.h"

typedef struct good_case {
    const char *text;
    uint64_t integer, fraction;
} good_case;

static void test_valid(void) {
    const good_case cases[] = {
        {"0", 0, 0},
        {"1", 1, 0},
        {"10", 10, 0},
        {"0.003", 0, 3000000000000000ull},
        {"0.95", 0, 950000000000000000ull},
        {"0.00000001", 0, 10000000000ull},
        {"1.5", 1, 500000000000000000ull},
        {"1000", 1000, 0},
        /* The boundaries: 12 integer digits, 18 fraction digits. */
        {"999999999999", 999999999999ull, 0},
        {"0.000000000000000001", 0, 1},
        {"0.999999999999999999", 0, 999999999999999999ull},
        {"999999999999.999999999999999999", 999999999999ull, 999999999999999999ull},
        {"123456789012.123456789012345678", 123456789012ull, 123456789012345678ull},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gd_decimal d = {7, 7};
        gd_status s = gd_decimal_parse(&d, cases[i].text);
        if (s != GD_OK || d.integer != cases[i].integer || d.fraction != cases[i].fraction)
            fprintf(stderr, "'%s': %d %s\n", cases[i].text, (int)s, gd_error_detail());
        CHECK(s == GD_OK && d.integer == cases[i].integer && d.fraction == cases[i].fraction);
    }
}

static void test_invalid(void) {
    const char *bad[] = {
        "", "3e-3", ".5", "0.50", "00.1", "1.", "-1", "+1", "0.0", "1.0", "01", "00", " 1",
        "1 ", "1,5", "0x10", "1.2.3", "1..2", "inf", "nan", "1e3", "\xd9\xa3", "1.5\n", "0.10",
        ".", "-0",
        "1000000000000",         /* 13 integer digits */
        "0.0000000000000000001", /* 19 fraction digits */
        "0.1000000000000000000", /* 19 digits, and ends in 0 */
        "9999999999999.5",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gd_decimal d = {7, 7};
        gd_status s = gd_decimal_parse(&d, bad[i]);
        if (s != GD_ERR_INVALID)
            fprintf(stderr, "'%s' was accepted\n", bad[i]);
        CHECK(s == GD_ERR_INVALID);
        CHECK(d.integer == 7 && d.fraction == 7); /* untouched on failure */
    }
    gd_decimal d;
    CHECK_STATUS(gd_decimal_parse(&d, NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_decimal_parse(&d, "0.50"), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "'0.50' is not a canonical decimal") != NULL);
    CHECK(strstr(gd_error_detail(), "ends in 0") != NULL);
    CHECK_STATUS(gd_decimal_parse(&d, "3e-3"), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "only digits and one '.'") != NULL);
}

static gd_decimal dec(const char *text) {
    gd_decimal d = {0, 0};
    CHECK_OK(gd_decimal_parse(&d, text));
    return d;
}

static void test_compare(void) {
    /* In increasing order of value. */
    const char *order[] = {"0",
                           "0.000000000000000001",
                           "0.00000001",
                           "0.003",
                           "0.0031",
                           "0.1",
                           "0.95",
                           "0.999999999999999999",
                           "1",
                           "1.000000000000000001",
                           "2",
                           "10",
                           "999999999999.999999999999999999"};
    size_t n = sizeof order / sizeof order[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            gd_decimal a = dec(order[i]), b = dec(order[j]);
            int want = i < j ? -1 : i > j ? 1 : 0;
            CHECK(gd_decimal_cmp(&a, &b) == want);
        }
    gd_decimal z = dec("0"), o = dec("0.000000000000000001");
    CHECK(gd_decimal_is_zero(&z));
    CHECK(!gd_decimal_is_zero(&o));
}

/* What a person writes becomes the canonical spelling of the same value,
 * and canonical text formats back to itself. */
static void test_read_and_format(void) {
    const char *cases[][2] = {
        {"3e-3", "0.003"},   {"0.0030", "0.003"},  {"+1", "1"},        {".5", "0.5"},
        {"1E2", "100"},      {"0.95", "0.95"},     {"1e-8", "0.00000001"}, {"0", "0"},
        {"0.000", "0"},      {"00012.50", "12.5"}, {"2.5e1", "25"},    {"1e-18", "0.000000000000000001"},
        {"999999999999", "999999999999"},          {"12345e-4", "1.2345"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gd_decimal d;
        char text[GD_DECIMAL_TEXT_MAX + 1];
        CHECK_OK(gd_decimal_read(&d, cases[i][0]));
        gd_decimal_format(&d, text);
        CHECK_STR_EQ(text, cases[i][1]);
        gd_decimal again;
        CHECK_OK(gd_decimal_parse(&again, text));
        CHECK(gd_decimal_cmp(&again, &d) == 0);
    }
    const char *bad[] = {"", "-1", "1e-19", "1e12", "abc", "1.2.3", "1e", "1e+", ".", "0x10",
                         "1 ", "nan", "inf", "0.0000000000000000001"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gd_decimal d;
        CHECK_STATUS(gd_decimal_read(&d, bad[i]), GD_ERR_INVALID);
    }
    gd_decimal d;
    CHECK_OK(gd_decimal_read(&d, "0.003"));
    CHECK_OK(gd_decimal_div_pow10(&d, 1));
    char text[GD_DECIMAL_TEXT_MAX + 1];
    gd_decimal_format(&d, text);
    CHECK_STR_EQ(text, "0.0003");
    CHECK_OK(gd_decimal_read(&d, "12.5"));
    CHECK_OK(gd_decimal_div_pow10(&d, 2));
    gd_decimal_format(&d, text);
    CHECK_STR_EQ(text, "0.125");
    CHECK_OK(gd_decimal_read(&d, "0.000000000000000001"));
    CHECK_STATUS(gd_decimal_div_pow10(&d, 1), GD_ERR_INVALID);
}

int main(void) {
    RUN_TEST(test_valid);
    RUN_TEST(test_invalid);
    RUN_TEST(test_compare);
    RUN_TEST(test_read_and_format);
    return gd_test_finish();
}
