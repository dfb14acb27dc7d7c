/* Merkle mountain ranges and state hashes: roots against trees written out
 * by hand with plain SHA-256, a pinned known answer, every proof of small
 * MMRs and its tamperings, the proof wire form, and state hashing against a
 * manual MMR over its chunks. */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/pool.h"
#include "proofs/mmr.h"
#include "proofs/state_hash.h"
#include "tests/support/testkit.h"

typedef uint8_t gd_h[GD_MMR_HASH_LEN];

/* The documented hashing, written out with plain SHA-256 so the library's
 * helpers are checked rather than trusted. */
static void ref_leaf(gd_h out, uint32_t index, const void *data, size_t len) {
    uint8_t buf[64] = {0x00, (uint8_t)index, (uint8_t)(index >> 8), (uint8_t)(index >> 16),
                       (uint8_t)(index >> 24)};
    if (len > 0)
        memcpy(buf + 5, data, len);
    gd_sha256(out, buf, 5 + len);
}

static unsigned popcount32(uint32_t v) {
    unsigned n = 0;
    for (; v != 0; v &= v - 1)
        n++;
    return n;
}

static void ref_node(gd_h out, const gd_h left, const gd_h right) {
    uint8_t buf[65] = {0x01};
    memcpy(buf + 1, left, 32);
    memcpy(buf + 33, right, 32);
    gd_sha256(out, buf, sizeof buf);
}

/* Leaf i of the small trees holds the one byte 'a' + i. */
static void small_leaf(gd_h out, uint32_t i) {
    char c = (char)('a' + i);
    ref_leaf(out, i, &c, 1);
}

/* Checks gd_mmr_root and gd_mmr_peaks_root over the first n small leaves. */
static void check_small_root(uint32_t n, const gd_h expected) {
    gd_mmr mmr;
    gd_mmr_peaks peaks;
    gd_mmr_init(&mmr);
    gd_mmr_peaks_init(&peaks);
    for (uint32_t i = 0; i < n; i++) {
        gd_h leaf;
        small_leaf(leaf, i);
        CHECK_OK(gd_mmr_append(&mmr, leaf));
        CHECK_OK(gd_mmr_peaks_append(&peaks, leaf));
    }
    CHECK(mmr.n_leaves == n);
    CHECK(mmr.n_nodes == 2 * (size_t)n - popcount32(n));
    gd_h a, b;
    CHECK_OK(gd_mmr_root(&mmr, a));
    CHECK_OK(gd_mmr_peaks_root(&peaks, b));
    if (memcmp(a, expected, 32) != 0 || memcmp(b, expected, 32) != 0) {
        fprintf(stderr, "root of %u leaves differs\n", (unsigned)n);
        gd_test_failures++;
    }
    gd_mmr_free(&mmr);
}

static void test_hash_helpers(void) {
    gd_h a, b, l, r;
    const char *data = "some leaf bytes";
    gd_mmr_hash_leaf(a, 0x01020304, data, strlen(data));
    ref_leaf(b, 0x01020304, data, strlen(data));
    CHECK(memcmp(a, b, 32) == 0);
    gd_mmr_hash_leaf(a, 7, NULL, 0);
    ref_leaf(b, 7, NULL, 0);
    CHECK(memcmp(a, b, 32) == 0);
    /* A large leaf takes the streaming path; compare with a flat buffer. */
    size_t big = 5000;
    uint8_t *flat = malloc(5 + big);
    flat[0] = 0x00;
    flat[1] = 9, flat[2] = 0, flat[3] = 0, flat[4] = 0;
    for (size_t i = 0; i < big; i++)
        flat[5 + i] = (uint8_t)(i * 7);
    gd_mmr_hash_leaf(a, 9, flat + 5, big);
    gd_sha256(b, flat, 5 + big);
    CHECK(memcmp(a, b, 32) == 0);
    free(flat);
    small_leaf(l, 0);
    small_leaf(r, 1);
    gd_mmr_hash_node(a, l, r);
    ref_node(b, l, r);
    CHECK(memcmp(a, b, 32) == 0);
    /* A leaf's position is part of its hash. */
    gd_mmr_hash_leaf(a, 0, "a", 1);
    gd_mmr_hash_leaf(b, 1, "a", 1);
    CHECK(memcmp(a, b, 32) != 0);
}

