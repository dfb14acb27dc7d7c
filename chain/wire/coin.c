/* Coin parsing. */
#include "chain/wire/coin.h"

#include <stdlib.h>
#include <string.h>

/* 2^256 - 1, the largest cosmos math.Int. */
static const char gd_amount_max[] =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

static int gd_is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int gd_is_digit(char c) { return c >= '0' && c <= '9'; }

gd_status gd_denom_check(const char *denom) {
    size_t len = strlen(denom);
    if (len < 3 || len > GD_DENOM_MAX)
        return gd_fail(GD_ERR_INVALID, "denom '%.40s' must be 3 to %d characters", denom,
                       GD_DENOM_MAX);
    if (!gd_is_alpha(denom[0]))
        return gd_fail(GD_ERR_INVALID, "denom '%.40s' must start with a letter", denom);
    for (size_t i = 1; i < len; i++) {
        char c = denom[i];
        if (!(gd_is_alpha(c) || gd_is_digit(c) || strchr("/:._-", c) != NULL))
            return gd_fail(GD_ERR_INVALID, "denom '%.40s' has an invalid character", denom);
    }
    return GD_OK;
}

gd_status gd_amount_check(const char *amount) {
    size_t len = strlen(amount);
    if (len == 0 || len > GD_AMOUNT_DIGITS_MAX)
        return gd_fail(GD_ERR_INVALID, "amount must have 1 to %d digits", GD_AMOUNT_DIGITS_MAX);
    for (size_t i = 0; i < len; i++)
        if (!gd_is_digit(amount[i]))
            return gd_fail(GD_ERR_INVALID, "amount '%.80s' is not a whole number", amount);
    if (len > 1 && amount[0] == '0')
        return gd_fail(GD_ERR_INVALID, "amount '%.80s' has leading zeros", amount);
    if (len == GD_AMOUNT_DIGITS_MAX && strcmp(amount, gd_amount_max) > 0)
        return gd_fail(GD_ERR_INVALID, "amount is larger than 2^256 - 1");
    return GD_OK;
}

gd_status gd_coin_parse(gd_coin *coin, const char *text) {
    const char *p = text;
    while (*p == '0' && gd_is_digit(p[1]))
        p++; /* drop leading zeros, keep a single "0" */
    size_t digits = 0;
    while (gd_is_digit(p[digits]))
        digits++;
    if (digits == 0)
        return gd_fail(GD_ERR_INVALID,
                       "'%.60s' is not a coin amount; write it like 1000ngonka (1 GNK = "
                       "1000000000ngonka)", text);
    if (p[digits] == '.')
        return gd_fail(GD_ERR_INVALID, "'%.60s': amounts are whole numbers of the base denom "
                                       "(1 GNK = 1000000000ngonka)", text);
    if (digits > GD_AMOUNT_DIGITS_MAX)
        return gd_fail(GD_ERR_INVALID, "'%.60s': amount is larger than 2^256 - 1", text);
    const char *denom = p + digits;
    if (*denom == '\0')
        return gd_fail(GD_ERR_INVALID, "'%.60s' has no denom; write it like 1000ngonka", text);
    GD_TRY(gd_denom_check(denom));
    memcpy(coin->amount, p, digits);
    coin->amount[digits] = '\0';
    GD_TRY(gd_amount_check(coin->amount));
    strcpy(coin->denom, denom);
    return GD_OK;
}

static int gd_coin_cmp(const void *a, const void *b) {
    return strcmp(((const gd_coin *)a)->denom, ((const gd_coin *)b)->denom);
}

gd_status gd_coins_parse(gd_coin *coins, size_t cap, size_t *count, const char *text,
                         int require_positive) {
    size_t n = 0;
    const char *p = text;
    *count = 0;
    if (*p == '\0')
        return GD_OK;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[GD_DENOM_MAX + GD_AMOUNT_DIGITS_MAX + 8];
        if (len == 0)
            return gd_fail(GD_ERR_INVALID, "'%.60s' has an empty coin between commas", text);
        if (len >= sizeof item)
            return gd_fail(GD_ERR_INVALID, "coin '%.60s...' is too long", p);
        memcpy(item, p, len);
        item[len] = '\0';
        gd_coin coin;
        GD_TRY(gd_coin_parse(&coin, item));
        if (strcmp(coin.amount, "0") == 0) {
            if (require_positive)
                return gd_fail(GD_ERR_INVALID, "amount '%s' must be positive", item);
        } else {
            if (n == cap)
                return gd_fail(GD_ERR_LIMIT, "more than %zu coins", cap);
            coins[n++] = coin;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    qsort(coins, n, sizeof coins[0], gd_coin_cmp);
    for (size_t i = 1; i < n; i++)
        if (strcmp(coins[i - 1].denom, coins[i].denom) == 0)
            return gd_fail(GD_ERR_INVALID, "denom '%s' appears twice in '%.60s'", coins[i].denom,
                           text);
    *count = n;
    return GD_OK;
}

int gd_amount_cmp(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a, b);
}
