/* Safetensors: writer/reader round trips (mmap and in-memory), a file laid
 * out exactly as Hugging Face writes it, and rejection of every malformed
 * header the reader must refuse. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file.h"
#include "tests/support/testkit.h"
#include "trainer/safetensors.h"

static const char *scratch(const char *name) {
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", gd_test_tmpdir(), name);
    return p;
}

/* No writer temp file ("<name>.tmp-XXXXXX") is left in the scratch dir. */
static int count_temp_files(void) {
    int n = 0;
    DIR *d = opendir(gd_test_tmpdir());
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp-") != NULL;
    if (d != NULL)
        closedir(d);
    return n;
}

static uint64_t read_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---- round trip ---- */

static float w_data[3][4];
static double d_data[5];
static int32_t i_data[2][2][2];
static uint8_t u_data[7];
static uint16_t bf_data[3] = {0x3f80, 0xc000, 0x7f80}; /* 1.0, -2.0, +inf in bfloat16 */
static float s_data = 3.25f;

static size_t make_tensors(gd_st_write_tensor *t) {
    for (int i = 0; i < 12; i++)
        w_data[i / 4][i % 4] = (float)i * 0.5f;
    for (int i = 0; i < 5; i++)
        d_data[i] = 1.0 / (i + 1);
    for (int i = 0; i < 8; i++)
        ((int32_t *)i_data)[i] = -i * 1000;
    for (int i = 0; i < 7; i++)
        u_data[i] = (uint8_t)(250 + i);
    size_t n = 0;
    t[n++] = (gd_st_write_tensor){"model.w", GD_ST_F32, 2, {3, 4}, w_data};
    /* A zero-size tensor in the middle: its offsets are [x, x]. */
    t[n++] = (gd_st_write_tensor){"empty", GD_ST_F32, 2, {0, 4}, NULL};
    t[n++] = (gd_st_write_tensor){"d", GD_ST_F64, 1, {5}, d_data};
    t[n++] = (gd_st_write_tensor){"idx", GD_ST_I32, 3, {2, 2, 2}, i_data};
    t[n++] = (gd_st_write_tensor){"bytes", GD_ST_U8, 1, {7}, u_data};
    t[n++] = (gd_st_write_tensor){"bf", GD_ST_BF16, 1, {3}, bf_data};
    t[n++] = (gd_st_write_tensor){"scalar", GD_ST_F32, 0, {0}, &s_data};
    return n;
}

static void check_same(const gd_safetensors *st, const gd_st_write_tensor *t, size_t n) {
    CHECK(st->n_tensors == n);
    for (size_t i = 0; i < n; i++) {
        const gd_st_tensor *r = gd_safetensors_find(st, t[i].name);
        CHECK(r != NULL);
        if (r == NULL)
            continue;
        CHECK_STR_EQ(r->name, t[i].name);
        CHECK(r->dtype == t[i].dtype);
        CHECK(r->ndim == t[i].ndim);
        uint64_t numel = 1;
        for (size_t k = 0; k < t[i].ndim; k++) {
            CHECK(r->shape[k] == t[i].shape[k]);
            numel *= t[i].shape[k];
        }
        CHECK(r->numel == numel);
        CHECK(r->nbytes == numel * gd_st_dtype_size(t[i].dtype));
        if (r->nbytes > 0)
            CHECK(memcmp(r->data, t[i].data, r->nbytes) == 0);
    }
    /* Sorted by offset: data positions never go backwards. */
    for (size_t i = 1; i < st->n_tensors; i++)
        CHECK(st->tensors[i].data >= st->tensors[i - 1].data + st->tensors[i - 1].nbytes);
    CHECK(gd_safetensors_find(st, "missing") == NULL);
}

