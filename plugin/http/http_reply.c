/* Building and queueing the HTTP server's responses (plugin/http/http_reply.h). */
#include "plugin/http/http_reply.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/log.h"
#include "plugin/http/http_range.h"

static const char gd_reply_octets[] = "application/octet-stream";

/* Queues resp (and drops this reference to it), remembering the body size
 * for the handler's byte count. */
static enum MHD_Result gd_reply_queue(struct MHD_Connection *conn, gd_http_exchange *ex,
                                      unsigned code, struct MHD_Response *resp,
                                      uint64_t body_len) {
    /* Answers are not for a browser to reinterpret as something else. */
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    enum MHD_Result r = MHD_queue_response(conn, code, resp);
    MHD_destroy_response(resp);
    ex->answered = true;
    ex->body_len = ex->head ? 0 : body_len;
    return r;
}

enum MHD_Result gd_http_reply_text(struct MHD_Connection *conn, gd_http_exchange *ex,
                                   unsigned code, const char *text, const char *extra_name,
                                   const char *extra_value) {
    char body[320];
    int n = snprintf(body, sizeof body - 1, "%s", text && text[0] ? text : "error");
    size_t len = n < 0 ? 0 : (size_t)n >= sizeof body - 1 ? sizeof body - 2 : (size_t)n;
    /* A detail is one line of visible text whatever produced it. */
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)body[i] < 0x20 || (unsigned char)body[i] > 0x7e)
            body[i] = '?';
    body[len++] = '\n';
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
    if (resp == NULL)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
    if (extra_name != NULL && extra_value != NULL)
        MHD_add_response_header(resp, extra_name, extra_value);
    return gd_reply_queue(conn, ex, code, resp, len);
}

/* Content-Type and X-Gd-Proof. False when the proof cannot be sent. */
static bool gd_reply_answer_headers(struct MHD_Response *resp, const gd_http_exchange *ex,
                                    const gd_artifact_answer *a) {
    MHD_add_response_header(resp, "Content-Type",
                            a->content_type ? a->content_type : gd_reply_octets);
    /* The status page runs its own inline script and talks to this daemon
     * alone: nothing else loads, and no other site may frame it. */
    if (a->content_type != NULL && strncmp(a->content_type, "text/html", 9) == 0)
        MHD_add_response_header(resp, "Content-Security-Policy",
                                "default-src 'none'; script-src 'unsafe-inline'; style-src "
                                "'unsafe-inline'; connect-src 'self'; img-src 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    if (a->proof.len == 0)
        return true;
    if (a->proof.len > ex->proof_max) {
        GD_LOG_WARN("http", "a proof of %zu bytes is over the header budget of %zu", a->proof.len,
                    ex->proof_max);
        return false;
    }
    char *hex = malloc(2 * a->proof.len + 1); /* proof_max keeps this small */
    if (hex == NULL)
        return false;
    gd_hex_encode(hex, a->proof.data, a->proof.len, false);
    bool ok = MHD_add_response_header(resp, "X-Gd-Proof", hex) == MHD_YES;
    free(hex);
    return ok;
}

/* Opens the answer's file without following a final symbolic link and
 * without blocking on a FIFO; only a regular file is served. */
static bool gd_reply_open(const char *path, int *fd_out, uint64_t *size, unsigned *code,
                          const char **why) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        bool gone = errno == ENOENT || errno == ENOTDIR;
        GD_LOG_WARN("http", "cannot open %s: %s", path, strerror(errno));
        *code = gone ? 404 : 500;
        *why = gone ? "not found" : "the artifact cannot be opened";
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
        GD_LOG_WARN("http", "refusing to serve %s: not a regular file", path);
        close(fd);
        *code = 500;
        *why = "the artifact is not a regular file";
        return false;
    }
    /* libmicrohttpd reads (or sendfile()s) the file expecting blocking I/O. */
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        close(fd);
        *code = 500;
        *why = "the artifact cannot be opened";
        return false;
    }
    *fd_out = fd;
    *size = (uint64_t)st.st_size;
    return true;
}

/* The Range field, or NULL when there is none or several: RFC 9110 has a
 * field sent twice read as one list, which for us means several ranges,
 * answered in full anyway. */
typedef struct gd_range_fields {
    const char *value;
    unsigned count;
} gd_range_fields;

static enum MHD_Result gd_reply_range_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                            const char *value) {
    gd_range_fields *f = cls;
    (void)kind;
    if (key != NULL && strcasecmp(key, "Range") == 0) {
        f->value = value;
        f->count++;
    }
    return MHD_YES;
}

static const char *gd_reply_range_value(struct MHD_Connection *conn) {
    gd_range_fields f = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, gd_reply_range_field, &f);
    return f.count == 1 ? f.value : NULL;
}

/* A dripped answer (gd_artifact_answer.drip, a test-only adversary's):
 * nothing for GD_DRIP_MS, then GD_DRIP_BYTES every GD_DRIP_MS, about
 * 21 KiB/s: above the peer client's average-rate floor (16 KiB/s after
 * 10 s), so only the window's deadline ends a transfer of a large answer.
 * The reader sleeps on the server's worker thread, which is the dripper's
 * own loss. */
