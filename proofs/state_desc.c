/* State descriptors (proofs/state_desc.h): their one encoding, strict
 * decoding and hash. The trainer builds descriptors; the chain module
 * decodes one to check an availability report's state sample, so the
 * layout lives here, below both. */
#include "proofs/state_desc.h"

#include <string.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "proofs/state_hash.h"

#define GD_WORKER_MAGIC "GDWS"
#define GD_GLOBAL_MAGIC "GDGS"

/* --- text fields --------------------------------------------------------------------- */

/* Printable ASCII, then only NUL padding: one spelling per address. */
static gd_status gd_address_decode(char out[GD_STATE_ADDRESS_MAX + 1], const uint8_t *in) {
    size_t len = 0;
    while (len < GD_STATE_ADDRESS_MAX && in[len] != 0) {
        if (in[len] < 0x20 || in[len] > 0x7e)
            return gd_fail(GD_ERR_PARSE, "state address byte %zu is not printable ASCII", len);
        len++;
    }
    for (size_t i = len; i < GD_STATE_ADDRESS_MAX; i++)
        if (in[i] != 0)
            return gd_fail(GD_ERR_PARSE, "state address has bytes after its NUL padding");
    if (len == 0)
        return gd_fail(GD_ERR_PARSE, "state address is empty");
    memcpy(out, in, len);
    out[len] = '\0';
    return GD_OK;
}

static void gd_address_encode(uint8_t *out, const char *address) {
    memset(out, 0, GD_STATE_ADDRESS_MAX);
    memcpy(out, address, strnlen(address, GD_STATE_ADDRESS_MAX));
}

/* --- worker descriptors --------------------------------------------------------------- */

void gd_worker_desc_encode(const gd_worker_desc *d, uint8_t out[GD_WORKER_DESC_BYTES]) {
    memset(out, 0, GD_WORKER_DESC_BYTES);
    memcpy(out, GD_WORKER_MAGIC, 4);
    gd_put_le32(out + 4, GD_STATE_VERSION);
    memcpy(out + 8, d->tag.spec_digest, 32);
    memcpy(out + 40, d->tag.layout_digest, 32);
    gd_put_le64(out + 72, d->tag.run);
    gd_put_le64(out + 80, d->round);
    gd_address_encode(out + 88, d->address);
    gd_put_le32(out + 152, d->rank);
    gd_put_le32(out + 156, (uint32_t)d->stage);
    gd_put_le64(out + 160, d->step);
    gd_put_le64(out + 168, d->n);
    gd_put_le32(out + 176, d->tag.chunk_elems);
    memcpy(out + 184, d->params_root, 32);
    memcpy(out + 216, d->exp_avg_root, 32);
    memcpy(out + 248, d->exp_avg_sq_root, 32);
    memcpy(out + 280, d->residual_root, 32);
}

/* n and chunk_elems of a descriptor from outside. */
static gd_status gd_desc_sizes_check(uint64_t n, uint32_t chunk_elems, const char *what) {
    if (n < 1 || n > GD_STATE_VALUES_MAX)
        return gd_fail(GD_ERR_PARSE, "%s describes %llu values (must be 1..2^40)", what,
                       (unsigned long long)n);
    if (chunk_elems < 1 || chunk_elems > GD_STATE_CHUNK_ELEMS_MAX)
        return gd_fail(GD_ERR_PARSE, "%s chunk size %u is not 1..2^28", what, chunk_elems);
    return GD_OK;
}

static gd_status gd_desc_prefix_check(const uint8_t *in, size_t len, size_t want,
                                      const char *magic, const char *what) {
    if (in == NULL || len != want)
        return gd_fail(GD_ERR_PARSE, "%s is %zu bytes, want %zu", what, in ? len : 0, want);
    if (memcmp(in, magic, 4) != 0)
        return gd_fail(GD_ERR_PARSE, "not a %s: the magic is not \"%s\"", what, magic);
    uint32_t version = gd_get_le32(in + 4);
    if (version != GD_STATE_VERSION)
        return gd_fail(GD_ERR_PARSE, "%s version %u is not supported (want %d)", what,
                       (unsigned)version, GD_STATE_VERSION);
    return GD_OK;
}

