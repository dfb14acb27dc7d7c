/* The pseudo-gradient payload: pinned header bytes and the strict header
 * reader, encode -> file -> parse -> decode for every codec over several
 * chunks and read in place a chunk at a time, roots independent of the
 * thread count, the zstd choice, error
 * feedback, chunk proofs, every single-byte corruption and truncation of a
 * small file, hostile tables and frames, and atomic file writes. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/file.h"
#include "common/pool.h"
#include "common/rng.h"
#include "tests/support/testkit.h"
#include "trainer/payload.h"

typedef uint8_t gd_h[GD_MMR_HASH_LEN];

static const char *const k_codecs[] = {"none", "bf16", "int8", "int4", "topk:0.05"};
#define N_CODECS (sizeof k_codecs / sizeof k_codecs[0])

/* Gradient-like values: normal with a rare large outlier, deterministic. */
static float *gen_values(size_t n, uint64_t seed, double sigma) {
    float *v = malloc(n * sizeof(float));
    if (v == NULL)
        abort();
    gd_rng rng;
    gd_rng_init(&rng, seed, (uint32_t[4]){7, 0, 0, 0});
    for (size_t i = 0; i < n; i++) {
        double x = gd_rng_normal12(&rng) * sigma;
        if (gd_rng_below(&rng, 500) == 0)
            x *= 40;
        v[i] = (float)x;
    }
    return v;
}

static gd_payload_header sample_header(const char *codec, uint64_t n, uint32_t chunk_elems) {
    gd_payload_header h;
    memset(&h, 0, sizeof h);
    h.run = 0x0102030405060708ull;
    h.round = 42;
    snprintf(h.participant, sizeof h.participant, "worker-00001");
    h.param_count = n;
    for (int i = 0; i < 32; i++) {
        h.layout_digest[i] = (uint8_t)i;
        h.spec_digest[i] = (uint8_t)(0xa0 + i);
    }
    if (gd_codec_parse(&h.codec, codec) != GD_OK)
        abort();
    h.chunk_elems = chunk_elems;
    return h;
}

static void serialize(const gd_payload *p, gd_buf *out) {
    out->len = 0;
    CHECK_OK(gd_payload_serialize(p, out));
    CHECK(out->len == gd_payload_wire_bytes(p));
}

static void root_of(const gd_payload *p, gd_h root, uint32_t expect_leaves) {
    uint32_t leaves = 0;
    CHECK_OK(gd_payload_root(p, root, &leaves));
    CHECK(leaves == expect_leaves);
}

/* ---- header ---------------------------------------------------------------- */

/* The layout of payload.h, field by field. */
static const char k_golden_header[] =
    "4744504c"                                                         /*   0 magic "GDPL" */
    "02000000"                                                         /*   4 version 2 */
    "0807060504030201"                                                 /*   8 run */
    "2a00000000000000"                                                 /*  16 round 42 */
    "776f726b65722d3030303031"                                         /*  24 "worker-00001" */
    "00000000000000000000000000000000000000000000000000000000"         /*     NUL padding */
    "000000000000000000000000000000000000000000000000"                 /*     to 64 bytes */
    "1727000000000000"                                                 /*  88 10007 values */
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" /*  96 layout digest */
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf" /* 128 spec digest */
    "04000000"                                                         /* 160 codec topk */
    "50c30000"                                                         /* 164 50000 ppm */
    "e8030000"                                                         /* 168 1000 per chunk */
    "0b000000";                                                        /* 172 11 chunks */

static void test_header_golden(void) {
    gd_payload_header h = sample_header("topk:0.05", 10007, 1000);
    h.chunk_count = 11;
    uint8_t bytes[GD_PAYLOAD_HEADER_BYTES];
    gd_payload_header_encode(&h, bytes);
    CHECK(strlen(k_golden_header) == 2 * GD_PAYLOAD_HEADER_BYTES);
    CHECK_HEX_EQ(bytes, sizeof bytes, k_golden_header);
    gd_payload_header back;
    CHECK_OK(gd_payload_header_decode(&back, bytes, sizeof bytes));
    CHECK(memcmp(&back, &h, sizeof h) == 0);
    /* The encoder commits to exactly these header bytes as leaf 0. */
    float *v = gen_values(10007, 1, 0.01);
    gd_payload p;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    gd_buf file = {0};
    serialize(&p, &file);
    CHECK(file.len > sizeof bytes && memcmp(file.data, bytes, sizeof bytes) == 0);
    gd_h leaf0;
    gd_mmr_hash_leaf(leaf0, 0, bytes, sizeof bytes);
    CHECK(memcmp(p.mmr.nodes[0], leaf0, GD_MMR_HASH_LEN) == 0);
    gd_buf_free(&file);
    gd_payload_free(&p);
    free(v);
}

/* Decodes bytes with one field changed; expects GD_ERR_PARSE. */
static void expect_header_reject(const uint8_t good[GD_PAYLOAD_HEADER_BYTES], size_t at,
                                 const void *value, size_t len) {
    uint8_t b[GD_PAYLOAD_HEADER_BYTES];
    memcpy(b, good, sizeof b);
    memcpy(b + at, value, len);
    gd_payload_header h;
    CHECK_STATUS(gd_payload_header_decode(&h, b, sizeof b), GD_ERR_PARSE);
}

