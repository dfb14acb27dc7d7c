/* A round's files by tier (artifact_tiers.h). */
#include "plugin/member/artifact_tiers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"

#define GD_ARCHIVE_COPY_BYTES ((size_t)8 << 20)

/* A state file's leaf ("state-L.gdws"), or false. */
static bool gd_state_entry(const char *name, uint32_t *leaf) {
    unsigned long v = 0;
    int used = 0;
    if (sscanf(name, "state-%lu.gdws%n", &v, &used) != 1 || name[used] != '\0' ||
        v > UINT32_MAX || strncmp(name, "state-", 6) != 0 || name[6] < '0' || name[6] > '9')
        return false;
    *leaf = (uint32_t)v;
    return true;
}

/* What a killed atomic write left behind (common/file.h's temporary name). */
static bool gd_leftover_entry(const char *name) { return strstr(name, ".tmp-") != NULL; }

/* The highest state leaf in dir (the post state of a stored round). */
static gd_status gd_post_leaf(const char *dir, bool *have, uint32_t *post) {
    *have = false;
    *post = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT ? GD_OK
                               : gd_fail(GD_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        uint32_t leaf;
        if (gd_state_entry(e->d_name, &leaf) && (!*have || leaf > *post)) {
            *post = leaf;
            *have = true;
        }
    }
    closedir(d);
    return GD_OK;
}

/* A peer's payload fetched in the round ("peer-L.gdpl"). */
static bool gd_peer_payload_entry(const char *name) {
    unsigned long v = 0;
    int used = 0;
    return strncmp(name, "peer-", 5) == 0 && name[5] >= '0' && name[5] <= '9' &&
           sscanf(name, "peer-%lu.gdpl%n", &v, &used) == 1 && name[used] == '\0';
}

/* A check's fetched segment start ("check-K-S.gdws"). */
static bool gd_check_state_entry(const char *name) {
    unsigned long k = 0, seg = 0;
    int used = 0;
    return strncmp(name, "check-", 6) == 0 && name[6] >= '0' && name[6] <= '9' &&
           sscanf(name, "check-%lu-%lu.gdws%n", &k, &seg, &used) == 2 && name[used] == '\0';
}

/* Whether an entry of a round directory is temporary. */
static bool gd_is_temporary(const char *name, bool have_post, uint32_t post) {
    uint32_t leaf;
    return gd_leftover_entry(name) || gd_peer_payload_entry(name) ||
           gd_check_state_entry(name) ||
           (gd_state_entry(name, &leaf) && have_post && leaf < post);
}