gd_status gd_worker_desc_decode(gd_worker_desc *d, const uint8_t *in, size_t len) {
    memset(d, 0, sizeof *d);
    GD_TRY(gd_desc_prefix_check(in, len, GD_WORKER_DESC_BYTES, GD_WORKER_MAGIC,
                                "worker state descriptor"));
    uint32_t stage = gd_get_le32(in + 156);
    if (stage > GD_STAGE_ENCODED)
        return gd_fail(GD_ERR_PARSE, "worker state stage %u is unknown", (unsigned)stage);
    if (gd_get_le32(in + 180) != 0)
        return gd_fail(GD_ERR_PARSE, "worker state descriptor padding is not zero");
    uint64_t n = gd_get_le64(in + 168);
    uint32_t chunk_elems = gd_get_le32(in + 176);
    GD_TRY(gd_desc_sizes_check(n, chunk_elems, "worker state"));
    GD_TRY(gd_address_decode(d->address, in + 88));
    memcpy(d->tag.spec_digest, in + 8, 32);
    memcpy(d->tag.layout_digest, in + 40, 32);
    d->tag.run = gd_get_le64(in + 72);
    d->tag.chunk_elems = chunk_elems;
    d->round = gd_get_le64(in + 80);
    d->rank = gd_get_le32(in + 152);
    d->stage = (gd_state_stage)stage;
    d->step = gd_get_le64(in + 160);
    d->n = n;
    memcpy(d->params_root, in + 184, 32);
    memcpy(d->exp_avg_root, in + 216, 32);
    memcpy(d->exp_avg_sq_root, in + 248, 32);
    memcpy(d->residual_root, in + 280, 32);
    return GD_OK;
}

void gd_worker_desc_hash(const gd_worker_desc *d, uint8_t out[GD_MMR_HASH_LEN]) {
    uint8_t bytes[GD_WORKER_DESC_BYTES];
    gd_worker_desc_encode(d, bytes);
    gd_sha256(out, bytes, sizeof bytes);
}

/* --- global descriptors --------------------------------------------------------------- */

void gd_global_desc_encode(const gd_global_desc *d, uint8_t out[GD_GLOBAL_DESC_BYTES]) {
    memset(out, 0, GD_GLOBAL_DESC_BYTES);
    memcpy(out, GD_GLOBAL_MAGIC, 4);
    gd_put_le32(out + 4, GD_STATE_VERSION);
    memcpy(out + 8, d->layout_digest, 32);
    gd_put_le64(out + 40, d->round);
    gd_put_le64(out + 48, d->n);
    gd_put_le32(out + 56, d->chunk_elems);
    memcpy(out + 64, d->params_root, 32);
    memcpy(out + 96, d->momentum_root, 32);
}

gd_status gd_global_desc_decode(gd_global_desc *d, const uint8_t *in, size_t len) {
    memset(d, 0, sizeof *d);
    GD_TRY(gd_desc_prefix_check(in, len, GD_GLOBAL_DESC_BYTES, GD_GLOBAL_MAGIC,
                                "global state descriptor"));
    if (gd_get_le32(in + 60) != 0)
        return gd_fail(GD_ERR_PARSE, "global state descriptor padding is not zero");
    uint64_t n = gd_get_le64(in + 48);
    uint32_t chunk_elems = gd_get_le32(in + 56);
    GD_TRY(gd_desc_sizes_check(n, chunk_elems, "global state"));
    memcpy(d->layout_digest, in + 8, 32);
    d->round = gd_get_le64(in + 40);
    d->n = n;
    d->chunk_elems = chunk_elems;
    memcpy(d->params_root, in + 64, 32);
    memcpy(d->momentum_root, in + 96, 32);
    return GD_OK;
}

void gd_global_desc_hash(const gd_global_desc *d, uint8_t out[GD_MMR_HASH_LEN]) {
    uint8_t bytes[GD_GLOBAL_DESC_BYTES];
    gd_global_desc_encode(d, bytes);
    gd_sha256(out, bytes, sizeof bytes);
}

const uint8_t *gd_worker_desc_root(const gd_worker_desc *d, uint32_t array) {
    switch (array) {
    case 0: return d->params_root;
    case 1: return d->exp_avg_root;
    case 2: return d->exp_avg_sq_root;
    case 3: return d->residual_root;
    default: return NULL;
    }
}

uint32_t gd_values_chunks(size_t n, uint32_t chunk_elems) {
    if (chunk_elems == 0)
        return 0;
    return gd_state_chunk_count((uint64_t)n * sizeof(float), (size_t)chunk_elems * sizeof(float));
}
