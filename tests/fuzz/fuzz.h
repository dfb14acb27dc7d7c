/* Shared declarations for fuzz targets. Each target is a libFuzzer entry
 * point; replay_main.c runs it over a corpus when libFuzzer is not used. */
#ifndef GD_TESTS_FUZZ_FUZZ_H
#define GD_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the target checks on accepted input; aborts (a finding) if false. */
#define FUZZ_ASSERT(cond)                                                     \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__,    \
                    __LINE__, #cond);                                         \
            abort();                                                          \
        }                                                                     \
    } while (0)

/* Calls a function whose result only matters to the fuzzer's coverage. */
#define FUZZ_IGNORE(expr)             \
    do {                              \
        int fuzz_ignored_ = (int)(expr); \
        (void)fuzz_ignored_;          \
    } while (0)

/* A NUL-terminated copy of the input (caller frees). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (s == NULL)
        abort();
    for (size_t i = 0; i < size; i++)
        s[i] = (char)data[i];
    s[size] = '\0';
    return s;
}

#endif
