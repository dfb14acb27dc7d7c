/* The safetensors format (Hugging Face): an 8-byte little-endian header
 * length N, N bytes of JSON, then the tensor bytes. The JSON maps each
 * tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
 * relative to the byte after the header) and may hold "__metadata__", an
 * object of string values.
 *
 * The reader trusts nothing: the header length must fit the file (and at
 * most 100 MB), the JSON must be an object without duplicate keys, every
 * dtype known, every shape's byte size (overflow-checked) equal to its
 * offsets, and the tensors must tile the data region exactly (sorted by
 * offset they start at 0, each begins where the previous ends, the last
 * ends at the end of the file), as Hugging Face's own validation requires.
 * Tensor data is not copied: views point into the caller's bytes or the
 * file mapping. Values are little-endian on disk; this code assumes a
 * little-endian host (checked at compile time). */
#ifndef GD_TRAINER_SAFETENSORS_H
#define GD_TRAINER_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_ST_MAX_DIMS 8
#define GD_ST_MAX_HEADER (100u << 20)
#define GD_ST_NAME_MAX 256

typedef enum gd_st_dtype {
    GD_ST_BOOL, GD_ST_U8, GD_ST_I8, GD_ST_I16, GD_ST_U16, GD_ST_F16, GD_ST_BF16,
    GD_ST_I32, GD_ST_U32, GD_ST_F32, GD_ST_I64, GD_ST_U64, GD_ST_F64,
} gd_st_dtype;

/* "F32", ... and bytes per element. */
const char *gd_st_dtype_name(gd_st_dtype dtype);
size_t gd_st_dtype_size(gd_st_dtype dtype);

typedef struct gd_st_tensor {
    char name[GD_ST_NAME_MAX];
    gd_st_dtype dtype;
    size_t ndim;
    uint64_t shape[GD_ST_MAX_DIMS];
    uint64_t numel;
    const uint8_t *data; /* into the file's bytes */
    uint64_t nbytes;
} gd_st_tensor;

typedef struct gd_st_meta {
    char *key;
    char *value;
} gd_st_meta;

typedef struct gd_safetensors {
    gd_st_tensor *tensors; /* in file order of their data */
    size_t n_tensors;
    gd_st_meta *meta;
    size_t n_meta;
    void *mapping; /* set by gd_safetensors_open */
    size_t mapping_len;
} gd_safetensors;

/* Parses and validates bytes (which must outlive the result). */
gd_status gd_safetensors_parse(gd_safetensors *out, const uint8_t *bytes,
                               size_t len) GD_MUST_CHECK;
/* Maps a file read-only and parses it. */
gd_status gd_safetensors_open(gd_safetensors *out, const char *path) GD_MUST_CHECK;
void gd_safetensors_free(gd_safetensors *st);

const gd_st_tensor *gd_safetensors_find(const gd_safetensors *st, const char *name);
/* A metadata value, or NULL. */
const char *gd_safetensors_meta(const gd_safetensors *st, const char *key);

/* One tensor to write: data holds numel * dtype size bytes, little-endian. */
typedef struct gd_st_write_tensor {
    const char *name;
    gd_st_dtype dtype;
    size_t ndim;
    uint64_t shape[GD_ST_MAX_DIMS];
    const void *data;
} gd_st_write_tensor;

/* Writes tensors in the given order (data laid out in that order, header
 * padded with spaces so the data starts 8-byte aligned) with the metadata
 * pairs, atomically: a temporary file in the same directory, fsync, rename,
 * fsync of the directory. Names must be unique, non-empty, not
 * "__metadata__". */
gd_status gd_safetensors_write(const char *path, const gd_st_write_tensor *tensors,
                               size_t n_tensors, const gd_st_meta *meta,
                               size_t n_meta) GD_MUST_CHECK;

/* Where a tensor's bytes come from when they are not in memory: bytes
 * [at, at + len) of tensor `tensor`'s data (len at most 4 MiB). */
typedef struct gd_st_source {
    gd_status (*read)(void *ctx, void *out, size_t tensor, uint64_t at, size_t len);
    void *ctx;
} gd_st_source;

/* gd_safetensors_write with every tensor's bytes read from source a piece
 * at a time (the tensors' data pointers are not used), so a model larger
 * than memory is written without being whole in it. */
gd_status gd_safetensors_write_from(const char *path, const gd_st_write_tensor *tensors,
                                    size_t n_tensors, const gd_st_meta *meta, size_t n_meta,
                                    const gd_st_source *source) GD_MUST_CHECK;

#endif