gd_status gd_artifact_settle(const gd_artifact_store *s, uint64_t run, uint64_t round) {
    char dir[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_round_dir(s, dir, sizeof dir, run, round));
    bool have_post = false;
    uint32_t post = 0;
    GD_TRY(gd_post_leaf(dir, &have_post, &post));
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT ? GD_OK
                               : gd_fail(GD_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    gd_status st = GD_OK;
    for (struct dirent *e; st == GD_OK && (e = readdir(d)) != NULL;) {
        if (!gd_is_temporary(e->d_name, have_post, post))
            continue;
        char path[GD_ARTIFACT_PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path)
            st = gd_fail(GD_ERR_LIMIT, "artifact path too long");
        else if (unlink(path) != 0 && errno != ENOENT)
            st = gd_fail(GD_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    }
    closedir(d);
    return st;
}

static gd_status gd_fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        gd_status st = gd_fail(GD_ERR_IO, "cannot sync %s: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return st;
    }
    close(fd);
    return GD_OK;
}

/* src copied to dst through a temporary file in dst's directory, fsynced
 * and renamed, a buffer at a time (G is too big to read whole). */
static gd_status gd_copy_streamed(const char *src, const char *dst) {
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return gd_fail(GD_ERR_IO, "cannot open %s: %s", src, strerror(errno));
    char tmp[GD_ARTIFACT_PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", dst);
    int out = mkostemp(tmp, O_CLOEXEC);
    uint8_t *buf = malloc(GD_ARCHIVE_COPY_BYTES);
    gd_status st = out >= 0 && buf ? GD_OK
                                   : gd_fail(out < 0 ? GD_ERR_IO : GD_ERR_NOMEM,
                                             "cannot create %s: %s", tmp, strerror(errno));
    while (st == GD_OK) {
        ssize_t got = read(in, buf, GD_ARCHIVE_COPY_BYTES);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            st = gd_fail(GD_ERR_IO, "reading %s: %s", src, strerror(errno));
        if (got <= 0)
            break;
        for (ssize_t done = 0; st == GD_OK && done < got;) {
            ssize_t put = write(out, buf + done, (size_t)(got - done));
            if (put < 0 && errno == EINTR)
                continue;
            if (put <= 0)
                st = gd_fail(GD_ERR_IO, "writing %s: %s", tmp, strerror(errno));
            else
                done += put;
        }
    }
    if (st == GD_OK && fsync(out) != 0)
        st = gd_fail(GD_ERR_IO, "syncing %s: %s", tmp, strerror(errno));
    if (out >= 0 && close(out) != 0 && st == GD_OK)
        st = gd_fail(GD_ERR_IO, "closing %s: %s", tmp, strerror(errno));
    close(in);
    free(buf);
    if (st == GD_OK && rename(tmp, dst) != 0)
        st = gd_fail(GD_ERR_IO, "cannot rename %s: %s", tmp, strerror(errno));
    if (st != GD_OK && out >= 0)
        unlink(tmp);
    return st;
}

gd_status gd_artifact_archive(const gd_artifact_store *s, uint64_t run, uint64_t round,
                              const char *archive_dir) {
    char dst_dir[GD_ARTIFACT_PATH_MAX];
    int n = snprintf(dst_dir, sizeof dst_dir, "%s/run-%" PRIu64 "/round-%" PRIu64, archive_dir,
                     run, round);
    if (n < 0 || (size_t)n >= sizeof dst_dir - 64)
        return gd_fail(GD_ERR_LIMIT, "archive path too long");
    static const gd_artifact_kind kinds[] = {GD_ARTIFACT_GLOBAL, GD_ARTIFACT_CHECKPOINT};
    bool made = false;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char src[GD_ARTIFACT_PATH_MAX], dst[GD_ARTIFACT_PATH_MAX];
        GD_TRY(gd_artifact_path(s, src, sizeof src, kinds[i], run, round, 0));
        struct stat st;
        if (stat(src, &st) != 0)
            continue; /* this member did not keep that file of the round */
        if (!made) {
            GD_TRY(gd_dir_create(dst_dir, 0700));
            made = true;
        }
        const char *name = strrchr(src, '/') + 1;
        snprintf(dst, sizeof dst, "%s/%s", dst_dir, name);
        if (rename(src, dst) != 0) {
            if (errno != EXDEV)
                return gd_fail(GD_ERR_IO, "cannot move %s to %s: %s", src, dst,
                               strerror(errno));
            GD_TRY(gd_copy_streamed(src, dst));
            if (unlink(src) != 0)
                return gd_fail(GD_ERR_IO, "cannot remove %s: %s", src, strerror(errno));
        }
        GD_TRY(gd_fsync_dir(dst_dir));
    }
    return GD_OK;
}

gd_status gd_artifact_retire(const gd_artifact_store *s, uint64_t run, uint64_t below,
                             const gd_retention *retention) {
    if (retention != NULL && retention->archive_every > 0 && retention->archive_dir != NULL) {
        uint64_t *rounds = NULL;
        size_t count = 0;
        GD_TRY(gd_artifact_rounds(s, &rounds, &count, run, below));
        gd_status st = GD_OK;
        for (size_t i = 0; st == GD_OK && i < count; i++)
            if (rounds[i] % retention->archive_every == 0)
                st = gd_artifact_archive(s, run, rounds[i], retention->archive_dir);
        free(rounds);
        GD_TRY(st);
    }
    return gd_artifact_prune(s, run, below);
}

/* The bytes of the regular files in dir, temporary and the rest (tiers
 * NULL: all in *rest). */
static gd_status gd_dir_bytes(const char *dir, bool tiers, uint64_t *temporary, uint64_t *rest) {
    bool have_post = false;
    uint32_t post = 0;
    if (tiers)
        GD_TRY(gd_post_leaf(dir, &have_post, &post));
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT ? GD_OK
                               : gd_fail(GD_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[GD_ARTIFACT_PATH_MAX];
        struct stat st;
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (tiers && gd_is_temporary(e->d_name, have_post, post))
            *temporary += (uint64_t)st.st_size;
        else
            *rest += (uint64_t)st.st_size;
    }
    closedir(d);
    return GD_OK;
}

gd_status gd_artifact_tier_bytes(const gd_artifact_store *s, gd_tier_bytes *out, uint64_t run,
                                 const char *archive_dir) {
    memset(out, 0, sizeof *out);
    uint64_t *rounds = NULL;
    size_t count = 0;
    GD_TRY(gd_artifact_rounds(s, &rounds, &count, run, UINT64_MAX));
    gd_status st = GD_OK;
    for (size_t i = 0; st == GD_OK && i < count; i++) {
        char dir[GD_ARTIFACT_PATH_MAX];
        st = gd_artifact_round_dir(s, dir, sizeof dir, run, rounds[i]);
        if (st == GD_OK)
            st = gd_dir_bytes(dir, true, &out->temporary, &out->hot);
    }
    free(rounds);
    if (st != GD_OK || archive_dir == NULL)
        return st;
    /* The archive's rounds: archive_dir/run-N/round-R/. */
    gd_artifact_store archive;
    int n = snprintf(archive.root, sizeof archive.root, "%s", archive_dir);
    if (n < 0 || (size_t)n >= sizeof archive.root)
        return gd_fail(GD_ERR_LIMIT, "archive path too long");
    GD_TRY(gd_artifact_rounds(&archive, &rounds, &count, run, UINT64_MAX));
    uint64_t unused = 0;
    for (size_t i = 0; st == GD_OK && i < count; i++) {
        char dir[GD_ARTIFACT_PATH_MAX];
        st = gd_artifact_round_dir(&archive, dir, sizeof dir, run, rounds[i]);
        if (st == GD_OK)
            st = gd_dir_bytes(dir, false, &unused, &out->archive);
    }
    free(rounds);
    return st;
}
