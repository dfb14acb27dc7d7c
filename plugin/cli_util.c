/* Shared command helpers. */
#include "plugin/cli_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keyfile.h"
#include "common/parse.h"

int gd_cli_u64_opt(gd_cli *cli, gd_args *args, const char *name, uint64_t *out) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return -1;
    if (gd_parse_u64(v, out) != GD_OK)
        return gd_cli_usage(cli, args, "--%s wants a non-negative integer, got '%.40s'", name, v);
    return -1;
}

int gd_cli_real_opt(gd_cli *cli, gd_args *args, const char *name, double min, double max,
                    double *out) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return -1;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !isfinite(d) || d < min || d > max)
        return gd_cli_usage(cli, args, "--%s wants a number in [%g, %g], got '%.40s'", name, min,
                            max, v);
    *out = d;
    return -1;
}

int gd_cli_duration_opt(gd_cli *cli, gd_args *args, const char *name, long *out_ms) {
    const char *v = gd_arg(args, name);
    int64_t ms;
    if (v == NULL)
        return -1;
    if (gd_parse_duration_ms(v, &ms) != GD_OK || ms <= 0 || ms > 24L * 3600 * 1000)
        return gd_cli_usage(cli, args, "--%s wants a duration such as 500ms, 10s or 2m, got "
                                       "'%.40s'", name, v);
    *out_ms = (long)ms;
    return -1;
}

int gd_cli_open_rpc(gd_cli *cli, gd_args *args, gd_rpc **rpc) {
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    int rc = gd_cli_duration_opt(cli, args, "timeout", &opt.timeout_ms);
    if (rc >= 0)
        return rc;
    uint64_t retries = (uint64_t)opt.max_retries;
    if ((rc = gd_cli_u64_opt(cli, args, "retries", &retries)) >= 0)
        return rc;
    if (retries > 20)
        return gd_cli_usage(cli, args, "--retries must be at most 20");
    opt.max_retries = (int)retries;
    if (opt.connect_timeout_ms > opt.timeout_ms)
        opt.connect_timeout_ms = opt.timeout_ms;
    const char *url = gd_arg(args, "node");
    gd_status s = gd_rpc_open(rpc, url ? url : GD_RPC_URL_DEFAULT, &opt);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return -1;
}

int gd_cli_load_key(gd_cli *cli, gd_args *args, gd_key *key) {
    const char *path = gd_arg(args, "key");
    if (path == NULL)
        return gd_cli_usage(cli, args, "--key FILE is required");
    gd_status s = gd_keyfile_read(key, path);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return -1;
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
