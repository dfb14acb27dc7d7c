/* Whole-file reads and crash-safe writes, including the private (0600)
 * files that hold keys. */
#ifndef GD_COMMON_FILE_H
#define GD_COMMON_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/bytes.h"
#include "common/status.h"

/* Opens path for reading if, and only if, it is a regular file: every file
 * the project reads is opened here. The open is non-blocking, so a FIFO
 * (or a device) named by mistake is refused at once instead of waiting for
 * a writer for ever; fstat on the open descriptor then checks the file that
 * will be read. flags adds to O_RDONLY | O_CLOEXEC (O_NOFOLLOW for secrets).
 * On success *fd is in blocking mode (the caller closes it) and *st holds
 * its stat; otherwise GD_ERR_NOT_FOUND, GD_ERR_PERMISSION (no access, or a
 * symbolic link under O_NOFOLLOW) or GD_ERR_IO naming what the path is
 * ("a FIFO, not a regular file"). */
gd_status gd_file_open_regular(const char *path, int flags, int *fd,
                               struct stat *st) GD_MUST_CHECK;

/* Reads all of path (a regular file, or "-" for stdin) into out,
 * replacing its contents. Fails with GD_ERR_LIMIT above max_len bytes. */
gd_status gd_file_read(gd_buf *out, const char *path, size_t max_len) GD_MUST_CHECK;

/* Reads the first len bytes of path (a regular file; all of it when it is
 * shorter) into out, replacing its contents: an HTTP "Range: bytes=0-"
 * answered from a local file. */
gd_status gd_file_read_prefix(gd_buf *out, const char *path, size_t len) GD_MUST_CHECK;

/* Copies the first `prefix` bytes of src (all of it when prefix is 0 or
 * src is shorter) to dst, a window at a time, put in place whole (not
 * fsynced: for a file a crash may lose); *len receives the bytes copied.
 * GD_ERR_LIMIT when that would be more than max_len bytes. */
gd_status gd_file_copy_prefix(const char *dst, const char *src, uint64_t prefix, uint64_t max_len,
                              uint64_t *len) GD_MUST_CHECK;

/* Reads a secret file: it must be a regular file with no group or other
 * permission bits (mode 0600 or 0400), else GD_ERR_PERMISSION with the chmod
 * that fixes it. The contents are read into one allocation of exactly the
 * file's size so no stale copy is left behind; free with gd_buf_wipe_free. */
gd_status gd_file_read_private(gd_buf *out, const char *path, size_t max_len) GD_MUST_CHECK;

/* Whether paths a and b name the same file, existing or not: the same
 * inode if both exist, else the same name in the same directory (reached
 * by any route: "s.key", "./s.key", "dir/../s.key"). Checked before two
 * outputs are written, so one never silently becomes the other. */
bool gd_file_same_path(const char *a, const char *b);

/* Creates path with mode 0600 holding data, atomically and durably: it is
 * written to a temporary file in the same directory, fsynced, then linked
 * into place, so a crash leaves either no file or the whole file. Refuses
 * with GD_ERR_EXISTS if path exists. */
gd_status gd_file_create_private(const char *path, const void *data, size_t len) GD_MUST_CHECK;

/* Writes the concatenation of parts to path with the given mode, replacing
 * any existing file, atomically and durably: a temporary file in the same
 * directory, fsync, rename over path, fsync of the directory. A reader sees
 * the old file or the whole new one; on failure nothing is left behind
 * (GD_ERR_NOT_FOUND if the directory does not exist, else GD_ERR_IO). */
gd_status gd_file_write_atomic(const char *path, const gd_bytes_part *parts, size_t n_parts,
                               unsigned mode) GD_MUST_CHECK;

/* A file written in pieces and put in place as gd_file_write_atomic puts
 * one (a G or a state streamed a window at a time): begin makes the
 * temporary file beside path; appends and gd_file_write_at(f->fd, ...) fill
 * it; commit fsyncs it, renames it over path and fsyncs the directory;
 * abort (also after a failed commit, harmless after a good one) removes
 * it. A killed process leaves only the temporary file ("PATH.tmp-*"). */
typedef struct gd_file_atomic {
    int fd;
    char *path, *tmp;
    uint64_t size; /* bytes appended */
} gd_file_atomic;

gd_status gd_file_atomic_begin(gd_file_atomic *f, const char *path,
                               unsigned mode) GD_MUST_CHECK;
gd_status gd_file_atomic_append(gd_file_atomic *f, const void *data,
                                size_t len) GD_MUST_CHECK;
gd_status gd_file_atomic_commit(gd_file_atomic *f) GD_MUST_CHECK;
/* The same without the fsyncs, for a file a crash may lose (it is fetched
 * again): readers still see it whole or not at all while the host runs. */
gd_status gd_file_atomic_commit_unsynced(gd_file_atomic *f) GD_MUST_CHECK;
void gd_file_atomic_abort(gd_file_atomic *f);

/* Exactly len bytes of fd at byte `at`, short transfers and EINTR retried;
 * GD_ERR_IO naming `what` (a path) when the call fails or the file ends
 * first. */
gd_status gd_file_read_at(int fd, void *data, size_t len, uint64_t at,
                          const char *what) GD_MUST_CHECK;
gd_status gd_file_write_at(int fd, const void *data, size_t len, uint64_t at,
                           const char *what) GD_MUST_CHECK;

/* Creates directory path and every missing parent, as `mkdir -p` does, with
 * the given mode; an existing directory is fine. GD_ERR_IO names the part
 * that could not be made (a file in the way, no permission). */
gd_status gd_dir_create(const char *path, unsigned mode) GD_MUST_CHECK;

#endif