static void test_header_rejects(void) {
    gd_payload_header h = sample_header("int8", 10007, 1000);
    h.chunk_count = 11;
    uint8_t good[GD_PAYLOAD_HEADER_BYTES];
    gd_payload_header_encode(&h, good);
    gd_payload_header out;
    CHECK_OK(gd_payload_header_decode(&out, good, sizeof good));
    CHECK_STATUS(gd_payload_header_decode(&out, good, sizeof good - 1), GD_ERR_PARSE);
    CHECK_STATUS(gd_payload_header_decode(&out, NULL, 0), GD_ERR_PARSE);
    expect_header_reject(good, 0, "GDPX", 4);
    expect_header_reject(good, 0, "gdpl", 4);
    expect_header_reject(good, 4, "\x01\0\0\0", 4);      /* version 1 */
    expect_header_reject(good, 4, "\x03\0\0\0", 4);
    expect_header_reject(good, 4, "\0\0\0\0", 4);
    expect_header_reject(good, 24, "\x1f", 1);             /* control character */
    expect_header_reject(good, 24 + 3, "\x7f", 1);         /* DEL */
    expect_header_reject(good, 24 + 5, "\xc3\xa9", 2);     /* non-ASCII */
    expect_header_reject(good, 24 + 40, "x", 1);           /* bytes after the padding */
    expect_header_reject(good, 24 + 63, "\x01", 1);
    expect_header_reject(good, 160, "\x05\0\0\0", 4);      /* unknown codec */
    expect_header_reject(good, 164, "\x01\0\0\0", 4);      /* int8 with a parameter */
    expect_header_reject(good, 88, "\0\0\0\0\0\0\0\0", 8); /* no values */
    expect_header_reject(good, 88, "\xf9\x2a", 2);         /* 11001 values: 12 chunks */
    expect_header_reject(good, 172, "\x0c\0\0\0", 4);      /* 12 chunks */
    expect_header_reject(good, 168, "\0\0\0\0", 4);        /* chunk size 0 */
    expect_header_reject(good, 168, "\x01\0\0\x10", 4);    /* 2^28 + 1 */
    /* 10008 values is fine with 11 chunks if the count says so: only the
     * consistency matters. An empty participant is allowed. */
    uint8_t ok[GD_PAYLOAD_HEADER_BYTES];
    memcpy(ok, good, sizeof ok);
    memset(ok + 24, 0, 64);
    CHECK_OK(gd_payload_header_decode(&out, ok, sizeof ok));
    CHECK_STR_EQ(out.participant, "");
    memset(ok + 24, 'a', 64); /* 64 characters, no NUL */
    CHECK_OK(gd_payload_header_decode(&out, ok, sizeof ok));
    CHECK(strlen(out.participant) == 64);

    gd_payload_header t = sample_header("topk:0.05", 10007, 1000);
    t.chunk_count = 11;
    uint8_t topk[GD_PAYLOAD_HEADER_BYTES];
    gd_payload_header_encode(&t, topk);
    CHECK_OK(gd_payload_header_decode(&out, topk, sizeof topk));
    expect_header_reject(topk, 164, "\0\0\0\0", 4);         /* ppm 0 */
    expect_header_reject(topk, 164, "\x41\x42\x0f\0", 4);   /* 1000001 ppm */
    /* One chunk of 2^28 values is the largest chunk. */
    gd_payload_header big = sample_header("none", (uint64_t)1 << 28, (uint32_t)1 << 28);
    big.chunk_count = 1;
    gd_payload_header_encode(&big, topk);
    CHECK_OK(gd_payload_header_decode(&out, topk, sizeof topk));
    /* 2^30 chunks would not fit the MMR with its header leaf. */
    big = sample_header("none", (uint64_t)1 << 30, 1);
    big.chunk_count = (uint32_t)1 << 30;
    gd_payload_header_encode(&big, topk);
    CHECK_STATUS(gd_payload_header_decode(&out, topk, sizeof topk), GD_ERR_PARSE);
}

static void mut_run(gd_payload_header *h) { h->run++; }
static void mut_round(gd_payload_header *h) { h->round--; }
static void mut_participant(gd_payload_header *h) { h->participant[7] = '2'; }
static void mut_params(gd_payload_header *h) { h->param_count++; }
static void mut_layout(gd_payload_header *h) { h->layout_digest[31] ^= 1; }
static void mut_codec(gd_payload_header *h) { h->codec = (gd_codec){GD_CODEC_INT8, 0}; }
static void mut_ppm(gd_payload_header *h) { h->codec.topk_ppm++; }
static void mut_chunk(gd_payload_header *h) { h->chunk_elems++; }
static void mut_spec(gd_payload_header *h) { h->spec_digest[31] ^= 1; }

/* A receiver's expectations: every field that fixes what the payload is
 * must match, each refusal naming the field. */
static void test_header_matches(void) {
    gd_payload_header want = sample_header("topk:0.05", 10007, 1000);
    gd_payload_header got = want;
    CHECK_OK(gd_payload_header_matches(&got, &want));
    struct {
        void (*mutate)(gd_payload_header *);
        const char *field;
    } cases[] = {
        {mut_run, "its run "},       {mut_round, "its round "},
        {mut_participant, "its participant "}, {mut_params, "its param count "},
        {mut_layout, "its layout digest "},    {mut_codec, "its codec "},
        {mut_ppm, "its codec "},     {mut_chunk, "its chunk size "},
        {mut_spec, "its run spec digest "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        got = want;
        cases[i].mutate(&got);
        CHECK_STATUS(gd_payload_header_matches(&got, &want), GD_ERR_INVALID);
        CHECK(strstr(gd_error_detail(), cases[i].field) != NULL);
    }
}

static void test_encode_rejects(void) {
    float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    gd_payload p;
    gd_payload_header h = sample_header("int8", 8, 4);
    h.chunk_elems = 0;
    CHECK_STATUS(gd_payload_encode(&p, &h, v, NULL, NULL), GD_ERR_INVALID);
    h = sample_header("int8", 0, 4);
    CHECK_STATUS(gd_payload_encode(&p, &h, v, NULL, NULL), GD_ERR_INVALID);
    h = sample_header("int8", 8, 4);
    h.participant[3] = '\n';
    CHECK_STATUS(gd_payload_encode(&p, &h, v, NULL, NULL), GD_ERR_INVALID);
    h = sample_header("int8", 8, 4);
    h.codec.topk_ppm = 5;
    CHECK_STATUS(gd_payload_encode(&p, &h, v, NULL, NULL), GD_ERR_INVALID);
    h = sample_header("int8", 8, 4);
    h.codec.kind = (gd_codec_kind)9;
    CHECK_STATUS(gd_payload_encode(&p, &h, v, NULL, NULL), GD_ERR_INVALID);
    /* A NaN in the second chunk: refused, and that chunk's residual kept. */
    h = sample_header("int8", 8, 4);
    v[6] = NAN;
    float r[8] = {0};
    CHECK_STATUS(gd_payload_encode(&p, &h, v, r, NULL), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "chunk 1") != NULL);
    for (int i = 4; i < 8; i++)
        CHECK(r[i] == 0);
    /* A failed encode leaves a payload that is safe to free. */
    gd_payload_free(&p);
    gd_payload_free(&p);
    /* The chunk count is computed, whatever the caller left in it. */
    v[6] = 7;
    h.chunk_count = 99;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    CHECK(p.header.chunk_count == 2);
    gd_payload_free(&p);
}

/* ---- round trips ------------------------------------------------------------ */

/* What the codec alone makes of chunk by chunk: bytes and decoded values. */
static void check_against_codec(const gd_payload *p, const float *x) {
    const gd_payload_header *h = &p->header;
    for (uint32_t i = 0; i < h->chunk_count; i++) {
        size_t off = (size_t)i * h->chunk_elems;
        size_t n = h->param_count - off < h->chunk_elems ? h->param_count - off : h->chunk_elems;
        size_t bound = gd_codec_chunk_bound(&h->codec, n), written = 0;
        uint8_t *raw = malloc(bound);
        CHECK_OK(gd_codec_encode_chunk(&h->codec, raw, bound, x + off, n, &written, NULL));
        CHECK(written == p->chunks[i].raw_len);
        CHECK(written == p->chunks[i].raw_len &&
              memcmp(raw, p->chunks[i].raw, written) == 0);
        free(raw);
    }
}

