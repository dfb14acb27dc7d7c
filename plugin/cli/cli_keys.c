/* keys new | import | show. */
#include <string.h>
#include <sys/stat.h>

#include "chain/keys/address.h"
#include "chain/keys/bip32.h"
#include "chain/keys/bip39.h"
#include "chain/keys/keyfile.h"
#include "common/file.h"
#include "common/secure.h"
#include "plugin/cli/cli_util.h"

/* Prints the public identity of a key: address and compressed pubkey. */
static int gd_print_key(gd_cli *cli, gd_args *args, const gd_key *key, const char *file) {
    char address[GD_ADDRESS_STR_MAX];
    char pubkey[2 * GD_PUBKEY_LEN + 1];
    gd_status s = gd_address_from_pubkey(address, sizeof address, GD_ADDRESS_PREFIX, key->pubkey);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    gd_hex_encode(pubkey, key->pubkey, GD_PUBKEY_LEN, false);
    if (gd_flag(args, "json")) {
        json_t *j = json_pack("{s:s,s:s}", "address", address, "pubkey", pubkey);
        if (j && file)
            json_object_set_new(j, "file", json_string(file));
        return gd_cli_print_json(cli, j);
    }
    fprintf(cli->out, "address: %s\npubkey:  %s\n", address, pubkey);
    if (file)
        fprintf(cli->out, "file:    %s\n", file);
    return GD_EXIT_OK;
}

static int gd_run_keys_new(gd_cli *cli, gd_args *args) {
    const char *out_path = gd_arg(args, "out");
    const char *mnemonic_out = gd_arg(args, "mnemonic-out");
    if (out_path == NULL)
        return gd_cli_usage(cli, args, "--out FILE is required");
    /* Refuse before creating anything, so no orphan backup is left behind. */
    if (mnemonic_out && gd_file_same_path(out_path, mnemonic_out))
        return gd_cli_usage(cli, args, "--out and --mnemonic-out both name %s; the mnemonic "
                                       "backup needs a file of its own", mnemonic_out);
    struct stat st;
    const char *paths[2] = {out_path, mnemonic_out};
    for (int i = 0; i < 2; i++)
        if (paths[i] && lstat(paths[i], &st) == 0)
            return gd_cli_fail(cli, gd_fail(GD_ERR_EXISTS, "%s already exists; refusing to "
                                                           "overwrite it", paths[i]));
    gd_key key;
    char mnemonic[GD_BIP39_MNEMONIC_MAX + 2];
    gd_status s = gd_key_generate(&key, mnemonic, sizeof mnemonic);
    if (s == GD_OK && mnemonic_out) {
        /* The backup goes first: a key without its backup is the worse loss. */
        size_t n = strlen(mnemonic);
        mnemonic[n] = '\n';
        s = gd_file_create_private(mnemonic_out, mnemonic, n + 1);
    }
    gd_wipe(mnemonic, sizeof mnemonic);
    if (s == GD_OK)
        s = gd_keyfile_write(out_path, &key);
    int rc = s == GD_OK ? gd_print_key(cli, args, &key, out_path) : gd_cli_fail(cli, s);
    gd_key_wipe(&key);
    if (rc == GD_EXIT_OK && !mnemonic_out && !gd_flag(args, "json"))
        fprintf(cli->err, "note: no mnemonic backup was kept (use --mnemonic-out FILE); back up "
                          "%s itself\n", out_path);
    return rc;
}

/* Reads a secret text file (mnemonic or passphrase) into buf, trimmed. */
static gd_status gd_read_secret_text(const char *path, char *buf, size_t cap) {
    gd_buf raw = {0};
    gd_status s = gd_file_read_private(&raw, path, cap - 1);
    if (s == GD_OK) {
        size_t n = raw.len;
        while (n > 0 && (raw.data[n - 1] == '\n' || raw.data[n - 1] == '\r'))
            n--;
        if (memchr(raw.data, '\0', n) != NULL)
            s = gd_fail(GD_ERR_PARSE, "%s contains a NUL byte", path);
        else {
            memcpy(buf, raw.data, n);
            buf[n] = '\0';
        }
    } else if (s == GD_ERR_LIMIT) {
        s = gd_fail(GD_ERR_PARSE, "%s is too long for a mnemonic or passphrase", path);
    }
    gd_buf_wipe_free(&raw);
    return s;
}