static void test_round_trip(void) {
    gd_st_write_tensor t[8];
    size_t n = make_tensors(t);
    gd_st_meta meta[] = {{"format", "pt"}, {"step", "42"}, {"note", "\xc3\xa9t\xc3\xa9 \"q\"\n"}};
    const char *path = scratch("rt.safetensors");
    CHECK_OK(gd_safetensors_write(path, t, n, meta, 3));
    CHECK(count_temp_files() == 0);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644);

    /* Through the file mapping. */
    gd_safetensors st;
    CHECK_OK(gd_safetensors_open(&st, path));
    check_same(&st, t, n);
    CHECK(st.n_meta == 3);
    CHECK_STR_EQ(gd_safetensors_meta(&st, "format"), "pt");
    CHECK_STR_EQ(gd_safetensors_meta(&st, "step"), "42");
    CHECK_STR_EQ(gd_safetensors_meta(&st, "note"), "\xc3\xa9t\xc3\xa9 \"q\"\n");
    CHECK(gd_safetensors_meta(&st, "absent") == NULL);
    CHECK(st.mapping != NULL && st.mapping_len == (size_t)sb.st_size);
    /* The data region starts 8-byte aligned within the file (the first
     * tensor in file order is at offset 0 of the data). */
    CHECK(st.n_tensors > 0 && (st.tensors[0].data - (const uint8_t *)st.mapping) % 8 == 0);
    CHECK(st.tensors[0].data == (const uint8_t *)st.mapping + 8 +
                                    read_le64((const uint8_t *)st.mapping));
    gd_safetensors_free(&st);
    CHECK(st.mapping == NULL && st.tensors == NULL);
    gd_safetensors_free(&st); /* twice is harmless */

    /* Through the bytes of the file. */
    gd_buf file = {0};
    CHECK_OK(gd_file_read(&file, path, 1 << 20));
    CHECK(file.len >= 8);
    uint64_t hlen = read_le64(file.data);
    CHECK((8 + hlen) % 8 == 0 && 8 + hlen <= file.len);
    CHECK_OK(gd_safetensors_parse(&st, file.data, file.len));
    check_same(&st, t, n);
    CHECK(st.n_meta == 3 && st.mapping == NULL);
    gd_safetensors_free(&st);

    /* The header is plain JSON with the metadata first. */
    json_error_t jerr;
    json_t *root = json_loadb((const char *)file.data + 8, hlen, JSON_REJECT_DUPLICATES, &jerr);
    CHECK(root != NULL && json_is_object(root));
    CHECK(json_object_size(root) == n + 1);
    CHECK(json_is_object(json_object_get(root, "__metadata__")));
    json_t *w = json_object_get(root, "model.w");
    CHECK(w != NULL && strcmp(json_string_value(json_object_get(w, "dtype")), "F32") == 0);
    CHECK(json_integer_value(json_array_get(json_object_get(w, "data_offsets"), 1)) == 48);
    json_t *sc = json_object_get(root, "scalar");
    CHECK(sc != NULL && json_array_size(json_object_get(sc, "shape")) == 0);
    json_decref(root);
    CHECK(memcmp(file.data + 8, "{\"__metadata__\":", 16) == 0);
    gd_buf_free(&file);

    /* Writing again replaces the file whole. */
    CHECK_OK(gd_safetensors_write(path, t + 2, 1, NULL, 0));
    CHECK_OK(gd_safetensors_open(&st, path));
    check_same(&st, t + 2, 1);
    CHECK(st.n_meta == 0);
    gd_safetensors_free(&st);

    /* No tensors at all: the header is "{}" padded to alignment. */
    const char *empty = scratch("empty.safetensors");
    CHECK_OK(gd_safetensors_write(empty, NULL, 0, NULL, 0));
    CHECK_OK(gd_safetensors_open(&st, empty));
    CHECK(st.n_tensors == 0 && st.n_meta == 0 && st.mapping_len == 16);
    gd_safetensors_free(&st);
    CHECK(count_temp_files() == 0);
}

/* ---- a file as Hugging Face writes it ---- */

/* Layout facts from the format spec in the huggingface/safetensors README
 * (8-byte little-endian header size N, N bytes of UTF-8 JSON, then the data
 * buffer; "data_offsets" relative to the start of that buffer) and its
 * writer, which serializes TensorInfo as dtype, shape, data_offsets and pads
 * the JSON with spaces to a multiple of 8 bytes. This is what
 * safetensors.torch.save_file({"a": torch.zeros(2, dtype=torch.float32)})
 * writes: a 54-byte header padded to 56 (0x38), then 8 zero bytes. */
static const char hf_header[] =
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  ";

static size_t hf_file(uint8_t *buf) {
    memset(buf, 0, 72);
    buf[0] = 0x38;
    memcpy(buf + 8, hf_header, 56);
    return 72; /* data: two 0.0f */
}

