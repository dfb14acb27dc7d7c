/* Safetensors reader and writer: validates every header field before any
 * tensor view is handed out, and writes files atomically (temp file, fsync,
 * rename, directory fsync) so a crash never leaves a half-written
 * checkpoint under the final name. */
#include "trainer/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"

/* Tensor bytes are handed out in place (no copy, no byte swap), so the host
 * must read little-endian values the way they are stored. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "safetensors data is little-endian and is used in place: little-endian host only");

static const struct {
    const char *name;
    size_t size;
} gd_st_dtypes[] = {
    [GD_ST_BOOL] = {"BOOL", 1}, [GD_ST_U8] = {"U8", 1},     [GD_ST_I8] = {"I8", 1},
    [GD_ST_I16] = {"I16", 2},   [GD_ST_U16] = {"U16", 2},   [GD_ST_F16] = {"F16", 2},
    [GD_ST_BF16] = {"BF16", 2}, [GD_ST_I32] = {"I32", 4},   [GD_ST_U32] = {"U32", 4},
    [GD_ST_F32] = {"F32", 4},   [GD_ST_I64] = {"I64", 8},   [GD_ST_U64] = {"U64", 8},
    [GD_ST_F64] = {"F64", 8},
};
#define GD_ST_N_DTYPES (sizeof gd_st_dtypes / sizeof gd_st_dtypes[0])

static const char gd_st_meta_key[] = "__metadata__";

const char *gd_st_dtype_name(gd_st_dtype dtype) {
    if ((unsigned)dtype >= GD_ST_N_DTYPES)
        return "?";
    return gd_st_dtypes[dtype].name;
}

size_t gd_st_dtype_size(gd_st_dtype dtype) {
    if ((unsigned)dtype >= GD_ST_N_DTYPES)
        return 0;
    return gd_st_dtypes[dtype].size;
}

/* Hugging Face dtypes that are valid in the format but that nothing here
 * computes with; named separately so the message says "unsupported" rather
 * than "unknown". */
static bool gd_st_dtype_known_unsupported(const char *name) {
    static const char *const names[] = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                        "F6_E3M2", "F4",      "C64"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

static const char *gd_st_json_type(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "an unknown JSON value";
}

/* "[2, 3]" for messages; long enough for GD_ST_MAX_DIMS 20-digit dims. */
#define GD_ST_SHAPE_TEXT 256
static void gd_st_format_shape(char *buf, const uint64_t *shape, size_t ndim) {
    size_t at = 0;
    buf[at++] = '[';
    for (size_t i = 0; i < ndim && i < GD_ST_MAX_DIMS; i++)
        at += (size_t)snprintf(buf + at, GD_ST_SHAPE_TEXT - at, "%s%" PRIu64, i ? ", " : "",
                               shape[i]);
    snprintf(buf + at, GD_ST_SHAPE_TEXT - at, "]");
}

/* numel and byte size of a shape, or false on overflow of 64 bits. */
static bool gd_st_sizes(const uint64_t *shape, size_t ndim, gd_st_dtype dtype, uint64_t *numel,
                        uint64_t *nbytes) {
    uint64_t n = 1;
    for (size_t i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n))
            return false;
    *numel = n;
    return !__builtin_mul_overflow(n, (uint64_t)gd_st_dtype_size(dtype), nbytes);
}

/* ---- reader ---- */

