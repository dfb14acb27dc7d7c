/* A node's artifacts on disk (plugin/member/artifact_store.h). */
#include "plugin/member/artifact_store.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "trainer/payload.h"

/* Version 3 added "ahead" and "bonded"; a version 2 journal reads as one
 * with neither (false and 0). */
#define GD_JOURNAL_VERSION 3

/* mkdir with mode 0700 that accepts an existing directory. */
static gd_status gd_mkdir_private(const char *path) {
    if (mkdir(path, 0700) == 0)
        return GD_OK;
    struct stat st;
    if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return GD_OK;
    return gd_fail(GD_ERR_IO, "cannot create directory %s: %s", path,
                   errno == EEXIST ? "a file is in the way" : strerror(errno));
}

gd_status gd_artifact_store_open(gd_artifact_store *s, const char *root) {
    size_t len = strlen(root);
    if (len == 0 || len >= GD_ARTIFACT_PATH_MAX - 128)
        return gd_fail(GD_ERR_INVALID, "state directory path is empty or too long (%zu bytes)",
                       len);
    memcpy(s->root, root, len + 1);
    while (len > 1 && s->root[len - 1] == '/')
        s->root[--len] = 0;
    /* Every missing parent too, as `mkdir -p` would. */
    char path[GD_ARTIFACT_PATH_MAX];
    memcpy(path, s->root, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != 0)
            continue;
        char keep = path[i];
        path[i] = 0;
        GD_TRY(gd_mkdir_private(path));
        path[i] = keep;
    }
    return GD_OK;
}

gd_status gd_artifact_round_dir(const gd_artifact_store *s, char *out, size_t cap, uint64_t run,
                                uint64_t round) {
    int n = snprintf(out, cap, "%s/run-%" PRIu64 "/round-%" PRIu64, s->root, run, round);
    if (n < 0 || (size_t)n >= cap)
        return gd_fail(GD_ERR_LIMIT, "artifact path too long");
    return GD_OK;
}

gd_status gd_artifact_path(const gd_artifact_store *s, char *out, size_t cap,
                           gd_artifact_kind kind, uint64_t run, uint64_t round, uint32_t leaf) {
    char dir[GD_ARTIFACT_PATH_MAX], name[32];
    GD_TRY(gd_artifact_round_dir(s, dir, sizeof dir, run, round));
    switch (kind) {
    case GD_ARTIFACT_PAYLOAD: snprintf(name, sizeof name, "payload.gdpl"); break;
    case GD_ARTIFACT_TRANSCRIPT: snprintf(name, sizeof name, "transcript.bin"); break;
    case GD_ARTIFACT_STATE: snprintf(name, sizeof name, "state-%" PRIu32 ".gdws", leaf); break;
    case GD_ARTIFACT_GLOBAL: snprintf(name, sizeof name, "global.gdgs"); break;
    case GD_ARTIFACT_CHECKPOINT: snprintf(name, sizeof name, "checkpoint.safetensors"); break;
    case GD_ARTIFACT_COMMIT: snprintf(name, sizeof name, "commit.pb"); break;
    case GD_ARTIFACT_TRACES: snprintf(name, sizeof name, "traces.bin"); break;
    case GD_ARTIFACT_PEER_PAYLOAD:
        snprintf(name, sizeof name, "peer-%" PRIu32 ".gdpl", leaf);
        break;
    default: return gd_fail(GD_ERR_INVALID, "unknown artifact kind %d", (int)kind);
    }
    int n = snprintf(out, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap)
        return gd_fail(GD_ERR_LIMIT, "artifact path too long");
    return GD_OK;
}