static void test_roundtrip_codecs(void) {
    const size_t n = 10007;
    float *v = gen_values(n, 2, 0.01);
    float *out = malloc(n * sizeof(float)), *direct = malloc(n * sizeof(float));
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 2));
    for (size_t c = 0; c < N_CODECS; c++) {
        gd_payload_header h = sample_header(k_codecs[c], n, 1000);
        gd_payload enc, dec;
        CHECK_OK(gd_payload_encode(&enc, &h, v, NULL, pool));
        CHECK(enc.header.chunk_count == 11);
        CHECK(enc.chunks[10].raw_len < enc.chunks[0].raw_len); /* 7 values */
        check_against_codec(&enc, v);
        gd_buf file = {0};
        serialize(&enc, &file);
        CHECK_OK(gd_payload_parse(&dec, file.data, file.len, pool));
        CHECK(memcmp(&dec.header, &enc.header, sizeof dec.header) == 0);
        gd_h r1, r2;
        root_of(&enc, r1, 12);
        root_of(&dec, r2, 12);
        CHECK(memcmp(r1, r2, sizeof r1) == 0);
        /* Parse then serialize gives back the file, byte for byte. */
        gd_buf again = {0};
        serialize(&dec, &again);
        CHECK(again.len == file.len && memcmp(again.data, file.data, file.len) == 0);
        /* Decoded values: what each chunk's codec decode gives. */
        memset(out, 0xff, n * sizeof(float));
        CHECK_OK(gd_payload_decode(&dec, out, NULL));
        for (uint32_t i = 0; i < 11; i++) {
            size_t m = i < 10 ? 1000 : 7;
            CHECK_OK(gd_codec_decode_chunk(&h.codec, enc.chunks[i].raw, enc.chunks[i].raw_len,
                                           direct + i * 1000, m));
        }
        CHECK(memcmp(out, direct, n * sizeof(float)) == 0);
        /* Read in place: the same root, the same values a chunk at a time. */
        gd_payload_view view;
        CHECK_OK(gd_payload_view_open(&view, file.data, file.len));
        gd_h r3;
        uint32_t view_leaves = 0;
        CHECK_OK(gd_payload_view_root(&view, r3, &view_leaves, pool));
        CHECK(view_leaves == 12 && memcmp(r3, r1, sizeof r3) == 0);
        memset(out, 0xff, n * sizeof(float));
        for (uint32_t i = 11; i-- > 0;)
            CHECK_OK(gd_payload_view_decode(&view, i, out + i * 1000,
                                            gd_payload_view_chunk_values(&view, i)));
        CHECK(memcmp(out, direct, n * sizeof(float)) == 0);
        CHECK(gd_payload_view_chunk_values(&view, 11) == 0);
        /* Its whole MMR proves each chunk's canonical bytes as parse's does. */
        gd_mmr view_mmr;
        CHECK_OK(gd_payload_view_mmr(&view, &view_mmr, pool));
        for (uint32_t i = 0; i < 11; i++) {
            gd_mmr_proof a, b;
            const uint8_t *raw = NULL;
            size_t raw_len = 0;
            CHECK_OK(gd_payload_view_raw(&view, i, &raw, &raw_len));
            CHECK(raw_len == dec.chunks[i].raw_len &&
                  memcmp(raw, dec.chunks[i].raw, raw_len) == 0);
            CHECK_OK(gd_mmr_prove(&view_mmr, &a, i + 1));
            CHECK_OK(gd_payload_prove_chunk(&dec, &b, i));
            CHECK(gd_payload_verify_chunk(r1, i, raw, raw_len, &a) && a.leaf_count == 12);
            CHECK(a.leaf_index == b.leaf_index && a.n_hashes == b.n_hashes &&
                  memcmp(a.hashes, b.hashes, (size_t)a.n_hashes * GD_MMR_HASH_LEN) == 0);
        }
        gd_mmr_free(&view_mmr);
        CHECK_STATUS(gd_payload_view_decode(&view, 11, out, 1), GD_ERR_INVALID);
        CHECK_STATUS(gd_payload_view_decode(&view, 0, out, 999), GD_ERR_INVALID);
        gd_payload_view_close(&view);
        /* Read from its file a chunk at a time: the same root and values. */
        char path[512];
        snprintf(path, sizeof path, "%s/view-%zu.gdpl", gd_test_tmpdir(), c);
        CHECK_OK(gd_file_write_atomic(path, &(gd_bytes_part){file.data, file.len}, 1, 0600));
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0);
        CHECK_OK(gd_payload_view_open_file(&view, fd, file.len));
        CHECK_OK(gd_payload_view_root(&view, r3, &view_leaves, pool));
        CHECK(view_leaves == 12 && memcmp(r3, r1, sizeof r3) == 0);
        memset(out, 0xff, n * sizeof(float));
        for (uint32_t i = 0; i < 11; i++)
            CHECK_OK(gd_payload_view_decode(&view, i, out + i * 1000,
                                            gd_payload_view_chunk_values(&view, i)));
        CHECK(memcmp(out, direct, n * sizeof(float)) == 0);
        /* The disk changes a chunk once its root was checked: reading it is
         * this host's failure, GD_ERR_IO, never other values (or a parse
         * error that could pass for the committer's); the others read. A
         * view not yet checked has nothing to compare with. */
        const uint8_t *entry = file.data + GD_PAYLOAD_HEADER_BYTES + 5 * 24;
        uint64_t at = 0;
        for (int b = 7; b >= 0; b--)
            at = at << 8 | entry[b];
        at += 3;
        float scratch[1000];
        int rw = open(path, O_RDWR);
        CHECK(rw >= 0);
        uint8_t byte = file.data[at] ^ 0x41;
        CHECK(pwrite(rw, &byte, 1, (off_t)at) == 1);
        CHECK_STATUS(gd_payload_view_decode(&view, 5, scratch, 1000), GD_ERR_IO);
        CHECK(strstr(gd_error_detail(), "changed on disk") != NULL);
        CHECK_OK(gd_payload_view_decode(&view, 4, scratch, 1000));
        gd_payload_view_close(&view);
        gd_payload_view unchecked;
        CHECK_OK(gd_payload_view_open_file(&unchecked, fd, file.len));
        gd_status seen = gd_payload_view_decode(&unchecked, 5, scratch, 1000);
        CHECK(seen == GD_OK || seen == GD_ERR_PARSE);
        gd_payload_view_close(&unchecked);
        /* Learning the leaves as the chunks are first read, in order: with
         * chunk 5 changed, the commitment learned is not the committed one
         * (chunk 5 may also fail to read); chunks must come in order. */
        gd_payload_view learned;
        uint8_t r4[GD_MMR_HASH_LEN];
        uint32_t learned_leaves = 0;
        CHECK_OK(gd_payload_view_open_file(&learned, fd, file.len));
        CHECK_OK(gd_payload_view_learn(&learned));
        CHECK_STATUS(gd_payload_view_decode(&learned, 1, scratch, 1000), GD_ERR_INVALID);
        CHECK_STATUS(gd_payload_view_learned_root(&learned, r4, &learned_leaves),
                     GD_ERR_INVALID);
        bool read_all = true;
        for (uint32_t i = 0; i < 11; i++)
            read_all &= gd_payload_view_decode(&learned, i, out + i * 1000,
                                               gd_payload_view_chunk_values(&learned, i)) ==
                        GD_OK;
        if (read_all) {
            CHECK_OK(gd_payload_view_learned_root(&learned, r4, &learned_leaves));
            CHECK(learned_leaves == 12 && memcmp(r4, r1, sizeof r4) != 0);
        }
        gd_payload_view_close(&learned);
        CHECK(pwrite(rw, file.data + at, 1, (off_t)at) == 1);
        /* The file as written: the committed root learned, the values read,
         * and a chunk the disk changes after it was read is GD_ERR_IO when
         * read again. */
        CHECK_OK(gd_payload_view_open_file(&learned, fd, file.len));
        CHECK_OK(gd_payload_view_learn(&learned));
        memset(out, 0xff, n * sizeof(float));
        for (uint32_t i = 0; i < 11; i++)
            CHECK_OK(gd_payload_view_decode(&learned, i, out + i * 1000,
                                            gd_payload_view_chunk_values(&learned, i)));
        CHECK(memcmp(out, direct, n * sizeof(float)) == 0);
        CHECK_OK(gd_payload_view_learned_root(&learned, r4, &learned_leaves));
        CHECK(learned_leaves == 12 && memcmp(r4, r1, sizeof r4) == 0);
        CHECK(pwrite(rw, &byte, 1, (off_t)at) == 1);
        CHECK_STATUS(gd_payload_view_decode(&learned, 5, scratch, 1000), GD_ERR_IO);
        gd_payload_view_close(&learned);
        CHECK(pwrite(rw, file.data + at, 1, (off_t)at) == 1);
        close(rw);
        /* A length that is not the file's is refused (the table is checked
         * against it), one past its end too. */
        CHECK_STATUS(gd_payload_view_open_file(&view, fd, file.len - 1), GD_ERR_PARSE);
        CHECK_STATUS(gd_payload_view_open_file(&view, fd, file.len + 1), GD_ERR_PARSE);
        CHECK_STATUS(gd_payload_view_open_file(&view, fd, 100), GD_ERR_PARSE);
        close(fd);
        if (strcmp(k_codecs[c], "none") == 0)
            CHECK(memcmp(out, v, n * sizeof(float)) == 0);
        double err = 0, norm = 0;
        for (size_t i = 0; i < n; i++) {
            err += ((double)out[i] - v[i]) * ((double)out[i] - v[i]);
            norm += (double)v[i] * v[i];
        }
        fprintf(stderr, "  %-10s wire %6zu bytes (%.3f B/value), relative error %.4f\n",
                k_codecs[c], file.len, (double)file.len / (double)n, sqrt(err / norm));
        CHECK(sqrt(err / norm) < 0.8);
        gd_buf_free(&again);
        gd_buf_free(&file);
        gd_payload_free(&dec);
        gd_payload_free(&enc);
    }
    /* One chunk, one value, and chunk size 1 (a chunk per value). */
    for (uint32_t ce = 1; ce <= 2; ce++) {
        gd_payload_header h = sample_header("int4", ce == 1 ? 3 : 1, ce);
        gd_payload enc, dec;
        CHECK_OK(gd_payload_encode(&enc, &h, v, NULL, NULL));
        gd_buf file = {0};
        serialize(&enc, &file);
        CHECK_OK(gd_payload_parse(&dec, file.data, file.len, NULL));
        CHECK(dec.header.chunk_count == (ce == 1 ? 3 : 1));
        CHECK_OK(gd_payload_decode(&dec, out, NULL));
        gd_buf_free(&file);
        gd_payload_free(&dec);
        gd_payload_free(&enc);
    }
    gd_pool_free(pool);
    free(direct);
    free(out);
    free(v);
}

