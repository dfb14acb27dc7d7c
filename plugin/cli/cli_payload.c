/* payload inspect | verify: a pseudo-gradient payload file (trainer/payload.h)
 * from the command line: what it holds, and whether it matches a committed
 * root. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/cli/cli_util.h"
#include "trainer/payload.h"

/* Chunks listed before the table is abbreviated (--all lists every one). */
#define GD_INSPECT_CHUNKS 20

static void gd_root_hex(const uint8_t root[GD_MMR_HASH_LEN], char hex[2 * GD_MMR_HASH_LEN + 1]) {
    gd_hex_encode(hex, root, GD_MMR_HASH_LEN, false);
}

/* --- inspect ------------------------------------------------------------------ */

static int gd_inspect_json(gd_cli *cli, const gd_payload *p, const char *codec,
                           const char *layout, const char *spec, const char *root,
                           uint32_t leaves, size_t shown) {
    const gd_payload_header *h = &p->header;
    json_t *chunks = json_array();
    for (size_t i = 0; chunks != NULL && i < shown; i++) {
        const gd_payload_chunk *c = &p->chunks[i];
        json_t *e = json_pack("{s:I,s:I,s:I,s:b}", "index", (json_int_t)i, "stored_bytes",
                              (json_int_t)c->stored_len, "raw_bytes", (json_int_t)c->raw_len,
                              "zstd", c->zstd);
        if (e == NULL || json_array_append_new(chunks, e) != 0) {
            json_decref(chunks);
            chunks = NULL;
        }
    }
    if (chunks == NULL)
        return gd_cli_print_json(cli, NULL);
    /* run and round are 64-bit: as JSON integers (json_int_t is 64-bit). */
    return gd_cli_print_json(
        cli, json_pack("{s:I,s:I,s:s,s:I,s:s,s:s,s:s,s:I,s:I,s:s,s:I,s:I,s:o}", "run",
                       (json_int_t)h->run, "round", (json_int_t)h->round, "participant",
                       h->participant, "param_count", (json_int_t)h->param_count,
                       "layout_digest", layout, "spec_digest", spec, "codec", codec,
                       "chunk_elems",
                       (json_int_t)h->chunk_elems, "chunk_count", (json_int_t)h->chunk_count,
                       "root", root, "leaf_count", (json_int_t)leaves, "wire_bytes",
                       (json_int_t)gd_payload_wire_bytes(p), "chunks", chunks));
}

static void gd_inspect_text(gd_cli *cli, const char *path, const gd_payload *p,
                            const char *codec, const char *layout, const char *spec,
                            const char *root, uint32_t leaves, size_t shown) {
    const gd_payload_header *h = &p->header;
    FILE *o = cli->out;
    fprintf(o, "payload %s\n", path);
    fprintf(o, "  run:          %" PRIu64 "\n", h->run);
    fprintf(o, "  round:        %" PRIu64 "\n", h->round);
    fprintf(o, "  participant:  %s\n", h->participant[0] ? h->participant : "(empty)");
    fprintf(o, "  param count:  %" PRIu64 "\n", h->param_count);
    fprintf(o, "  layout:       %s\n", layout);
    fprintf(o, "  run spec:     %s\n", spec);
    fprintf(o, "  codec:        %s\n", codec);
    fprintf(o, "  chunk size:   %u values\n", (unsigned)h->chunk_elems);
    fprintf(o, "  chunk count:  %u\n", (unsigned)h->chunk_count);
    fprintf(o, "  chunks:\n    %8s %12s %12s  %s\n", "index", "stored", "raw", "form");
    for (size_t i = 0; i < shown; i++) {
        const gd_payload_chunk *c = &p->chunks[i];
        fprintf(o, "    %8zu %12zu %12zu  %s\n", i, c->stored_len, c->raw_len,
                c->zstd ? "zstd" : "raw");
    }
    if (shown < h->chunk_count)
        fprintf(o, "    ... %zu more chunks (--all lists them)\n", h->chunk_count - shown);
    fprintf(o, "  root:         %s (%u leaves)\n", root, (unsigned)leaves);
    fprintf(o, "  wire size:    %zu bytes\n", gd_payload_wire_bytes(p));
}