gd_status gd_artifact_place(const gd_artifact_store *s, char path[GD_ARTIFACT_PATH_MAX],
                                   gd_artifact_kind kind, uint64_t run, uint64_t round,
                                   uint32_t leaf) {
    char dir[GD_ARTIFACT_PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/run-%" PRIu64, s->root, run);
    if (n < 0 || (size_t)n >= sizeof dir)
        return gd_fail(GD_ERR_LIMIT, "artifact path too long");
    GD_TRY(gd_mkdir_private(dir));
    GD_TRY(gd_artifact_round_dir(s, dir, sizeof dir, run, round));
    GD_TRY(gd_mkdir_private(dir));
    return gd_artifact_path(s, path, GD_ARTIFACT_PATH_MAX, kind, run, round, leaf);
}

gd_status gd_artifact_round_place(const gd_artifact_store *s, char dir[GD_ARTIFACT_PATH_MAX],
                                  uint64_t run, uint64_t round) {
    GD_TRY(gd_artifact_place(s, dir, GD_ARTIFACT_PAYLOAD, run, round, 0)); /* the directories */
    return gd_artifact_round_dir(s, dir, GD_ARTIFACT_PATH_MAX, run, round);
}

gd_status gd_artifact_check_state_place(const gd_artifact_store *s,
                                       char path[GD_ARTIFACT_PATH_MAX], uint64_t run,
                                       uint64_t round, uint32_t rank, uint32_t segment) {
    char dir[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_round_place(s, dir, run, round));
    int n = snprintf(path, GD_ARTIFACT_PATH_MAX, "%s/check-%" PRIu32 "-%" PRIu32 ".gdws", dir,
                     rank, segment);
    if (n < 0 || n >= GD_ARTIFACT_PATH_MAX)
        return gd_fail(GD_ERR_LIMIT, "artifact path too long");
    return GD_OK;
}

gd_status gd_artifact_put_parts(const gd_artifact_store *s, gd_artifact_kind kind, uint64_t run,
                                uint64_t round, uint32_t leaf, const gd_bytes_part *parts,
                                size_t n_parts) {
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_place(s, path, kind, run, round, leaf));
    return gd_file_write_atomic(path, parts, n_parts, 0600);
}

gd_status gd_artifact_put_payload(const gd_artifact_store *s, uint64_t run, uint64_t round,
                                  const gd_payload *p) {
    gd_payload_parts parts;
    GD_TRY(gd_payload_file_parts(p, &parts));
    gd_status st = gd_artifact_put_parts(s, GD_ARTIFACT_PAYLOAD, run, round, 0, parts.parts,
                                         parts.count);
    gd_payload_parts_free(&parts);
    return st;
}

gd_status gd_artifact_begin(const gd_artifact_store *s, gd_file_atomic *f, gd_artifact_kind kind,
                            uint64_t run, uint64_t round, uint32_t leaf) {
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_place(s, path, kind, run, round, leaf));
    return gd_file_atomic_begin(f, path, 0600);
}

gd_status gd_artifact_put(const gd_artifact_store *s, gd_artifact_kind kind, uint64_t run,
                          uint64_t round, uint32_t leaf, const void *data, size_t len) {
    gd_bytes_part part = {data, len};
    return gd_artifact_put_parts(s, kind, run, round, leaf, &part, 1);
}

gd_status gd_artifact_get(const gd_artifact_store *s, gd_buf *out, gd_artifact_kind kind,
                          uint64_t run, uint64_t round, uint32_t leaf, size_t max_len) {
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_path(s, path, sizeof path, kind, run, round, leaf));
    return gd_file_read(out, path, max_len);
}

