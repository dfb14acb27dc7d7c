/* A node's memory of its data files' hashes (plugin/member/data_memo.h). */
#include "plugin/member/data_memo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bytes.h"
#include "common/file.h"
#include "common/parse.h"

void gd_data_memo_entries_free(gd_data_memo_entry *entries, size_t n) {
    for (size_t i = 0; entries != NULL && i < n; i++)
        free(entries[i].path);
    free(entries);
}

/* The next field of line [*at, end): up to the next space (or the line's
 * end when last), copied into out as text. */
static bool gd_memo_field(char *out, size_t cap, const uint8_t **at, const uint8_t *end,
                          bool last) {
    const uint8_t *p = *at;
    const uint8_t *stop = last ? end : memchr(p, ' ', (size_t)(end - p));
    if (stop == NULL || stop == p || (size_t)(stop - p) >= cap || memchr(p, 0, (size_t)(stop - p)))
        return false;
    memcpy(out, p, (size_t)(stop - p));
    out[stop - p] = '\0';
    *at = last ? stop : stop + 1;
    return true;
}

static bool gd_memo_nsec(int64_t *out, const char *text) {
    return gd_parse_i64(out, text) == GD_OK && *out >= 0 && *out <= 999999999;
}

static gd_status gd_memo_line(const uint8_t *p, const uint8_t *end, gd_data_memo_entry *e) {
    char f[8][72], path[GD_DATA_MEMO_PATH_MAX];
    for (int i = 0; i < 8; i++)
        if (!gd_memo_field(f[i], sizeof f[i], &p, end, false))
            return GD_ERR_PARSE;
    if (!gd_memo_field(path, sizeof path, &p, end, true))
        return GD_ERR_PARSE;
    size_t got = 0;
    if (strlen(f[0]) != 64 || gd_hex_decode(e->hash, 32, &got, f[0], 64) != GD_OK || got != 32)
        return GD_ERR_PARSE;
    gd_data_file_id *id = &e->id;
    if (gd_parse_u64(&id->dev, f[1]) != GD_OK || gd_parse_u64(&id->ino, f[2]) != GD_OK ||
        gd_parse_u64(&id->size, f[3]) != GD_OK || gd_parse_i64(&id->mtime_sec, f[4]) != GD_OK ||
        !gd_memo_nsec(&id->mtime_nsec, f[5]) || gd_parse_i64(&id->ctime_sec, f[6]) != GD_OK ||
        !gd_memo_nsec(&id->ctime_nsec, f[7]))
        return GD_ERR_PARSE;
    e->path = strdup(path);
    return e->path ? GD_OK : GD_ERR_NOMEM;
}

static int gd_memo_cmp(const void *a, const void *b) {
    return strcmp(((const gd_data_memo_entry *)a)->path, ((const gd_data_memo_entry *)b)->path);
}

