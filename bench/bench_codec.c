/* Pseudo-gradient payload throughput on one core (pool NULL): for each
 * codec, encoding N MiB of float32 gradient-like values with error feedback
 * (quantize, leaf hashes, the zstd attempt) and decoding + verifying the
 * file form (decompress, hash, rebuild the MMR, decode every chunk), in MB/s
 * of float32 input, with the wire size. Prints a table, or JSON with --json.
 * --write-sample writes a small payload file and prints its root, for the
 * CLI tests; --participant names its sender (default worker-00000).
 * Usage: gd-bench-codec [--mib N] [--codec C] [--json]
 *        gd-bench-codec --write-sample FILE [--codec C] [--values N] [--chunk-elems N]
 *                       [--participant NAME] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timer.h"
#include "common/bytes.h"
#include "common/rng.h"
#include "trainer/payload.h"

static const char *const k_codecs[] = {"none", "bf16",      "int8",
                                       "int4", "topk:0.01", "topk:0.3"};
#define N_CODECS (sizeof k_codecs / sizeof k_codecs[0])

/* Gradient-like values: roughly normal (a sum of four uniforms, cheap to
 * draw for hundreds of MiB), scale 1e-3, with one value in 1024 a 30x
 * outlier, as a few large coordinates dominate real pseudo-gradients. */
static void gen_values(float *v, size_t n, uint64_t seed) {
    gd_rng rng;
    gd_rng_init(&rng, seed, (uint32_t[4]){0x6772, 0, 0, 0});
    for (size_t i = 0; i < n; i++) {
        uint32_t a = gd_rng_u32(&rng), b = gd_rng_u32(&rng);
        double s = (double)(a & 0xffff) + (double)(a >> 16) + (double)(b & 0xffff) +
                   (double)(b >> 16);
        double x = (s / 65536.0 - 2.0) * 1.7320508 * 1e-3; /* unit variance, then scale */
        if ((b & 0x3ff0000u) == 0)
            x *= 30;
        v[i] = (float)x;
    }
}

static void sample_header(gd_payload_header *h, const gd_codec *codec, size_t n,
                          uint32_t chunk_elems) {
    memset(h, 0, sizeof *h);
    h->run = 1;
    h->round = 0;
    snprintf(h->participant, sizeof h->participant, "worker-00000");
    h->param_count = n;
    for (int i = 0; i < 32; i++)
        h->layout_digest[i] = (uint8_t)(0xa0 + i);
    h->codec = *codec;
    h->chunk_elems = chunk_elems;
}

static int write_sample(const char *path, const char *spec, size_t n, uint32_t chunk_elems,
                        const char *participant) {
    gd_codec codec;
    if (gd_codec_parse(&codec, spec) != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        return 2;
    }
    float *v = malloc(n * sizeof(float));
    if (v == NULL) {
        fprintf(stderr, "error: out of memory\n");
        return 1;
    }
    gen_values(v, n, 1);
    gd_payload_header h;
    sample_header(&h, &codec, n, chunk_elems);
    if (participant != NULL)
        snprintf(h.participant, sizeof h.participant, "%s", participant);
    gd_payload p;
    uint8_t root[GD_MMR_HASH_LEN];
    gd_status s = gd_payload_encode(&p, &h, v, NULL, NULL);
    if (s == GD_OK)
        s = gd_payload_write(&p, path);
    if (s == GD_OK)
        s = gd_payload_root(&p, root, NULL);
    gd_payload_free(&p);
    free(v);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        return 1;
    }
    char hex[2 * GD_MMR_HASH_LEN + 1];
    gd_hex_encode(hex, root, sizeof root, false);
    printf("%s\n", hex);
    return 0;
}

typedef struct bench_result {
    double encode_mb_s, decode_mb_s;
    size_t wire_bytes;
    double zstd_chunks; /* fraction */
} bench_result;

static int bench_codec(float *out, const char *spec, const float *values, float *residual,
                       size_t n, bench_result *r) {
    gd_codec codec;
    if (gd_codec_parse(&codec, spec) != GD_OK)
        return 1;
    gd_payload_header h;
    sample_header(&h, &codec, n, GD_PAYLOAD_CHUNK_ELEMS);
    memset(residual, 0, n * sizeof(float));
    double mb = (double)n * sizeof(float) / 1e6;

    gd_payload p;
    double t0 = gd_bench_now();
    gd_status s = gd_payload_encode(&p, &h, values, residual, NULL);
    double t1 = gd_bench_now();
    gd_buf wire = {0};
    if (s == GD_OK)
        s = gd_payload_serialize(&p, &wire);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s: %s\n", spec, gd_error_detail());
        gd_payload_free(&p);
        return 1;
    }
    uint8_t root[GD_MMR_HASH_LEN], check[GD_MMR_HASH_LEN];
    size_t zstd = 0;
    for (uint32_t i = 0; i < p.header.chunk_count; i++)
        zstd += p.chunks[i].zstd;
    r->zstd_chunks = (double)zstd / p.header.chunk_count;
    r->wire_bytes = wire.len;
    s = gd_payload_root(&p, root, NULL);
    gd_payload_free(&p);

    gd_payload q;
    double t2 = gd_bench_now();
    if (s == GD_OK)
        s = gd_payload_parse(&q, wire.data, wire.len, NULL);
    if (s == GD_OK)
        s = gd_payload_decode(&q, out, NULL);
    double t3 = gd_bench_now();
    if (s == GD_OK)
        s = gd_payload_root(&q, check, NULL);
    gd_payload_free(&q);
    gd_buf_free(&wire);
    if (s != GD_OK || memcmp(root, check, sizeof root) != 0) {
        fprintf(stderr, "error: %s: decode or verify failed: %s\n", spec, gd_error_detail());
        return 1;
    }
    r->encode_mb_s = mb / (t1 - t0);
    r->decode_mb_s = mb / (t3 - t2);
    return 0;
}

