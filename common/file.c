/* File helpers. */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/secure.h"

static gd_status gd_read_fd(int fd, const char *path, size_t max_len, size_t size_hint,
                            gd_buf *out) {
    /* One allocation when the size is known, so secrets are never realloc'd. */
    if (size_hint > 0)
        GD_TRY(gd_buf_reserve(out, size_hint + 1));
    for (;;) {
        if (out->len == out->cap)
            GD_TRY(gd_buf_reserve(out, 4096));
        ssize_t n = read(fd, out->data + out->len, out->cap - out->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return gd_fail(GD_ERR_IO, "reading %s: %s", path, strerror(errno));
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        if (out->len > max_len)
            return gd_fail(GD_ERR_LIMIT, "%s is larger than %zu bytes", path, max_len);
    }
    return GD_OK;
}

gd_status gd_file_read(const char *path, size_t max_len, gd_buf *out) {
    out->len = 0;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND : GD_ERR_IO, "cannot open %s: %s",
                       path, strerror(errno));
    struct stat st;
    size_t hint = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > max_len) {
            if (!is_stdin)
                close(fd);
            return gd_fail(GD_ERR_LIMIT, "%s is larger than %zu bytes", path, max_len);
        }
        hint = (size_t)st.st_size;
    }
    gd_status s = gd_read_fd(fd, path, max_len, hint, out);
    if (!is_stdin)
        close(fd);
    return s;
}

gd_status gd_file_read_private(const char *path, size_t max_len, gd_buf *out) {
    out->len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ELOOP)
            return gd_fail(GD_ERR_PERMISSION, "%s is a symbolic link; point at the key file itself",
                           path);
        return gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND : GD_ERR_IO, "cannot open %s: %s",
                       path, strerror(errno));
    }
    struct stat st;
    gd_status s = GD_OK;
    /* fstat on the open descriptor: the checked file is the file we read. */
    if (fstat(fd, &st) != 0) {
        s = gd_fail(GD_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        s = gd_fail(GD_ERR_PERMISSION, "%s is not a regular file", path);
    } else if ((st.st_mode & 077) != 0) {
        s = gd_fail(GD_ERR_PERMISSION,
                    "%s has mode %04o and is open to group or others; run 'chmod 600 %s'", path,
                    (unsigned)(st.st_mode & 07777), path);
    } else if ((uint64_t)st.st_size > max_len) {
        s = gd_fail(GD_ERR_LIMIT, "%s is larger than %zu bytes", path, max_len);
    } else {
        s = gd_read_fd(fd, path, max_len, (size_t)st.st_size, out);
    }
    close(fd);
    return s;
}

static gd_status gd_fsync_parent_dir(const char *path) {
    char *copy = strdup(path);
    if (copy == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (dfd < 0)
        return gd_fail(GD_ERR_IO, "cannot open directory of %s: %s", path, strerror(errno));
    int rc = fsync(dfd);
    close(dfd);
    if (rc != 0)
        return gd_fail(GD_ERR_IO, "fsync of directory of %s failed: %s", path, strerror(errno));
    return GD_OK;
}

/* Writes parts to a fresh temporary file next to path (mode applied after
 * creation, whatever the umask), fsynced and closed. *tmp receives its
 * name (caller frees, and links, renames or unlinks it). */
static gd_status gd_write_temp(const char *path, const gd_bytes_part *parts, size_t n_parts,
                               unsigned mode, char **tmp_out) {
    size_t tmp_len = strlen(path) + sizeof ".tmp-XXXXXX";
    char *tmp = malloc(tmp_len);
    if (tmp == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    snprintf(tmp, tmp_len, "%s.tmp-XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC); /* created with mode 0600 */
    if (fd < 0) {
        gd_status s = gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND : GD_ERR_IO,
                              "cannot create %s: %s", path, strerror(errno));
        free(tmp);
        return s;
    }
    gd_status s = GD_OK;
    if (fchmod(fd, mode) != 0)
        s = gd_fail(GD_ERR_IO, "chmod %o on %s failed: %s", mode, tmp, strerror(errno));
    for (size_t i = 0; s == GD_OK && i < n_parts; i++) {
        const uint8_t *p = parts[i].data;
        size_t left = parts[i].len;
        while (left > 0) {
            ssize_t n = write(fd, p, left > (1u << 30) ? (1u << 30) : left);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                s = gd_fail(GD_ERR_IO, "writing %s: %s", path, n == 0 ? "no progress"
                                                                       : strerror(errno));
                break;
            }
            p += n;
            left -= (size_t)n;
        }
    }
    if (s == GD_OK && fsync(fd) != 0)
        s = gd_fail(GD_ERR_IO, "fsync of %s failed: %s", path, strerror(errno));
    if (close(fd) != 0 && s == GD_OK)
        s = gd_fail(GD_ERR_IO, "closing %s: %s", path, strerror(errno));
    if (s != GD_OK) {
        unlink(tmp);
        free(tmp);
        return s;
    }
    *tmp_out = tmp;
    return GD_OK;
}

gd_status gd_file_create_private(const char *path, const void *data, size_t len) {
    struct stat st;
    if (lstat(path, &st) == 0)
        return gd_fail(GD_ERR_EXISTS, "%s already exists; refusing to overwrite it", path);
    gd_bytes_part part = {data, len};
    char *tmp = NULL;
    GD_TRY(gd_write_temp(path, &part, 1, 0600, &tmp));
    gd_status s = GD_OK;
    /* link() fails if path appeared meanwhile: never overwrite. */
    if (link(tmp, path) != 0)
        s = gd_fail(errno == EEXIST ? GD_ERR_EXISTS : GD_ERR_IO, "cannot create %s: %s", path,
                    strerror(errno));
    unlink(tmp);
    free(tmp);
    if (s == GD_OK)
        s = gd_fsync_parent_dir(path);
    return s;
}

gd_status gd_file_write_atomic(const char *path, const gd_bytes_part *parts, size_t n_parts,
                               unsigned mode) {
    if (path == NULL || path[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "empty file path");
    char *tmp = NULL;
    GD_TRY(gd_write_temp(path, parts, n_parts, mode, &tmp));
    gd_status s = GD_OK;
    if (rename(tmp, path) != 0) {
        s = gd_fail(GD_ERR_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    if (s == GD_OK)
        s = gd_fsync_parent_dir(path);
    return s;
}

/* One level of gd_dir_create: mkdir that accepts an existing directory. */
static gd_status gd_mkdir_one(const char *path, unsigned mode) {
    if (mkdir(path, (mode_t)mode) == 0)
        return GD_OK;
    int err = errno;
    struct stat st;
    if (err == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return GD_OK;
    return gd_fail(GD_ERR_IO, "cannot create directory %s: %s", path,
                   err == EEXIST ? "a file is in the way" : strerror(err));
}

gd_status gd_dir_create(const char *path, unsigned mode) {
    size_t len = path ? strlen(path) : 0;
    if (len == 0)
        return gd_fail(GD_ERR_INVALID, "empty directory path");
    char *copy = strdup(path);
    if (copy == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    /* Each prefix ending before a '/', then the whole path. */
    for (size_t i = 1; s == GD_OK && i <= len; i++) {
        if (copy[i] != '/' && copy[i] != '\0')
            continue;
        char keep = copy[i];
        copy[i] = '\0';
        if (copy[i - 1] != '/')
            s = gd_mkdir_one(copy, mode);
        copy[i] = keep;
    }
    free(copy);
    return s;
}