static void test_small_trees(void) {
    gd_h L[11];
    for (uint32_t i = 0; i < 11; i++)
        small_leaf(L[i], i);
    gd_h n01, n23, n45, n67, n89, p4, p8, t, root;

    check_small_root(1, L[0]); /* one peak is its own root */

    ref_node(n01, L[0], L[1]);
    check_small_root(2, n01); /* node(L0, L1) */

    ref_node(root, n01, L[2]);
    check_small_root(3, root); /* node(node(L0, L1), L2) */

    ref_node(n23, L[2], L[3]);
    ref_node(p4, n01, n23);
    check_small_root(4, p4); /* P4 = node(node(L0, L1), node(L2, L3)) */

    ref_node(root, p4, L[4]);
    check_small_root(5, root); /* node(P4, L4) */

    ref_node(n45, L[4], L[5]);
    ref_node(t, n45, L[6]);
    ref_node(root, p4, t);
    check_small_root(7, root); /* node(P4, node(node(L4, L5), L6)) */

    ref_node(n67, L[6], L[7]);
    ref_node(t, n45, n67);
    ref_node(p8, p4, t);
    check_small_root(8, p8); /* P8 = node(P4, node(node(L4, L5), node(L6, L7))) */

    ref_node(n89, L[8], L[9]);
    ref_node(t, n89, L[10]);
    ref_node(root, p8, t);
    check_small_root(11, root); /* node(P8, node(node(L8, L9), L10)) */
}

/* Known answer: leaves "a", "b", "c" at indices 0, 1, 2.
 *   L0 = SHA256(00 00000000 61) = 02c17dbb...f6bbdc
 *   L1 = SHA256(00 01000000 62) = 6e1f31fc...36c67e
 *   L2 = SHA256(00 02000000 63) = f71f44ec...41982a
 *   root = SHA256(01 || SHA256(01 || L0 || L1) || L2) */
static void test_known_answer(void) {
    gd_h leaf;
    gd_mmr_hash_leaf(leaf, 0, "a", 1);
    CHECK_HEX_EQ(leaf, 32, "02c17dbb89fbdd67b6e8230609dfc3fde54c4cbc6ade4972b48a12cab1f6bbdc");
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    gd_mmr mmr = {0};
    for (uint32_t i = 0; i < 3; i++) {
        char c = (char)('a' + i);
        gd_mmr_hash_leaf(leaf, i, &c, 1);
        CHECK_OK(gd_mmr_append(&mmr, leaf));
        CHECK_OK(gd_mmr_peaks_append(&peaks, leaf));
    }
    gd_h root;
    CHECK_OK(gd_mmr_root(&mmr, root));
    CHECK_HEX_EQ(root, 32, "c41cf10a2e1529814c0e9a26d3ec9272cce8fa372aff4fd0761ded795fd0428f");
    CHECK_OK(gd_mmr_peaks_root(&peaks, root));
    CHECK_HEX_EQ(root, 32, "c41cf10a2e1529814c0e9a26d3ec9272cce8fa372aff4fd0761ded795fd0428f");
    gd_mmr_free(&mmr);
}

static void test_empty_and_limits(void) {
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    gd_h root, leaf = {1};
    CHECK_STATUS(gd_mmr_root(&mmr, root), GD_ERR_INVALID);
    gd_mmr_proof proof;
    CHECK_STATUS(gd_mmr_prove(&mmr, &proof, 0), GD_ERR_INVALID);
    CHECK_OK(gd_mmr_append(&mmr, leaf));
    CHECK_STATUS(gd_mmr_prove(&mmr, &proof, 1), GD_ERR_INVALID);
    gd_mmr_free(&mmr);
    gd_mmr_free(&mmr); /* freeing twice is harmless */

    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    CHECK_STATUS(gd_mmr_peaks_root(&peaks, root), GD_ERR_INVALID);
    peaks.n_leaves = GD_MMR_MAX_LEAVES; /* a full range: one peak of height 30 */
    CHECK_STATUS(gd_mmr_peaks_append(&peaks, leaf), GD_ERR_LIMIT);
    CHECK_OK(gd_mmr_peaks_root(&peaks, root));
    CHECK(memcmp(root, peaks.peak[30], 32) == 0);
}