static int usage(const char *prog) {
    fprintf(stderr,
            "usage: %s [--mib N] [--codec C] [--json]\n"
            "       %s --write-sample FILE [--codec C] [--values N] [--chunk-elems N]"
            " [--participant NAME]\n",
            prog, prog);
    return 2;
}

int main(int argc, char **argv) {
    long mib = 256, values = 100000, chunk_elems = GD_PAYLOAD_CHUNK_ELEMS;
    int json = 0;
    const char *sample = NULL, *codec = NULL, *participant = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
            mib = atol(argv[++i]);
        else if (strcmp(argv[i], "--write-sample") == 0 && i + 1 < argc)
            sample = argv[++i];
        else if (strcmp(argv[i], "--participant") == 0 && i + 1 < argc)
            participant = argv[++i];
        else if (strcmp(argv[i], "--codec") == 0 && i + 1 < argc)
            codec = argv[++i];
        else if (strcmp(argv[i], "--values") == 0 && i + 1 < argc)
            values = atol(argv[++i]);
        else if (strcmp(argv[i], "--chunk-elems") == 0 && i + 1 < argc)
            chunk_elems = atol(argv[++i]);
        else
            return usage(argv[0]);
    }
    if (sample != NULL) {
        if (values < 1 || values > (1L << 30) || chunk_elems < 1 || chunk_elems > (1L << 28))
            return usage(argv[0]);
        return write_sample(sample, codec ? codec : "int8", (size_t)values,
                            (uint32_t)chunk_elems, participant);
    }
    if (mib < 1 || mib > 16384)
        return usage(argv[0]);
    size_t n = (size_t)mib << 18; /* float32 values in mib MiB */
    float *v = malloc(n * sizeof(float)), *residual = malloc(n * sizeof(float));
    float *out = malloc(n * sizeof(float));
    if (v == NULL || residual == NULL || out == NULL) {
        fprintf(stderr, "error: out of memory for %ld MiB of values\n", mib);
        return 1;
    }
    gen_values(v, n, 1);
    memset(out, 0, n * sizeof(float)); /* a receiver decodes into a buffer it reuses */
    /* --codec C measures that codec alone (for profiling). */
    const char *const *codecs = codec ? &codec : (const char *const *)k_codecs;
    size_t n_codecs = codec ? 1 : N_CODECS;
    bench_result res[N_CODECS];
    for (size_t c = 0; c < n_codecs; c++)
        if (bench_codec(out, codecs[c], v, residual, n, &res[c]) != 0)
            return 1;
    if (json) {
        printf("{\"mib\": %ld, \"codecs\": [", mib);
        for (size_t c = 0; c < n_codecs; c++)
            printf("%s{\"codec\": \"%s\", \"encode_mb_s\": %.1f, \"decode_mb_s\": %.1f, "
                   "\"wire_bytes\": %zu, \"bytes_per_value\": %.4f, \"zstd_chunks\": %.3f}",
                   c ? ", " : "", codecs[c], res[c].encode_mb_s, res[c].decode_mb_s,
                   res[c].wire_bytes, (double)res[c].wire_bytes / (double)n,
                   res[c].zstd_chunks);
        printf("]}\n");
    } else {
        printf("one core, %ld MiB of float32 (%zu values, chunks of %u), error feedback on:\n",
               mib, n, (unsigned)GD_PAYLOAD_CHUNK_ELEMS);
        printf("  %-10s %12s %18s %14s %10s %6s\n", "codec", "encode MB/s", "decode+verify MB/s",
               "wire bytes", "B/value", "zstd");
        for (size_t c = 0; c < n_codecs; c++)
            printf("  %-10s %12.0f %18.0f %14zu %10.4f %5.0f%%\n", codecs[c],
                   res[c].encode_mb_s, res[c].decode_mb_s, res[c].wire_bytes,
                   (double)res[c].wire_bytes / (double)n, 100 * res[c].zstd_chunks);
    }
    free(out);
    free(residual);
    free(v);
    return 0;
}
