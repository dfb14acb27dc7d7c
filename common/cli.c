/* Command dispatch, option parsing and help (see common/cli.h). */
#include "common/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"

/* Options every command takes. */
static const gd_opt_spec gd_global_opts[] = {
    {"log-level", "SPEC", "error, warn, info or debug, per subsystem info,http=debug (or GD_LOG)"},
    {"help", NULL, "show this help"},
    {NULL, NULL, NULL},
};

static size_t gd_opt_count(const gd_opt_spec *opts) {
    size_t n = 0;
    while (opts && opts[n].name)
        n++;
    return n;
}

/* Index of option name in the command's table followed by the globals. */
static int gd_opt_index(const gd_command *cmd, const char *name, size_t name_len) {
    size_t n = gd_opt_count(cmd->opts);
    for (size_t i = 0; i < n; i++)
        if (strlen(cmd->opts[i].name) == name_len && memcmp(cmd->opts[i].name, name, name_len) == 0)
            return (int)i;
    for (size_t i = 0; gd_global_opts[i].name; i++)
        if (strlen(gd_global_opts[i].name) == name_len &&
            memcmp(gd_global_opts[i].name, name, name_len) == 0)
            return n + i < GD_CLI_MAX_OPTS ? (int)(n + i) : -1;
    return -1;
}

static const gd_opt_spec *gd_opt_at(const gd_command *cmd, int idx) {
    size_t n = gd_opt_count(cmd->opts);
    return (size_t)idx < n ? &cmd->opts[idx] : &gd_global_opts[(size_t)idx - n];
}

char *gd_arg(const gd_args *args, const char *name) {
    int i = gd_opt_index(args->command, name, strlen(name));
    return (i >= 0 && args->set[i]) ? args->values[i] : NULL;
}

bool gd_flag(const gd_args *args, const char *name) {
    int i = gd_opt_index(args->command, name, strlen(name));
    return i >= 0 && args->set[i];
}

size_t gd_arg_all(const gd_args *args, const char **out, size_t cap, const char *name) {
    int i = gd_opt_index(args->command, name, strlen(name));
    size_t n = 0;
    for (int k = 0; i >= 0 && k < args->n_repeats; k++) {
        if (args->repeat_opt[k] != i)
            continue;
        if (n < cap)
            out[n] = args->repeat_value[k];
        n++;
    }
    return n;
}

int gd_cli_fail(gd_cli *cli, gd_status status) {
    const char *detail = gd_error_detail();
    fprintf(cli->err, "error: %s\n", detail[0] ? detail : gd_status_name(status));
    return status == GD_ERR_INVALID ? GD_EXIT_USAGE : GD_EXIT_FAIL;
}

int gd_cli_usage(gd_cli *cli, const gd_args *args, const char *fmt, ...) {
    va_list ap;
    fputs("error: ", cli->err);
    va_start(ap, fmt);
    vfprintf(cli->err, fmt, ap);
    va_end(ap);
    fprintf(cli->err, " (see '%s %s --help')\n", cli->program, args->command->path);
    return GD_EXIT_USAGE;
}

static void gd_print_opts(FILE *f, const gd_opt_spec *opts) {
    for (size_t i = 0; opts && opts[i].name; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                 opts[i].arg ? opts[i].arg : "");
        fprintf(f, "  %-28s %s\n", left, opts[i].help);
    }
}

static void gd_print_command_help(FILE *f, const char *program, const gd_command *cmd) {
    fprintf(f, "Usage: %s %s%s%s [options]\n\n%s\n", program, cmd->path,
            cmd->positional[0] ? " " : "", cmd->positional, cmd->summary);
    if (cmd->details)
        fprintf(f, "\n%s\n", cmd->details);
    fprintf(f, "\nOptions:\n");
    gd_print_opts(f, cmd->opts);
    gd_print_opts(f, gd_global_opts);
}

static void gd_print_overview(FILE *f, const gd_cli_program *prog, const char *group) {
    fprintf(f, "%s: %s\n\nUsage: %s COMMAND [options]   (COMMAND --help for details)\n\n"
               "Commands:\n", prog->name, prog->summary, prog->name);
    for (size_t i = 0; i < prog->n_commands; i++) {
        const gd_command *c = prog->commands[i];
        size_t gl = group ? strlen(group) : 0;
        if (group && (strncmp(c->path, group, gl) != 0 || c->path[gl] != ' '))
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", c->path, c->positional[0] ? " " : "",
                 c->positional);
        fprintf(f, "  %-30s %s\n", left, c->summary);
    }
    fprintf(f, "\nExit status: 0 success, 1 the operation failed, 2 bad command line or "
               "input.\n");
}