static void test_hugging_face_file(void) {
    CHECK(strlen(hf_header) == 56);
    uint8_t hf[72];
    size_t len = hf_file(hf);
    gd_safetensors st;
    CHECK_OK(gd_safetensors_parse(&st, hf, len));
    CHECK(st.n_tensors == 1 && st.n_meta == 0);
    const gd_st_tensor *a = gd_safetensors_find(&st, "a");
    CHECK(a != NULL && a->dtype == GD_ST_F32 && a->ndim == 1 && a->shape[0] == 2);
    CHECK(a != NULL && a->numel == 2 && a->nbytes == 8 && a->data == hf + 64);
    gd_safetensors_free(&st);

    /* Our writer's file for the same tensor maps to the same tensor. */
    float zeros[2] = {0, 0};
    gd_st_write_tensor t = {"a", GD_ST_F32, 1, {2}, zeros};
    const char *path = scratch("hf.safetensors");
    CHECK_OK(gd_safetensors_write(path, &t, 1, NULL, 0));
    CHECK_OK(gd_safetensors_open(&st, path));
    a = gd_safetensors_find(&st, "a");
    CHECK(st.n_tensors == 1 && a != NULL && a->dtype == GD_ST_F32 && a->ndim == 1);
    CHECK(a != NULL && a->shape[0] == 2 && a->nbytes == 8 && memcmp(a->data, hf + 64, 8) == 0);
    /* Not required, but with one tensor the layouts coincide byte for byte. */
    CHECK(st.mapping_len == len && memcmp(st.mapping, hf, len) == 0);
    gd_safetensors_free(&st);
}

/* ---- rejections ---- */

static void expect_reject(const uint8_t *bytes, size_t len, const char *needle, int line) {
    /* An exact-size copy so ASan catches any read past the end. */
    uint8_t *copy = malloc(len ? len : 1);
    if (len > 0)
        memcpy(copy, bytes, len);
    gd_safetensors st;
    gd_status s = gd_safetensors_parse(&st, copy, len);
    if (s != GD_ERR_PARSE || (needle != NULL && strstr(gd_error_detail(), needle) == NULL)) {
        fprintf(stderr, "line %d: expected a parse error mentioning '%s', got %s: %s\n", line,
                needle ? needle : "", gd_status_name(s), gd_error_detail());
        gd_test_failures++;
    }
    if (s == GD_OK)
        gd_safetensors_free(&st);
    CHECK(st.tensors == NULL && st.n_tensors == 0 && st.meta == NULL && st.n_meta == 0);
    free(copy);
}

/* header as the JSON text, then data_len bytes of data. */
static size_t raw_file(uint8_t *buf, size_t cap, const char *header, size_t data_len) {
    size_t n = strlen(header);
    if (8 + n + data_len > cap)
        abort();
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(buf + 8, header, n);
    memset(buf + 8 + n, 0xab, data_len);
    return 8 + n + data_len;
}

static void reject_json(const char *header, size_t data_len, const char *needle, int line) {
    static uint8_t buf[8192];
    expect_reject(buf, raw_file(buf, sizeof buf, header, data_len), needle, line);
}
#define REJECT(header, data_len, needle) reject_json(header, data_len, needle, __LINE__)

static void accept_json(const char *header, size_t data_len, size_t n_tensors, int line) {
    static uint8_t buf[8192];
    size_t len = raw_file(buf, sizeof buf, header, data_len);
    gd_safetensors st;
    gd_status s = gd_safetensors_parse(&st, buf, len);
    if (s != GD_OK || st.n_tensors != n_tensors) {
        fprintf(stderr, "line %d: expected acceptance, got %s: %s\n", line, gd_status_name(s),
                gd_error_detail());
        gd_test_failures++;
    }
    gd_safetensors_free(&st);
}
#define ACCEPT(header, data_len, n) accept_json(header, data_len, n, __LINE__)