static void test_thread_independence(void) {
    const size_t n = 20011;
    float *v = gen_values(n, 3, 0.02);
    float *r0 = gen_values(n, 4, 0.001);
    gd_pool *pools[3] = {NULL, NULL, NULL};
    CHECK_OK(gd_pool_new(&pools[1], 1));
    CHECK_OK(gd_pool_new(&pools[2], 3));
    for (size_t c = 0; c < N_CODECS; c++) {
        gd_h roots[3];
        gd_buf files[3] = {{0}};
        float *res[3];
        for (int t = 0; t < 3; t++) {
            res[t] = malloc(n * sizeof(float));
            memcpy(res[t], r0, n * sizeof(float));
            gd_payload_header h = sample_header(k_codecs[c], n, 999);
            gd_payload p;
            CHECK_OK(gd_payload_encode(&p, &h, v, res[t], pools[t]));
            root_of(&p, roots[t], 22);
            serialize(&p, &files[t]);
            gd_payload q;
            CHECK_OK(gd_payload_parse(&q, files[t].data, files[t].len, pools[2 - t]));
            gd_h back;
            root_of(&q, back, 22);
            CHECK(memcmp(back, roots[t], sizeof back) == 0);
            gd_payload_free(&q);
            gd_payload_free(&p);
        }
        for (int t = 1; t < 3; t++) {
            CHECK(memcmp(roots[t], roots[0], sizeof roots[0]) == 0);
            CHECK(files[t].len == files[0].len &&
                  memcmp(files[t].data, files[0].data, files[0].len) == 0);
            CHECK(memcmp(res[t], res[0], n * sizeof(float)) == 0);
        }
        for (int t = 0; t < 3; t++) {
            gd_buf_free(&files[t]);
            free(res[t]);
        }
    }
    gd_pool_free(pools[1]);
    gd_pool_free(pools[2]);
    free(r0);
    free(v);
}

/* The whole encoding of v with residual r0 (copied into rw, which ends
 * with the coding's residual) and its file form. */
static void encode_whole(gd_payload *whole, gd_buf *file, float *rw, const gd_payload_header *h,
                         const float *v, const float *r0) {
    memcpy(rw, r0, h->param_count * sizeof(float));
    CHECK_OK(gd_payload_encode(whole, h, v, rw, NULL));
    serialize(whole, file);
}

/* The encoder given the values a window of whole chunks at a time gives
 * the whole encoding's file and residual, for every codec and window; out
 * of order, a cut chunk and a short end are refused. */
