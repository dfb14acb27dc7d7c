/* Shared command helpers. */
#include "plugin/cli/cli_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/keys/keyfile.h"
#include "chain/wire/diloco_spec.h"
#include "common/file.h"
#include "common/parse.h"

#define GD_CLI_RPC_NOTICE_MS 2000 /* a wait this long is said out loud */

int gd_cli_u64_opt(gd_cli *cli, gd_args *args, uint64_t *out, const char *name) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return GD_CLI_CONTINUE;
    if (gd_parse_u64(out, v) != GD_OK)
        return gd_cli_usage(cli, args, "--%s wants a non-negative integer, got '%.40s'", name, v);
    return GD_CLI_CONTINUE;
}

/* --name as a finite number from min up to max, max itself included or not. */
static int gd_cli_real_in(gd_cli *cli, gd_args *args, double *out, const char *name, double min,
                          double max, bool max_included) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return GD_CLI_CONTINUE;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !isfinite(d) || d < min ||
        (max_included ? d > max : d >= max))
        return gd_cli_usage(cli, args, "--%s wants a number in [%g, %g%c, got '%.40s'", name, min,
                            max, max_included ? ']' : ')', v);
    *out = d;
    return GD_CLI_CONTINUE;
}

int gd_cli_real_opt(gd_cli *cli, gd_args *args, double *out, const char *name, double min,
                    double max) {
    return gd_cli_real_in(cli, args, out, name, min, max, true);
}

int gd_cli_real_below_opt(gd_cli *cli, gd_args *args, double *out, const char *name,
                          double min, double below) {
    return gd_cli_real_in(cli, args, out, name, min, below, false);
}

int gd_cli_setting_opt(gd_cli *cli, gd_args *args, const gd_setting *setting, int *out,
                       bool *given) {
    const char *text = gd_arg(args, setting->option);
    if (text == NULL)
        return GD_CLI_CONTINUE;
    if (gd_setting_parse(setting, out, text) != GD_OK)
        return gd_cli_usage(cli, args, "--%s must be %s or %s, not '%.40s'", setting->option,
                            setting->names[0], setting->names[1], text);
    if (given)
        *given = true;
    return GD_CLI_CONTINUE;
}

int gd_cli_duration_opt(gd_cli *cli, gd_args *args, const char *name, long *out_ms) {
    const char *v = gd_arg(args, name);
    int64_t ms;
    if (v == NULL)
        return GD_CLI_CONTINUE;
    if (gd_parse_duration_ms(v, &ms) != GD_OK || ms <= 0 || ms > 24L * 3600 * 1000)
        return gd_cli_usage(cli, args, "--%s wants a duration such as 500ms, 10s or 2m, got "
                                       "'%.40s'", name, v);
    *out_ms = (long)ms;
    return GD_CLI_CONTINUE;
}

/* Says what a slow call waits for, once, so a silent node does not look
 * like a hung command. */
static void gd_cli_rpc_waiting(void *ctx, const char *url, const char *method, long waited_ms,
                               long deadline_ms) {
    gd_cli *cli = ctx;
    fprintf(cli->err, "note: waiting for %s to answer %s (%.0f s so far; giving up after %.0f s)\n",
            url, method, (double)waited_ms / 1000, (double)deadline_ms / 1000);
    fflush(cli->err);
}

int gd_cli_open_rpc(gd_cli *cli, gd_args *args, gd_rpc **rpc) {
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    int rc = gd_cli_duration_opt(cli, args, "timeout", &opt.timeout_ms);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    uint64_t retries = (uint64_t)opt.max_retries;
    if ((rc = gd_cli_u64_opt(cli, args, &retries, "retries")) != GD_CLI_CONTINUE)
        return rc;
    if (retries > 20)
        return gd_cli_usage(cli, args, "--retries must be at most 20");
    opt.max_retries = (int)retries;
    if (opt.connect_timeout_ms > opt.timeout_ms)
        opt.connect_timeout_ms = opt.timeout_ms;
    /* --timeout bounds the whole wait for an answer, retries included: a
     * node that accepts and never answers costs it once, not per retry. */
    opt.deadline_ms = opt.timeout_ms;
    opt.notice_after_ms = GD_CLI_RPC_NOTICE_MS;
    opt.on_wait = gd_cli_rpc_waiting;
    opt.on_wait_ctx = cli;
    const char *url = gd_arg(args, "node");
    gd_status s = gd_rpc_open(rpc, url ? url : GD_RPC_URL_DEFAULT, &opt);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return GD_CLI_CONTINUE;
}

int gd_cli_load_key(gd_cli *cli, gd_args *args, gd_key *key) {
    const char *path = gd_arg(args, "key");
    if (path == NULL)
        return gd_cli_usage(cli, args, "--key FILE is required");
    gd_status s = gd_keyfile_read(key, path);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return GD_CLI_CONTINUE;
}

