/* Test support. */
#include "tests/support/testkit.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"

int gd_test_failures;

int gd_test_finish(void) {
    if (gd_test_failures) {
        fprintf(stderr, "%d check(s) failed\n", gd_test_failures);
        return 1;
    }
    fprintf(stderr, "all checks passed\n");
    return 0;
}

size_t gd_test_unhex(uint8_t *out, size_t cap, const char *hex) {
    size_t n = 0;
    if (gd_hex_decode(out, cap, &n, hex, strlen(hex)) != GD_OK) {
        fprintf(stderr, "bad hex in test data: %.40s...: %s\n", hex, gd_error_detail());
        abort();
    }
    return n;
}

int gd_test_hex_eq(const uint8_t *bytes, size_t len, const char *hex) {
    char *got = malloc(2 * len + 1);
    if (got == NULL)
        abort();
    gd_hex_encode(got, bytes, len, false);
    int eq = strcasecmp(got, hex) == 0;
    if (!eq)
        fprintf(stderr, "  got      %s\n  expected %s\n", got, hex);
    free(got);
    return eq;
}

static char gd_tmpdir[512];

static int gd_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    return remove(path);
}

static void gd_tmpdir_cleanup(void) {
    if (gd_tmpdir[0] && getenv("GD_KEEP_TMP") == NULL)
        nftw(gd_tmpdir, gd_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *gd_test_tmpdir(void) {
    if (gd_tmpdir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(gd_tmpdir, sizeof gd_tmpdir, "%s/gd-test-XXXXXX", base ? base : "/tmp");
        if (mkdtemp(gd_tmpdir) == NULL) {
            perror("mkdtemp");
            abort();
        }
        atexit(gd_tmpdir_cleanup);
    }
    return gd_tmpdir;
}

const char *gd_test_path(const char *name) {
    static char paths[8][600];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 600, "%s/%s", gd_test_tmpdir(), name);
    return path;
}

const char *gd_test_write_file(const char *name, const void *data, size_t len, unsigned mode) {
    const char *path = gd_test_path(name);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len || fchmod(fd, (mode_t)mode) != 0) {
        perror(path);
        abort();
    }
    close(fd);
    return path;
}

const char *gd_test_source_dir(void) {
    const char *dir = getenv("GD_SOURCE_DIR");
    return dir ? dir : GD_DEFAULT_SOURCE_DIR;
}