static void test_encoder_windows(void) {
    const size_t n = 20011, chunk = 999;
    float *v = gen_values(n, 3, 0.02);
    float *r0 = gen_values(n, 4, 0.001);
    float *rw = malloc(n * sizeof(float)), *rx = malloc(n * sizeof(float));
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 3));
    const size_t windows[] = {chunk, 3 * chunk, 20 * chunk, 21 * chunk};
    for (size_t c = 0; c < N_CODECS; c++) {
        gd_payload_header h = sample_header(k_codecs[c], n, (uint32_t)chunk);
        gd_payload whole;
        gd_buf want = {0};
        encode_whole(&whole, &want, rw, &h, v, r0);
        /* The file form as parts (what a member writes, no serialized
         * copy) is the serialized file. */
        gd_payload_parts parts;
        CHECK_OK(gd_payload_file_parts(&whole, &parts));
        CHECK(parts.count == (size_t)whole.header.chunk_count + 1);
        gd_buf joined = {0};
        for (size_t i = 0; i < parts.count; i++)
            CHECK_OK(gd_buf_append(&joined, parts.parts[i].data, parts.parts[i].len));
        CHECK(joined.len == want.len && memcmp(joined.data, want.data, want.len) == 0);
        gd_buf_free(&joined);
        gd_payload_parts_free(&parts);
        for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
            memcpy(rx, r0, n * sizeof(float));
            gd_payload p;
            gd_payload_encoder e;
            CHECK_OK(gd_payload_encoder_begin(&e, &p, &h));
            for (size_t lo = 0; lo < n; lo += windows[k]) {
                size_t count = n - lo < windows[k] ? n - lo : windows[k];
                CHECK_OK(gd_payload_encoder_add(&e, v + lo, rx + lo, lo, count, pool));
            }
            CHECK_OK(gd_payload_encoder_end(&e));
            gd_buf got = {0};
            serialize(&p, &got);
            CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
            CHECK(memcmp(rx, rw, n * sizeof(float)) == 0);
            gd_buf_free(&got);
            gd_payload_free(&p);
        }
        gd_buf_free(&want);
        gd_payload_free(&whole);
    }
    gd_payload_header h = sample_header("int8", n, (uint32_t)chunk);
    gd_payload p;
    gd_payload_encoder e;
    CHECK_OK(gd_payload_encoder_begin(&e, &p, &h));
    CHECK_STATUS(gd_payload_encoder_add(&e, v + chunk, NULL, chunk, chunk, pool), GD_ERR_INVALID);
    CHECK_STATUS(gd_payload_encoder_add(&e, v, NULL, 0, chunk + 1, pool), GD_ERR_INVALID);
    CHECK_STATUS(gd_payload_encoder_add(&e, v, NULL, 0, n + 1, pool), GD_ERR_INVALID);
    CHECK_OK(gd_payload_encoder_add(&e, v, NULL, 0, 2 * chunk, pool));
    CHECK_STATUS(gd_payload_encoder_end(&e), GD_ERR_INVALID);
    gd_payload_free(&p);
    gd_pool_free(pool);
    free(rx);
    free(rw);
    free(r0);
    free(v);
}

/* Encoded into its file as it goes (a worker's own payload): the file is
 * gd_payload_write's, byte for byte, for every codec and window, with the
 * same root and residual; the payload keeps no chunk's bytes, so what
 * needs them refuses while its proofs still work; a file given late, or
 * twice, is refused, and an aborted file leaves nothing behind. */
static void test_encoder_to_file(void) {
    const size_t n = 20011, chunk = 999;
    float *v = gen_values(n, 5, 0.02);
    float *r0 = gen_values(n, 6, 0.001);
    float *rw = malloc(n * sizeof(float)), *rx = malloc(n * sizeof(float));
    float *out = malloc(n * sizeof(float));
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 3));
    char path[512];
    snprintf(path, sizeof path, "%s/to-file.gdpl", gd_test_tmpdir());
    const size_t windows[] = {chunk, 7 * chunk, n};
    for (size_t c = 0; c < N_CODECS; c++) {
        gd_payload_header h = sample_header(k_codecs[c], n, (uint32_t)chunk);
        gd_payload whole;
        gd_buf want = {0};
        encode_whole(&whole, &want, rw, &h, v, r0);
        uint8_t want_root[32], root[32];
        uint32_t want_leaves = 0, leaves = 0;
        CHECK_OK(gd_payload_root(&whole, want_root, &want_leaves));
        for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
            memcpy(rx, r0, n * sizeof(float));
            gd_payload p;
            gd_payload_encoder e;
            gd_file_atomic f;
            CHECK_OK(gd_file_atomic_begin(&f, path, 0600));
            CHECK_OK(gd_payload_encoder_begin(&e, &p, &h));
            CHECK_OK(gd_payload_encoder_to_file(&e, &f));
            CHECK_STATUS(gd_payload_encoder_to_file(&e, &f), GD_ERR_INVALID);
            for (size_t lo = 0; lo < n; lo += windows[k]) {
                size_t count = n - lo < windows[k] ? n - lo : windows[k];
                CHECK_OK(gd_payload_encoder_add(&e, v + lo, rx + lo, lo, count, pool));
                /* what was added is on its way to the file, not held */
                CHECK(p.chunks[lo / chunk].raw == NULL && p.chunks[lo / chunk].stored == NULL);
            }
            CHECK_OK(gd_payload_encoder_end(&e));
            CHECK_OK(gd_file_atomic_commit(&f));
            gd_file_atomic_abort(&f);
            CHECK(p.in_file);
            gd_buf got = {0};
            CHECK_OK(gd_file_read(&got, path, (size_t)1 << 30));
            CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
            CHECK(gd_payload_wire_bytes(&p) == want.len);
            CHECK(memcmp(rx, rw, n * sizeof(float)) == 0);
            CHECK_OK(gd_payload_root(&p, root, &leaves));
            CHECK(leaves == want_leaves && memcmp(root, want_root, 32) == 0);
            gd_mmr_proof proof;
            CHECK_OK(gd_payload_prove_chunk(&p, &proof, 3));
            gd_buf back = {0};
            CHECK_STATUS(gd_payload_serialize(&p, &back), GD_ERR_INVALID);
            CHECK(strstr(gd_error_detail(), "in its file") != NULL);
            CHECK_STATUS(gd_payload_decode(&p, out, NULL), GD_ERR_INVALID);
            gd_buf_free(&back);
            gd_buf_free(&got);
            gd_payload_free(&p);
        }
        gd_buf_free(&want);
        gd_payload_free(&whole);
    }
    /* A file once values were added is refused; an aborted one is gone. */
    CHECK(remove(path) == 0);
    gd_payload_header h = sample_header("int8", n, (uint32_t)chunk);
    gd_payload p;
    gd_payload_encoder e;
    gd_file_atomic f;
    CHECK_OK(gd_file_atomic_begin(&f, path, 0600));
    CHECK_OK(gd_payload_encoder_begin(&e, &p, &h));
    CHECK_OK(gd_payload_encoder_add(&e, v, NULL, 0, chunk, pool));
    CHECK_STATUS(gd_payload_encoder_to_file(&e, &f), GD_ERR_INVALID);
    gd_payload_encoder_abort(&e);
    gd_payload_free(&p);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s", f.tmp);
    gd_file_atomic_abort(&f);
    FILE *gone = fopen(tmp, "rb");
    CHECK(gone == NULL && fopen(path, "rb") == NULL);
    gd_pool_free(pool);
    free(out);
    free(rx);
    free(rw);
    free(r0);
    free(v);
}

