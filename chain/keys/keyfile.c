/* Key file codec. */
#include "chain/keys/keyfile.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "chain/keys/address.h"
#include "common/file.h"
#include "common/secure.h"

/* Fields of a key file, each at most once. */
typedef struct gd_keyfile_fields {
    char type[32];
    char address[GD_ADDRESS_STR_MAX];
    char pubkey[2 * GD_PUBKEY_LEN + 1];
    char privkey[2 * GD_SECKEY_LEN + 1];
    bool has_type, has_address, has_pubkey, has_privkey;
} gd_keyfile_fields;

static bool gd_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static gd_status gd_keyfile_store(char *dst, size_t cap, bool *seen, const char *name,
                                  const char *value, size_t value_len, size_t line_no) {
    if (*seen)
        return gd_fail(GD_ERR_PARSE, "key file line %zu: '%s' appears twice", line_no, name);
    if (value_len + 1 > cap)
        return gd_fail(GD_ERR_PARSE, "key file line %zu: '%s' value is too long", line_no, name);
    memcpy(dst, value, value_len);
    dst[value_len] = '\0';
    *seen = true;
    return GD_OK;
}

static gd_status gd_keyfile_split(gd_keyfile_fields *f, const char *text, size_t len) {
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        line_no++;
        size_t a = pos, b = end;
        pos = end + 1;
        while (a < b && gd_is_blank(text[a]))
            a++;
        while (b > a && gd_is_blank(text[b - 1]))
            b--;
        if (a == b || text[a] == '#')
            continue;
        const char *colon = memchr(text + a, ':', b - a);
        if (colon == NULL)
            return gd_fail(GD_ERR_PARSE, "key file line %zu: expected 'name: value'", line_no);
        size_t name_len = (size_t)(colon - (text + a));
        size_t v = (size_t)(colon - text) + 1;
        while (v < b && gd_is_blank(text[v]))
            v++;
        const char *value = text + v;
        size_t value_len = b - v;
        for (size_t i = 0; i < value_len; i++)
            if ((unsigned char)value[i] < 0x20 || (unsigned char)value[i] >= 0x7f)
                return gd_fail(GD_ERR_PARSE, "key file line %zu: unexpected character", line_no);
#define GD_FIELD(key, member, flag)                                                          \
    if (name_len == sizeof(key) - 1 && memcmp(text + a, key, name_len) == 0) {              \
        GD_TRY(gd_keyfile_store(f->member, sizeof f->member, &f->flag, key, value, value_len, \
                                line_no));                                                   \
        continue;                                                                            \
    }
        GD_FIELD("type", type, has_type)
        GD_FIELD("address", address, has_address)
        GD_FIELD("pubkey", pubkey, has_pubkey)
        GD_FIELD("privkey", privkey, has_privkey)
#undef GD_FIELD
        return gd_fail(GD_ERR_PARSE, "key file line %zu: unknown field '%.*s'", line_no,
                       (int)(name_len > 32 ? 32 : name_len), text + a);
    }
    return GD_OK;
}

