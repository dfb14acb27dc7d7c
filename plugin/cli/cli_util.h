/* Helpers shared by the command implementations. */
#ifndef GD_PLUGIN_CLI_CLI_UTIL_H
#define GD_PLUGIN_CLI_CLI_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/client/rpc.h"
#include "chain/keys/keys.h"
#include "gonka/diloco/v1/types.pb-c.h"
#include "plugin/cli/cli.h"
#include "trainer/settings.h"

/* Options of every command that talks to a node. */
#define GD_RPC_OPTS                                                                           \
    {"node", "URL", "CometBFT RPC address (default " GD_RPC_URL_DEFAULT ")"},                 \
        {"timeout", "DURATION", "longest wait for an answer, retries included (default 10s)"}, \
        {"retries", "N", "retries after network errors, with backoff (default 3)"}

/* Opens an RPC client from --node/--timeout/--retries; prints errors. */
int gd_cli_open_rpc(gd_cli *cli, gd_args *args, gd_rpc **rpc);

/* Reads --key FILE into key; prints errors. Returns an exit code or GD_CLI_CONTINUE. */
int gd_cli_load_key(gd_cli *cli, gd_args *args, gd_key *key);

/* A JSON number for v, or null where v is not finite (JSON has no nan or
 * inf, and jansson refuses them). */
json_t *gd_cli_json_number(double v);

/* Prints a JSON value (consumed) indented, with a trailing newline. */
int gd_cli_print_json(gd_cli *cli, json_t *value);

/* Parses a non-negative integer option; absent leaves *out unchanged.
 * Returns an exit code on error, GD_CLI_CONTINUE on success. */
int gd_cli_u64_opt(gd_cli *cli, gd_args *args, uint64_t *out, const char *name);

/* Parses an integer option in [0, max]; absent is a usage error when
 * required, else leaves *out unchanged. GD_CLI_CONTINUE on success, else an exit code. */
int gd_cli_uint_opt(gd_cli *cli, gd_args *args, uint64_t *out, const char *name, uint64_t max,
                    bool required);

/* Parses a hex option of exactly len bytes (either case); absent as above. */
int gd_cli_hex_opt(gd_cli *cli, gd_args *args, uint8_t *out, const char *name, size_t len,
                   bool required);

/* Parses a Gonka address option into canonical lower case (out holds
 * GD_ADDRESS_STR_MAX bytes); absent as above. */
int gd_cli_address_opt(gd_cli *cli, gd_args *args, char *out, const char *name, bool required);

/* Prints a JSON value (consumed) as indented "key: value" lines, the text
 * form of commands whose --json output is the reference. */
int gd_cli_print_tree(gd_cli *cli, json_t *value);

/* Parses a finite real option within [min, max]; absent leaves *out unchanged. */
int gd_cli_real_opt(gd_cli *cli, gd_args *args, double *out, const char *name, double min,
                    double max);

/* The same in [min, below): for limits the value must stay under, such as
 * the optimizer's learning rate. */
int gd_cli_real_below_opt(gd_cli *cli, gd_args *args, double *out, const char *name,
                          double min, double below);

/* Parses a memory setting's option (trainer/settings.h: --shard, --precision,
 * ...) into *out (0 or 1); absent leaves *out unchanged, present sets
 * *given (may be NULL). */
int gd_cli_setting_opt(gd_cli *cli, gd_args *args, const gd_setting *setting, int *out,
                       bool *given);

/* Parses a duration option in milliseconds; absent leaves *out unchanged. */
int gd_cli_duration_opt(gd_cli *cli, gd_args *args, const char *name, long *out_ms);

/* Reads a RunSpec JSON file strictly (duplicate keys refused, every rule
 * of chain/wire/diloco_spec.h); errors name `what` (the option) and the path.
 * Free *out with gd_diloco_spec_free. */
gd_status gd_cli_read_run_spec(Gonka__Diloco__V1__RunSpec **out, const char *path,
                               const char *what) GD_MUST_CHECK;

#endif
