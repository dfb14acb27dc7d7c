/* Minimal unit-test support: CHECK macros that report and continue, a test
 * runner, hex helpers and a scratch directory removed at exit. */
#ifndef GD_TESTS_SUPPORT_TESTKIT_H
#define GD_TESTS_SUPPORT_TESTKIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/status.h"

extern int gd_test_failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);   \
            gd_test_failures++;                                                        \
        }                                                                              \
    } while (0)

/* Expects expr to return the given gd_status; prints the detail otherwise. */
#define CHECK_STATUS(expr, expected)                                                       \
    do {                                                                                  \
        gd_status gd_check_s_ = (expr);                                                   \
        if (gd_check_s_ != (expected)) {                                                  \
            fprintf(stderr, "%s:%d: %s returned %s (%s), expected %s\n", __FILE__,        \
                    __LINE__, #expr, gd_status_name(gd_check_s_), gd_error_detail(),      \
                    gd_status_name(expected));                                            \
            gd_test_failures++;                                                           \
        }                                                                                 \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, GD_OK)

#define CHECK_STR_EQ(a, b)                                                                  \
    do {                                                                                   \
        const char *gd_a_ = (a), *gd_b_ = (b);                                             \
        if (gd_a_ == NULL || gd_b_ == NULL || strcmp(gd_a_, gd_b_) != 0) {                 \
            fprintf(stderr, "%s:%d: %s == %s failed:\n  '%s'\n  '%s'\n", __FILE__, __LINE__, \
                    #a, #b, gd_a_ ? gd_a_ : "(null)", gd_b_ ? gd_b_ : "(null)");           \
            gd_test_failures++;                                                            \
        }                                                                                  \
    } while (0)

/* Compares bytes against expected hex. */
#define CHECK_HEX_EQ(bytes, len, hex)                                                  \
    do {                                                                               \
        if (!gd_test_hex_eq((bytes), (len), (hex))) {                                  \
            fprintf(stderr, "%s:%d: %s differs from expected hex\n", __FILE__, __LINE__, \
                    #bytes);                                                           \
            gd_test_failures++;                                                        \
        }                                                                              \
    } while (0)

#define RUN_TEST(fn)                                     \
    do {                                                 \
        int gd_before_ = gd_test_failures;               \
        fn();                                            \
        fprintf(stderr, "%s %s\n",                       \
                gd_test_failures == gd_before_ ? "ok  " : "FAIL", #fn); \
    } while (0)

/* Returns the process exit code for the run. */
int gd_test_finish(void);

/* Decodes hex into out (cap bytes); aborts the test program on bad hex. */
size_t gd_test_unhex(uint8_t *out, size_t cap, const char *hex);

/* True if bytes equal the hex text; prints both on mismatch. */
int gd_test_hex_eq(const uint8_t *bytes, size_t len, const char *hex);

/* A fresh private scratch directory, deleted when the program exits. */
const char *gd_test_tmpdir(void);

/* name's path in the scratch directory (static buffers in a rotation of 8
 * shared with gd_test_write_file: copy one kept across later calls). */
const char *gd_test_path(const char *name);

/* Writes a file with the given mode; returns its path (static buffer
 * rotation of 8). */
const char *gd_test_write_file(const char *name, const void *data, size_t len, unsigned mode);

/* Directory holding tests/ sources (for vector files), from GD_SOURCE_DIR. */
const char *gd_test_source_dir(void);

#endif