/* Builds an MMR of n leaves whose data is LE32(i) || LE32(n). */
static void build(gd_mmr *mmr, uint32_t n, gd_h *leaves) {
    gd_mmr_init(mmr);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t data[8] = {(uint8_t)i, (uint8_t)(i >> 8), 0, 0, (uint8_t)n, 0, 0, 0};
        gd_mmr_hash_leaf(leaves[i], i, data, sizeof data);
        CHECK_OK(gd_mmr_append(mmr, leaves[i]));
    }
}

static uint32_t expected_proof_len(uint32_t count, uint32_t index) {
    /* Height of the leaf's mountain plus the other peaks. */
    uint32_t start = 0, height = 0;
    for (int h = 31; h >= 0; h--) {
        if (!(count >> h & 1))
            continue;
        if (index < start + (1u << h)) {
            height = (uint32_t)h;
            break;
        }
        start += 1u << h;
    }
    return height + popcount32(count) - 1;
}

static void test_prove_verify(void) {
    gd_h leaves[80];
    for (uint32_t n = 1; n <= 70; n++) {
        gd_mmr mmr;
        build(&mmr, n, leaves);
        gd_h root;
        CHECK_OK(gd_mmr_root(&mmr, root));
        for (uint32_t i = 0; i < n; i++) {
            gd_mmr_proof proof, bad;
            CHECK_OK(gd_mmr_prove(&mmr, &proof, i));
            CHECK(proof.leaf_index == i && proof.leaf_count == n);
            CHECK(proof.n_hashes == expected_proof_len(n, i));
            CHECK(gd_mmr_verify(root, &proof, leaves[i]));
            /* Every byte of the leaf hash, the proof hashes and the root
             * for small ranges; one rotating byte each beyond (speed). */
            int every = n <= 8 || n == 23;
            for (int byte = 0; byte < 32; byte++) {
                if (!every && byte != (int)(i % 32))
                    continue;
                gd_h x;
                memcpy(x, leaves[i], 32);
                x[byte] ^= 0x01;
                CHECK(!gd_mmr_verify(root, &proof, x));
                memcpy(x, root, 32);
                x[byte] ^= 0x80;
                CHECK(!gd_mmr_verify(x, &proof, leaves[i]));
                for (uint32_t k = 0; k < proof.n_hashes; k++) {
                    bad = proof;
                    bad.hashes[k][(byte + (int)k) % 32] ^= 0x10;
                    CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
                }
            }
            /* Another leaf's hash, or this one at another index. */
            CHECK(!gd_mmr_verify(root, &proof, leaves[(i + 1) % n]) || n == 1);
            for (uint32_t j = 0; j < n + 3; j++) {
                /* All other indices while small, then the near ones. */
                if (j == i || (n > 16 && j > 0 && j < n - 1 && (j + 2 < i || j > i + 2)))
                    continue;
                bad = proof;
                bad.leaf_index = j;
                CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            }
            /* Another count: rejected whenever that count needs another
             * proof length (the root does not bind the count when the
             * shape is the same; see test_count_not_in_root). */
            for (uint32_t c = 0; c <= n + 8; c++) {
                if (c == n)
                    continue;
                bad = proof;
                bad.leaf_count = c;
                if (c == 0 || i >= c || expected_proof_len(c, i) != proof.n_hashes)
                    CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            }
            bad = proof;
            bad.leaf_count = GD_MMR_MAX_LEAVES + 1;
            CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            bad.leaf_count = UINT32_MAX;
            CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            /* Truncated, extended, and absurd lengths (never read). */
            if (proof.n_hashes > 0) {
                bad = proof;
                bad.n_hashes--;
                CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            }
            bad = proof;
            memcpy(bad.hashes[bad.n_hashes], root, 32);
            bad.n_hashes++;
            CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            bad.n_hashes = GD_MMR_PROOF_MAX + 1;
            CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
            bad.n_hashes = UINT32_MAX;
            CHECK(!gd_mmr_verify(root, &bad, leaves[i]));
        }
        /* The streaming peaks agree with the node-storing MMR. */
        gd_mmr_peaks peaks;
        gd_mmr_peaks_init(&peaks);
        for (uint32_t i = 0; i < n; i++)
            CHECK_OK(gd_mmr_peaks_append(&peaks, leaves[i]));
        gd_h root2;
        CHECK_OK(gd_mmr_peaks_root(&peaks, root2));
        CHECK(memcmp(root, root2, 32) == 0);
        gd_mmr_free(&mmr);
    }
}