/* Flags of chunk i, read from the file's table. */
static uint32_t file_flags(const gd_buf *file, uint32_t i) {
    const uint8_t *e = file->data + GD_PAYLOAD_HEADER_BYTES + (size_t)i * 24 + 16;
    return (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
}

static void test_zstd_choice(void) {
    const size_t n = 5000;
    float *zeros = calloc(n, sizeof(float));
    /* Random bits (NaN and infinity excluded) do not compress. */
    float *v = malloc(n * sizeof(float));
    gd_rng rng;
    gd_rng_init(&rng, 5, (uint32_t[4]){0});
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = gd_rng_u32(&rng);
        if ((bits & 0x7f800000u) == 0x7f800000u)
            bits ^= 0x40000000u;
        memcpy(&v[i], &bits, sizeof bits);
    }
    /* Zeros compress under every codec; random float32 does not. */
    for (size_t c = 0; c < N_CODECS; c++) {
        gd_payload_header h = sample_header(k_codecs[c], n, 1000);
        gd_payload p, q;
        CHECK_OK(gd_payload_encode(&p, &h, zeros, NULL, NULL));
        gd_buf file = {0};
        serialize(&p, &file);
        for (uint32_t i = 0; i < 5; i++) {
            bool small = p.chunks[i].raw_len < 64; /* topk's few bytes may not shrink */
            CHECK(p.chunks[i].zstd || small);
            CHECK(file_flags(&file, i) == (p.chunks[i].zstd ? 1u : 0u));
            if (p.chunks[i].zstd)
                CHECK(p.chunks[i].stored_len * 20 <= p.chunks[i].raw_len * 19);
        }
        CHECK_OK(gd_payload_parse(&q, file.data, file.len, NULL));
        float *out = malloc(n * sizeof(float));
        CHECK_OK(gd_payload_decode(&q, out, NULL));
        CHECK(memcmp(out, zeros, n * sizeof(float)) == 0);
        free(out);
        gd_payload_free(&q);
        gd_payload_free(&p);
        gd_buf_free(&file);
    }
    gd_payload_header h = sample_header("none", n, 1000);
    gd_payload p;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    gd_buf file = {0};
    serialize(&p, &file);
    for (uint32_t i = 0; i < 5; i++) {
        CHECK(!p.chunks[i].zstd && p.chunks[i].stored == p.chunks[i].raw);
        CHECK(file_flags(&file, i) == 0);
    }
    CHECK(file.len == GD_PAYLOAD_HEADER_BYTES + 5 * 24 + 4 * n);
    gd_buf_free(&file);
    gd_payload_free(&p);
    free(v);
    free(zeros);
}

static void test_error_feedback(void) {
    const size_t n = 10007;
    float *v = gen_values(n, 6, 0.01);
    float *r = gen_values(n, 7, 0.002);
    float *old = malloc(n * sizeof(float)), *dec = malloc(n * sizeof(float));
    for (size_t c = 0; c < N_CODECS; c++) {
        memcpy(old, r, n * sizeof(float));
        gd_payload_header h = sample_header(k_codecs[c], n, 1000);
        gd_payload p;
        CHECK_OK(gd_payload_encode(&p, &h, v, r, NULL));
        CHECK_OK(gd_payload_decode(&p, dec, NULL));
        size_t bad = 0, inexact = 0;
        for (size_t i = 0; i < n; i++) {
            float x = v[i] + old[i];
            if (memcmp(&r[i], &(float){x - dec[i]}, sizeof(float)) != 0)
                bad++;
            if (dec[i] + r[i] != x)
                inexact++;
        }
        CHECK(bad == 0);
        /* x - decoded is exact when decoded is within a factor 2 of x or 0
         * (Sterbenz), which quantization gives nearly always; a rare miss
         * is off by one rounding of the residual. */
        CHECK(inexact <= n / 1000);
        if (inexact)
            fprintf(stderr, "  %s: %zu of %zu values have decoded + residual != input\n",
                    k_codecs[c], inexact, n);
        /* The payload is what encoding values + old residual gives. */
        for (size_t i = 0; i < n; i++)
            old[i] += v[i];
        check_against_codec(&p, old);
        if (strcmp(k_codecs[c], "none") == 0)
            for (size_t i = 0; i < n; i++)
                CHECK(r[i] == 0);
        gd_payload_free(&p);
    }
    /* Over rounds the residual stays bounded: the error does not grow. */
    memset(r, 0, n * sizeof(float));
    float rmax = 0;
    for (int round = 0; round < 20; round++) {
        gd_payload_header h = sample_header("topk:0.05", n, 1000);
        gd_payload p;
        CHECK_OK(gd_payload_encode(&p, &h, v, r, NULL));
        gd_payload_free(&p);
    }
    for (size_t i = 0; i < n; i++)
        rmax = fmaxf(rmax, fabsf(r[i]));
    CHECK(rmax < 2.0f);
    free(dec);
    free(old);
    free(r);
    free(v);
}

/* ---- proofs --------------------------------------------------------------- */

static void test_proofs(void) {
    const size_t n = 10007;
    float *v = gen_values(n, 8, 0.01);
    gd_payload_header h = sample_header("int8", n, 1000);
    gd_payload p, q;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    gd_buf file = {0};
    serialize(&p, &file);
    CHECK_OK(gd_payload_parse(&q, file.data, file.len, NULL));
    gd_h root;
    root_of(&p, root, 12);
    for (uint32_t i = 0; i < 11; i++) {
        gd_mmr_proof a, b;
        CHECK_OK(gd_payload_prove_chunk(&p, &a, i));
        CHECK_OK(gd_payload_prove_chunk(&q, &b, i));
        CHECK(memcmp(&a, &b, sizeof a) == 0);
        CHECK(a.leaf_count == 12 && a.leaf_index == i + 1);
        gd_payload_chunk *c = &p.chunks[i];
        CHECK(gd_payload_verify_chunk(root, i, c->raw, c->raw_len, &a));
        c->raw[c->raw_len / 2] ^= 0x04;
        CHECK(!gd_payload_verify_chunk(root, i, c->raw, c->raw_len, &a));
        c->raw[c->raw_len / 2] ^= 0x04;
        CHECK(!gd_payload_verify_chunk(root, i, c->raw, c->raw_len - 1, &a));
        CHECK(!gd_payload_verify_chunk(root, (i + 1) % 11, c->raw, c->raw_len, &a));
        gd_mmr_proof moved = a;
        moved.leaf_index = (i + 1) % 11 + 1;
        CHECK(!gd_payload_verify_chunk(root, (i + 1) % 11, c->raw, c->raw_len, &moved));
        gd_h wrong;
        memcpy(wrong, root, sizeof wrong);
        wrong[31] ^= 1;
        CHECK(!gd_payload_verify_chunk(wrong, i, c->raw, c->raw_len, &a));
        /* Another chunk's bytes do not prove under this chunk's proof. */
        gd_payload_chunk *o = &p.chunks[(i + 1) % 11];
        CHECK(!gd_payload_verify_chunk(root, i, o->raw, o->raw_len, &a));
    }
    gd_mmr_proof x;
    CHECK_STATUS(gd_payload_prove_chunk(&p, &x, 11), GD_ERR_INVALID);
    gd_buf_free(&file);
    gd_payload_free(&q);
    gd_payload_free(&p);
    free(v);
}

/* ---- corruption ------------------------------------------------------------ */

