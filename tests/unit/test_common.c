/* common/: hex, base64, hashes, number parsing, RFC 3339 times, private files. */
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/base64.h"
#include "common/buf_spares.h"
#include "common/bytes.h"
#include "common/conn_watch.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/parse.h"
#include "common/rfc3339.h"
#include "common/secure.h"
#include "tests/support/testkit.h"

static void test_hex(void) {
    uint8_t out[8];
    size_t n = 0;
    char text[17];
    CHECK_OK(gd_hex_decode(out, sizeof out, &n, "00ff10Ab", 8));
    CHECK(n == 4 && out[0] == 0 && out[1] == 0xff && out[2] == 0x10 && out[3] == 0xab);
    gd_hex_encode(text, out, 4, false);
    CHECK_STR_EQ(text, "00ff10ab");
    gd_hex_encode(text, out, 4, true);
    CHECK_STR_EQ(text, "00FF10AB");
    CHECK_STATUS(gd_hex_decode(out, sizeof out, &n, "abc", 3), GD_ERR_PARSE);
    CHECK_STATUS(gd_hex_decode(out, sizeof out, &n, "zz", 2), GD_ERR_PARSE);
    CHECK_STATUS(gd_hex_decode(out, 1, &n, "0011", 4), GD_ERR_LIMIT);
}

/* RFC 4648 section 10 test vectors. */
static void test_base64_rfc4648(void) {
    static const char *const vec[][2] = {
        {"", ""},           {"f", "Zg=="},          {"fo", "Zm8="},        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char enc[16];
        uint8_t dec[16];
        size_t n = 99;
        gd_base64_encode(enc, (const uint8_t *)vec[i][0], strlen(vec[i][0]));
        CHECK_STR_EQ(enc, vec[i][1]);
        CHECK(gd_base64_encoded_len(strlen(vec[i][0])) == strlen(vec[i][1]));
        CHECK_OK(gd_base64_decode(dec, sizeof dec, &n, vec[i][1], strlen(vec[i][1])));
        CHECK(n == strlen(vec[i][0]) && memcmp(dec, vec[i][0], n) == 0);
    }
}