gd_status gd_data_memo_parse(gd_data_memo_entry **out, const uint8_t *bytes, size_t len,
                             size_t *n) {
    *out = NULL;
    *n = 0;
    if (len > GD_DATA_MEMO_MAX_BYTES)
        return gd_fail(GD_ERR_LIMIT, "data memo of %zu bytes is over %zu", len,
                       GD_DATA_MEMO_MAX_BYTES);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += bytes[i] == '\n';
    if (len > 0 && bytes[len - 1] != '\n')
        return gd_fail(GD_ERR_PARSE, "data memo: the last line is cut short");
    gd_data_memo_entry *es = calloc(lines ? lines : 1, sizeof *es);
    if (es == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu data memo lines", lines);
    const uint8_t *p = bytes, *end = bytes + len;
    for (size_t i = 0; i < lines; i++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        gd_status s = gd_memo_line(p, nl, &es[i]);
        if (s != GD_OK) {
            gd_data_memo_entries_free(es, i);
            return s == GD_ERR_NOMEM ? gd_fail(s, "out of memory for the data memo")
                                     : gd_fail(s, "data memo: line %zu is not a file's "
                                                  "hash, identity and path", i + 1);
        }
        p = nl + 1;
    }
    if (lines > 1)
        qsort(es, lines, sizeof *es, gd_memo_cmp);
    for (size_t i = 1; i < lines; i++)
        if (strcmp(es[i - 1].path, es[i].path) == 0) {
            gd_data_memo_entries_free(es, lines);
            return gd_fail(GD_ERR_PARSE, "data memo: two lines for one path");
        }
    *out = es;
    *n = lines;
    return GD_OK;
}

gd_status gd_data_memo_load(gd_data_memo *m, const char *state_dir, bool *ignored) {
    memset(m, 0, sizeof *m);
    *ignored = false;
    m->began = (int64_t)time(NULL);
    if (snprintf(m->file, sizeof m->file, "%s/%s", state_dir, GD_DATA_MEMO_FILE) >=
        (int)sizeof m->file) {
        m->file[0] = '\0'; /* nothing is saved */
        *ignored = true;
        (void)gd_fail(GD_ERR_LIMIT, "state_dir is too long for the data memo");
        return GD_OK;
    }
    gd_buf b = {0};
    gd_status s = gd_file_read(&b, m->file, GD_DATA_MEMO_MAX_BYTES);
    if (s == GD_OK)
        s = gd_data_memo_parse(&m->known, b.data, b.len, &m->n_known);
    gd_buf_free(&b);
    if (s == GD_ERR_NOMEM)
        return s;
    *ignored = s != GD_OK && s != GD_ERR_NOT_FOUND;
    return GD_OK;
}

static bool gd_memo_same_id(const gd_data_file_id *a, const gd_data_file_id *b) {
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
           a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

/* Remembers a file for the next save (a path named twice is written once,
 * gd_data_memo_save). */
static void gd_memo_keep(gd_data_memo *m, const char *path, const gd_data_file_id *id,
                         const uint8_t hash[32]) {
    if (m->n_seen == m->cap_seen) {
        size_t cap = m->cap_seen ? 2 * m->cap_seen : 64;
        gd_data_memo_entry *grown = realloc(m->seen, cap * sizeof *grown);
        if (grown == NULL) {
            m->lost = true;
            return;
        }
        m->seen = grown;
        m->cap_seen = cap;
    }
    char *copy = strdup(path);
    if (copy == NULL) {
        m->lost = true;
        return;
    }
    gd_data_memo_entry *e = &m->seen[m->n_seen++];
    e->path = copy;
    e->id = *id;
    memcpy(e->hash, hash, 32);
}

static bool gd_memo_lookup(void *ctx, const char *path, const gd_data_file_id *id,
                           uint8_t hash[32]) {
    gd_data_memo *m = ctx;
    gd_data_memo_entry key = {.path = (char *)path};
    const gd_data_memo_entry *e = m->n_known ? bsearch(&key, m->known, m->n_known,
                                                       sizeof *m->known, gd_memo_cmp)
                                             : NULL;
    if (e == NULL || !gd_memo_same_id(&e->id, id))
        return false;
    memcpy(hash, e->hash, 32);
    gd_memo_keep(m, path, id, hash);
    return true;
}

static void gd_memo_record(void *ctx, const char *path, const gd_data_file_id *id,
                           const uint8_t hash[32]) {
    gd_data_memo *m = ctx;
    /* A file changed just before it was read may change again within the
     * same timestamp, leaving its identity as it was: not remembered. */
    int64_t settled = m->began - GD_DATA_MEMO_SETTLE_SEC;
    if (id->mtime_sec >= settled || id->ctime_sec >= settled || strchr(path, '\n') != NULL ||
        strlen(path) >= GD_DATA_MEMO_PATH_MAX)
        return;
    gd_memo_keep(m, path, id, hash);
}

gd_data_hash_memo gd_data_memo_hooks(gd_data_memo *m) {
    return (gd_data_hash_memo){.lookup = gd_memo_lookup, .record = gd_memo_record, .ctx = m};
}

gd_status gd_data_memo_save(gd_data_memo *m) {
    if (m->file[0] == '\0' || m->lost)
        return GD_OK;
    /* Sorted, each path once (a data set may name one file twice): the
     * parser refuses a path on two lines. A node that hashed nothing has
     * no array at all, and qsort must not see its NULL. */
    if (m->n_seen > 1)
        qsort(m->seen, m->n_seen, sizeof *m->seen, gd_memo_cmp);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for the data memo");
    for (size_t i = 0; i < m->n_seen; i++) {
        const gd_data_memo_entry *e = &m->seen[i];
        if (i > 0 && strcmp(e->path, m->seen[i - 1].path) == 0)
            continue;
        char hex[65];
        gd_hex_encode(hex, e->hash, 32, false);
        fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64
                   " %" PRId64 " %s\n",
                hex, e->id.dev, e->id.ino, e->id.size, e->id.mtime_sec, e->id.mtime_nsec,
                e->id.ctime_sec, e->id.ctime_nsec, e->path);
    }
    if (fclose(f) != 0) {
        free(text);
        return gd_fail(GD_ERR_NOMEM, "out of memory for the data memo");
    }
    gd_bytes_part part = {text, len};
    gd_status s = gd_file_write_atomic(m->file, &part, 1, 0600);
    free(text);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "saving %s", m->file);
}

void gd_data_memo_free(gd_data_memo *m) {
    gd_data_memo_entries_free(m->known, m->n_known);
    gd_data_memo_entries_free(m->seen, m->n_seen);
    memset(m, 0, sizeof *m);
}
