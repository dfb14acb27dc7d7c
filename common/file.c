/* File helpers. */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/secure.h"

static gd_status gd_read_fd(gd_buf *out, int fd, const char *path, size_t max_len,
                            size_t size_hint) {
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

/* What a path is when it is not a regular file, for the message. */
static const char *gd_file_kind(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return "a special file";
}

gd_status gd_file_open_regular(const char *path, int flags, int *fd_out, struct stat *st) {
    *fd_out = -1;
    /* O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer,
     * which may never come. It changes nothing for a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
    if (fd < 0) {
        if (errno == ELOOP && (flags & O_NOFOLLOW))
            return gd_fail(GD_ERR_PERMISSION, "%s is a symbolic link; name the file itself",
                           path);
        return gd_fail(errno == ENOENT   ? GD_ERR_NOT_FOUND
                       : errno == EACCES ? GD_ERR_PERMISSION
                                         : GD_ERR_IO,
                       "cannot open %s: %s", path, strerror(errno));
    }
    gd_status s = GD_OK;
    int fl;
    if (fstat(fd, st) != 0)
        s = gd_fail(GD_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    else if (!S_ISREG(st->st_mode))
        s = gd_fail(GD_ERR_IO, "%s is %s, not a regular file", path, gd_file_kind(st->st_mode));
    else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        s = gd_fail(GD_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (s != GD_OK) {
        close(fd);
        return s;
    }
    *fd_out = fd;
    return GD_OK;
}

gd_status gd_file_read(gd_buf *out, const char *path, size_t max_len) {
    out->len = 0;
    if (strcmp(path, "-") == 0)
        return gd_read_fd(out, STDIN_FILENO, "standard input", max_len, 0);
    int fd;
    struct stat st;
    GD_TRY(gd_file_open_regular(path, 0, &fd, &st));
    gd_status s = (uint64_t)st.st_size > max_len
                      ? gd_fail(GD_ERR_LIMIT, "%s is larger than %zu bytes", path, max_len)
                      : gd_read_fd(out, fd, path, max_len, (size_t)st.st_size);
    close(fd);
    return s;
}

gd_status gd_file_read_prefix(gd_buf *out, const char *path, size_t len) {
    out->len = 0;
    int fd;
    struct stat st;
    GD_TRY(gd_file_open_regular(path, 0, &fd, &st));
    size_t want = (uint64_t)st.st_size < len ? (size_t)st.st_size : len;
    gd_status s = gd_buf_reserve(out, want);
    while (s == GD_OK && out->len < want) {
        ssize_t n = read(fd, out->data + out->len, want - out->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            s = gd_fail(GD_ERR_IO, "reading %s: %s", path, strerror(errno));
        else if (n == 0)
            break; /* shortened since the stat: what is there */
        else
            out->len += (size_t)n;
    }
    close(fd);
    return s;
}

gd_status gd_file_copy_prefix(const char *dst, const char *src, uint64_t prefix, uint64_t max_len,
                              uint64_t *len) {
    *len = 0;
    int fd;
    struct stat st;
    GD_TRY(gd_file_open_regular(src, 0, &fd, &st));
    uint64_t want = prefix > 0 && prefix < (uint64_t)st.st_size ? prefix : (uint64_t)st.st_size;
    if (want > max_len) {
        close(fd);
        return gd_fail(GD_ERR_LIMIT, "%s: %llu bytes, over %llu", src, (unsigned long long)want,
                       (unsigned long long)max_len);
    }
    const size_t window = (size_t)8 << 20;
    uint8_t *buf = malloc(window);
    gd_file_atomic f;
    gd_status s = buf ? gd_file_atomic_begin(&f, dst, 0600)
                      : gd_fail(GD_ERR_NOMEM, "out of memory copying %s", src);
    bool begun = s == GD_OK;
    if (s == GD_ERR_NOT_FOUND) /* dst's directory: the copier's failure, not src's */
        s = gd_fail_context(GD_ERR_IO, "copying %s", src);
    for (uint64_t at = 0; s == GD_OK && at < want;) {
        size_t take = want - at < window ? (size_t)(want - at) : window;
        s = gd_file_read_at(fd, buf, take, at, src);
        if (s == GD_OK)
            s = gd_file_atomic_append(&f, buf, take);
        at += take;
    }
    if (s == GD_OK)
        s = gd_file_atomic_commit_unsynced(&f);
    if (begun)
        gd_file_atomic_abort(&f);
    if (s == GD_OK)
        *len = want;
    free(buf);
    close(fd);
    return s;
}

gd_status gd_file_read_private(gd_buf *out, const char *path, size_t max_len) {
    out->len = 0;
    int fd;
    struct stat st;
    /* No final symbolic link, and the checks are on the file we read. */
    GD_TRY(gd_file_open_regular(path, O_NOFOLLOW, &fd, &st));
    gd_status s = GD_OK;
    if ((st.st_mode & 077) != 0) {
        s = gd_fail(GD_ERR_PERMISSION,
                    "%s has mode %04o and is open to group or others; run 'chmod 600 %s'", path,
                    (unsigned)(st.st_mode & 07777), path);
    } else if ((uint64_t)st.st_size > max_len) {
        s = gd_fail(GD_ERR_LIMIT, "%s is larger than %zu bytes", path, max_len);
    } else {
        s = gd_read_fd(out, fd, path, max_len, (size_t)st.st_size);
    }
    close(fd);
    return s;
}

/* The directory of path and its last component, stat'd. False when the
 * directory cannot be reached. */