/* A small payload with both zstd and raw chunks: chunk 0 is zeros. */
static void small_file(const char *codec, gd_buf *file, gd_h root, float **decoded, size_t *n) {
    *n = 300;
    float *v = gen_values(*n, 9, 0.05);
    memset(v, 0, 64 * sizeof(float));
    gd_payload_header h = sample_header(codec, *n, 64);
    gd_payload p;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    serialize(&p, file);
    root_of(&p, root, 6);
    *decoded = malloc(*n * sizeof(float));
    CHECK_OK(gd_payload_decode(&p, *decoded, NULL));
    gd_payload_free(&p);
    free(v);
}

static void test_tamper_every_byte(void) {
    static const char *const codecs[] = {"none", "int8", "topk:0.05"};
    for (size_t c = 0; c < 3; c++) {
        gd_buf file = {0};
        gd_h root;
        float *want = NULL;
        size_t n = 0;
        small_file(codecs[c], &file, root, &want, &n);
        /* A flip can change the value count within the last chunk. */
        float *got = malloc((n + 64) * sizeof(float));
        size_t rejected = 0, other_root = 0, same = 0, zstd_chunks = 0;
        /* Which bytes are zstd frames: there, another frame of the same
         * content (all-zero data matches at any offset) keeps the root. */
        bool *in_frame = calloc(file.len, sizeof(bool));
        gd_payload q;
        CHECK_OK(gd_payload_parse(&q, file.data, file.len, NULL));
        size_t pos = GD_PAYLOAD_HEADER_BYTES + 24 * (size_t)q.header.chunk_count;
        for (uint32_t i = 0; i < q.header.chunk_count; i++) {
            zstd_chunks += q.chunks[i].zstd;
            for (size_t j = 0; j < q.chunks[i].stored_len; j++)
                in_frame[pos + j] = q.chunks[i].zstd;
            pos += q.chunks[i].stored_len;
        }
        gd_payload_free(&q);
        CHECK(zstd_chunks < 5 && (zstd_chunks >= 1 || strncmp(codecs[c], "topk", 4) == 0));
        static const uint8_t masks[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff};
        for (size_t at = 0; at < file.len; at++) {
            for (size_t m = 0; m < sizeof masks; m++) {
                file.data[at] ^= masks[m];
                /* Read in place, the same bytes are refused or give the
                 * same root as parsed. */
                gd_payload_view view;
                gd_h view_root = {0};
                uint32_t view_leaves = 0;
                bool view_ok = gd_payload_view_open(&view, file.data, file.len) == GD_OK &&
                               gd_payload_view_root(&view, view_root, &view_leaves,
                                                    NULL) == GD_OK;
                gd_payload_view_close(&view);
                if (gd_payload_parse(&q, file.data, file.len, NULL) != GD_OK) {
                    CHECK(!view_ok);
                    rejected++;
                } else {
                    gd_h r;
                    root_of(&q, r, 6);
                    CHECK(view_ok && view_leaves == 6 && memcmp(view_root, r, sizeof r) == 0);
                    if (memcmp(r, root, sizeof r) != 0) {
                        other_root++;
                    } else {
                        /* The same root must mean the same values. */
                        same++;
                        CHECK(in_frame[at]);
                        CHECK(q.header.param_count == n);
                        CHECK_OK(gd_payload_decode(&q, got, NULL));
                        CHECK(memcmp(got, want, n * sizeof(float)) == 0);
                    }
                    /* Decoding whatever was accepted must not crash. */
                    CHECK(q.header.param_count <= n + 64);
                    gd_status ds = q.header.param_count <= n + 64
                                       ? gd_payload_decode(&q, got, NULL)
                                       : GD_ERR_PARSE;
                    CHECK(ds == GD_OK || ds == GD_ERR_PARSE);
                    gd_payload_free(&q);
                }
                file.data[at] ^= masks[m];
            }
        }
        fprintf(stderr, "  %-9s %zu bytes x 9 flips: %zu rejected, %zu other root, %zu same\n",
                codecs[c], file.len, rejected, other_root, same);
        free(in_frame);
        free(got);
        free(want);
        gd_buf_free(&file);
    }
}

