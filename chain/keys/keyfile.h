/* Key files: a small line-oriented text format, created with mode 0600 and
 * refused when open to group or others.
 *
 *   # gonka-diloco key file. Keep it secret.
 *   type: secp256k1
 *   address: gonka1...
 *   pubkey: 02... (33 bytes, hex)
 *   privkey: ... (32 bytes, hex)
 *
 * address and pubkey are checked against privkey when present, so a damaged
 * or hand-edited file is caught. A file holding only 64 hex digits (what
 * `inferenced keys export NAME --unarmored-hex --unsafe` prints) is also
 * accepted. */
#ifndef GD_CHAIN_KEYS_KEYFILE_H
#define GD_CHAIN_KEYS_KEYFILE_H

#include <stddef.h>

#include "chain/keys/keys.h"
#include "common/bytes.h"
#include "common/status.h"

#define GD_KEYFILE_MAX 4096

/* Parses key file contents (not NUL-terminated). Never echoes secret bytes
 * in error messages. */
gd_status gd_keyfile_parse(gd_key *key, const uint8_t *text, size_t len) GD_MUST_CHECK;

/* Renders a key file; out is wiped-and-freed by the caller. */
gd_status gd_keyfile_format(gd_buf *out, const gd_key *key) GD_MUST_CHECK;

/* Reads path (must be mode 0600/0400, see gd_file_read_private). */
gd_status gd_keyfile_read(gd_key *key, const char *path) GD_MUST_CHECK;

/* Creates path (mode 0600, never overwriting). */
gd_status gd_keyfile_write(const char *path, const gd_key *key) GD_MUST_CHECK;

#endif