/* The bagged root commits to the leaves, not to the count: leaf 0 of 5
 * leaves (peaks P4, L4) has the same equation as leaf 0 of 6 (peaks P4,
 * N45) with L4 in N45's slot. So a verifier must compare the proof's
 * leaf_count with the published count; verify alone cannot. */
static void test_count_not_in_root(void) {
    gd_h leaves[5], root;
    gd_mmr mmr;
    build(&mmr, 5, leaves);
    CHECK_OK(gd_mmr_root(&mmr, root));
    gd_mmr_proof proof;
    CHECK_OK(gd_mmr_prove(&mmr, &proof, 0));
    proof.leaf_count = 6;
    CHECK(gd_mmr_verify(root, &proof, leaves[0]));
    gd_mmr_free(&mmr);
}

static void test_proof_wire(void) {
    gd_h leaves[40];
    gd_mmr mmr;
    build(&mmr, 37, leaves);
    for (uint32_t i = 0; i < 37; i += 5) {
        gd_mmr_proof proof, back;
        CHECK_OK(gd_mmr_prove(&mmr, &proof, i));
        gd_buf buf = {0};
        CHECK_OK(gd_mmr_proof_encode(&proof, &buf));
        CHECK(buf.len == 12 + 32 * (size_t)proof.n_hashes);
        CHECK(buf.data[0] == (uint8_t)i && buf.data[4] == 37 && buf.data[8] == proof.n_hashes);
        CHECK_OK(gd_mmr_proof_decode(&back, buf.data, buf.len));
        CHECK(back.leaf_index == i && back.leaf_count == 37 && back.n_hashes == proof.n_hashes);
        CHECK(memcmp(back.hashes, proof.hashes, 32 * (size_t)proof.n_hashes) == 0);
        /* Every truncation and any trailing byte is refused. */
        for (size_t len = 0; len < buf.len; len++)
            CHECK_STATUS(gd_mmr_proof_decode(&back, buf.data, len), GD_ERR_PARSE);
        CHECK_OK(gd_buf_append(&buf, "", 1));
        CHECK_STATUS(gd_mmr_proof_decode(&back, buf.data, buf.len), GD_ERR_PARSE);
        gd_buf_free(&buf);
    }
    gd_mmr_free(&mmr);

    /* Headers that are out of range even with the right length. */
    uint8_t wire[12 + 65 * 32] = {0};
    uint8_t *p = wire;
    gd_mmr_proof out;
    p[4] = 1; /* index 0 of 1 leaf, no hashes: well formed */
    CHECK_OK(gd_mmr_proof_decode(&out, wire, 12));
    p[8] = 65;
    CHECK_STATUS(gd_mmr_proof_decode(&out, wire, 12 + 65 * 32), GD_ERR_PARSE);
    p[8] = 64;
    CHECK_OK(gd_mmr_proof_decode(&out, wire, 12 + 64 * 32));
    p[8] = 0;
    p[0] = 1; /* index 1 of 1 */
    CHECK_STATUS(gd_mmr_proof_decode(&out, wire, 12), GD_ERR_PARSE);
    p[0] = 0;
    p[4] = 0; /* count 0 */
    CHECK_STATUS(gd_mmr_proof_decode(&out, wire, 12), GD_ERR_PARSE);
    p[4] = 1, p[7] = 0x40; /* count 2^30 + 1 */
    CHECK_STATUS(gd_mmr_proof_decode(&out, wire, 12), GD_ERR_PARSE);
    p[4] = 0; /* count 2^30 exactly */
    CHECK_OK(gd_mmr_proof_decode(&out, wire, 12));
    p[8] = 0xff, p[11] = 0xff; /* a huge n_hashes must not overflow the length */
    CHECK_STATUS(gd_mmr_proof_decode(&out, wire, 12), GD_ERR_PARSE);

    /* Encode refuses what decode would refuse. */
    gd_mmr_proof bad = {.leaf_index = 0, .leaf_count = 1, .n_hashes = GD_MMR_PROOF_MAX + 1};
    gd_buf buf = {0};
    CHECK_STATUS(gd_mmr_proof_encode(&bad, &buf), GD_ERR_INVALID);
    bad.n_hashes = 0;
    bad.leaf_index = 1;
    CHECK_STATUS(gd_mmr_proof_encode(&bad, &buf), GD_ERR_INVALID);
    CHECK(buf.len == 0);
    gd_buf_free(&buf);
}