static void test_truncation(void) {
    gd_buf file = {0};
    gd_h root;
    float *want = NULL;
    size_t n = 0;
    small_file("int4", &file, root, &want, &n);
    gd_payload q;
    for (size_t len = 0; len < file.len; len++)
        CHECK_STATUS(gd_payload_parse(&q, file.data, len, NULL), GD_ERR_PARSE);
    /* A trailing byte is refused too. */
    CHECK_OK(gd_buf_append(&file, "", 1));
    CHECK_STATUS(gd_payload_parse(&q, file.data, file.len, NULL), GD_ERR_PARSE);
    free(want);
    gd_buf_free(&file);
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A file of one header, one table entry and stored bytes. */
static void one_chunk_file(gd_buf *out, const char *codec, uint32_t values, const void *stored,
                           uint32_t stored_len, uint32_t raw_len, uint32_t flags) {
    gd_payload_header h = sample_header(codec, values, values);
    h.chunk_count = 1;
    out->len = 0;
    uint8_t prefix[GD_PAYLOAD_HEADER_BYTES + 24] = {0};
    gd_payload_header_encode(&h, prefix);
    put32(prefix + GD_PAYLOAD_HEADER_BYTES, GD_PAYLOAD_HEADER_BYTES + 24);
    put32(prefix + GD_PAYLOAD_HEADER_BYTES + 8, stored_len);
    put32(prefix + GD_PAYLOAD_HEADER_BYTES + 12, raw_len);
    put32(prefix + GD_PAYLOAD_HEADER_BYTES + 16, flags);
    CHECK_OK(gd_buf_append(out, prefix, sizeof prefix));
    CHECK_OK(gd_buf_append(out, stored, stored_len));
}

static void test_hostile(void) {
    gd_buf f = {0};
    gd_payload q;
    uint8_t zeros[4000] = {0};
    /* The well-formed baseline: 1000 zero floats, raw and as zstd. */
    one_chunk_file(&f, "none", 1000, zeros, 4000, 4000, 0);
    CHECK_OK(gd_payload_parse(&q, f.data, f.len, NULL));
    gd_payload_free(&q);
    uint8_t frame[256], frame2[512];
    size_t fl = ZSTD_compress(frame, sizeof frame, zeros, 4000, 1);
    CHECK(!ZSTD_isError(fl) && fl < 100);
    one_chunk_file(&f, "none", 1000, frame, (uint32_t)fl, 4000, 1);
    CHECK_OK(gd_payload_parse(&q, f.data, f.len, NULL));
    CHECK(q.chunks[0].zstd && q.chunks[0].raw_len == 4000);
    gd_payload_free(&q);
    /* Raw length beyond or below the codec's size for 1000 values. */
    one_chunk_file(&f, "none", 1000, frame, (uint32_t)fl, 4004, 1);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    one_chunk_file(&f, "none", 1000, zeros, 3996, 3996, 0);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    /* A frame that declares another size than the table. */
    size_t fs = ZSTD_compress(frame2, sizeof frame2, zeros, 3996, 1);
    one_chunk_file(&f, "topk:0.5", 1000, frame2, (uint32_t)fs, 3000, 1);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    /* Two frames back to back, and a frame with a byte after it. */
    size_t half = ZSTD_compress(frame2, sizeof frame2, zeros, 2000, 1);
    memcpy(frame2 + half, frame2, half);
    one_chunk_file(&f, "none", 1000, frame2, (uint32_t)(2 * half), 4000, 1);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    memcpy(frame2, frame, fl);
    frame2[fl] = 0;
    one_chunk_file(&f, "none", 1000, frame2, (uint32_t)fl + 1, 4000, 1);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    /* Not zstd at all; unknown flags; uncompressed with mismatched sizes. */
    one_chunk_file(&f, "none", 1000, zeros, 100, 4000, 1);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    one_chunk_file(&f, "none", 1000, zeros, 4000, 4000, 2);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    one_chunk_file(&f, "topk:0.5", 1000, zeros, 100, 200, 0);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    /* A 4-byte "frame" cannot be 1 GiB of values: refused before allocating. */
    gd_payload_header h = sample_header("none", (uint64_t)1 << 28, (uint32_t)1 << 28);
    h.chunk_count = 1;
    uint8_t big[GD_PAYLOAD_HEADER_BYTES + 24 + 4] = {0};
    gd_payload_header_encode(&h, big);
    put32(big + GD_PAYLOAD_HEADER_BYTES, GD_PAYLOAD_HEADER_BYTES + 24);
    put32(big + GD_PAYLOAD_HEADER_BYTES + 8, 4);
    put32(big + GD_PAYLOAD_HEADER_BYTES + 12, (uint32_t)1 << 30);
    put32(big + GD_PAYLOAD_HEADER_BYTES + 16, 1);
    CHECK_STATUS(gd_payload_parse(&q, big, sizeof big, NULL), GD_ERR_PARSE);
    /* A header claiming 2^30 - 1 chunks in a tiny file: refused up front. */
    h = sample_header("int8", ((uint64_t)1 << 30) - 1, 1);
    h.chunk_count = ((uint32_t)1 << 30) - 1;
    gd_payload_header_encode(&h, big);
    CHECK_STATUS(gd_payload_parse(&q, big, sizeof big, NULL), GD_ERR_PARSE);
    /* A file whose chunk parses but does not decode: int8 with a NaN scale. */
    uint8_t int8[4 + 64] = {0};
    put32(int8, 0x7fc00000u);
    one_chunk_file(&f, "int8", 64, int8, sizeof int8, sizeof int8, 0);
    CHECK_OK(gd_payload_parse(&q, f.data, f.len, NULL));
    float out[64];
    CHECK_STATUS(gd_payload_decode(&q, out, NULL), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "chunk 0") != NULL);
    gd_payload_free(&q);
    /* Offsets must follow the table: a chunk pointing into the header. */
    one_chunk_file(&f, "none", 1000, zeros, 4000, 4000, 0);
    put32(f.data + GD_PAYLOAD_HEADER_BYTES, 0);
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    one_chunk_file(&f, "none", 1000, zeros, 4000, 4000, 0);
    put32(f.data + GD_PAYLOAD_HEADER_BYTES + 4, 1); /* offset 2^32 + 168 */
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    one_chunk_file(&f, "none", 1000, zeros, 4000, 4000, 0);
    put32(f.data + GD_PAYLOAD_HEADER_BYTES + 20, 1); /* reserved */
    CHECK_STATUS(gd_payload_parse(&q, f.data, f.len, NULL), GD_ERR_PARSE);
    gd_buf_free(&f);
}

/* ---- files ---------------------------------------------------------------- */

static size_t count_entries(const char *dir) {
    DIR *d = opendir(dir);
    size_t n = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void test_files(void) {
    const size_t n = 3333;
    float *v = gen_values(n, 10, 0.01);
    gd_payload_header h = sample_header("int8", n, 1000);
    gd_payload p, q;
    CHECK_OK(gd_payload_encode(&p, &h, v, NULL, NULL));
    char dir[512], path[600], missing[600];
    snprintf(dir, sizeof dir, "%s/payloads", gd_test_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/round-42.gdpl", dir);
    CHECK_OK(gd_payload_write(&p, path));
    CHECK_OK(gd_payload_write(&p, path)); /* replaces */
    CHECK(count_entries(dir) == 1);
    CHECK_OK(gd_payload_read(&q, path, NULL));
    gd_h a, b;
    root_of(&p, a, 5);
    root_of(&q, b, 5);
    CHECK(memcmp(a, b, sizeof a) == 0);
    gd_payload_free(&q);
    gd_buf mem = {0}, disk = {0};
    serialize(&p, &mem);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f != NULL) {
        CHECK_OK(gd_buf_reserve(&disk, mem.len + 1));
        disk.len = fread(disk.data, 1, mem.len + 1, f);
        fclose(f);
    }
    CHECK(disk.len == mem.len && memcmp(disk.data, mem.data, mem.len) == 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
    /* A missing directory: an error, and nothing created. */
    snprintf(missing, sizeof missing, "%s/no/such/dir/p.gdpl", gd_test_tmpdir());
    CHECK(gd_payload_write(&p, missing) != GD_OK);
    snprintf(missing, sizeof missing, "%s/no", gd_test_tmpdir());
    CHECK(stat(missing, &st) != 0);
    /* The rename fails (the target is a directory): the temporary is gone. */
    snprintf(missing, sizeof missing, "%s/sub", dir);
    CHECK(mkdir(missing, 0700) == 0);
    CHECK_STATUS(gd_payload_write(&p, missing), GD_ERR_IO);
    CHECK(count_entries(dir) == 2);
    CHECK(count_entries(missing) == 0);
    /* Reading a missing or a corrupt file fails cleanly. */
    CHECK(gd_payload_read(&q, missing, NULL) != GD_OK);
    gd_payload_free(&q);
    snprintf(missing, sizeof missing, "%s/none.gdpl", dir);
    CHECK(gd_payload_read(&q, missing, NULL) != GD_OK);
    mem.data[mem.len - 1] ^= 1;
    const char *bad = gd_test_write_file("bad.gdpl", mem.data, mem.len - 7, 0644);
    CHECK_STATUS(gd_payload_read(&q, bad, NULL), GD_ERR_PARSE);
    gd_buf_free(&mem);
    gd_buf_free(&disk);
    gd_payload_free(&q);
    gd_payload_free(&p);
    free(v);
}

int main(void) {
    RUN_TEST(test_header_golden);
    RUN_TEST(test_header_rejects);
    RUN_TEST(test_header_matches);
    RUN_TEST(test_encode_rejects);
    RUN_TEST(test_roundtrip_codecs);
    RUN_TEST(test_thread_independence);
    RUN_TEST(test_encoder_windows);
    RUN_TEST(test_encoder_to_file);
    RUN_TEST(test_zstd_choice);
    RUN_TEST(test_error_feedback);
    RUN_TEST(test_proofs);
    RUN_TEST(test_tamper_every_byte);
    RUN_TEST(test_truncation);
    RUN_TEST(test_hostile);
    RUN_TEST(test_files);
    return gd_test_finish();
}