static void test_base64_strict(void) {
    uint8_t out[16];
    size_t n;
    const char *bad[] = {"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zm 9", "=Zm9", "Zm=v", "Zg==Zg==",
                         "Zm9v\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(gd_base64_decode(out, sizeof out, &n, bad[i], strlen(bad[i])) != GD_OK);
    CHECK_STATUS(gd_base64_decode(out, 2, &n, "Zm9v", 4), GD_ERR_LIMIT);
}

/* FIPS 180-2 "abc", RIPEMD-160 paper "abc", RFC 4231 case 1 (SHA-512), and
 * RFC 6070-style PBKDF2 cross-checked against the BIP39 seed vector. */
static void test_hashes(void) {
    uint8_t d[64];
    gd_sha256(d, "abc", 3);
    CHECK_HEX_EQ(d, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    gd_ripemd160(d, "abc", 3);
    CHECK_HEX_EQ(d, 20, "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc");
    uint8_t key[20];
    memset(key, 0x0b, sizeof key);
    gd_hmac_sha512(d, key, sizeof key, "Hi There", 8);
    CHECK_HEX_EQ(d, 64,
                 "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a70"
                 "2038b274eaea3f4e4be9d914eeb61f1702e696c203a126854");
    gd_sha256_ctx *ctx;
    CHECK_OK(gd_sha256_begin(&ctx));
    gd_sha256_update(ctx, "a", 1);
    gd_sha256_update(ctx, "bc", 2);
    gd_sha256_finish(ctx, d);
    CHECK_HEX_EQ(d, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_parse(void) {
    uint64_t u;
    int64_t i;
    CHECK_OK(gd_parse_u64(&u, "18446744073709551615"));
    CHECK(u == UINT64_MAX);
    CHECK_STATUS(gd_parse_u64(&u, "18446744073709551616"), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_u64(&u, ""), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_u64(&u, "-1"), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_u64(&u, "1 "), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_u64(&u, "+1"), GD_ERR_PARSE);
    CHECK_OK(gd_parse_i64(&i, "-9223372036854775808"));
    CHECK(i == INT64_MIN);
    CHECK_OK(gd_parse_i64(&i, "9223372036854775807"));
    CHECK(i == INT64_MAX);
    CHECK_STATUS(gd_parse_i64(&i, "9223372036854775808"), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_i64(&i, "-"), GD_ERR_PARSE);
    int64_t ms;
    CHECK_OK(gd_parse_duration_ms("500ms", &ms));
    CHECK(ms == 500);
    CHECK_OK(gd_parse_duration_ms("1.5s", &ms));
    CHECK(ms == 1500);
    CHECK_OK(gd_parse_duration_ms("2m", &ms));
    CHECK(ms == 120000);
    CHECK_OK(gd_parse_duration_ms("250", &ms));
    CHECK(ms == 250);
    CHECK_STATUS(gd_parse_duration_ms("s", &ms), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_duration_ms("1x", &ms), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_duration_ms("1.2345s", &ms), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_duration_ms("99999999999999999999h", &ms), GD_ERR_PARSE);
}

/* RFC 3339 as Go's time.RFC3339Nano reads it, and the UTC text back. */
static void test_rfc3339(void) {
    static const struct {
        const char *in, *utc;
        int64_t unix_s;
        int32_t nanos;
    } good[] = {
        {"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", 0, 0},
        {"2026-01-01T01:00:00.5+01:00", "2026-01-01T00:00:00.5Z", 1767225600, 500000000},
        {"2024-02-29T23:59:59.123456789Z", "2024-02-29T23:59:59.123456789Z", 1709251199,
         123456789},
        {"2000-02-29T00:00:00-00:30", "2000-02-29T00:30:00Z", 951784200, 0},
        {"0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", -62135596800LL, 0},
        {"9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999Z", 253402300799LL,
         999999999},
        {"1969-12-31T23:59:59.1Z", "1969-12-31T23:59:59.1Z", -1, 100000000},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        gd_time t;
        char out[GD_RFC3339_MAX];
        CHECK_OK(gd_rfc3339_parse(&t, good[i].in));
        CHECK(t.unix_s == good[i].unix_s && t.nanos == good[i].nanos);
        CHECK_OK(gd_rfc3339_format(out, sizeof out, t, false));
        CHECK_STR_EQ(out, good[i].utc);
    }
    static const char *const bad[] = {
        "notatime", "", "10000-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "2026-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z",
        "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-12-31T23:59:60Z",
        "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026-01-01t00:00:00Z",
        "2026-01-01T00:00:00z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567890Z",
        "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00Zjunk",
        "26-01-01T00:00:00Z", "2026-1-01T00:00:00Z", "+2026-01-01T00:00:00Z",
        "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gd_time t;
        CHECK_STATUS(gd_rfc3339_parse(&t, bad[i]), GD_ERR_INVALID);
    }
    char out[GD_RFC3339_MAX];
    gd_time t = {.unix_s = 1767225600, .nanos = 5000000};
    CHECK_OK(gd_rfc3339_format(out, sizeof out, t, true));
    CHECK_STR_EQ(out, "2026-01-01T00:00:00.005000000Z");
    t = gd_time_add_ms(t, 999);
    CHECK(t.unix_s == 1767225601 && t.nanos == 4000000);
    CHECK(gd_time_cmp(t, (gd_time){1767225601, 4000000}) == 0);
    CHECK(gd_time_cmp(t, (gd_time){1767225601, 4000001}) < 0);
    CHECK(gd_time_cmp(t, (gd_time){1767225600, 999999999}) > 0);
    CHECK_STATUS(gd_rfc3339_format(out, sizeof out, (gd_time){253402300800LL, 0}, true),
                 GD_ERR_INVALID);
}

static void test_private_files(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/secret", gd_test_tmpdir());
    CHECK_OK(gd_file_create_private(path, "s3cret", 6));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK_STATUS(gd_file_create_private(path, "other", 5), GD_ERR_EXISTS);
    gd_buf buf = {0};
    CHECK_OK(gd_file_read_private(&buf, path, 100));
    CHECK(buf.len == 6 && memcmp(buf.data, "s3cret", 6) == 0);
    gd_buf_wipe_free(&buf);
    CHECK_STATUS(gd_file_read_private(&buf, path, 3), GD_ERR_LIMIT);
    gd_buf_wipe_free(&buf);
    CHECK(chmod(path, 0640) == 0);
    CHECK_STATUS(gd_file_read_private(&buf, path, 100), GD_ERR_PERMISSION);
    CHECK(strstr(gd_error_detail(), "chmod 600") != NULL);
    CHECK(chmod(path, 0604) == 0);
    CHECK_STATUS(gd_file_read_private(&buf, path, 100), GD_ERR_PERMISSION);
    CHECK(chmod(path, 0400) == 0);
    CHECK_OK(gd_file_read_private(&buf, path, 100));
    gd_buf_wipe_free(&buf);
    char missing[620];
    snprintf(missing, sizeof missing, "%s/none", gd_test_tmpdir());
    CHECK_STATUS(gd_file_read_private(&buf, missing, 100), GD_ERR_NOT_FOUND);
    char nodir[620];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/file", gd_test_tmpdir());
    CHECK(gd_file_create_private(nodir, "x", 1) != GD_OK);
    CHECK_STATUS(gd_file_read_private(&buf, gd_test_tmpdir(), 100), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "is a directory, not a regular file") != NULL);
    char link[620];
    snprintf(link, sizeof link, "%s/secret-link", gd_test_tmpdir());
    CHECK(symlink(path, link) == 0);
    CHECK_STATUS(gd_file_read_private(&buf, link, 100), GD_ERR_PERMISSION);
    CHECK(strstr(gd_error_detail(), "symbolic link") != NULL);
}

static void test_same_path(void) {
    const char *dir = gd_test_tmpdir();
    char a[700], b[700], here[700], sub[700];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(here, sizeof here, "%s/here", dir);
    CHECK(symlink(dir, here) == 0);
    /* Not yet there: the same name in the same directory, spelt any way. */
    snprintf(a, sizeof a, "%s/out.key", dir);
    snprintf(b, sizeof b, "%s/sub/../out.key", dir);
    CHECK(gd_file_same_path(a, a));
    CHECK(gd_file_same_path(a, b));
    snprintf(b, sizeof b, "%s/here/out.key", dir);
    CHECK(gd_file_same_path(a, b));
    snprintf(b, sizeof b, "%s/sub/out.key", dir);
    CHECK(!gd_file_same_path(a, b));
    snprintf(b, sizeof b, "%s/out.mnemonic", dir);
    CHECK(!gd_file_same_path(a, b));
    snprintf(b, sizeof b, "%s/no/such/out.key", dir);
    CHECK(!gd_file_same_path(a, b));
    /* Existing: the same inode, hard links included. */
    gd_bytes_part part = {"x", 1};
    CHECK_OK(gd_file_write_atomic(a, &part, 1, 0600));
    snprintf(b, sizeof b, "%s/sub/hard", dir);
    CHECK(link(a, b) == 0);
    CHECK(gd_file_same_path(a, b));
}

/* Spare buffers: small ones are not kept, a take gets the smallest that
 * holds what is asked (empty, with its storage), a full stock drops its
 * smallest, and nothing leaks (the sanitizer run checks). */
static void test_buf_spares(void) {
    gd_buf_spares s = {0};
    gd_buf small = {0}, a = {0}, b = {0};
    CHECK_OK(gd_buf_reserve(&small, 1000));
    gd_buf_spares_put(&s, &small);
    CHECK(s.n == 0 && small.data == NULL);
    CHECK_OK(gd_buf_reserve(&a, GD_MEM_HUGE_MIN));
    CHECK_OK(gd_buf_reserve(&b, 2 * GD_MEM_HUGE_MIN));
    CHECK_OK(gd_buf_append(&b, "xyz", 3));
    uint8_t *a_data = a.data, *b_data = b.data;
    gd_buf_spares_put(&s, &b);
    gd_buf_spares_put(&s, &a);
    CHECK(s.n == 2 && a.data == NULL && a.cap == 0);
    gd_buf got = gd_buf_spares_take(&s, GD_MEM_HUGE_MIN + 1); /* only b holds it */
    CHECK(got.data == b_data && got.len == 0 && got.cap >= 2 * GD_MEM_HUGE_MIN);
    gd_buf_spares_put(&s, &got);
    got = gd_buf_spares_take(&s, 10); /* small: never a kept one */
    CHECK(got.data == NULL && s.n == 2);
    got = gd_buf_spares_take(&s, GD_MEM_HUGE_MIN); /* the smallest that holds it: a */
    CHECK(got.data == a_data && got.len == 0);
    gd_buf_free(&got);
    got = gd_buf_spares_take(&s, 3 * GD_MEM_HUGE_MIN); /* none holds it */
    CHECK(got.data == NULL && got.cap == 0 && s.n == 1);
    /* A full stock keeps the larger buffers. */
    for (int i = 0; i < GD_BUF_SPARES + 2; i++) {
        gd_buf x = {0};
        CHECK_OK(gd_buf_reserve(&x, GD_MEM_HUGE_MIN + (size_t)i * 4096));
        gd_buf_spares_put(&s, &x);
        CHECK(x.data == NULL);
    }
    CHECK(s.n == GD_BUF_SPARES);
    for (size_t i = 0; i < s.n; i++)
        CHECK(s.buf[i].cap >= GD_MEM_HUGE_MIN + 2 * 4096);
    gd_buf_spares_free(&s);
    CHECK(s.n == 0);
}

/* A file's first bytes (a Range answered locally): exactly those, all of
 * a shorter file, nothing of a missing one or a FIFO; floats round-trip
 * through their little-endian bytes. */
static void test_read_prefix(void) {
    uint8_t bytes[100];
    for (int i = 0; i < 100; i++)
        bytes[i] = (uint8_t)(i * 5 + 1);
    const char *path = gd_test_write_file("prefix.bin", bytes, sizeof bytes, 0600);
    gd_buf b = {0};
    CHECK_OK(gd_file_read_prefix(&b, path, 10));
    CHECK(b.len == 10 && memcmp(b.data, bytes, 10) == 0);
    CHECK_OK(gd_file_read_prefix(&b, path, 1000)); /* replaces, all of a shorter file */
    CHECK(b.len == 100 && memcmp(b.data, bytes, 100) == 0);
    char missing[600], fifo[600];
    snprintf(missing, sizeof missing, "%s/no-such-file", gd_test_tmpdir());
    CHECK_STATUS(gd_file_read_prefix(&b, missing, 10), GD_ERR_NOT_FOUND);
    snprintf(fifo, sizeof fifo, "%s/prefix-fifo", gd_test_tmpdir());
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_STATUS(gd_file_read_prefix(&b, fifo, 10), GD_ERR_IO);
    gd_buf_free(&b);

    const float v[3] = {1.5f, -0.0f, 3.0e-39f};
    uint8_t le[12];
    float back[3];
    gd_put_floats(le, v, 3);
    CHECK(le[0] == 0x00 && le[1] == 0x00 && le[2] == 0xc0 && le[3] == 0x3f); /* 1.5 */
    CHECK(le[7] == 0x80);                                                   /* -0 */
    gd_get_floats(back, le, 3);
    CHECK(memcmp(back, v, sizeof v) == 0);
}

/* A FIFO named where a file is expected is refused at once: opening one for
 * reading would otherwise wait for a writer that never comes. alarm()
 * turns such a hang into a failed test. */
static void test_fifo_refused(void) {
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", gd_test_tmpdir());
    CHECK(mkfifo(fifo, 0600) == 0);
    alarm(10);
    gd_buf buf = {0};
    CHECK_STATUS(gd_file_read(&buf, fifo, 100), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "is a FIFO, not a regular file") != NULL);
    CHECK_STATUS(gd_file_read_private(&buf, fifo, 100), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "is a FIFO, not a regular file") != NULL);
    int fd = 7;
    struct stat st;
    CHECK_STATUS(gd_file_open_regular(fifo, 0, &fd, &st), GD_ERR_IO);
    CHECK(fd == -1);
    alarm(0);
    gd_buf_free(&buf);
    /* A regular file opens in blocking mode, its stat beside it. */
    char path[620];
    snprintf(path, sizeof path, "%s/plain", gd_test_tmpdir());
    gd_bytes_part part = {"abc", 3};
    CHECK_OK(gd_file_write_atomic(path, &part, 1, 0644));
    CHECK_OK(gd_file_open_regular(path, 0, &fd, &st));
    CHECK(fd >= 0 && st.st_size == 3 && (fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
    close(fd);
    char missing[620];
    snprintf(missing, sizeof missing, "%s/none", gd_test_tmpdir());
    CHECK_STATUS(gd_file_open_regular(missing, 0, &fd, &st), GD_ERR_NOT_FOUND);
}

static void test_dir_create(void) {
    char dir[620], file[640];
    snprintf(dir, sizeof dir, "%s/made/by/dir_create/", gd_test_tmpdir());
    CHECK_OK(gd_dir_create(dir, 0755));
    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_OK(gd_dir_create(dir, 0755)); /* already there */
    snprintf(file, sizeof file, "%sfile", dir);
    gd_bytes_part part = {"x", 1};
    CHECK_OK(gd_file_write_atomic(file, &part, 1, 0644));
    CHECK_STATUS(gd_dir_create(file, 0755), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "a file is in the way") != NULL);
    snprintf(dir, sizeof dir, "%s/sub", file);
    CHECK_STATUS(gd_dir_create(dir, 0755), GD_ERR_IO);
    CHECK_STATUS(gd_dir_create("", 0755), GD_ERR_INVALID);
}

static void test_random_and_wipe(void) {
    uint8_t a[32] = {0}, b[32] = {0};
    CHECK_OK(gd_random_bytes(a, sizeof a));
    CHECK_OK(gd_random_bytes(b, sizeof b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    gd_wipe(a, sizeof a);
    static const uint8_t zero[32];
    CHECK(memcmp(a, zero, sizeof a) == 0);
}

/* Whether the peer of fd has been shut down within ms (it reads EOF). */
static bool shut_within(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c;
    return poll(&p, 1, ms) > 0 && recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

/* A connection whose request is not in by its deadline is shut down; one
 * whose request is in (disarmed) is left alone however long its answer
 * takes, and is watched again from its next request (armed). */
static void test_conn_watch(void) {
    gd_conn_watch *w = NULL;
    CHECK_STATUS(gd_conn_watch_start(&w, 0), GD_ERR_INVALID);
    CHECK_OK(gd_conn_watch_start(&w, 150));
    int late[2], answered[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, late) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, answered) == 0);
    gd_conn_slot *a = gd_conn_watch_add(w, late[0]);
    gd_conn_slot *b = gd_conn_watch_add(w, answered[0]);
    CHECK(a != NULL && b != NULL);
    gd_conn_watch_disarm(w, b);
    CHECK(!shut_within(late[1], 50));
    CHECK(shut_within(late[1], 1000));
    CHECK(!shut_within(answered[1], 400));
    CHECK(gd_conn_watch_expired(w) == 1);
    gd_conn_watch_arm(w, b);
    CHECK(shut_within(answered[1], 1000));
    CHECK(gd_conn_watch_expired(w) == 2);
    gd_conn_watch_remove(w, a);
    gd_conn_watch_remove(w, b);
    gd_conn_watch_remove(w, NULL);
    gd_conn_watch_stop(w);
    gd_conn_watch_stop(NULL);
    for (int i = 0; i < 2; i++) {
        close(late[i]);
        close(answered[i]);
    }
}

/* Log levels per subsystem, the spec refused whole when a part is wrong,
 * and the JSON format: one object a line, escaped, that parses. */
static void test_log(void) {
    CHECK_OK(gd_log_configure("info,http=debug,rpc=error"));
    CHECK(gd_log_enabled(GD_LOG_INFO, "node") && !gd_log_enabled(GD_LOG_DEBUG, "node"));
    CHECK(gd_log_enabled(GD_LOG_DEBUG, "http"));
    CHECK(gd_log_enabled(GD_LOG_ERROR, "rpc") && !gd_log_enabled(GD_LOG_WARN, "rpc"));
    CHECK(gd_log_threshold == GD_LOG_DEBUG); /* the macros' first test lets http's through */
    static const char *const bad[] = {"", "loud", "info,http", "info,=debug", "info,http=loud",
                                      "info,,", "info,a=debug,b=debug,c=debug,d=debug,e=debug,"
                                      "f=debug,g=debug,h=debug,i=debug,j=debug,k=debug,l=debug,"
                                      "m=debug,n=debug,o=debug,p=debug,q=debug"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(gd_log_configure(bad[i]) == GD_ERR_INVALID);
    CHECK(gd_log_enabled(GD_LOG_DEBUG, "http")); /* a refused spec changes nothing */
    gd_log_format f;
    CHECK(gd_log_format_parse(&f, "json") == GD_OK && f == GD_LOG_JSON);
    CHECK(gd_log_format_parse(&f, "xml") == GD_ERR_INVALID);
    /* A JSON line, captured from stderr. */
    char path[] = "/tmp/gd-log-XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    CHECK(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    gd_log_set_format(GD_LOG_JSON);
    GD_LOG_INFO("node", "a \"quoted\" line\nwith a newline and a \\ backslash");
    GD_LOG_DEBUG("node", "not written: node is at info");
    fflush(stderr);
    gd_log_set_format(GD_LOG_TEXT);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char text[1024] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    text[n > 0 ? n : 0] = '\0';
    CHECK(strchr(text, '\n') == text + strlen(text) - 1); /* one line */
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    CHECK(j != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "level")), "info");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "subsystem")), "node");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "message")),
                 "a \"quoted\" line\nwith a newline and a \\ backslash");
    CHECK(json_string_value(json_object_get(j, "time")) != NULL);
    json_decref(j);
    gd_log_set_level(GD_LOG_WARN);
}

int main(void) {
    RUN_TEST(test_hex);
    RUN_TEST(test_log);
    RUN_TEST(test_base64_rfc4648);
    RUN_TEST(test_base64_strict);
    RUN_TEST(test_hashes);
    RUN_TEST(test_parse);
    RUN_TEST(test_rfc3339);
    RUN_TEST(test_private_files);
    RUN_TEST(test_fifo_refused);
    RUN_TEST(test_read_prefix);
    RUN_TEST(test_buf_spares);
    RUN_TEST(test_conn_watch);
    RUN_TEST(test_same_path);
    RUN_TEST(test_dir_create);
    RUN_TEST(test_random_and_wipe);
    return gd_test_finish();
}