#define T(name, dtype, shape, b, e) \
    "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static void test_rejects_truncation(void) {
    uint8_t hf[72];
    size_t len = hf_file(hf);
    for (size_t k = 0; k < len; k++)
        expect_reject(hf, k, NULL, __LINE__);

    /* Every prefix of a writer file with metadata and several tensors too. */
    gd_st_write_tensor t[8];
    size_t n = make_tensors(t);
    gd_st_meta meta[] = {{"k", "v"}};
    const char *path = scratch("trunc.safetensors");
    CHECK_OK(gd_safetensors_write(path, t, n, meta, 1));
    gd_buf file = {0};
    CHECK_OK(gd_file_read(&file, path, 1 << 20));
    for (size_t k = 0; k < file.len; k++)
        expect_reject(file.data, k, NULL, __LINE__);
    gd_buf_free(&file);
}

static void test_rejects_header_length(void) {
    uint8_t buf[72];
    size_t len = hf_file(buf);
    buf[0] = 0xe8, buf[1] = 0x03; /* 1000 > the 64 bytes after the length */
    expect_reject(buf, len, "runs past the end", __LINE__);
    /* Just over the 100 MB limit (checked before the file's size). */
    uint64_t big = (uint64_t)GD_ST_MAX_HEADER + 1;
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(big >> (8 * i));
    expect_reject(buf, len, "exceeds the limit", __LINE__);
    memset(buf, 0xff, 8);
    expect_reject(buf, len, "exceeds the limit", __LINE__);
    memset(buf, 0, 8);
    expect_reject(buf, len, "too small", __LINE__);
    buf[0] = 1;
    expect_reject(buf, len, "too small", __LINE__);
    /* One byte short of the real header: the JSON is cut. */
    buf[0] = 0x37;
    expect_reject(buf, len, NULL, __LINE__);
}

static void test_rejects_json(void) {
    REJECT("[]", 0, "not a JSON object");
    REJECT("\"abc\"", 0, "not a JSON object");
    REJECT("12", 0, "not a JSON object");
    REJECT("{\"a\":", 0, "not valid JSON");
    REJECT("{} x", 0, "not valid JSON");
    REJECT("{\"a\xff\":{}}", 0, "not valid JSON"); /* invalid UTF-8 */
    REJECT("{\"a\\u0000b\":{}}", 0, "not valid JSON");
    static uint8_t nul[] = {4, 0, 0, 0, 0, 0, 0, 0, '{', 0, '}', ' '};
    expect_reject(nul, sizeof nul, "NUL", __LINE__);
    REJECT("{" T("a", "F32", "[1]", 0, 4) "," T("a", "F32", "[1]", 4, 8) "}", 8, "duplicate");
}