/* A file that is exactly 64 hex digits, optionally followed by a newline. */
static bool gd_keyfile_is_bare_hex(const char *text, size_t len) {
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    if (len != 2 * GD_SECKEY_LEN)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

static gd_status gd_keyfile_verify(gd_key *key, const gd_keyfile_fields *f) {
    if (!f->has_type || strcmp(f->type, "secp256k1") != 0)
        return gd_fail(GD_ERR_PARSE, "key file must say 'type: secp256k1'");
    if (!f->has_privkey)
        return gd_fail(GD_ERR_PARSE, "key file has no 'privkey' line");
    if (gd_key_from_hex(key, f->privkey) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "key file 'privkey' is not a valid secp256k1 private key "
                                     "(64 hex digits)");
    if (f->has_pubkey) {
        char hex[2 * GD_PUBKEY_LEN + 1];
        gd_hex_encode(hex, key->pubkey, GD_PUBKEY_LEN, false);
        if (strcasecmp(hex, f->pubkey) != 0)
            return gd_fail(GD_ERR_PARSE, "key file 'pubkey' does not match its private key "
                                         "(file damaged or edited?)");
    }
    if (f->has_address) {
        char addr[GD_ADDRESS_STR_MAX];
        GD_TRY(gd_address_from_pubkey(addr, sizeof addr, GD_ADDRESS_PREFIX, key->pubkey));
        if (strcmp(addr, f->address) != 0)
            return gd_fail(GD_ERR_PARSE, "key file 'address' %.64s does not match its private "
                                         "key (which gives %s)", f->address, addr);
    }
    return GD_OK;
}

gd_status gd_keyfile_parse(gd_key *key, const uint8_t *bytes, size_t len) {
    const char *text = (const char *)bytes;
    if (len > GD_KEYFILE_MAX)
        return gd_fail(GD_ERR_PARSE, "key file is larger than %d bytes", GD_KEYFILE_MAX);
    gd_status s;
    if (gd_keyfile_is_bare_hex(text, len)) {
        char hex[2 * GD_SECKEY_LEN + 1];
        memcpy(hex, text, 2 * GD_SECKEY_LEN);
        hex[2 * GD_SECKEY_LEN] = '\0';
        s = gd_key_from_hex(key, hex);
        if (s != GD_OK)
            s = gd_fail(GD_ERR_PARSE, "key file holds 64 hex digits that are not a valid "
                                      "secp256k1 private key");
        gd_wipe(hex, sizeof hex);
        return s;
    }
    gd_keyfile_fields f;
    memset(&f, 0, sizeof f);
    s = gd_keyfile_split(&f, text, len);
    if (s == GD_OK)
        s = gd_keyfile_verify(key, &f);
    gd_wipe(&f, sizeof f);
    if (s != GD_OK)
        gd_key_wipe(key);
    return s;
}

gd_status gd_keyfile_format(gd_buf *out, const gd_key *key) {
    char addr[GD_ADDRESS_STR_MAX];
    char pub[2 * GD_PUBKEY_LEN + 1];
    char priv[2 * GD_SECKEY_LEN + 1];
    GD_TRY(gd_address_from_pubkey(addr, sizeof addr, GD_ADDRESS_PREFIX, key->pubkey));
    gd_hex_encode(pub, key->pubkey, GD_PUBKEY_LEN, false);
    gd_hex_encode(priv, key->secret, GD_SECKEY_LEN, false);
    /* Size the buffer once so the secret is never copied by a realloc. */
    gd_status s = gd_buf_reserve(out, 512);
    if (s == GD_OK) {
        int n = snprintf((char *)out->data + out->len, out->cap - out->len,
                         "# gonka-diloco key file. Keep it secret: anyone with it controls %s.\n"
                         "type: secp256k1\naddress: %s\npubkey: %s\nprivkey: %s\n",
                         addr, addr, pub, priv);
        if (n < 0 || (size_t)n >= out->cap - out->len)
            s = gd_fail(GD_ERR_LIMIT, "key file text too long");
        else
            out->len += (size_t)n;
    }
    gd_wipe(priv, sizeof priv);
    return s;
}

gd_status gd_keyfile_read(gd_key *key, const char *path) {
    gd_buf buf = {0};
    gd_status s = gd_file_read_private(&buf, path, GD_KEYFILE_MAX);
    if (s == GD_OK && gd_keyfile_parse(key, buf.data, buf.len) != GD_OK)
        s = gd_fail_context(GD_ERR_PARSE, "key file %s", path);
    gd_buf_wipe_free(&buf);
    return s;
}

gd_status gd_keyfile_write(const char *path, const gd_key *key) {
    gd_buf buf = {0};
    gd_status s = gd_keyfile_format(&buf, key);
    if (s == GD_OK)
        s = gd_file_create_private(path, buf.data, buf.len);
    gd_buf_wipe_free(&buf);
    return s;
}