gd_status gd_artifact_payload_chunk(const gd_artifact_store *s, uint64_t run, uint64_t round,
                                    uint32_t chunk, gd_buf *raw, gd_buf *proof) {
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_path(s, path, sizeof path, GD_ARTIFACT_PAYLOAD, run, round, 0));
    /* Read in place: a chunk at a time in memory, however large the payload. */
    gd_payload_view p;
    GD_TRY(gd_payload_view_open_path(&p, path));
    gd_status st = GD_OK;
    if (chunk >= p.header.chunk_count)
        st = gd_fail(GD_ERR_NOT_FOUND, "the payload of round %" PRIu64 " has %" PRIu32
                                       " chunks, not %" PRIu32,
                     round, p.header.chunk_count, chunk + 1);
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    gd_mmr_proof pr;
    if (st == GD_OK)
        st = gd_payload_view_mmr(&p, &mmr, NULL);
    if (st == GD_OK)
        st = gd_mmr_prove(&mmr, &pr, chunk + 1);
    const uint8_t *bytes = NULL;
    size_t len = 0;
    if (st == GD_OK)
        st = gd_payload_view_raw(&p, chunk, &bytes, &len);
    raw->len = 0;
    proof->len = 0;
    if (st == GD_OK)
        st = gd_buf_append(raw, bytes, len);
    if (st == GD_OK)
        st = gd_mmr_proof_encode(&pr, proof);
    gd_mmr_free(&mmr);
    gd_payload_view_close(&p);
    return st;
}

/* A directory entry "round-N" with N in decimal, exactly. */
static bool gd_round_entry(const char *name, uint64_t *round) {
    if (strncmp(name, "round-", 6) != 0 || name[6] < '0' || name[6] > '9')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(name + 6, &end, 10);
    if (errno != 0 || *end != 0 || (name[6] == '0' && name[7] != 0))
        return false;
    *round = v;
    return true;
}

