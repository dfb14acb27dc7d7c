/* Runs the gonka-diloco command line in-process for tests: captured
 * stdout and stderr, the exit code, and stdout parsed as JSON. */
#ifndef GD_TESTS_SUPPORT_CLI_RUN_H
#define GD_TESTS_SUPPORT_CLI_RUN_H

#include <jansson.h>

typedef struct run_result {
    int rc;
    char *out;
    char *err;
    json_t *json; /* stdout parsed as JSON, if it is */
} run_result;

/* Runs the CLI with a NULL-terminated argument list (after the program). */
run_result run(const char *first, ...);
void run_free(run_result *r);

/* A path in the test's scratch directory (8 rotating buffers). */
const char *path_in_tmp(const char *name);

/* j[key] as a string, or NULL. */
const char *json_str(const json_t *j, const char *key);

#endif
