/* The gonka-diloco command line: a table of commands, each with its options,
 * a --help text, and a run function writing to the given streams.
 *
 * Exit status: 0 success, 1 the operation failed (network, chain, files),
 * 2 the command line or an input value is malformed. Errors are one line on
 * the error stream, starting "error: ", saying what to do where possible. */
#ifndef GD_PLUGIN_CLI_H
#define GD_PLUGIN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

#define GD_EXIT_OK 0
#define GD_EXIT_FAIL 1
#define GD_EXIT_USAGE 2

#define GD_CLI_MAX_OPTS 40
#define GD_CLI_MAX_POSITIONAL 4

typedef struct gd_cli {
    FILE *out;
    FILE *err;
} gd_cli;

/* One option: "--name VALUE" (arg != NULL names the value) or a flag. */
typedef struct gd_opt_spec {
    const char *name;
    const char *arg;
    const char *help;
} gd_opt_spec;

typedef struct gd_args {
    const struct gd_command *command;
    char *values[GD_CLI_MAX_OPTS]; /* point into argv, so they can be wiped */
    bool set[GD_CLI_MAX_OPTS];
    const char *positional[GD_CLI_MAX_POSITIONAL];
    int n_positional;
} gd_args;

typedef struct gd_command {
    const char *path;       /* "tx send" */
    const char *positional; /* synopsis of positional arguments, "" if none */
    int min_positional;
    int max_positional;
    const char *summary;    /* one line */
    const char *details;    /* extra --help paragraph, may be NULL */
    const gd_opt_spec *opts; /* NULL-terminated */
    int (*run)(gd_cli *cli, gd_args *args);
} gd_command;

/* Entry point used by main() and by the tests (in-process). */
int gd_cli_main(int argc, char **argv, FILE *out, FILE *err);

/* Accessors: the option's value (NULL if absent), whether it was given. */
char *gd_arg(const gd_args *args, const char *name);
bool gd_flag(const gd_args *args, const char *name);

/* Prints "error: <detail>" for status and returns the matching exit code
 * (GD_EXIT_USAGE for GD_ERR_INVALID, else GD_EXIT_FAIL). */
int gd_cli_fail(gd_cli *cli, gd_status status);

/* Prints "error: <message>" plus a pointer to --help; returns GD_EXIT_USAGE. */
int gd_cli_usage(gd_cli *cli, const gd_args *args, const char *fmt, ...) GD_PRINTF(3, 4);

/* Command groups, defined in cli_keys.c, cli_tx.c and cli_query.c. */
extern const gd_command gd_cmd_keys_new, gd_cmd_keys_import, gd_cmd_keys_show;
extern const gd_command gd_cmd_tx_send, gd_cmd_tx_broadcast, gd_cmd_tx_decode;
extern const gd_command gd_cmd_query_account, gd_cmd_query_balance, gd_cmd_query_epoch;
extern const gd_command gd_cmd_status, gd_cmd_epoch_clock;

#endif
