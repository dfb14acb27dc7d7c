/* Whole-file reads and crash-safe writes, including the private (0600)
 * files that hold keys. */
#ifndef GD_COMMON_FILE_H
#define GD_COMMON_FILE_H

#include <stddef.h>

#include "common/bytes.h"
#include "common/status.h"

/* Reads all of path (a regular file, pipe or "-" for stdin) into out,
 * replacing its contents. Fails with GD_ERR_LIMIT above max_len bytes. */
gd_status gd_file_read(const char *path, size_t max_len, gd_buf *out) GD_MUST_CHECK;

/* Reads a secret file: it must be a regular file with no group or other
 * permission bits (mode 0600 or 0400), else GD_ERR_PERMISSION with the chmod
 * that fixes it. The contents are read into one allocation of exactly the
 * file's size so no stale copy is left behind; free with gd_buf_wipe_free. */
gd_status gd_file_read_private(const char *path, size_t max_len, gd_buf *out) GD_MUST_CHECK;

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

/* Creates directory path and every missing parent, as `mkdir -p` does, with
 * the given mode; an existing directory is fine. GD_ERR_IO names the part
 * that could not be made (a file in the way, no permission). */
gd_status gd_dir_create(const char *path, unsigned mode) GD_MUST_CHECK;

#endif
