/* Gas prices and the fee they ask for (chain/wire/gas_price.h). */
#include "chain/wire/gas_price.h"

#include <stdio.h>
#include <string.h>

#define GD_GAS_PRICE_ONE 1000000000000000000ull /* 10^18 */
#define GD_GAS_PRICE_INT_LIMIT 1000000000000ull /* 10^12 */

__extension__ typedef unsigned __int128 gd_gas_u128;

static bool gd_gp_digit(char c) { return c >= '0' && c <= '9'; }

gd_status gd_gas_price_parse(gd_gas_price *out, const char *text) {
    memset(out, 0, sizeof *out);
    if (text == NULL)
        text = "";
    const char *p = text;
    uint64_t integer = 0, fraction = 0, scale = GD_GAS_PRICE_ONE;
    int digits = 0;
    for (; gd_gp_digit(*p); p++, digits++) {
        integer = integer * 10 + (uint64_t)(*p - '0');
        if (integer >= GD_GAS_PRICE_INT_LIMIT)
            return gd_fail(GD_ERR_INVALID, "gas price '%.40s' is too large (at most 12 digits "
                                           "before the point)", text);
    }
    if (*p == '.') {
        p++;
        for (; gd_gp_digit(*p); p++, digits++) {
            if (scale == 1)
                return gd_fail(GD_ERR_INVALID, "gas price '%.40s' has more than 18 decimals",
                               text);
            scale /= 10;
            fraction += (uint64_t)(*p - '0') * scale;
        }
    }
    bool zero = integer == 0 && fraction == 0;
    if (digits == 0 || (!(zero && *p == '\0') && gd_denom_check(p) != GD_OK))
        return gd_fail(GD_ERR_INVALID, "gas price '%.40s' must look like %s (or 0 for none)",
                       text, GD_GAS_PRICE_DEFAULT);
    out->integer = integer;
    out->fraction = fraction;
    snprintf(out->denom, sizeof out->denom, "%s", p);
    return GD_OK;
}

bool gd_gas_price_is_zero(const gd_gas_price *p) { return p->integer == 0 && p->fraction == 0; }

static void gd_gp_u128_format(char *out, gd_gas_u128 v) {
    char rev[GD_AMOUNT_DIGITS_MAX + 1];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
}

void gd_gas_price_fee(const gd_gas_price *p, uint64_t gas_limit,
                      char amount[GD_AMOUNT_DIGITS_MAX + 1]) {
    /* gas x integer < 2^64 x 10^12 and gas x fraction < 2^64 x 10^18: both
     * fit 128 bits, and so does their sum after the division. */
    gd_gas_u128 frac = (gd_gas_u128)gas_limit * p->fraction;
    gd_gas_u128 need = (gd_gas_u128)gas_limit * p->integer + frac / GD_GAS_PRICE_ONE;
    if (frac % GD_GAS_PRICE_ONE != 0)
        need += 1;
    gd_gp_u128_format(amount, need);
}

void gd_gas_price_format(const gd_gas_price *p, char out[GD_GAS_PRICE_TEXT_MAX + 1]) {
    char frac[24] = "";
    if (p->fraction != 0) {
        snprintf(frac, sizeof frac, ".%018llu", (unsigned long long)p->fraction);
        size_t n = strlen(frac);
        while (frac[n - 1] == '0')
            frac[--n] = '\0';
    }
    snprintf(out, GD_GAS_PRICE_TEXT_MAX + 1, "%llu%s%s", (unsigned long long)p->integer, frac,
             p->denom);
}