static void test_rejects_tensor_fields(void) {
    REJECT("{" T("a", "F33", "[1]", 0, 4) "}", 4, "unknown dtype 'F33'");
    REJECT("{" T("a", "f32", "[1]", 0, 4) "}", 4, "unknown dtype");
    REJECT("{" T("a", "F8_E4M3", "[1]", 0, 1) "}", 1, "F8_E4M3 is not supported");
    REJECT("{\"a\":{\"dtype\":3,\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "dtype is an integer");
    REJECT("{" T("a", "U8", "[-1]", 0, 0) "}", 0, "shape entry 0 is negative");
    REJECT("{" T("a", "U8", "[2, 1.5]", 0, 3) "}", 3, "shape entry 1 is a real number");
    REJECT("{" T("a", "U8", "[\"2\"]", 0, 2) "}", 2, "shape entry 0 is a string");
    REJECT("{" T("a", "U8", "3", 0, 3) "}", 3, "shape is an integer");
    REJECT("{" T("a", "U8", "[1,1,1,1,1,1,1,1,1]", 0, 1) "}", 1, "9 dimensions");
    ACCEPT("{" T("a", "U8", "[1,1,1,1,1,1,1,1]", 0, 1) "}", 1, 1);
    REJECT("{" T("a", "F32", "[2]", 0, 16) "}", 8, "run past the 8 bytes");
    REJECT("{" T("a", "F32", "[0]", 9, 9) "}", 8, "run past");
    REJECT("{" T("a", "F32", "[2]", 8, 0) "}", 8, "begin after they end");
    REJECT("{" T("a", "F32", "[2]", -8, 0) "}", 8, "non-negative integers");
    REJECT("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, "[begin, end]");
    REJECT("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}}", 8,
           "[begin, end]");
    REJECT("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8.0]}}", 8,
           "[begin, end]");
    REJECT("{" T("a", "F32", "[2, 3]", 0, 12) "}", 12,
           "tensor 'a': data_offsets [0, 12] hold 12 bytes but shape [2, 3] of F32 needs 24");
    REJECT("{" T("big", "U8", "[1099511627776, 1099511627776]", 0, 0) "}", 0,
           "tensor 'big': shape [1099511627776, 1099511627776] of U8 overflows");
    REJECT("{" T("big", "F32", "[4611686018427387904]", 0, 0) "}", 0, "overflows");
    /* A 2^64-1 dim is no JSON integer jansson accepts. */
    REJECT("{" T("big", "U8", "[18446744073709551615]", 0, 0) "}", 0, NULL);
    REJECT("{" T("", "U8", "[1]", 0, 1) "}", 1, "empty name");
    REJECT("{\"a\":[1]}", 0, "tensor 'a': is an array");
    REJECT("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, "missing \"data_offsets\"");
    REJECT("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "missing \"dtype\"");
    REJECT("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1,
           "unexpected key 'x'");
    char name[GD_ST_NAME_MAX + 1];
    memset(name, 'n', sizeof name - 1);
    name[GD_ST_NAME_MAX] = '\0';
    char header[1024];
    snprintf(header, sizeof header, "{" T("%s", "U8", "[1]", 0, 1) "}", name);
    REJECT(header, 1, "longer than 255");
    name[GD_ST_NAME_MAX - 1] = '\0'; /* 255 bytes is the longest name */
    snprintf(header, sizeof header, "{" T("%s", "U8", "[1]", 0, 1) "}", name);
    ACCEPT(header, 1, 1);
}

static void test_rejects_layout(void) {
    REJECT("{" T("a", "F32", "[2]", 0, 8) "," T("b", "F32", "[2]", 4, 12) "}", 12,
           "tensor 'b' at [4, 12] overlaps tensor 'a'");
    REJECT("{" T("a", "F32", "[2]", 0, 8) "," T("b", "F32", "[2]", 0, 8) "}", 8, "overlaps");
    REJECT("{" T("a", "F32", "[2]", 0, 8) "," T("b", "F32", "[2]", 12, 20) "}", 20,
           "data bytes [8, 12) belong to no tensor (gap before tensor 'b')");
    REJECT("{" T("a", "F32", "[2]", 4, 12) "}", 12, "gap before tensor 'a'");
    REJECT("{" T("a", "F32", "[2]", 0, 8) "}", 12, "trailing bytes");
    REJECT("{}", 1, "trailing bytes");
    REJECT("{" T("z", "U8", "[0]", 0, 0) "}", 3, "trailing bytes");
    /* Accepted layouts: out of order in the header, zero-size anywhere,
     * header padded with whitespace, scalars, an empty file body. */
    ACCEPT("{" T("b", "F32", "[2]", 8, 16) "," T("a", "F32", "[2]", 0, 8) "}", 16, 2);
    ACCEPT("{" T("a", "F32", "[2]", 0, 8) "," T("z", "F32", "[0, 4]", 8, 8) "," T(
               "y", "U8", "[0]", 0, 0) "," T("b", "U8", "[]", 8, 9) "}",
           9, 4);
    ACCEPT("{" T("s", "F64", "[]", 0, 8) "}      \n\t ", 8, 1);
    ACCEPT("  {}", 0, 0);
    ACCEPT("{}", 0, 0);
    ACCEPT("{\"__metadata__\":{}}", 0, 0);

    /* Order of the result is by offset, whatever the header order. */
    static uint8_t buf[512];
    size_t len = raw_file(buf, sizeof buf,
                          "{" T("c", "U8", "[1]", 2, 3) "," T("a", "U8", "[1]", 0, 1) "," T(
                              "b", "U8", "[1]", 1, 2) "}",
                          3);
    gd_safetensors st;
    CHECK_OK(gd_safetensors_parse(&st, buf, len));
    CHECK(st.n_tensors == 3);
    if (st.n_tensors == 3) {
        CHECK_STR_EQ(st.tensors[0].name, "a");
        CHECK_STR_EQ(st.tensors[1].name, "b");
        CHECK_STR_EQ(st.tensors[2].name, "c");
    }
    gd_safetensors_free(&st);
}

static void test_rejects_metadata(void) {
    REJECT("{\"__metadata__\":{\"k\":1}}", 0, "value for 'k' is an integer, not a string");
    REJECT("{\"__metadata__\":{\"k\":null}}", 0, "not a string");
    REJECT("{\"__metadata__\":{\"k\":{}}}", 0, "not a string");
    REJECT("{\"__metadata__\":[\"k\"]}", 0, "\"__metadata__\" is an array");
    REJECT("{\"__metadata__\":\"k\"}", 0, "not an object");
    REJECT("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0, "duplicate");
    REJECT("{\"__metadata__\":{},\"__metadata__\":{}}", 0, "duplicate");
    static uint8_t buf[256];
    const char *hdr = "{\"__metadata__\":{\"a\":\"1\",\"b\":\"\"}," T("t", "U8", "[1]", 0, 1) "}";
    size_t len = raw_file(buf, sizeof buf, hdr, 1);
    gd_safetensors st;
    CHECK_OK(gd_safetensors_parse(&st, buf, len));
    CHECK(st.n_meta == 2 && st.n_tensors == 1);
    CHECK_STR_EQ(gd_safetensors_meta(&st, "a"), "1");
    CHECK_STR_EQ(gd_safetensors_meta(&st, "b"), "");
    gd_safetensors_free(&st);
}

static void test_open_errors(void) {
    gd_safetensors st;
    CHECK_STATUS(gd_safetensors_open(&st, scratch("does-not-exist")), GD_ERR_NOT_FOUND);
    CHECK_STATUS(gd_safetensors_open(&st, gd_test_tmpdir()), GD_ERR_IO);
    const char *empty = gd_test_write_file("zero.safetensors", "", 0, 0644);
    CHECK_STATUS(gd_safetensors_open(&st, empty), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "empty") != NULL);
    uint8_t bad[72];
    hf_file(bad);
    bad[70] = 1; /* still valid: data bytes are not interpreted */
    bad[8] = '[';
    const char *path = gd_test_write_file("bad.safetensors", bad, sizeof bad, 0644);
    CHECK_STATUS(gd_safetensors_open(&st, path), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), path) != NULL); /* the message names the file */
    CHECK(st.mapping == NULL && st.tensors == NULL);
}