json_t *gd_cli_json_number(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

int gd_cli_print_json(gd_cli *cli, json_t *value) {
    if (value == NULL) {
        fprintf(cli->err, "error: out of memory formatting JSON\n");
        return GD_EXIT_FAIL;
    }
    int rc = json_dumpf(value, cli->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(value);
    fputc('\n', cli->out);
    return rc == 0 ? GD_EXIT_OK : GD_EXIT_FAIL;
}

int gd_cli_uint_opt(gd_cli *cli, gd_args *args, uint64_t *out, const char *name, uint64_t max,
                    bool required) {
    const char *v = gd_arg(args, name);
    uint64_t n;
    if (v == NULL)
        return required ? gd_cli_usage(cli, args, "--%s N is required", name) : -1;
    if (gd_parse_u64(&n, v) != GD_OK || n > max)
        return gd_cli_usage(cli, args, "--%s wants an integer from 0 to %llu, got '%.40s'", name,
                            (unsigned long long)max, v);
    *out = n;
    return GD_CLI_CONTINUE;
}

int gd_cli_hex_opt(gd_cli *cli, gd_args *args, uint8_t *out, const char *name, size_t len,
                   bool required) {
    const char *v = gd_arg(args, name);
    size_t got = 0;
    if (v == NULL)
        return required ? gd_cli_usage(cli, args, "--%s HEX is required", name) : -1;
    if (strlen(v) != 2 * len || gd_hex_decode(out, len, &got, v, 2 * len) != GD_OK)
        return gd_cli_usage(cli, args, "--%s wants %zu hex digits (%zu bytes)", name, 2 * len,
                            len);
    return GD_CLI_CONTINUE;
}

int gd_cli_address_opt(gd_cli *cli, gd_args *args, char *out, const char *name, bool required) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return required ? gd_cli_usage(cli, args, "--%s ADDR is required", name) : -1;
    if (gd_address_canonical(out, GD_ADDRESS_STR_MAX, v) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--%s", name));
    return GD_CLI_CONTINUE;
}

/* One leaf as text: strings bare (the empty string as ""), null as "null",
 * empty containers as [] and {}. */
static void gd_tree_scalar(FILE *f, const json_t *v) {
    if (json_is_array(v) || json_is_object(v))
        fputs(json_is_array(v) ? "[]" : "{}", f);
    else if (json_is_string(v))
        fputs(json_string_length(v) ? json_string_value(v) : "\"\"", f);
    else if (json_is_integer(v))
        fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(f, "%g", json_real_value(v));
    else
        fputs(json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null", f);
}

static bool gd_tree_leaf(const json_t *v) {
    return !(json_is_object(v) && json_object_size(v) > 0) &&
           !(json_is_array(v) && json_array_size(v) > 0);
}

/* YAML-like: objects as "key: value" lines, arrays as "- " items; the
 * first key of an array item shares the "- " line (first_inline). */
static void gd_tree(FILE *f, const json_t *v, int indent, bool first_inline) {
    if (json_is_object(v)) {
        const char *key;
        json_t *item;
        bool first = true;
        json_object_foreach((json_t *)v, key, item) {
            int pad = first && first_inline ? 0 : indent;
            first = false;
            if (!gd_tree_leaf(item)) {
                fprintf(f, "%*s%s:\n", pad, "", key);
                gd_tree(f, item, indent + 2, false);
            } else {
                fprintf(f, "%*s%s: ", pad, "", key);
                gd_tree_scalar(f, item);
                fputc('\n', f);
            }
        }
        return;
    }
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        fprintf(f, "%*s- ", indent, "");
        if (json_is_object(item) && json_object_size(item) > 0) {
            gd_tree(f, item, indent + 2, true);
        } else if (!gd_tree_leaf(item)) {
            fputc('\n', f);
            gd_tree(f, item, indent + 2, false);
        } else {
            gd_tree_scalar(f, item);
            fputc('\n', f);
        }
    }
}

int gd_cli_print_tree(gd_cli *cli, json_t *value) {
    if (value == NULL) {
        fprintf(cli->err, "error: out of memory formatting the answer\n");
        return GD_EXIT_FAIL;
    }
    gd_tree(cli->out, value, 0, false);
    json_decref(value);
    return GD_EXIT_OK;
}

/* A spec file is a small JSON object; anything larger is not one. */
#define GD_SPEC_FILE_MAX (1u << 20)

gd_status gd_cli_read_run_spec(Gonka__Diloco__V1__RunSpec **out, const char *path,
                               const char *what) {
    gd_buf text = {0};
    gd_status s = gd_file_read(&text, path, GD_SPEC_FILE_MAX);
    if (s != GD_OK) {
        gd_buf_free(&text);
        return gd_fail_context(s, "%s", what);
    }
    json_error_t err;
    json_t *j = json_loadb((const char *)text.data, text.len, JSON_REJECT_DUPLICATES, &err);
    gd_buf_free(&text);
    if (j == NULL)
        return gd_fail(GD_ERR_INVALID, "%s %.200s: line %d: %s", what, path, err.line, err.text);
    s = gd_diloco_spec_from_json(out, j);
    json_decref(j);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "%s %.200s", what, path);
}
