/* BIP39 mnemonics (English wordlist): entropy <-> words with the SHA-256
 * checksum, and the PBKDF2-HMAC-SHA512 seed. Written from the BIP39
 * specification; known-answer tests use Trezor's published vectors. */
#ifndef GD_CHAIN_KEYS_BIP39_H
#define GD_CHAIN_KEYS_BIP39_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_BIP39_SEED_LEN 64
/* 24 words of at most 8 letters plus separators. */
#define GD_BIP39_MNEMONIC_MAX (24 * 9)

extern const char *const gd_bip39_english[2048];

/* Writes the mnemonic for 16, 20, 24, 28 or 32 bytes of entropy (12..24
 * words, single spaces) into out. */
gd_status gd_bip39_from_entropy(char *out, size_t out_cap, const uint8_t *entropy,
                                size_t entropy_len) GD_MUST_CHECK;

/* Validates a mnemonic and writes its normalised form (words joined by
 * single spaces) into out. Words may be separated by any ASCII whitespace and
 * must be lower case, as in the wordlist. Fails with a message naming the
 * position of the first unknown word, or a bad checksum. Only ASCII input is
 * accepted: the English list needs no Unicode normalisation. */
gd_status gd_bip39_normalize(char *out, size_t out_cap, const char *mnemonic) GD_MUST_CHECK;

/* Seed = PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" || passphrase, 2048).
 * The mnemonic is validated and normalised first; passphrase (NULL for none)
 * must be ASCII. */
gd_status gd_bip39_seed(uint8_t seed[GD_BIP39_SEED_LEN], const char *mnemonic,
                        const char *passphrase) GD_MUST_CHECK;

#endif