/* Finds the command whose words match the start of argv; *used = words. */
static const gd_command *gd_find_command(const gd_cli_program *prog, int argc, char **argv,
                                         int *used) {
    const gd_command *best = NULL;
    int best_words = 0;
    for (size_t i = 0; i < prog->n_commands; i++) {
        const char *p = prog->commands[i]->path;
        int words = 0;
        int ok = 1;
        while (*p && ok) {
            const char *sp = strchr(p, ' ');
            size_t len = sp ? (size_t)(sp - p) : strlen(p);
            if (words >= argc || strlen(argv[words]) != len || memcmp(argv[words], p, len) != 0)
                ok = 0;
            words++;
            p += len + (sp ? 1 : 0);
        }
        if (ok && words > best_words) {
            best = prog->commands[i];
            best_words = words;
        }
    }
    *used = best_words;
    return best;
}

/* Parses options and positional arguments. Returns -1 to run, or an exit
 * code (help printed: 0; usage error: 2). */
static int gd_parse_args(gd_cli *cli, gd_args *args, int argc, char **argv) {
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (!only_positional && strncmp(a, "--", 2) == 0) {
            const char *name = a + 2;
            char *eq = strchr(name, '=');
            size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
            int idx = gd_opt_index(args->command, name, name_len);
            if (idx < 0 || idx >= GD_CLI_MAX_OPTS)
                return gd_cli_usage(cli, args, "unknown option --%.*s", (int)name_len, name);
            const gd_opt_spec *spec = gd_opt_at(args->command, idx);
            if (args->set[idx] && !spec->repeatable)
                return gd_cli_usage(cli, args, "option --%s given twice", spec->name);
            args->set[idx] = true;
            if (spec->arg == NULL) {
                if (eq)
                    return gd_cli_usage(cli, args, "option --%s takes no value", spec->name);
                continue;
            }
            if (eq) {
                args->values[idx] = eq + 1;
            } else {
                if (i + 1 >= argc)
                    return gd_cli_usage(cli, args, "option --%s needs a value (%s)", spec->name,
                                        spec->arg);
                args->values[idx] = argv[++i];
            }
            if (spec->repeatable) {
                if (args->n_repeats == GD_CLI_MAX_REPEATS)
                    return gd_cli_usage(cli, args, "too many repeated options");
                args->repeat_opt[args->n_repeats] = idx;
                args->repeat_value[args->n_repeats++] = args->values[idx];
            }
            continue;
        }
        if (args->n_positional == GD_CLI_MAX_POSITIONAL ||
            args->n_positional >= args->command->max_positional)
            return gd_cli_usage(cli, args, "unexpected argument '%.60s'", a);
        args->positional[args->n_positional++] = a;
    }
    if (gd_flag(args, "help")) {
        gd_print_command_help(cli->out, cli->program, args->command);
        return GD_EXIT_OK;
    }
    if (args->n_positional < args->command->min_positional)
        return gd_cli_usage(cli, args, "missing argument: %s", args->command->positional);
    const char *level = gd_arg(args, "log-level");
    if (level) {
        if (gd_log_configure(level) != GD_OK)
            return gd_cli_fail(cli, GD_ERR_INVALID);
    }
    return GD_CLI_CONTINUE;
}

int gd_cli_run(const gd_cli_program *prog, FILE *out, int argc, char **argv, FILE *err) {
    gd_cli cli = {out, err, prog->name};
    gd_error_clear();
    /* A table too long for gd_args is a build mistake: say so at once
     * rather than misread the options past the limit. */
    size_t globals = gd_opt_count(gd_global_opts);
    for (size_t c = 0; c < prog->n_commands; c++)
        if (gd_opt_count(prog->commands[c]->opts) + globals > GD_CLI_MAX_OPTS) {
            fprintf(err, "internal error: '%s' has more than %d options\n",
                    prog->commands[c]->path, GD_CLI_MAX_OPTS);
            return GD_EXIT_FAIL;
        }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        gd_print_overview(argc < 2 ? err : out, prog, NULL);
        return argc < 2 ? GD_EXIT_USAGE : GD_EXIT_OK;
    }
    int used = 0;
    const gd_command *cmd = gd_find_command(prog, argc - 1, argv + 1, &used);
    /* A program without a `version` command of its own gets this one. */
    if (cmd == NULL && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
        fprintf(out, "%s %s\n", prog->name, prog->version);
        return GD_EXIT_OK;
    }
    if (cmd == NULL) {
        /* A group name alone ("keys") lists its commands. */
        for (size_t i = 0; i < prog->n_commands; i++) {
            size_t n = strlen(argv[1]);
            if (strncmp(prog->commands[i]->path, argv[1], n) == 0 &&
                prog->commands[i]->path[n] == ' ') {
                bool help = argc > 2 && strcmp(argv[2], "--help") == 0;
                if (argc > 2 && !help)
                    fprintf(err, "error: unknown command '%s %.40s'\n\n", argv[1], argv[2]);
                gd_print_overview(help ? out : err, prog, argv[1]);
                return help ? GD_EXIT_OK : GD_EXIT_USAGE;
            }
        }
        fprintf(err, "error: unknown command '%.60s' (see '%s --help')\n", argv[1], prog->name);
        return GD_EXIT_USAGE;
    }
    gd_args args;
    memset(&args, 0, sizeof args);
    args.command = cmd;
    int rc = gd_parse_args(&cli, &args, argc - 1 - used, argv + 1 + used);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    return cmd->run(&cli, &args);
}
