/* BIP39 mnemonic codec. Secrets pass through stack buffers that are wiped
 * before returning. */
#include "chain/keys/bip39.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/secure.h"

static int gd_bip39_compare(const void *key, const void *elem) {
    return strcmp((const char *)key, *(const char *const *)elem);
}

/* The English list is sorted, so lookup is a binary search. */
static int gd_bip39_word_index(const char *word) {
    const char *const *hit = bsearch(word, gd_bip39_english, 2048, sizeof gd_bip39_english[0],
                                     gd_bip39_compare);
    return hit ? (int)(hit - gd_bip39_english) : -1;
}

static unsigned gd_bit_at(const uint8_t *bytes, size_t bit) {
    return (bytes[bit / 8] >> (7 - bit % 8)) & 1u;
}

gd_status gd_bip39_from_entropy(char *out, size_t out_cap, const uint8_t *entropy,
                                size_t entropy_len) {
    if (entropy_len < 16 || entropy_len > 32 || entropy_len % 4 != 0)
        return gd_fail(GD_ERR_INVALID, "BIP39 entropy must be 16, 20, 24, 28 or 32 bytes");
    uint8_t buf[33];
    uint8_t hash[GD_SHA256_LEN];
    gd_sha256(hash, entropy, entropy_len);
    memcpy(buf, entropy, entropy_len);
    buf[entropy_len] = hash[0]; /* checksum bits = entropy bits / 32 <= 8 */
    size_t words = (entropy_len * 8 + entropy_len / 4) / 11;
    size_t o = 0;
    gd_status s = GD_OK;
    for (size_t w = 0; w < words && s == GD_OK; w++) {
        unsigned idx = 0;
        for (size_t b = 0; b < 11; b++)
            idx = idx << 1 | gd_bit_at(buf, w * 11 + b);
        const char *word = gd_bip39_english[idx];
        size_t wl = strlen(word);
        if (o + wl + 2 > out_cap) {
            s = gd_fail(GD_ERR_LIMIT, "mnemonic buffer too small");
            break;
        }
        if (w > 0)
            out[o++] = ' ';
        memcpy(out + o, word, wl);
        o += wl;
    }
    if (s == GD_OK)
        out[o] = '\0';
    gd_wipe(buf, sizeof buf);
    gd_wipe(hash, sizeof hash);
    return s;
}

gd_status gd_bip39_normalize(char *out, size_t out_cap, const char *mnemonic) {
    uint16_t idx[24];
    size_t count = 0, o = 0;
    char word[16];
    gd_status s = GD_OK;
    const char *p = mnemonic;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (*p == '\0')
            break;
        size_t wl = 0;
        while (*p && !isspace((unsigned char)*p)) {
            unsigned char c = (unsigned char)*p++;
            if (c >= 0x80) {
                s = gd_fail(GD_ERR_PARSE, "mnemonic has a non-ASCII character; only the English "
                                          "BIP39 wordlist is supported");
                goto done;
            }
            if (c >= 'A' && c <= 'Z') {
                /* Wallets hash the mnemonic as typed; refusing beats guessing. */
                s = gd_fail(GD_ERR_PARSE, "mnemonic word %zu has upper-case letters; BIP39 words "
                                          "are lower case", count + 1);
                goto done;
            }
            if (wl + 1 < sizeof word)
                word[wl] = (char)c;
            wl++;
        }
        if (wl >= sizeof word) {
            s = gd_fail(GD_ERR_PARSE, "mnemonic word %zu is not a BIP39 English word", count + 1);
            goto done;
        }
        word[wl] = '\0';
        if (count == 24) {
            s = gd_fail(GD_ERR_PARSE, "mnemonic has more than 24 words");
            goto done;
        }
        int i = gd_bip39_word_index(word);
        if (i < 0) {
            /* Naming the position, not the word: the word is part of a secret. */
            s = gd_fail(GD_ERR_PARSE, "mnemonic word %zu is not in the BIP39 English wordlist",
                        count + 1);
            goto done;
        }
        idx[count++] = (uint16_t)i;
        if (o + wl + 2 > out_cap) {
            s = gd_fail(GD_ERR_LIMIT, "mnemonic buffer too small");
            goto done;
        }
        if (o > 0)
            out[o++] = ' ';
        memcpy(out + o, word, wl);
        o += wl;
    }
    if (count != 12 && count != 15 && count != 18 && count != 21 && count != 24) {
        s = gd_fail(GD_ERR_PARSE, "mnemonic has %zu words; BIP39 uses 12, 15, 18, 21 or 24",
                    count);
        goto done;
    }
    {
        /* Reassemble entropy || checksum and compare the checksum bits. */
        uint8_t bits[33] = {0};
        size_t total = count * 11, cs_bits = count / 3, ent_bytes = (total - cs_bits) / 8;
        for (size_t b = 0; b < total; b++)
            if ((idx[b / 11] >> (10 - b % 11)) & 1u)
                bits[b / 8] |= (uint8_t)(0x80u >> (b % 8));
        uint8_t hash[GD_SHA256_LEN];
        gd_sha256(hash, bits, ent_bytes);
        uint8_t mask = (uint8_t)(0xFFu << (8 - cs_bits));
        bool ok = (bits[ent_bytes] & mask) == (hash[0] & mask);
        gd_wipe(bits, sizeof bits);
        gd_wipe(hash, sizeof hash);
        if (!ok) {
            s = gd_fail(GD_ERR_PARSE, "mnemonic checksum is wrong (a word is mistyped or out of "
                                      "order)");
            goto done;
        }
    }
    out[o] = '\0';
done:
    gd_wipe(idx, sizeof idx);
    gd_wipe(word, sizeof word);
    if (s != GD_OK)
        gd_wipe(out, out_cap);
    return s;
}

gd_status gd_bip39_seed(uint8_t seed[GD_BIP39_SEED_LEN], const char *mnemonic,
                        const char *passphrase) {
    char norm[GD_BIP39_MNEMONIC_MAX + 1];
    GD_TRY(gd_bip39_normalize(norm, sizeof norm, mnemonic));
    const char *pass = passphrase ? passphrase : "";
    size_t pass_len = strlen(pass);
    for (size_t i = 0; i < pass_len; i++) {
        if ((unsigned char)pass[i] >= 0x80) {
            /* Non-ASCII would need NFKD normalisation: refuse rather than hash it wrongly. */
            gd_wipe(norm, sizeof norm);
            return gd_fail(GD_ERR_INVALID, "BIP39 passphrase must be ASCII");
        }
    }
    if (pass_len > 256) {
        gd_wipe(norm, sizeof norm);
        return gd_fail(GD_ERR_INVALID, "BIP39 passphrase longer than 256 bytes");
    }
    char salt[8 + 256];
    memcpy(salt, "mnemonic", 8);
    memcpy(salt + 8, pass, pass_len);
    gd_pbkdf2_hmac_sha512(seed, GD_BIP39_SEED_LEN, norm, strlen(norm), salt, 8 + pass_len, 2048);
    gd_wipe(norm, sizeof norm);
    gd_wipe(salt, sizeof salt);
    return GD_OK;
}