/* Deterministic test bytes. */
static uint8_t *test_bytes(size_t len, uint32_t seed) {
    uint8_t *b = malloc(len ? len : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        b[i] = (uint8_t)x;
    }
    return b;
}

/* The root over data in chunk_bytes chunks, the slow obvious way. */
static void manual_state_root(gd_h root, const uint8_t *data, size_t len, size_t chunk_bytes,
                              uint32_t *count) {
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    size_t off = 0;
    uint32_t i = 0;
    do {
        size_t n = len - off < chunk_bytes ? len - off : chunk_bytes;
        gd_h leaf;
        gd_mmr_hash_leaf(leaf, i++, data + off, n);
        CHECK_OK(gd_mmr_append(&mmr, leaf));
        off += n;
    } while (off < len);
    CHECK_OK(gd_mmr_root(&mmr, root));
    *count = mmr.n_leaves;
    gd_mmr_free(&mmr);
}

static void test_state_hash_splits(void) {
    const size_t len = 1000, cb = 64;
    uint8_t *data = test_bytes(len, 1);
    gd_h want, got;
    uint32_t want_n = 0, n = 0;
    manual_state_root(want, data, len, cb, &want_n);
    CHECK(want_n == 16);

    gd_bytes_part one = {data, len};
    CHECK_OK(gd_state_hash(NULL, &one, 1, cb, got, &n));
    CHECK(n == 16 && memcmp(got, want, 32) == 0);

    /* Chunk 0 spans three parts; empty parts at the start, the middle and
     * the end; a part boundary on a chunk boundary. */
    gd_bytes_part split[] = {{NULL, 0},      {data, 10},         {data + 10, 10},
                             {data + 20, 0}, {data + 20, 108},   {data + 128, 500},
                             {NULL, 0},      {data + 628, 372},  {data + 1000, 0}};
    CHECK_OK(gd_state_hash(NULL, split, sizeof split / sizeof split[0], cb, got, &n));
    CHECK(n == 16 && memcmp(got, want, 32) == 0);

    /* One byte per part. */
    gd_bytes_part *bytes = malloc(len * sizeof *bytes);
    for (size_t i = 0; i < len; i++)
        bytes[i] = (gd_bytes_part){data + i, 1};
    CHECK_OK(gd_state_hash(NULL, bytes, len, cb, got, &n));
    CHECK(n == 16 && memcmp(got, want, 32) == 0);

    /* Random splits with empty parts. */
    uint32_t x = 12345;
    for (int round = 0; round < 50; round++) {
        size_t n_parts = 0, off = 0;
        while (off < len) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            size_t take = x % 4 == 0 ? 0 : x % 150;
            if (take > len - off)
                take = len - off;
            bytes[n_parts++] = (gd_bytes_part){take ? data + off : NULL, take};
            off += take;
        }
        CHECK_OK(gd_state_hash(NULL, bytes, n_parts, cb, got, NULL));
        CHECK(memcmp(got, want, 32) == 0);
    }
    free(bytes);

    /* One changed byte anywhere changes the root. */
    size_t spots[] = {0, 63, 64, 500, 999};
    for (size_t s = 0; s < sizeof spots / sizeof spots[0]; s++) {
        data[spots[s]] ^= 1;
        CHECK_OK(gd_state_hash(NULL, &one, 1, cb, got, NULL));
        CHECK(memcmp(got, want, 32) != 0);
        data[spots[s]] ^= 1;
    }
    CHECK_OK(gd_state_hash(NULL, &one, 1, cb, got, NULL));
    CHECK(memcmp(got, want, 32) == 0);
    free(data);
}