#define GD_DRIP_MS 3000
#define GD_DRIP_BYTES (64u << 10)

typedef struct gd_drip {
    int fd;
    uint64_t off;
    uint64_t sent_in_burst;
} gd_drip;

static ssize_t gd_drip_read(void *cls, uint64_t pos, char *buf, size_t max) {
    gd_drip *d = cls;
    if (pos == 0 || d->sent_in_burst >= GD_DRIP_BYTES) {
        usleep(GD_DRIP_MS * 1000);
        d->sent_in_burst = 0;
    }
    size_t want = max < GD_DRIP_BYTES - d->sent_in_burst ? max : GD_DRIP_BYTES - d->sent_in_burst;
    ssize_t got = pread(d->fd, buf, want, (off_t)(d->off + pos));
    if (got <= 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    d->sent_in_burst += (uint64_t)got;
    return got;
}

static void gd_drip_free(void *cls) {
    gd_drip *d = cls;
    close(d->fd);
    free(d);
}

/* A response of len bytes of fd from off, dripped if asked; takes fd in
 * every case. */
static struct MHD_Response *gd_reply_fd_response(int fd, uint64_t off, uint64_t len, bool drip) {
    if (len == 0) {
        close(fd);
        return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (drip) {
        gd_drip *d = calloc(1, sizeof *d);
        struct MHD_Response *resp =
            d ? MHD_create_response_from_callback(len, 16 << 10, gd_drip_read, d, gd_drip_free)
              : NULL;
        if (d != NULL)
            *d = (gd_drip){.fd = fd, .off = off};
        if (resp == NULL) {
            free(d);
            close(fd);
        }
        return resp;
    }
    struct MHD_Response *resp = MHD_create_response_from_fd_at_offset64(len, fd, off);
    if (resp == NULL)
        close(fd);
    return resp;
}

static enum MHD_Result gd_reply_file(struct MHD_Connection *conn, gd_http_exchange *ex,
                                     const gd_artifact_answer *a) {
    int fd;
    uint64_t size;
    unsigned code;
    const char *why;
    if (!gd_reply_open(a->path, &fd, &size, &code, &why))
        return gd_http_reply_text(conn, ex, code, why, NULL, NULL);
    /* RFC 9110 defines Range for GET only: HEAD gets the whole length. */
    gd_http_range range = {0};
    gd_http_range_kind kind = ex->head
                                  ? GD_HTTP_RANGE_FULL
                                  : gd_http_range_parse(&range, gd_reply_range_value(conn), size);
    char content_range[64];
    if (kind == GD_HTTP_RANGE_UNSATISFIABLE) {
        close(fd);
        snprintf(content_range, sizeof content_range, "bytes */%" PRIu64, size);
        return gd_http_reply_text(conn, ex, 416, "range not satisfiable", "Content-Range",
                                  content_range);
    }
    uint64_t off = 0, len = size;
    if (kind == GD_HTTP_RANGE_PARTIAL) {
        off = range.first;
        len = range.last - range.first + 1;
        snprintf(content_range, sizeof content_range, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64,
                 range.first, range.last, size);
    }
    struct MHD_Response *resp = gd_reply_fd_response(fd, off, len, a->drip);
    if (resp == NULL)
        return gd_http_reply_text(conn, ex, 500, "out of memory", NULL, NULL);
    if (!gd_reply_answer_headers(resp, ex, a)) {
        MHD_destroy_response(resp);
        return gd_http_reply_text(conn, ex, 500, "the proof cannot be sent", NULL, NULL);
    }
    MHD_add_response_header(resp, "Accept-Ranges", "bytes");
    if (kind == GD_HTTP_RANGE_PARTIAL)
        MHD_add_response_header(resp, "Content-Range", content_range);
    return gd_reply_queue(conn, ex, kind == GD_HTTP_RANGE_PARTIAL ? 206 : 200, resp, len);
}

static enum MHD_Result gd_reply_body(struct MHD_Connection *conn, gd_http_exchange *ex,
                                     gd_artifact_answer *a) {
    size_t len = a->body.len;
    struct MHD_Response *resp =
        len == 0 ? MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT)
                 : MHD_create_response_from_buffer_with_free_callback(len, a->body.data, free);
    if (resp == NULL)
        return gd_http_reply_text(conn, ex, 500, "out of memory", NULL, NULL);
    if (len > 0) /* the response owns the bytes now */
        a->body = (gd_buf){0};
    if (!gd_reply_answer_headers(resp, ex, a)) {
        MHD_destroy_response(resp);
        return gd_http_reply_text(conn, ex, 500, "the proof cannot be sent", NULL, NULL);
    }
    return gd_reply_queue(conn, ex, 200, resp, len);
}

enum MHD_Result gd_http_reply_answer(struct MHD_Connection *conn, gd_http_exchange *ex,
                                     gd_artifact_answer *a) {
    if (memchr(a->path, '\0', sizeof a->path) == NULL)
        return gd_http_reply_text(conn, ex, 500, "the artifact's path is too long", NULL, NULL);
    if (a->path[0] != '\0')
        return gd_reply_file(conn, ex, a);
    return gd_reply_body(conn, ex, a);
}
