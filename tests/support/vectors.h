/* Reading the line-oriented vector files in tests/vectors/. */
#ifndef GD_TESTS_SUPPORT_VECTORS_H
#define GD_TESTS_SUPPORT_VECTORS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testkit.h"

/* Opens tests/vectors/<name>; aborts if missing. */
static inline FILE *gd_vectors_open(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/vectors/%s", gd_test_source_dir(), name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        abort();
    }
    return f;
}

/* Reads the next non-comment line split at '|' into up to max fields.
 * Returns the field count, 0 at end of file. line must hold 4096 bytes. */
static inline int gd_vectors_next(FILE *f, char *line, char **fields, int max) {
    while (fgets(line, 4096, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        int k = 0;
        char *p = line;
        while (k < max) {
            fields[k++] = p;
            char *bar = strchr(p, '|');
            if (!bar)
                break;
            *bar = '\0';
            p = bar + 1;
        }
        return k;
    }
    return 0;
}

/* Finds "key=value" in a key=value vector file; returns a static copy. */
static inline const char *gd_vectors_value(const char *name, const char *key) {
    static char values[16][4096];
    static int next;
    FILE *f = gd_vectors_open(name);
    char line[4096];
    const char *found = NULL;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, key, kl) != 0 || line[kl] != '=')
            continue;
        char *v = values[next++ % 16];
        snprintf(v, 4096, "%s", line + kl + 1);
        size_t n = strlen(v);
        while (n && (v[n - 1] == '\n' || v[n - 1] == '\r'))
            v[--n] = '\0';
        found = v;
        break;
    }
    fclose(f);
    if (!found) {
        fprintf(stderr, "vector %s has no %s\n", name, key);
        abort();
    }
    return found;
}

#endif
