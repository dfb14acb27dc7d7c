/* In-process CLI runs for tests (cli_run.h). */
#include "tests/support/cli_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/cli/cli.h"
#include "tests/support/testkit.h"

void run_free(run_result *r) {
    free(r->out);
    free(r->err);
    json_decref(r->json);
}

run_result run(const char *first, ...) {
    char *argv[64];
    int argc = 0;
    argv[argc++] = strdup("gonka-diloco");
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = strdup(a);
    va_end(ap);
    argv[argc] = NULL;
    run_result r = {0};
    size_t out_len = 0, err_len = 0;
    FILE *out = open_memstream(&r.out, &out_len);
    FILE *err = open_memstream(&r.err, &err_len);
    r.rc = gd_cli_main(out, argc, argv, err);
    fclose(out);
    fclose(err);
    r.json = json_loads(r.out, 0, NULL);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return r;
}

const char *path_in_tmp(const char *name) {
    static char paths[8][600];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 600, "%s/%s", gd_test_tmpdir(), name);
    return p;
}

const char *json_str(const json_t *j, const char *key) {
    return json_string_value(json_object_get(j, key));
}