/* ---- writer refusals ---- */

static void test_writer_rejects(void) {
    float x[4] = {1, 2, 3, 4};
    const char *path = scratch("refused.safetensors");
    gd_st_write_tensor dup[2] = {{"a", GD_ST_F32, 1, {2}, x}, {"a", GD_ST_F32, 1, {2}, x + 2}};
    CHECK_STATUS(gd_safetensors_write(path, dup, 2, NULL, 0), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "'a' is given twice") != NULL);
    gd_st_write_tensor reserved = {"__metadata__", GD_ST_F32, 1, {1}, x};
    CHECK_STATUS(gd_safetensors_write(path, &reserved, 1, NULL, 0), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "reserved") != NULL);
    gd_st_write_tensor unnamed = {"", GD_ST_F32, 1, {1}, x};
    CHECK_STATUS(gd_safetensors_write(path, &unnamed, 1, NULL, 0), GD_ERR_INVALID);
    unnamed.name = NULL;
    CHECK_STATUS(gd_safetensors_write(path, &unnamed, 1, NULL, 0), GD_ERR_INVALID);
    gd_st_write_tensor deep = {"deep", GD_ST_F32, GD_ST_MAX_DIMS + 1, {1}, x};
    CHECK_STATUS(gd_safetensors_write(path, &deep, 1, NULL, 0), GD_ERR_INVALID);
    gd_st_write_tensor huge = {"huge", GD_ST_U8, 2, {1ull << 40, 1ull << 40}, x};
    CHECK_STATUS(gd_safetensors_write(path, &huge, 1, NULL, 0), GD_ERR_INVALID);
    gd_st_write_tensor nodata = {"nodata", GD_ST_F32, 1, {1}, NULL};
    CHECK_STATUS(gd_safetensors_write(path, &nodata, 1, NULL, 0), GD_ERR_INVALID);
    gd_st_write_tensor badutf = {"bad\xff", GD_ST_F32, 1, {1}, x};
    CHECK_STATUS(gd_safetensors_write(path, &badutf, 1, NULL, 0), GD_ERR_INVALID);
    gd_st_write_tensor baddtype = {"t", (gd_st_dtype)99, 1, {1}, x};
    CHECK_STATUS(gd_safetensors_write(path, &baddtype, 1, NULL, 0), GD_ERR_INVALID);
    gd_st_meta dupmeta[2] = {{"k", "1"}, {"k", "2"}};
    CHECK_STATUS(gd_safetensors_write(path, dup, 1, dupmeta, 2), GD_ERR_INVALID);
    gd_st_meta nullmeta = {"k", NULL};
    CHECK_STATUS(gd_safetensors_write(path, dup, 1, &nullmeta, 1), GD_ERR_INVALID);
    struct stat sb;
    CHECK(stat(path, &sb) != 0); /* nothing was written */

    /* A missing directory: not found, naming the path; no temp file. */
    const char *missing = scratch("no/such/dir/x.safetensors");
    CHECK_STATUS(gd_safetensors_write(missing, dup, 1, NULL, 0), GD_ERR_NOT_FOUND);
    CHECK(strstr(gd_error_detail(), missing) != NULL);
    CHECK(strstr(gd_error_detail(), "No such file") != NULL);
    /* The target is a directory: the temp file is written, then rename
     * fails, and the temp file must be gone. */
    CHECK_STATUS(gd_safetensors_write(gd_test_tmpdir(), dup, 1, NULL, 0), GD_ERR_IO);
    CHECK(count_temp_files() == 0);
    char parent_tmp[600];
    snprintf(parent_tmp, sizeof parent_tmp, "%s", gd_test_tmpdir());
    char *slash = strrchr(parent_tmp, '/');
    if (slash != NULL) {
        /* mkostemp put it next to the target, in the parent directory. */
        *slash = '\0';
        DIR *d = opendir(parent_tmp[0] ? parent_tmp : "/");
        const char *base = strrchr(gd_test_tmpdir(), '/') + 1;
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL)
            CHECK(!(strncmp(e->d_name, base, strlen(base)) == 0 &&
                    strstr(e->d_name, ".tmp-") != NULL));
        if (d != NULL)
            closedir(d);
    }
}

