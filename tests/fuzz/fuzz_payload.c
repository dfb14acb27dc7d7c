/* Pseudo-gradient payload files: an accepted input is the canonical file
 * form of what was parsed (serialize gives back the input byte for byte,
 * and parsing that gives the same root), every chunk's proof verifies
 * against the root, and decoding never crashes (it may refuse). The same
 * bytes read in place (gd_payload_view) are refused alike or give the same
 * root and, a chunk at a time, the same values. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "trainer/payload.h"

/* Decoding writes param_count floats; a tiny topk or zstd input may claim
 * hundreds of millions, so only moderate counts are decoded here. */
#define FUZZ_DECODE_MAX_VALUES ((uint64_t)1 << 22)
#define FUZZ_PROVE_MAX_CHUNKS 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Read in place, the same bytes are refused or give parse's root. */
    gd_payload_view view;
    uint8_t view_root[GD_MMR_HASH_LEN];
    uint32_t view_leaves = 0;
    bool view_ok = gd_payload_view_open(&view, data, size) == GD_OK &&
                   gd_payload_view_root(&view, view_root, &view_leaves, NULL) == GD_OK;
    gd_payload p;
    if (gd_payload_parse(&p, data, size, NULL) != GD_OK) {
        FUZZ_ASSERT(!view_ok);
        gd_payload_view_close(&view);
        gd_payload_free(&p); /* a failed parse leaves a freeable payload */
        return 0;
    }
    FUZZ_ASSERT(view_ok);
    const gd_payload_header *h = &p.header;
    FUZZ_ASSERT(h->chunk_count >= 1 && p.mmr.n_leaves == h->chunk_count + 1);
    uint8_t header[GD_PAYLOAD_HEADER_BYTES];
    gd_payload_header_encode(h, header);
    FUZZ_ASSERT(memcmp(header, data, sizeof header) == 0);

    uint8_t root[GD_MMR_HASH_LEN], again_root[GD_MMR_HASH_LEN];
    uint32_t leaves = 0, again_leaves = 0;
    FUZZ_ASSERT(gd_payload_root(&p, root, &leaves) == GD_OK);
    FUZZ_ASSERT(leaves == h->chunk_count + 1);
    FUZZ_ASSERT(gd_payload_wire_bytes(&p) == size);
    gd_buf out = {0};
    FUZZ_ASSERT(gd_payload_serialize(&p, &out) == GD_OK);
    FUZZ_ASSERT(out.len == size && memcmp(out.data, data, size) == 0);
    gd_payload q;
    FUZZ_ASSERT(gd_payload_parse(&q, out.data, out.len, NULL) == GD_OK);
    FUZZ_ASSERT(gd_payload_root(&q, again_root, &again_leaves) == GD_OK);
    FUZZ_ASSERT(again_leaves == leaves && memcmp(again_root, root, sizeof root) == 0);
    FUZZ_ASSERT(view_leaves == leaves && memcmp(view_root, root, sizeof root) == 0);
    gd_payload_free(&q);
    gd_buf_free(&out);

    for (uint32_t i = 0; i < h->chunk_count && i < FUZZ_PROVE_MAX_CHUNKS; i++) {
        const gd_payload_chunk *c = &p.chunks[i];
        FUZZ_ASSERT(c->raw_len >= 1 &&
                    c->raw_len <= gd_codec_chunk_bound(&h->codec, h->chunk_elems));
        FUZZ_ASSERT(c->zstd || (c->stored == c->raw && c->stored_len == c->raw_len));
        gd_mmr_proof proof;
        FUZZ_ASSERT(gd_payload_prove_chunk(&p, &proof, i) == GD_OK);
        FUZZ_ASSERT(proof.leaf_count == leaves);
        FUZZ_ASSERT(gd_payload_verify_chunk(root, i, c->raw, c->raw_len, &proof));
    }

    if (h->param_count <= FUZZ_DECODE_MAX_VALUES) {
        float *values = malloc((size_t)h->param_count * sizeof(float));
        FUZZ_ASSERT(values != NULL);
        gd_status s = gd_payload_decode(&p, values, NULL);
        FUZZ_ASSERT(s == GD_OK || s == GD_ERR_PARSE);
        /* A chunk at a time in place: the same verdict, the same values. */
        size_t most = h->chunk_elems < h->param_count ? h->chunk_elems : h->param_count;
        float *chunk = malloc(most * sizeof(float));
        FUZZ_ASSERT(chunk != NULL);
        gd_status vs = GD_OK;
        for (uint32_t i = 0; vs == GD_OK && i < h->chunk_count; i++) {
            size_t m = gd_payload_view_chunk_values(&view, i);
            vs = gd_payload_view_decode(&view, i, chunk, m);
            FUZZ_ASSERT(vs != GD_OK ||
                        memcmp(chunk, values + (size_t)i * h->chunk_elems,
                               m * sizeof(float)) == 0);
        }
        FUZZ_ASSERT((vs == GD_OK) == (s == GD_OK));
        free(chunk);
        free(values);
    }
    gd_payload_view_close(&view);
    gd_payload_free(&p);
    return 0;
}
