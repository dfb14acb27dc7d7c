/* A small command-line framework shared by the project's programs: a table
 * of commands ("keys new", "start"), each with its options, a --help text
 * and a run function writing to the given streams.
 *
 * Exit status: 0 success, 1 the operation failed (network, chain, files),
 * 2 the command line or an input value is malformed. Errors are one line on
 * the error stream, starting "error: ", saying what to do where possible. */
#ifndef GD_COMMON_CLI_H
#define GD_COMMON_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/status.h"

#define GD_EXIT_OK 0
#define GD_EXIT_FAIL 1
#define GD_EXIT_USAGE 2
#define GD_EXIT_STOPPED 3 /* run: stopped for what a restart does not cure */
/* What a command's step returns to let the command carry on: any other value
 * is the exit code (GD_EXIT_*) the command stops with, its error printed.
 * Steps chain as `if ((rc = step(...)) != GD_CLI_CONTINUE) return rc;`. */
#define GD_CLI_CONTINUE (-1)

#define GD_CLI_MAX_OPTS 64 /* a command's options plus the global ones */
#define GD_CLI_MAX_POSITIONAL 4

typedef struct gd_cli {
    FILE *out;
    FILE *err;
    const char *program; /* for messages: "see 'PROGRAM CMD --help'" */
} gd_cli;

/* One option: "--name VALUE" (arg != NULL names the value) or a flag. */
typedef struct gd_opt_spec {
    const char *name;
    const char *arg;
    const char *help;
    bool repeatable; /* may be given several times (gd_arg_all); others only once */
} gd_opt_spec;

/* Every value of every repeatable option of one command line: 32 holds a
 * DiLoCo availability report's 16 --leaf-hash and --proof pairs. */
#define GD_CLI_MAX_REPEATS 32

typedef struct gd_args {
    const struct gd_command *command;
    char *values[GD_CLI_MAX_OPTS]; /* point into argv, so they can be wiped */
    bool set[GD_CLI_MAX_OPTS];
    const char *positional[GD_CLI_MAX_POSITIONAL];
    int n_positional;
    /* every value of repeatable options, in command-line order */
    int repeat_opt[GD_CLI_MAX_REPEATS];
    char *repeat_value[GD_CLI_MAX_REPEATS];
    int n_repeats;
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

typedef struct gd_cli_program {
    const char *name;    /* "gonka-diloco" */
    const char *summary; /* first line of the overview */
    const char *version;
    const gd_command *const *commands;
    size_t n_commands;
} gd_cli_program;

/* Parses argv against the program's commands and runs the chosen one. */
int gd_cli_run(const gd_cli_program *program, FILE *out, int argc, char **argv, FILE *err);

/* Accessors: the option's value (NULL if absent), whether it was given. */
char *gd_arg(const gd_args *args, const char *name);
bool gd_flag(const gd_args *args, const char *name);
/* Every value of a repeatable option, in order; returns how many (at most cap stored). */
size_t gd_arg_all(const gd_args *args, const char **out, size_t cap, const char *name);

/* Prints "error: <detail>" for status and returns the matching exit code
 * (GD_EXIT_USAGE for GD_ERR_INVALID, else GD_EXIT_FAIL). */
int gd_cli_fail(gd_cli *cli, gd_status status);

/* Prints "error: <message>" plus a pointer to --help; returns GD_EXIT_USAGE. */
int gd_cli_usage(gd_cli *cli, const gd_args *args, const char *fmt, ...) GD_PRINTF(3, 4);

#endif