static void test_dtypes(void) {
    CHECK_STR_EQ(gd_st_dtype_name(GD_ST_BOOL), "BOOL");
    CHECK_STR_EQ(gd_st_dtype_name(GD_ST_BF16), "BF16");
    CHECK_STR_EQ(gd_st_dtype_name(GD_ST_F64), "F64");
    CHECK(gd_st_dtype_size(GD_ST_BOOL) == 1 && gd_st_dtype_size(GD_ST_U16) == 2);
    CHECK(gd_st_dtype_size(GD_ST_BF16) == 2 && gd_st_dtype_size(GD_ST_U32) == 4);
    CHECK(gd_st_dtype_size(GD_ST_I64) == 8 && gd_st_dtype_size(GD_ST_F64) == 8);
    CHECK(gd_st_dtype_size((gd_st_dtype)42) == 0);
    /* Every dtype round-trips through a file. */
    uint8_t data[8 * 13];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)i;
    gd_st_write_tensor t[13];
    char names[13][8];
    size_t at = 0;
    for (int d = 0; d <= GD_ST_F64; d++) {
        snprintf(names[d], sizeof names[d], "t%d", d);
        t[d] = (gd_st_write_tensor){names[d], (gd_st_dtype)d, 1, {1}, data + at};
        at += gd_st_dtype_size((gd_st_dtype)d);
    }
    const char *path = scratch("dtypes.safetensors");
    CHECK_OK(gd_safetensors_write(path, t, 13, NULL, 0));
    gd_safetensors st;
    CHECK_OK(gd_safetensors_open(&st, path));
    check_same(&st, t, 13);
    gd_safetensors_free(&st);
}

int main(void) {
    RUN_TEST(test_dtypes);
    RUN_TEST(test_round_trip);
    RUN_TEST(test_hugging_face_file);
    RUN_TEST(test_rejects_truncation);
    RUN_TEST(test_rejects_header_length);
    RUN_TEST(test_rejects_json);
    RUN_TEST(test_rejects_tensor_fields);
    RUN_TEST(test_rejects_layout);
    RUN_TEST(test_rejects_metadata);
    RUN_TEST(test_open_errors);
    RUN_TEST(test_writer_rejects);
    return gd_test_finish();
}