static gd_status gd_st_parse_meta(gd_safetensors *out, json_t *obj) {
    if (!json_is_object(obj))
        return gd_fail(GD_ERR_PARSE, "\"__metadata__\" is %s, not an object of strings",
                       gd_st_json_type(obj));
    size_t n = json_object_size(obj);
    if (n == 0)
        return GD_OK;
    out->meta = calloc(n, sizeof *out->meta);
    if (out->meta == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu metadata entries", n);
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        if (!json_is_string(value))
            return gd_fail(GD_ERR_PARSE, "\"__metadata__\" value for '%s' is %s, not a string",
                           key, gd_st_json_type(value));
        gd_st_meta *m = &out->meta[out->n_meta];
        m->key = strdup(key);
        m->value = strdup(json_string_value(value));
        out->n_meta++; /* counted before the check so free() releases a half-made pair */
        if (m->key == NULL || m->value == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for metadata");
    }
    return GD_OK;
}

/* A non-negative JSON integer, or false. */
static bool gd_st_json_u64(uint64_t *out, const json_t *v) {
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static gd_status gd_st_parse_tensor(gd_st_tensor *t, const char *name, json_t *info,
                                    const uint8_t *data, uint64_t data_len) {
    size_t name_len = strlen(name);
    if (name_len == 0)
        return gd_fail(GD_ERR_PARSE, "a tensor has an empty name");
    if (name_len >= GD_ST_NAME_MAX)
        return gd_fail(GD_ERR_PARSE, "tensor '%.64s...': name of %zu bytes is longer than %d",
                       name, name_len, GD_ST_NAME_MAX - 1);
    memcpy(t->name, name, name_len + 1);
    if (!json_is_object(info))
        return gd_fail(GD_ERR_PARSE,
                       "tensor '%s': is %s, not an object with dtype, shape and data_offsets",
                       name, gd_st_json_type(info));
    const char *key;
    json_t *value;
    json_object_foreach(info, key, value) {
        if (strcmp(key, "dtype") != 0 && strcmp(key, "shape") != 0 &&
            strcmp(key, "data_offsets") != 0)
            return gd_fail(GD_ERR_PARSE, "tensor '%s': unexpected key '%s'", name, key);
    }
    json_t *dtype = json_object_get(info, "dtype");
    json_t *shape = json_object_get(info, "shape");
    json_t *offsets = json_object_get(info, "data_offsets");
    if (dtype == NULL || shape == NULL || offsets == NULL)
        return gd_fail(GD_ERR_PARSE, "tensor '%s': missing \"%s\"", name,
                       dtype == NULL ? "dtype" : shape == NULL ? "shape" : "data_offsets");

    if (!json_is_string(dtype))
        return gd_fail(GD_ERR_PARSE, "tensor '%s': dtype is %s, not a string", name,
                       gd_st_json_type(dtype));
    const char *dname = json_string_value(dtype);
    size_t d = 0;
    while (d < GD_ST_N_DTYPES && strcmp(dname, gd_st_dtypes[d].name) != 0)
        d++;
    if (d == GD_ST_N_DTYPES) {
        if (gd_st_dtype_known_unsupported(dname))
            return gd_fail(GD_ERR_PARSE, "tensor '%s': dtype %s is not supported", name, dname);
        return gd_fail(GD_ERR_PARSE,
                       "tensor '%s': unknown dtype '%.32s' (expected one of BOOL U8 I8 I16 U16 "
                       "F16 BF16 I32 U32 F32 I64 U64 F64)",
                       name, dname);
    }
    t->dtype = (gd_st_dtype)d;

    if (!json_is_array(shape))
        return gd_fail(GD_ERR_PARSE, "tensor '%s': shape is %s, not an array", name,
                       gd_st_json_type(shape));
    t->ndim = json_array_size(shape);
    if (t->ndim > GD_ST_MAX_DIMS)
        return gd_fail(GD_ERR_PARSE, "tensor '%s': shape has %zu dimensions, at most %d allowed",
                       name, t->ndim, GD_ST_MAX_DIMS);
    for (size_t i = 0; i < t->ndim; i++) {
        json_t *dim = json_array_get(shape, i);
        if (json_is_integer(dim) && json_integer_value(dim) < 0)
            return gd_fail(GD_ERR_PARSE, "tensor '%s': shape entry %zu is negative (%lld)", name,
                           i, (long long)json_integer_value(dim));
        if (!gd_st_json_u64(&t->shape[i], dim))
            return gd_fail(GD_ERR_PARSE, "tensor '%s': shape entry %zu is %s, not an integer",
                           name, i, gd_st_json_type(dim));
    }
    char shape_text[GD_ST_SHAPE_TEXT];
    gd_st_format_shape(shape_text, t->shape, t->ndim);
    if (!gd_st_sizes(t->shape, t->ndim, t->dtype, &t->numel, &t->nbytes))
        return gd_fail(GD_ERR_PARSE, "tensor '%s': shape %s of %s overflows 64 bits of bytes",
                       name, shape_text, dname);

    uint64_t begin, end;
    if (!json_is_array(offsets) || json_array_size(offsets) != 2 ||
        !gd_st_json_u64(&begin, json_array_get(offsets, 0)) ||
        !gd_st_json_u64(&end, json_array_get(offsets, 1)))
        return gd_fail(GD_ERR_PARSE,
                       "tensor '%s': data_offsets must be [begin, end] of non-negative integers",
                       name);
    if (begin > end)
        return gd_fail(GD_ERR_PARSE, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                                     "] begin after they end",
                       name, begin, end);
    if (end > data_len)
        return gd_fail(GD_ERR_PARSE, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                                     "] run past the %" PRIu64 " bytes of data",
                       name, begin, end, data_len);
    if (end - begin != t->nbytes)
        return gd_fail(GD_ERR_PARSE, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                                     "] hold %" PRIu64 " bytes but shape %s of %s needs %" PRIu64,
                       name, begin, end, end - begin, shape_text, dname, t->nbytes);
    t->data = data + begin;
    return GD_OK;
}

/* By data position; zero-size tensors at one position by size, then name, so
 * the order is deterministic. */
static int gd_st_cmp_offset(const void *pa, const void *pb) {
    const gd_st_tensor *a = pa, *b = pb;
    if (a->data != b->data)
        return a->data < b->data ? -1 : 1;
    if (a->nbytes != b->nbytes)
        return a->nbytes < b->nbytes ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Sorted by offset, every tensor must start where the previous one ended and
 * the last must end at the end of the data, as Hugging Face requires: no
 * hidden bytes, no aliasing. */
static gd_status gd_st_check_tiling(const gd_safetensors *st, const uint8_t *data,
                                    uint64_t data_len) {
    uint64_t at = 0;
    const char *prev = NULL;
    for (size_t i = 0; i < st->n_tensors; i++) {
        const gd_st_tensor *t = &st->tensors[i];
        uint64_t begin = (uint64_t)(t->data - data);
        if (begin > at)
            return gd_fail(GD_ERR_PARSE,
                           "data bytes [%" PRIu64 ", %" PRIu64 ") belong to no tensor (gap "
                           "before tensor '%s')",
                           at, begin, t->name);
        if (begin < at)
            return gd_fail(GD_ERR_PARSE,
                           "tensor '%s' at [%" PRIu64 ", %" PRIu64 "] overlaps tensor '%s', "
                           "which ends at %" PRIu64,
                           t->name, begin, begin + t->nbytes, prev, at);
        at = begin + t->nbytes;
        prev = t->name;
    }
    if (at != data_len)
        return gd_fail(GD_ERR_PARSE,
                       "the tensors cover %" PRIu64 " bytes but the data region holds %" PRIu64
                       " (trailing bytes after the last tensor)",
                       at, data_len);
    return GD_OK;
}

gd_status gd_safetensors_parse(gd_safetensors *out, const uint8_t *bytes, size_t len) {
    memset(out, 0, sizeof *out);
    if (bytes == NULL && len > 0)
        return gd_fail(GD_ERR_INVALID, "safetensors bytes are NULL");
    if (len < 8)
        return gd_fail(GD_ERR_PARSE,
                       "%zu bytes are too short for a safetensors file (8-byte header length)",
                       len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | bytes[i];
    if (n < 2)
        return gd_fail(GD_ERR_PARSE, "header length %" PRIu64 " is too small for a JSON object",
                       n);
    if (n > GD_ST_MAX_HEADER)
        return gd_fail(GD_ERR_PARSE, "header length %" PRIu64 " exceeds the limit of %u bytes", n,
                       GD_ST_MAX_HEADER);
    if (n > len - 8)
        return gd_fail(GD_ERR_PARSE,
                       "header length %" PRIu64 " runs past the end of the %zu-byte file", n,
                       len);
    const char *header = (const char *)bytes + 8;
    /* jansson would stop at a NUL in some paths; the format has none. */
    if (memchr(header, 0, (size_t)n) != NULL)
        return gd_fail(GD_ERR_PARSE, "header contains a NUL byte");
    const uint8_t *data = bytes + 8 + n;
    uint64_t data_len = len - 8 - n;

    json_error_t jerr;
    /* Trailing whitespace (Hugging Face pads with spaces) passes the EOF check. */
    json_t *root = json_loadb(header, (size_t)n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (root == NULL)
        return gd_fail(GD_ERR_PARSE, "header is not valid JSON: %s (line %d, column %d)",
                       jerr.text, jerr.line, jerr.column);
    gd_status s = GD_OK;
    if (!json_is_object(root)) {
        s = gd_fail(GD_ERR_PARSE, "header is %s, not a JSON object", gd_st_json_type(root));
        goto done;
    }
    json_t *meta = json_object_get(root, gd_st_meta_key);
    size_t count = json_object_size(root) - (meta != NULL);
    if (count > 0) {
        out->tensors = calloc(count, sizeof *out->tensors);
        if (out->tensors == NULL) {
            s = gd_fail(GD_ERR_NOMEM, "out of memory for %zu tensors", count);
            goto done;
        }
    }
    if (meta != NULL && (s = gd_st_parse_meta(out, meta)) != GD_OK)
        goto done;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (value == meta)
            continue;
        s = gd_st_parse_tensor(&out->tensors[out->n_tensors], key, value, data, data_len);
        if (s != GD_OK)
            goto done;
        out->n_tensors++;
    }
    if (out->n_tensors > 1)
        qsort(out->tensors, out->n_tensors, sizeof *out->tensors, gd_st_cmp_offset);
    s = gd_st_check_tiling(out, data, data_len);
done:
    json_decref(root);
    if (s != GD_OK)
        gd_safetensors_free(out);
    return s;
}

gd_status gd_safetensors_open(gd_safetensors *out, const char *path) {
    memset(out, 0, sizeof *out);
    int fd;
    struct stat st;
    GD_TRY(gd_file_open_regular(path, 0, &fd, &st));
    if (st.st_size == 0) {
        close(fd);
        return gd_fail(GD_ERR_PARSE, "%s is empty, not a safetensors file", path);
    }
    if ((uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return gd_fail(GD_ERR_IO, "%s is too large to map", path);
    }
    size_t len = (size_t)st.st_size;
    /* Private read-only mapping: the pages stay valid after close. Our writer
     * replaces files by rename, never in place, so a mapped file is not
     * truncated under us by this program. */
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED)
        return gd_fail(GD_ERR_IO, "cannot map %s: %s", path, strerror(map_errno));
    gd_status s = gd_safetensors_parse(out, map, len);
    if (s != GD_OK) {
        munmap(map, len);
        return gd_fail_context(s, "%s", path);
    }
    out->mapping = map;
    out->mapping_len = len;
    return GD_OK;
}

void gd_safetensors_free(gd_safetensors *st) {
    if (st == NULL)
        return;
    free(st->tensors);
    for (size_t i = 0; i < st->n_meta; i++) {
        free(st->meta[i].key);
        free(st->meta[i].value);
    }
    free(st->meta);
    if (st->mapping != NULL)
        munmap(st->mapping, st->mapping_len);
    memset(st, 0, sizeof *st);
}

const gd_st_tensor *gd_safetensors_find(const gd_safetensors *st, const char *name) {
    for (size_t i = 0; i < st->n_tensors; i++)
        if (strcmp(st->tensors[i].name, name) == 0)
            return &st->tensors[i];
    return NULL;
}

const char *gd_safetensors_meta(const gd_safetensors *st, const char *key) {
    for (size_t i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta[i].key, key) == 0)
            return st->meta[i].value;
    return NULL;
}

/* ---- writer ---- */

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF), the
 * rule jansson applies, so a failing json_string() afterwards means memory. */
static bool gd_st_utf8_valid(const char *s) {
    const uint8_t *p = (const uint8_t *)s;
    while (*p != 0) {
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t more;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            more = 1;
            cp = c & 0x1F;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            more = 2;
            cp = c & 0x0F;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            more = 3;
            cp = c & 0x07;
            min = 0x10000;
        } else {
            return false;
        }
        /* Stops at the first non-continuation byte, the terminator included. */
        for (size_t i = 1; i <= more; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        p += more + 1;
    }
    return true;
}

static gd_status gd_st_set(json_t *obj, const char *key, json_t *value) {
    /* json_object_set_new consumes value even when it fails. */
    if (value == NULL || json_object_set_new(obj, key, value) != 0)
        return gd_fail(GD_ERR_NOMEM, "out of memory building the safetensors header");
    return GD_OK;
}

static gd_status gd_st_build_meta(json_t *root, const gd_st_meta *meta, size_t n_meta) {
    json_t *obj = json_object();
    GD_TRY(gd_st_set(root, gd_st_meta_key, obj));
    for (size_t i = 0; i < n_meta; i++) {
        const char *k = meta[i].key, *v = meta[i].value;
        if (k == NULL || v == NULL)
            return gd_fail(GD_ERR_INVALID, "metadata entry %zu has a NULL key or value", i);
        if (!gd_st_utf8_valid(k) || !gd_st_utf8_valid(v))
            return gd_fail(GD_ERR_INVALID, "metadata entry '%.64s' is not valid UTF-8", k);
        if (json_object_get(obj, k) != NULL)
            return gd_fail(GD_ERR_INVALID, "metadata key '%s' is given twice", k);
        GD_TRY(gd_st_set(obj, k, json_string(v)));
    }
    return GD_OK;
}

static gd_status gd_st_build_tensor(json_t *root, const gd_st_write_tensor *t, uint64_t *offset,
                                   bool sourced) {
    const char *name = t->name;
    if (name == NULL || name[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "a tensor to write has an empty name");
    if (strlen(name) >= GD_ST_NAME_MAX)
        return gd_fail(GD_ERR_INVALID, "tensor '%.64s...': name longer than %d bytes", name,
                       GD_ST_NAME_MAX - 1);
    if (strcmp(name, gd_st_meta_key) == 0)
        return gd_fail(GD_ERR_INVALID, "\"__metadata__\" is reserved and cannot name a tensor");
    if (!gd_st_utf8_valid(name))
        return gd_fail(GD_ERR_INVALID, "tensor name '%s' is not valid UTF-8", name);
    if (json_object_get(root, name) != NULL)
        return gd_fail(GD_ERR_INVALID, "tensor name '%s' is given twice", name);
    if ((unsigned)t->dtype >= GD_ST_N_DTYPES)
        return gd_fail(GD_ERR_INVALID, "tensor '%s': invalid dtype %d", name, (int)t->dtype);
    if (t->ndim > GD_ST_MAX_DIMS)
        return gd_fail(GD_ERR_INVALID, "tensor '%s': %zu dimensions, at most %d allowed", name,
                       t->ndim, GD_ST_MAX_DIMS);
    uint64_t numel, nbytes, end;
    if (!gd_st_sizes(t->shape, t->ndim, t->dtype, &numel, &nbytes) ||
        __builtin_add_overflow(*offset, nbytes, &end) || end > (uint64_t)INT64_MAX)
        return gd_fail(GD_ERR_INVALID, "tensor '%s': byte size overflows", name);
    if (nbytes > 0 && t->data == NULL && !sourced)
        return gd_fail(GD_ERR_INVALID, "tensor '%s': data is NULL", name);

    json_t *info = json_object();
    GD_TRY(gd_st_set(root, name, info));
    /* Key order as Hugging Face writes it: dtype, shape, data_offsets. */
    GD_TRY(gd_st_set(info, "dtype", json_string(gd_st_dtypes[t->dtype].name)));
    json_t *shape = json_array();
    GD_TRY(gd_st_set(info, "shape", shape));
    for (size_t i = 0; i < t->ndim; i++) {
        /* Every dim is <= the overflow-checked byte size, hence <= INT64_MAX,
         * unless numel is 0; a zero-size tensor with a huge dim is refused. */
        if (t->shape[i] > (uint64_t)INT64_MAX)
            return gd_fail(GD_ERR_INVALID, "tensor '%s': dimension %zu is too large", name, i);
        if (json_array_append_new(shape, json_integer((json_int_t)t->shape[i])) != 0)
            return gd_fail(GD_ERR_NOMEM, "out of memory building the safetensors header");
    }
    json_t *offsets = json_array();
    GD_TRY(gd_st_set(info, "data_offsets", offsets));
    if (json_array_append_new(offsets, json_integer((json_int_t)*offset)) != 0 ||
        json_array_append_new(offsets, json_integer((json_int_t)end)) != 0)
        return gd_fail(GD_ERR_NOMEM, "out of memory building the safetensors header");
    *offset = end;
    return GD_OK;
}

/* The 8-byte length and the space-padded header text, in one buffer. */
static gd_status gd_st_build_header(uint8_t **out, size_t *out_len,
                                    const gd_st_write_tensor *tensors, size_t n_tensors,
                                    const gd_st_meta *meta, size_t n_meta, bool sourced) {
    json_t *root = json_object();
    if (root == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory building the safetensors header");
    gd_status s = GD_OK;
    if (n_meta > 0)
        s = gd_st_build_meta(root, meta, n_meta);
    uint64_t offset = 0;
    for (size_t i = 0; s == GD_OK && i < n_tensors; i++)
        s = gd_st_build_tensor(root, &tensors[i], &offset, sourced);
    char *text = NULL;
    if (s == GD_OK) {
        /* Insertion order is kept by jansson >= 2.8: "__metadata__" first,
         * then the tensors in data order. */
        text = json_dumps(root, JSON_COMPACT);
        if (text == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory formatting the safetensors header");
    }
    json_decref(root);
    if (s != GD_OK)
        return s;
    size_t len = strlen(text);
    size_t padded = (len + 7) & ~(size_t)7; /* 8 + padded is then a multiple of 8 */
    if (padded > GD_ST_MAX_HEADER) {
        free(text);
        return gd_fail(GD_ERR_LIMIT, "safetensors header of %zu bytes exceeds the limit of %u",
                       padded, GD_ST_MAX_HEADER);
    }
    uint8_t *buf = malloc(8 + padded);
    if (buf == NULL) {
        free(text);
        return gd_fail(GD_ERR_NOMEM, "out of memory for the safetensors header");
    }
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    memcpy(buf + 8, text, len);
    memset(buf + 8 + len, ' ', padded - len);
    free(text);
    *out = buf;
    *out_len = 8 + padded;
    return GD_OK;
}

/* The header, then every tensor's bytes from source a piece at a time, to
 * a temporary file put in place whole (sourced: tensors' data may be
 * NULL, source gives their bytes). */
static gd_status gd_st_write(const char *path, const gd_st_write_tensor *tensors,
                             size_t n_tensors, const gd_st_meta *meta, size_t n_meta,
                             const gd_st_source *source, bool sourced) {
    if (path == NULL || path[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "safetensors path is empty");
    if ((tensors == NULL && n_tensors > 0) || (meta == NULL && n_meta > 0))
        return gd_fail(GD_ERR_INVALID, "safetensors tensors or metadata are NULL");
    uint8_t *header = NULL;
    size_t header_len = 0;
    GD_TRY(gd_st_build_header(&header, &header_len, tensors, n_tensors, meta, n_meta, sourced));
    enum { PIECE = 4 << 20 };
    uint8_t *piece = malloc(PIECE);
    gd_file_atomic f;
    /* Checkpoints are ordinary readable files, replaced atomically. */
    gd_status s = piece ? gd_file_atomic_begin(&f, path, 0644)
                        : gd_fail(GD_ERR_NOMEM, "out of memory for a piece of a tensor");
    if (s == GD_OK)
        s = gd_file_atomic_append(&f, header, header_len);
    for (size_t i = 0; s == GD_OK && i < n_tensors; i++) {
        const gd_st_write_tensor *t = &tensors[i];
        uint64_t numel = 0, nbytes = 0;
        /* Cannot fail: the header build checked every size. */
        (void)gd_st_sizes(t->shape, t->ndim, t->dtype, &numel, &nbytes);
        for (uint64_t at = 0; s == GD_OK && at < nbytes; at += PIECE) {
            size_t len = nbytes - at < PIECE ? (size_t)(nbytes - at) : PIECE;
            s = source->read(source->ctx, piece, i, at, len);
            if (s == GD_OK)
                s = gd_file_atomic_append(&f, piece, len);
        }
    }
    if (s == GD_OK)
        s = gd_file_atomic_commit(&f);
    else if (piece != NULL)
        gd_file_atomic_abort(&f);
    free(piece);
    free(header);
    return s;
}

/* Tensor i's bytes from its data in memory. */
static gd_status gd_st_memory_read(void *ctx, void *out, size_t tensor, uint64_t at, size_t len) {
    const gd_st_write_tensor *tensors = ctx;
    memcpy(out, (const uint8_t *)tensors[tensor].data + at, len);
    return GD_OK;
}

gd_status gd_safetensors_write(const char *path, const gd_st_write_tensor *tensors,
                               size_t n_tensors, const gd_st_meta *meta, size_t n_meta) {
    gd_st_source memory = {gd_st_memory_read, (void *)tensors};
    return gd_st_write(path, tensors, n_tensors, meta, n_meta, &memory, false);
}

gd_status gd_safetensors_write_from(const char *path, const gd_st_write_tensor *tensors,
                                    size_t n_tensors, const gd_st_meta *meta, size_t n_meta,
                                    const gd_st_source *source) {
    if (source == NULL || source->read == NULL)
        return gd_fail(GD_ERR_INVALID, "safetensors source is NULL");
    return gd_st_write(path, tensors, n_tensors, meta, n_meta, source, true);
}