static int gd_run_keys_import(gd_cli *cli, gd_args *args) {
    char *hex = gd_arg(args, "hex");
    const char *mnemonic_file = gd_arg(args, "mnemonic-file");
    const char *out_path = gd_arg(args, "out");
    const char *path = gd_arg(args, "hd-path");
    const char *pass_file = gd_arg(args, "passphrase-file");
    if (out_path == NULL)
        return gd_cli_usage(cli, args, "--out FILE is required");
    if ((hex != NULL) == (mnemonic_file != NULL))
        return gd_cli_usage(cli, args, "give exactly one of --hex HEX or --mnemonic-file FILE");
    if (hex != NULL && (path || pass_file))
        return gd_cli_usage(cli, args, "--hd-path and --passphrase-file apply to "
                                       "--mnemonic-file only");
    if (path != NULL) {
        uint32_t idx[GD_HD_PATH_MAX_DEPTH];
        size_t depth;
        if (gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &depth, path) != GD_OK)
            return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--hd-path"));
    }
    gd_key key;
    gd_status s;
    if (hex != NULL) {
        char copy[2 * GD_SECKEY_LEN + 2];
        size_t n = strlen(hex);
        /* Take the secret out of argv so it stops showing in /proc/PID/cmdline. */
        snprintf(copy, sizeof copy, "%s", hex);
        gd_wipe(hex, n);
        s = n < sizeof copy ? gd_key_from_hex(&key, copy)
                            : gd_fail(GD_ERR_INVALID, "--hex wants 64 hex digits");
        gd_wipe(copy, sizeof copy);
        if (s == GD_ERR_PARSE || s == GD_ERR_CRYPTO)
            s = gd_fail_context(GD_ERR_INVALID, "--hex");
    } else {
        char mnemonic[1024], passphrase[260] = "";
        s = gd_read_secret_text(mnemonic_file, mnemonic, sizeof mnemonic);
        if (s == GD_OK && pass_file)
            s = gd_read_secret_text(pass_file, passphrase, sizeof passphrase);
        if (s == GD_OK) {
            s = gd_key_from_mnemonic(&key, mnemonic, passphrase, path ? path : GD_HD_PATH_GONKA);
            if (s == GD_ERR_PARSE)
                s = gd_fail_context(GD_ERR_INVALID, "%s", mnemonic_file);
        }
        gd_wipe(mnemonic, sizeof mnemonic);
        gd_wipe(passphrase, sizeof passphrase);
    }
    if (s == GD_OK)
        s = gd_keyfile_write(out_path, &key);
    int rc = s == GD_OK ? gd_print_key(cli, args, &key, out_path) : gd_cli_fail(cli, s);
    gd_key_wipe(&key);
    return rc;
}

static int gd_run_keys_show(gd_cli *cli, gd_args *args) {
    gd_key key;
    int rc = gd_cli_load_key(cli, args, &key);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    rc = gd_print_key(cli, args, &key, NULL);
    gd_key_wipe(&key);
    return rc;
}

static const gd_opt_spec gd_keys_new_opts[] = {
    {"out", "FILE", "key file to create (mode 0600; never overwritten)"},
    {"mnemonic-out", "FILE", "also save the 24-word mnemonic backup here (mode 0600)"},
    {"json", NULL, "print {\"address\", \"pubkey\", \"file\"} as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_keys_new = {
    "keys new", "", 0, 0,
    "Create a new secp256k1 key from a fresh 24-word BIP39 mnemonic (path m/44'/1200'/0'/0/0).",
    NULL, gd_keys_new_opts, gd_run_keys_new,
};

static const gd_opt_spec gd_keys_import_opts[] = {
    {"hex", "HEX", "the 32-byte private key as 64 hex digits (as printed by 'inferenced keys "
                   "export --unarmored-hex --unsafe')"},
    {"mnemonic-file", "FILE", "file holding a BIP39 mnemonic (mode 0600)"},
    {"hd-path", "PATH", "derivation path for --mnemonic-file (default " GD_HD_PATH_GONKA ")"},
    {"passphrase-file", "FILE", "file holding the optional BIP39 passphrase (mode 0600)"},
    {"out", "FILE", "key file to create (mode 0600; never overwritten)"},
    {"json", NULL, "print {\"address\", \"pubkey\", \"file\"} as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_keys_import = {
    "keys import", "", 0, 0,
    "Import a key from a hex private key or a BIP39 mnemonic into a key file.",
    "A key given with --hex can be seen by other users of this machine while the command\n"
    "starts; prefer a mnemonic file, or write the hex into a 0600 file and use that file\n"
    "directly as --key FILE (a file holding just 64 hex digits is a valid key file).",
    gd_keys_import_opts, gd_run_keys_import,
};

static const gd_opt_spec gd_keys_show_opts[] = {
    {"key", "FILE", "key file (must not be readable by group or others)"},
    {"json", NULL, "print {\"address\", \"pubkey\"} as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_keys_show = {
    "keys show", "", 0, 0,
    "Print a key file's gonka1... address and compressed public key (hex).",
    NULL, gd_keys_show_opts, gd_run_keys_show,
};