static void test_state_hash_counts(void) {
    const size_t cb = 100;
    uint8_t *data = test_bytes(1001, 2);
    gd_h want, got;
    uint32_t want_n, n;
    size_t lens[] = {1, 99, 100, 101, 1000, 1001};
    uint32_t counts[] = {1, 1, 1, 2, 10, 11};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        gd_bytes_part part = {data, lens[k]};
        CHECK_OK(gd_state_hash(NULL, &part, 1, cb, got, &n));
        CHECK(n == counts[k]);
        manual_state_root(want, data, lens[k], cb, &want_n);
        CHECK(want_n == counts[k] && memcmp(got, want, 32) == 0);
    }
    /* Empty: one empty chunk, with no parts or only empty ones. */
    gd_h empty;
    gd_mmr_hash_leaf(empty, 0, NULL, 0);
    CHECK_OK(gd_state_hash(NULL, NULL, 0, cb, got, &n));
    CHECK(n == 1 && memcmp(got, empty, 32) == 0);
    gd_bytes_part none[2] = {{NULL, 0}, {data, 0}};
    CHECK_OK(gd_state_hash(NULL, none, 2, cb, got, &n));
    CHECK(n == 1 && memcmp(got, empty, 32) == 0);

    /* Refusals: chunk size 0, too many chunks, a part without data. */
    gd_bytes_part part = {data, 10};
    n = 77;
    CHECK_STATUS(gd_state_hash(NULL, &part, 1, 0, got, &n), GD_ERR_INVALID);
    CHECK(n == 77);
    /* Never read: the limit is checked before hashing. */
    gd_bytes_part huge = {data, (size_t)GD_MMR_MAX_LEAVES + 1};
    CHECK_STATUS(gd_state_hash(NULL, &huge, 1, 1, got, NULL), GD_ERR_LIMIT);
    huge.len = (size_t)GD_MMR_MAX_LEAVES;
    gd_bytes_part two_huge[2] = {huge, {data, 1}};
    CHECK_STATUS(gd_state_hash(NULL, two_huge, 2, 1, got, NULL), GD_ERR_LIMIT);
    gd_bytes_part missing = {NULL, 5};
    CHECK_STATUS(gd_state_hash(NULL, &missing, 1, cb, got, NULL), GD_ERR_INVALID);
    free(data);
}

/* The same root for any thread count, across several tasks and rounds:
 * 1-byte chunks make tasks of 64 chunks and rounds of 16384. */
static void test_state_hash_threads(void) {
    const size_t len = 16384 + 3000;
    uint8_t *data = test_bytes(len, 3);
    gd_bytes_part parts[3] = {{data, 10000}, {data + 10000, 0}, {data + 10000, len - 10000}};
    gd_h want, got;
    uint32_t want_n, n;
    manual_state_root(want, data, len, 1, &want_n);
    CHECK_OK(gd_state_hash(NULL, parts, 3, 1, got, &n));
    CHECK(n == want_n && n == len && memcmp(got, want, 32) == 0);
    /* Larger chunks: one chunk per task at 1 MiB, several per task below. */
    gd_h want_big;
    manual_state_root(want_big, data, len, 1000, &want_n);
    for (int threads = 0; threads <= 3; threads++) {
        gd_pool *pool = NULL;
        if (threads > 0)
            CHECK_OK(gd_pool_new(&pool, threads));
        CHECK_OK(gd_state_hash(pool, parts, 3, 1, got, &n));
        CHECK(n == len && memcmp(got, want, 32) == 0);
        CHECK_OK(gd_state_hash(pool, parts, 3, 1000, got, &n));
        CHECK(n == want_n && memcmp(got, want_big, 32) == 0);
        gd_pool_free(pool);
    }
    free(data);
}

int main(void) {
    RUN_TEST(test_hash_helpers);
    RUN_TEST(test_small_trees);
    RUN_TEST(test_known_answer);
    RUN_TEST(test_empty_and_limits);
    RUN_TEST(test_prove_verify);
    RUN_TEST(test_count_not_in_root);
    RUN_TEST(test_proof_wire);
    RUN_TEST(test_state_hash_splits);
    RUN_TEST(test_state_hash_counts);
    RUN_TEST(test_state_hash_threads);
    return gd_test_finish();
}