static bool gd_split_path(const char *path, struct stat *dir, char *base, size_t cap) {
    char *copy = strdup(path);
    bool ok = copy != NULL && stat(dirname(copy), dir) == 0;
    free(copy);
    copy = ok ? strdup(path) : NULL;
    ok = copy != NULL && snprintf(base, cap, "%s", basename(copy)) < (int)cap;
    free(copy);
    return ok;
}

bool gd_file_same_path(const char *a, const char *b) {
    if (strcmp(a, b) == 0)
        return true;
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char base_a[PATH_MAX], base_b[PATH_MAX];
    if (!gd_split_path(a, &sa, base_a, sizeof base_a) ||
        !gd_split_path(b, &sb, base_b, sizeof base_b))
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(base_a, base_b) == 0;
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

gd_status gd_file_atomic_begin(gd_file_atomic *f, const char *path, unsigned mode) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (path == NULL || path[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "empty file path");
    size_t tmp_len = strlen(path) + sizeof ".tmp-XXXXXX";
    f->path = strdup(path);
    f->tmp = malloc(tmp_len);
    if (f->path == NULL || f->tmp == NULL) {
        gd_file_atomic_abort(f);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    snprintf(f->tmp, tmp_len, "%s.tmp-XXXXXX", path);
    f->fd = mkostemp(f->tmp, O_CLOEXEC); /* created with mode 0600 */
    if (f->fd < 0) {
        gd_status s = gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND : GD_ERR_IO,
                              "cannot create %s: %s", path, strerror(errno));
        free(f->tmp); /* nothing was made: keep abort from unlinking a pattern */
        f->tmp = NULL;
        gd_file_atomic_abort(f);
        return s;
    }
    if (fchmod(f->fd, mode) != 0) {
        gd_status s = gd_fail(GD_ERR_IO, "chmod %o on %s failed: %s", mode, f->tmp,
                              strerror(errno));
        gd_file_atomic_abort(f);
        return s;
    }
    return GD_OK;
}

gd_status gd_file_atomic_append(gd_file_atomic *f, const void *data, size_t len) {
    GD_TRY(gd_file_write_at(f->fd, data, len, f->size, f->path));
    f->size += len;
    return GD_OK;
}

/* fsync and close of the temporary file: after this it only moves. */
static gd_status gd_file_atomic_seal(gd_file_atomic *f) {
    gd_status s = GD_OK;
    if (fsync(f->fd) != 0)
        s = gd_fail(GD_ERR_IO, "fsync of %s failed: %s", f->path, strerror(errno));
    if (close(f->fd) != 0 && s == GD_OK)
        s = gd_fail(GD_ERR_IO, "closing %s: %s", f->path, strerror(errno));
    f->fd = -1;
    return s;
}

gd_status gd_file_atomic_commit(gd_file_atomic *f) {
    gd_status s = gd_file_atomic_seal(f);
    if (s == GD_OK && rename(f->tmp, f->path) != 0)
        s = gd_fail(GD_ERR_IO, "cannot rename %s to %s: %s", f->tmp, f->path, strerror(errno));
    if (s == GD_OK) {
        free(f->tmp); /* in place: nothing for abort to remove */
        f->tmp = NULL;
        s = gd_fsync_parent_dir(f->path);
    }
    gd_file_atomic_abort(f);
    return s;
}

gd_status gd_file_atomic_commit_unsynced(gd_file_atomic *f) {
    gd_status s = GD_OK;
    if (close(f->fd) != 0)
        s = gd_fail(GD_ERR_IO, "closing %s: %s", f->path, strerror(errno));
    f->fd = -1;
    if (s == GD_OK && rename(f->tmp, f->path) != 0)
        s = gd_fail(GD_ERR_IO, "cannot rename %s to %s: %s", f->tmp, f->path, strerror(errno));
    if (s == GD_OK) {
        free(f->tmp);
        f->tmp = NULL;
    }
    gd_file_atomic_abort(f);
    return s;
}

void gd_file_atomic_abort(gd_file_atomic *f) {
    if (f->fd >= 0)
        close(f->fd);
    if (f->tmp != NULL)
        unlink(f->tmp);
    free(f->tmp);
    free(f->path);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

/* Writes parts to a fresh temporary file next to path (mode applied after
 * creation, whatever the umask), fsynced and closed. *tmp receives its
 * name (caller frees, and links, renames or unlinks it). */
static gd_status gd_write_temp(const char *path, const gd_bytes_part *parts, size_t n_parts,
                               unsigned mode, char **tmp_out) {
    gd_file_atomic f;
    GD_TRY(gd_file_atomic_begin(&f, path, mode));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < n_parts; i++)
        s = gd_file_atomic_append(&f, parts[i].data, parts[i].len);
    if (s == GD_OK)
        s = gd_file_atomic_seal(&f);
    if (s != GD_OK) {
        gd_file_atomic_abort(&f);
        return s;
    }
    *tmp_out = f.tmp;
    f.tmp = NULL;
    gd_file_atomic_abort(&f);
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

gd_status gd_file_read_at(int fd, void *data, size_t len, uint64_t at, const char *what) {
    uint8_t *p = data;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return gd_fail(GD_ERR_IO, "reading %s: %s", what, strerror(errno));
        if (n == 0)
            return gd_fail(GD_ERR_IO, "%s ends at byte %llu, before the %zu bytes read there",
                           what, (unsigned long long)at, len);
        p += n;
        len -= (size_t)n;
        at += (uint64_t)n;
    }
    return GD_OK;
}

gd_status gd_file_write_at(int fd, const void *data, size_t len, uint64_t at, const char *what) {
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return gd_fail(GD_ERR_IO, "writing %s: %s", what,
                           n < 0 ? strerror(errno) : "no progress");
        p += n;
        len -= (size_t)n;
        at += (uint64_t)n;
    }
    return GD_OK;
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