static gd_status gd_remove_round_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL)
        return gd_fail(GD_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    gd_status s = GD_OK;
    for (struct dirent *e; s == GD_OK && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[GD_ARTIFACT_PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path)
            s = gd_fail(GD_ERR_LIMIT, "artifact path too long");
        else if (unlink(path) != 0)
            s = gd_fail(GD_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    }
    closedir(d);
    if (s == GD_OK && rmdir(dir) != 0)
        s = gd_fail(GD_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
    return s;
}

gd_status gd_artifact_rounds(const gd_artifact_store *s, uint64_t **rounds, size_t *count,
                             uint64_t run, uint64_t below) {
    *rounds = NULL;
    *count = 0;
    char dir[GD_ARTIFACT_PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/run-%" PRIu64, s->root, run);
    if (n < 0 || (size_t)n >= sizeof dir)
        return gd_fail(GD_ERR_LIMIT, "artifact path too long");
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT ? GD_OK
                               : gd_fail(GD_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    size_t cap = 0;
    gd_status st = GD_OK;
    for (struct dirent *e; st == GD_OK && (e = readdir(d)) != NULL;) {
        uint64_t r;
        if (!gd_round_entry(e->d_name, &r) || r >= below)
            continue;
        if (*count == cap) {
            size_t grown = cap ? 2 * cap : 16;
            uint64_t *more = realloc(*rounds, grown * sizeof *more);
            if (more == NULL) {
                st = gd_fail(GD_ERR_NOMEM, "out of memory");
                break;
            }
            *rounds = more;
            cap = grown;
        }
        (*rounds)[(*count)++] = r;
    }
    closedir(d);
    if (st != GD_OK) {
        free(*rounds);
        *rounds = NULL;
        *count = 0;
    }
    return st;
}

gd_status gd_artifact_prune(const gd_artifact_store *s, uint64_t run, uint64_t below) {
    /* Names first: the directory is not changed under readdir. */
    uint64_t *rounds = NULL;
    size_t count = 0;
    gd_status st = gd_artifact_rounds(s, &rounds, &count, run, below);
    for (size_t i = 0; st == GD_OK && i < count; i++) {
        char rd[GD_ARTIFACT_PATH_MAX];
        st = gd_artifact_round_dir(s, rd, sizeof rd, run, rounds[i]);
        if (st == GD_OK)
            st = gd_remove_round_dir(rd);
    }
    free(rounds);
    return st;
}

/* ---- the lock ------------------------------------------------------------------------- */

gd_status gd_artifact_store_lock(const gd_artifact_store *s, int *fd) {
    *fd = -1;
    char path[GD_ARTIFACT_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/lock", s->root);
    if (n < 0 || (size_t)n >= sizeof path)
        return gd_fail(GD_ERR_LIMIT, "lock path too long");
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (f < 0)
        return gd_fail(errno == EROFS || errno == EACCES ? GD_ERR_PERMISSION : GD_ERR_IO,
                       "state_dir %s cannot be written: %s", s->root, strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[24] = "";
        ssize_t got = pread(f, pid, sizeof pid - 1, 0);
        pid[got > 0 ? (size_t)got : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(f);
        if (e == EWOULDBLOCK)
            return gd_fail(GD_ERR_EXISTS,
                           "state_dir %s is in use by process %s (another gonka-diloco run: "
                           "one daemon per state_dir)",
                           s->root, pid[0] ? pid : "(unknown)");
        return gd_fail(GD_ERR_IO, "%s: %s", path, strerror(e));
    }
    char text[24];
    int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, text, (size_t)len, 0) != len) {
        int e = errno;
        close(f);
        return gd_fail(GD_ERR_IO, "state_dir %s cannot be written: %s", s->root, strerror(e));
    }
    *fd = f;
    return GD_OK;
}

void gd_artifact_store_unlock(int fd) {
    if (fd >= 0)
        close(fd);
}

/* ---- the journal ---------------------------------------------------------------------- */

static gd_status gd_leave_path(const gd_artifact_store *s, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s/leave", s->root);
    if (n < 0 || (size_t)n >= cap)
        return gd_fail(GD_ERR_LIMIT, "leave request path too long");
    return GD_OK;
}

gd_status gd_leave_request_save(const gd_artifact_store *s) {
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_leave_path(s, path, sizeof path));
    gd_bytes_part part = {"leave the run\n", 14};
    return gd_file_write_atomic(path, &part, 1, 0600);
}

bool gd_leave_requested(const gd_artifact_store *s) {
    char path[GD_ARTIFACT_PATH_MAX];
    struct stat st;
    return gd_leave_path(s, path, sizeof path) == GD_OK && stat(path, &st) == 0;
}

static gd_status gd_journal_path(const gd_artifact_store *s, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s/journal.json", s->root);
    if (n < 0 || (size_t)n >= cap)
        return gd_fail(GD_ERR_LIMIT, "journal path too long");
    return GD_OK;
}

gd_status gd_journal_save(const gd_artifact_store *s, const gd_member_journal *j) {
    char path[GD_ARTIFACT_PATH_MAX], round[24], sealed[24], bonded[24];
    GD_TRY(gd_journal_path(s, path, sizeof path));
    snprintf(round, sizeof round, "%" PRIu64, j->round);
    snprintf(sealed, sizeof sealed, "%" PRIu64, j->sealed_upto);
    snprintf(bonded, sizeof bonded, "%" PRIu64, j->bonded);
    json_t *o = json_pack("{s:i,s:s,s:b,s:b,s:b,s:b,s:b,s:s,s:s}", "version", GD_JOURNAL_VERSION,
                          "round", round, "trained", (int)j->trained, "ahead", (int)j->ahead,
                          "aggregated", (int)j->aggregated, "join_sent", (int)j->join_sent,
                          "leave_wanted", (int)j->leave_wanted, "sealed_upto", sealed,
                          "bonded", bonded);
    char *text = o ? json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    json_decref(o);
    if (text == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory writing the journal");
    gd_bytes_part parts[2] = {{text, strlen(text)}, {"\n", 1}};
    gd_status st = gd_file_write_atomic(path, parts, 2, 0600);
    free(text);
    return st;
}

static gd_status gd_journal_bool(bool *out, const json_t *o, const char *key,
                                 const char *path) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v))
        return gd_fail(GD_ERR_PARSE, "%s: \"%s\" must be true or false", path, key);
    *out = json_is_true(v);
    return GD_OK;
}

/* A uint64 as a decimal string (JSON numbers are doubles to most readers). */
static gd_status gd_journal_u64(uint64_t *out, const json_t *o, const char *key,
                                const char *path) {
    const char *text = json_string_value(json_object_get(o, key));
    char *end = NULL;
    errno = 0;
    *out = text && text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
    if (text == NULL || end == NULL || *end != 0 || errno != 0)
        return gd_fail(GD_ERR_PARSE, "%s: \"%s\" must be a decimal string", path, key);
    return GD_OK;
}

gd_status gd_journal_parse(gd_member_journal *j, const uint8_t *data, size_t len,
                           const char *path) {
    memset(j, 0, sizeof *j);
    if (len > GD_JOURNAL_MAX)
        return gd_fail(GD_ERR_LIMIT, "%s is over %d bytes", path, GD_JOURNAL_MAX);
    gd_status st = GD_OK;
    json_error_t e;
    json_t *o = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &e);
    if (!json_is_object(o)) {
        json_decref(o);
        return gd_fail(GD_ERR_PARSE, "%s does not parse as a journal: %s", path, e.text);
    }
    static const char *const keys[] = {"version",    "round",     "trained",      "ahead",
                                       "aggregated", "join_sent", "leave_wanted", "sealed_upto",
                                       "bonded"};
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool known = false;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            known |= strcmp(key, keys[i]) == 0;
        if (!known)
            st = gd_fail(GD_ERR_PARSE, "%s: unknown key \"%s\"", path, key);
    }
    const json_t *version = json_object_get(o, "version");
    json_int_t ver = json_is_integer(version) ? json_integer_value(version) : 0;
    if (st == GD_OK && ver != GD_JOURNAL_VERSION && ver != GD_JOURNAL_VERSION - 1)
        st = gd_fail(GD_ERR_PARSE, "%s: version must be %d or %d", path, GD_JOURNAL_VERSION - 1,
                     GD_JOURNAL_VERSION);
    if (st == GD_OK)
        st = gd_journal_u64(&j->round, o, "round", path);
    if (st == GD_OK)
        st = gd_journal_u64(&j->sealed_upto, o, "sealed_upto", path);
    if (st == GD_OK)
        st = gd_journal_bool(&j->trained, o, "trained", path);
    if (st == GD_OK && ver == GD_JOURNAL_VERSION)
        st = gd_journal_bool(&j->ahead, o, "ahead", path);
    if (st == GD_OK && ver == GD_JOURNAL_VERSION)
        st = gd_journal_u64(&j->bonded, o, "bonded", path);
    if (st == GD_OK && ver != GD_JOURNAL_VERSION &&
        (json_object_get(o, "ahead") != NULL || json_object_get(o, "bonded") != NULL))
        st = gd_fail(GD_ERR_PARSE, "%s: \"ahead\" and \"bonded\" are not version %d keys",
                     path, (int)ver);
    if (st == GD_OK)
        st = gd_journal_bool(&j->aggregated, o, "aggregated", path);
    if (st == GD_OK)
        st = gd_journal_bool(&j->join_sent, o, "join_sent", path);
    if (st == GD_OK)
        st = gd_journal_bool(&j->leave_wanted, o, "leave_wanted", path);
    json_decref(o);
    if (st != GD_OK)
        memset(j, 0, sizeof *j);
    return st;
}

gd_status gd_journal_load(const gd_artifact_store *s, gd_member_journal *j) {
    memset(j, 0, sizeof *j);
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_journal_path(s, path, sizeof path));
    gd_buf b = {0};
    gd_status st = gd_file_read(&b, path, GD_JOURNAL_MAX);
    if (st == GD_ERR_NOT_FOUND)
        return GD_OK; /* a new member */
    GD_TRY(st);
    st = gd_journal_parse(j, b.data, b.len, path);
    gd_buf_free(&b);
    return st;
}
