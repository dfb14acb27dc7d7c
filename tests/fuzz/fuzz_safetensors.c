/* Safetensors files: any accepted input has in-bounds tensors that tile the
 * data region exactly and that find() returns by name, and writing them back
 * (with the metadata) and mapping the new file gives the same tensors. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "trainer/safetensors.h"

/* Round trips touch the file system, so only small inputs take one. */
#define FUZZ_ROUND_TRIP_MAX (64u << 10)

/* A per-process scratch file, on tmpfs where there is one so fsync is cheap. */
static const char *fuzz_path(void) {
    static char path[128];
    if (path[0] == '\0') {
        struct stat sb;
        const char *dir =
            stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0
                ? "/dev/shm"
                : "/tmp";
        snprintf(path, sizeof path, "%s/gd-fuzz-safetensors-%ld", dir, (long)getpid());
    }
    return path;
}

static void check_invariants(const gd_safetensors *st, const uint8_t *data, size_t size) {
    FUZZ_ASSERT(size >= 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | data[i];
    FUZZ_ASSERT(n >= 2 && n <= GD_ST_MAX_HEADER && n <= size - 8);
    const uint8_t *at = data + 8 + n, *end = data + size;
    for (size_t i = 0; i < st->n_tensors; i++) {
        const gd_st_tensor *t = &st->tensors[i];
        size_t name_len = strnlen(t->name, GD_ST_NAME_MAX);
        FUZZ_ASSERT(name_len > 0 && name_len < GD_ST_NAME_MAX);
        FUZZ_ASSERT(strcmp(t->name, "__metadata__") != 0);
        FUZZ_ASSERT(gd_st_dtype_size(t->dtype) > 0);
        FUZZ_ASSERT(t->ndim <= GD_ST_MAX_DIMS);
        uint64_t numel = 1;
        for (size_t k = 0; k < t->ndim; k++)
            numel *= t->shape[k]; /* no overflow: the parser checked */
        FUZZ_ASSERT(t->numel == numel);
        FUZZ_ASSERT(t->nbytes == t->numel * gd_st_dtype_size(t->dtype));
        /* Exact tiling in offset order keeps every tensor inside the input. */
        FUZZ_ASSERT(t->data == at);
        FUZZ_ASSERT(t->nbytes <= (uint64_t)(end - at));
        at += t->nbytes;
        FUZZ_ASSERT(gd_safetensors_find(st, t->name) == t);
    }
    FUZZ_ASSERT(at == end);
    for (size_t i = 0; i < st->n_meta; i++) {
        FUZZ_ASSERT(st->meta[i].key != NULL && st->meta[i].value != NULL);
        FUZZ_ASSERT(gd_safetensors_meta(st, st->meta[i].key) == st->meta[i].value);
    }
    FUZZ_ASSERT(st->mapping == NULL);
}

static void check_round_trip(const gd_safetensors *st) {
    gd_st_write_tensor *w = calloc(st->n_tensors ? st->n_tensors : 1, sizeof *w);
    FUZZ_ASSERT(w != NULL);
    for (size_t i = 0; i < st->n_tensors; i++) {
        const gd_st_tensor *t = &st->tensors[i];
        w[i].name = t->name;
        w[i].dtype = t->dtype;
        w[i].ndim = t->ndim;
        memcpy(w[i].shape, t->shape, sizeof w[i].shape);
        w[i].data = t->data;
    }
    const char *path = fuzz_path();
    gd_status s = gd_safetensors_write(path, w, st->n_tensors, st->meta, st->n_meta);
    if (s != GD_OK)
        fprintf(stderr, "rewrite failed: %s\n", gd_error_detail());
    FUZZ_ASSERT(s == GD_OK);
    free(w);
    gd_safetensors again;
    s = gd_safetensors_open(&again, path);
    if (s != GD_OK)
        fprintf(stderr, "reread failed: %s\n", gd_error_detail());
    FUZZ_ASSERT(s == GD_OK);
    unlink(path);
    /* Exact tiling means the writer reproduces every offset, so the order
     * by offset (ties by size, then name) is the same. */
    FUZZ_ASSERT(again.n_tensors == st->n_tensors);
    for (size_t i = 0; i < st->n_tensors; i++) {
        const gd_st_tensor *a = &st->tensors[i], *b = &again.tensors[i];
        FUZZ_ASSERT(strcmp(a->name, b->name) == 0);
        FUZZ_ASSERT(a->dtype == b->dtype && a->ndim == b->ndim);
        FUZZ_ASSERT(memcmp(a->shape, b->shape, a->ndim * sizeof a->shape[0]) == 0);
        FUZZ_ASSERT(a->numel == b->numel && a->nbytes == b->nbytes);
        FUZZ_ASSERT(a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
    }
    FUZZ_ASSERT(again.n_meta == st->n_meta);
    for (size_t i = 0; i < st->n_meta; i++) {
        const char *v = gd_safetensors_meta(&again, st->meta[i].key);
        FUZZ_ASSERT(v != NULL && strcmp(v, st->meta[i].value) == 0);
    }
    gd_safetensors_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gd_safetensors st;
    if (gd_safetensors_parse(&st, data, size) != GD_OK) {
        FUZZ_ASSERT(st.tensors == NULL && st.meta == NULL && st.n_tensors == 0);
        return 0;
    }
    check_invariants(&st, data, size);
    if (size <= FUZZ_ROUND_TRIP_MAX)
        check_round_trip(&st);
    gd_safetensors_free(&st);
    return 0;
}