static int gd_run_payload_inspect(gd_cli *cli, gd_args *args) {
    const char *path = args->positional[0];
    gd_payload p;
    gd_status s = gd_payload_read(&p, path, NULL);
    uint8_t root[GD_MMR_HASH_LEN];
    uint32_t leaves = 0;
    if (s == GD_OK)
        s = gd_payload_root(&p, root, &leaves);
    if (s != GD_OK) {
        gd_payload_free(&p);
        return gd_cli_fail(cli, s == GD_ERR_INVALID ? GD_ERR_PARSE : s);
    }
    char codec[32], layout[65], spec[65], root_hex[2 * GD_MMR_HASH_LEN + 1];
    gd_codec_format(&p.header.codec, codec, sizeof codec);
    gd_hex_encode(layout, p.header.layout_digest, sizeof p.header.layout_digest, false);
    gd_hex_encode(spec, p.header.spec_digest, sizeof p.header.spec_digest, false);
    gd_root_hex(root, root_hex);
    size_t shown = p.header.chunk_count;
    if (!gd_flag(args, "all") && shown > GD_INSPECT_CHUNKS)
        shown = GD_INSPECT_CHUNKS;
    int rc = GD_EXIT_OK;
    if (gd_flag(args, "json"))
        rc = gd_inspect_json(cli, &p, codec, layout, spec, root_hex, leaves, shown);
    else
        gd_inspect_text(cli, path, &p, codec, layout, spec, root_hex, leaves, shown);
    gd_payload_free(&p);
    return rc;
}

static const gd_opt_spec gd_inspect_opts[] = {
    {"all", NULL, "list every chunk (default: the first 20)"},
    {"json", NULL, "print the fields as JSON (chunks abbreviated the same way)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_payload_inspect = {
    "payload inspect", "FILE", 1, 1,
    "Show a pseudo-gradient payload file: header, chunk table, MMR root, size.",
    "Parsing checks the whole file (header, table, zstd frames, sizes) and\n"
    "rebuilds the MMR, so the root shown is the one the chunks commit to.",
    gd_inspect_opts, gd_run_payload_inspect,
};

/* --- verify ------------------------------------------------------------------- */

/* Decodes every chunk through its codec's validation, one chunk at a time
 * so a file claiming a huge value count needs only one chunk of memory. */
static gd_status gd_decode_all(const gd_payload *p) {
    const gd_payload_header *h = &p->header;
    float *values = malloc((size_t)h->chunk_elems * sizeof(float));
    if (values == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a chunk of %u values",
                       (unsigned)h->chunk_elems);
    gd_status s = GD_OK;
    for (uint32_t i = 0; s == GD_OK && i < h->chunk_count; i++) {
        uint64_t left = h->param_count - (uint64_t)i * h->chunk_elems;
        size_t n = left < h->chunk_elems ? (size_t)left : h->chunk_elems;
        s = gd_codec_decode_chunk(&h->codec, p->chunks[i].raw, p->chunks[i].raw_len, values, n);
        if (s != GD_OK)
            s = gd_fail_context(s, "chunk %u does not decode", (unsigned)i);
    }
    free(values);
    return s;
}

static int gd_run_payload_verify(gd_cli *cli, gd_args *args) {
    const char *path = args->positional[0], *want_hex = gd_arg(args, "root");
    if (want_hex == NULL)
        return gd_cli_usage(cli, args, "--root HEX is required");
    uint8_t want[GD_MMR_HASH_LEN];
    size_t got_len = 0;
    if (strlen(want_hex) != 2 * GD_MMR_HASH_LEN ||
        gd_hex_decode(want, sizeof want, &got_len, want_hex, strlen(want_hex)) != GD_OK)
        return gd_cli_usage(cli, args, "--root must be %d hex digits (a 32-byte MMR root)",
                            2 * GD_MMR_HASH_LEN);
    gd_payload p;
    gd_status s = gd_payload_read(&p, path, NULL);
    if (s == GD_OK)
        s = gd_decode_all(&p);
    uint8_t root[GD_MMR_HASH_LEN];
    uint32_t leaves = 0;
    if (s == GD_OK)
        s = gd_payload_root(&p, root, &leaves);
    uint32_t chunks = p.header.chunk_count;
    size_t wire = gd_payload_wire_bytes(&p);
    gd_payload_free(&p);
    if (s != GD_OK)
        return gd_cli_fail(cli, s == GD_ERR_INVALID ? GD_ERR_PARSE : s);
    char root_hex[2 * GD_MMR_HASH_LEN + 1];
    gd_root_hex(root, root_hex);
    if (!gd_bytes_equal_ct(root, want, sizeof root)) {
        fprintf(cli->err, "error: %s has root %s, not the --root given: its header or chunks "
                          "differ from the committed payload\n",
                path, root_hex);
        return GD_EXIT_FAIL;
    }
    fprintf(cli->out, "ok: %u chunks match root %s (%u leaves, %zu bytes)\n", (unsigned)chunks,
            root_hex, (unsigned)leaves, wire);
    return GD_EXIT_OK;
}

static const gd_opt_spec gd_verify_opts[] = {
    {"root", "HEX", "the committed MMR root (64 hex digits)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_payload_verify = {
    "payload verify", "FILE", 1, 1,
    "Check a payload file against a committed root: every chunk decodes and the MMR matches.",
    "Exit status 0 only if the file parses, every chunk passes its codec's\n"
    "validation and the recomputed root equals --root; 1 otherwise (2 for a\n"
    "malformed --root). The root binds the header too: run, round, participant,\n"
    "layout and codec.",
    gd_verify_opts, gd_run_payload_verify,
};
