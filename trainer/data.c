/* Training data sources (see data.h): spec parsing, llm.c token shards
 * mapped read-only, text files read into one buffer, the synthetic Markov
 * source (markov.c), and the pure functions from (seed, worker, step,
 * micro) or an eval index to the windows of a batch.
 *
 * Which windows a batch holds is part of the protocol (anyone must be able
 * to recompute a worker's batch), so the rules are spelled out here:
 *
 *   window stream: for (seed, tag, a, b, w), a Philox stream keyed by
 *       (seed; tag, a, b mod 2^32, b >> 32) yields one 64-bit batch key
 *       (gd_rng_u64, its first draw); window w's stream is then keyed by
 *       (batch key; WINDOW tag, w mod 2^32, w >> 32, tag). Two stages
 *       because (worker, step, window) is more than the 128 bits of ids.
 *   training: tag TRAIN, a = worker, b = step, w = micro * batch + j
 *       (mod 2^64), seed = the caller's seed. Token sources: the window's
 *       first draw is r = gd_rng_below(W), W the number of windows of
 *       seq_len + 1 tokens that fit inside one file (a file of n tokens
 *       holds max(0, n - seq_len) of them); window r is counted through
 *       the files in path order, and starts at token r - (windows of the
 *       files before) of its file. Markov: gd_markov_sample on the stream.
 *   eval: token sources: the files' concatenation of T tokens holds M =
 *       (T - 1) / seq_len windows at a stride of seq_len (M = 0 if T <
 *       seq_len + 1); eval window k = b * batch + j is window (k * s) mod M,
 *       the seq_len + 1 tokens from ((k * s) mod M) * seq_len (across file
 *       boundaries), where s is the first integer >= floor(M *
 *       0x9E3779B97F4A7C15 / 2^64) (floor of M / golden ratio, exactly in
 *       integers) coprime to M; batch b exists while (b + 1) * batch <= M.
 *       Markov takes gd_markov_sample on the stream (SEED of the source,
 *       tag EVAL, a = 0, b = index, w = j), which no training stream shares
 *       (different tag). */
#include "trainer/data.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/parse.h"
#include "common/rng.h"
#include "trainer/markov.h"

/* text: sources are read whole; beyond this they belong in token shards. */
#define GD_TEXT_MAX_BYTES ((uint64_t)4 << 30)

#define GD_DATA_TAG_TRAIN 0x74726e31u  /* "trn1" */
#define GD_DATA_TAG_EVAL 0x65766c31u   /* "evl1" */
#define GD_DATA_TAG_WINDOW 0x77696e31u /* "win1" */

__extension__ typedef unsigned __int128 gd_u128;

typedef struct gd_data_file {
    char *path;
    const uint8_t *tokens; /* the first token (after the header for shards) */
    void *map;             /* shards: the whole file's mapping */
    size_t map_len;
    uint64_t count; /* tokens */
    uint64_t start; /* index of the first token in the concatenation */
    gd_data_file_id id;
} gd_data_file;

struct gd_data {
    gd_data_kind kind;
    uint32_t token_bytes; /* 1 (text), 2 or 4 (shards) */
    gd_data_file *files;
    size_t file_count;
    uint64_t total;
    uint8_t *text; /* text: every file's bytes, in path order */
    gd_markov **markovs; /* one chain, or the components of a mixture */
    uint32_t n_markov;
    char description[256];
};

static uint32_t gd_token_at(const uint8_t *tokens, uint32_t token_bytes, uint64_t i) {
    const uint8_t *p = tokens + i * token_bytes;
    switch (token_bytes) {
    case 1:
        return p[0];
    case 2:
        return (uint32_t)p[0] | (uint32_t)p[1] << 8;
    default:
        return gd_get_le32(p);
    }
}

/* --- shard headers ------------------------------------------------------- */

gd_status gd_shard_header_parse(gd_shard_header *out, const uint8_t *bytes, size_t file_size,
                                const char *name) {
    if (name == NULL)
        name = "token shard";
    if (file_size < GD_SHARD_HEADER_BYTES)
        return gd_fail(GD_ERR_PARSE,
                       "%s is %zu bytes, shorter than the %d-byte header of a token shard; "
                       "regenerate it",
                       name, file_size, GD_SHARD_HEADER_BYTES);
    uint32_t magic = gd_get_le32(bytes), version = gd_get_le32(bytes + 4);
    int32_t count = (int32_t)gd_get_le32(bytes + 8);
    uint32_t token_bytes;
    if (magic == GD_SHARD_MAGIC_U16) {
        if (version != GD_SHARD_VERSION_U16)
            return gd_fail(GD_ERR_PARSE,
                           "%s: uint16 token shard of unsupported version %u (expected %d); "
                           "regenerate it",
                           name, version, GD_SHARD_VERSION_U16);
        token_bytes = 2;
    } else if (magic == GD_SHARD_MAGIC_U32) {
        if (version != GD_SHARD_VERSION_U32)
            return gd_fail(GD_ERR_PARSE,
                           "%s: uint32 token shard of unsupported version %u (expected %d); "
                           "regenerate it",
                           name, version, GD_SHARD_VERSION_U32);
        token_bytes = 4;
    } else {
        return gd_fail(GD_ERR_PARSE,
                       "%s is not an llm.c token shard: magic %u (expected %d for uint16 or %d "
                       "for uint32 tokens); regenerate it",
                       name, magic, GD_SHARD_MAGIC_U16, GD_SHARD_MAGIC_U32);
    }
    if (count <= 0)
        return gd_fail(GD_ERR_PARSE,
                       "%s: header token count %d; a shard must hold at least one token; "
                       "regenerate it",
                       name, (int)count);
    uint64_t expect = GD_SHARD_HEADER_BYTES + (uint64_t)count * token_bytes;
    if ((uint64_t)file_size != expect)
        return gd_fail(GD_ERR_PARSE,
                       "%s: header says %d tokens (%llu bytes with the header) but the file is "
                       "%zu bytes (%s); regenerate it",
                       name, (int)count, (unsigned long long)expect, file_size,
                       (uint64_t)file_size < expect ? "truncated" : "trailing bytes");
    out->token_bytes = token_bytes;
    out->token_count = (uint64_t)count;
    return GD_OK;
}

gd_status gd_shard_write(const char *path, const uint32_t *tokens, size_t count,
                         uint32_t token_bytes) {
    if (path == NULL || (tokens == NULL && count > 0))
        return gd_fail(GD_ERR_INVALID, "gd_shard_write needs a path and tokens");
    if (token_bytes != 2 && token_bytes != 4)
        return gd_fail(GD_ERR_INVALID, "shard token width %u bytes for %s: use 2 or 4",
                       token_bytes, path);
    if (count == 0)
        return gd_fail(GD_ERR_INVALID, "refusing to write %s: a shard holds at least one token",
                       path);
    if (count > INT32_MAX)
        return gd_fail(GD_ERR_LIMIT,
                       "%zu tokens do not fit one shard (its header counts in an int32); "
                       "split them into shards of at most %d tokens",
                       count, INT32_MAX);
    if (token_bytes == 2)
        for (size_t i = 0; i < count; i++)
            if (tokens[i] > UINT16_MAX)
                return gd_fail(GD_ERR_INVALID,
                               "token %u at position %zu does not fit a uint16 shard (%s); "
                               "write it with 4-byte tokens",
                               tokens[i], i, path);
    uint8_t header[GD_SHARD_HEADER_BYTES] = {0};
    gd_put_le32(header, token_bytes == 2 ? GD_SHARD_MAGIC_U16 : GD_SHARD_MAGIC_U32);
    gd_put_le32(header + 4, token_bytes == 2 ? GD_SHARD_VERSION_U16 : GD_SHARD_VERSION_U32);
    gd_put_le32(header + 8, (uint32_t)count);
    uint8_t *body = malloc(count * token_bytes);
    if (body == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu tokens", count);
    for (size_t i = 0; i < count; i++) {
        if (token_bytes == 2) {
            body[2 * i] = (uint8_t)tokens[i];
            body[2 * i + 1] = (uint8_t)(tokens[i] >> 8);
        } else {
            gd_put_le32(body + 4 * i, tokens[i]);
        }
    }
    /* Renamed into place once durable: a reader never sees half a shard.
     * Shards are shared data, not secrets. */
    gd_bytes_part parts[2] = {{header, sizeof header}, {body, count * token_bytes}};
    gd_status s = gd_file_write_atomic(path, parts, 2, 0644);
    free(body);
    return s;
}

/* --- opening ------------------------------------------------------------- */

static int gd_path_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends to d->files the paths matching pattern, sorted bytewise (not by
 * locale: every host must see the same order). A pattern that matches
 * nothing but names an existing file (brackets in a file name) is that
 * file. */
static gd_status gd_data_expand(gd_data *d, const char *pattern, const char *what) {
    if (pattern[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "no %s named: give a file path or glob", what);
    glob_t g;
    memset(&g, 0, sizeof g);
    int rc = glob(pattern, 0, NULL, &g);
    char *literal[1] = {(char *)pattern};
    char **paths = literal;
    size_t n = 1;
    gd_status s = GD_OK;
    if (rc == 0) {
        paths = g.gl_pathv;
        n = g.gl_pathc;
        qsort(paths, n, sizeof *paths, gd_path_cmp);
    } else if (rc == GLOB_NOMATCH) {
        struct stat st;
        if (stat(pattern, &st) != 0)
            s = gd_fail(GD_ERR_NOT_FOUND, "no %s matches '%s'", what, pattern);
    } else if (rc == GLOB_NOSPACE) {
        s = gd_fail(GD_ERR_NOMEM, "out of memory expanding '%s'", pattern);
    } else {
        s = gd_fail(GD_ERR_IO, "cannot read the directories of '%s'", pattern);
    }
    size_t have = d->file_count;
    if (s == GD_OK && n > SIZE_MAX / sizeof *d->files - have)
        s = gd_fail(GD_ERR_LIMIT, "too many files match '%s'", pattern);
    if (s == GD_OK) {
        gd_data_file *files = realloc(d->files, (have + n) * sizeof *files);
        if (files == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory for %zu file names", have + n);
        else {
            memset(files + have, 0, n * sizeof *files);
            d->files = files;
        }
    }
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        d->files[have + i].path = strdup(paths[i]);
        if (d->files[have + i].path == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory");
        else
            d->file_count = have + i + 1;
    }
    globfree(&g);
    return s;
}

/* Files are opened O_NONBLOCK so a FIFO named by mistake is refused as not
 * a regular file instead of blocking the open (no effect on regular files). */
static gd_status gd_open_fail(const char *path, const char *what) {
    return gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND
                   : errno == EACCES ? GD_ERR_PERMISSION
                                     : GD_ERR_IO,
                   "cannot open %s %s: %s", what, path, strerror(errno));
}

static gd_status gd_not_regular(const char *path, mode_t mode, const char *what) {
    return gd_fail(GD_ERR_INVALID, "%s is %s, not a %s", path,
                   S_ISDIR(mode) ? "a directory" : "a special file", what);
}

static gd_data_file_id gd_file_id_of(const struct stat *st) {
    return (gd_data_file_id){.dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
                             .size = (uint64_t)st->st_size,
                             .mtime_sec = (int64_t)st->st_mtim.tv_sec,
                             .mtime_nsec = (int64_t)st->st_mtim.tv_nsec,
                             .ctime_sec = (int64_t)st->st_ctim.tv_sec,
                             .ctime_nsec = (int64_t)st->st_ctim.tv_nsec};
}

static gd_status gd_map_shard_fd(int fd, gd_data_file *f, uint32_t *token_bytes) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return gd_fail(GD_ERR_IO, "cannot stat %s: %s", f->path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gd_not_regular(f->path, st.st_mode, "token shard");
    if ((uint64_t)st.st_size > SIZE_MAX)
        return gd_fail(GD_ERR_LIMIT, "%s is too large to map", f->path);
    size_t size = (size_t)st.st_size;
    uint8_t header[GD_SHARD_HEADER_BYTES];
    size_t head = size < sizeof header ? size : sizeof header;
    GD_TRY(gd_file_read_at(fd, header, head, 0, f->path));
    gd_shard_header h;
    GD_TRY(gd_shard_header_parse(&h, header, size, f->path));
    /* Read-only and private: training only reads, and several processes can
     * share the page cache. (A file truncated while mapped would fault;
     * shards are immutable by convention.) */
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return gd_fail(GD_ERR_IO, "cannot map %s: %s", f->path, strerror(errno));
    f->map = map;
    f->map_len = size;
    f->id = gd_file_id_of(&st);
    f->tokens = (const uint8_t *)map + GD_SHARD_HEADER_BYTES;
    f->count = h.token_count;
    *token_bytes = h.token_bytes;
    return GD_OK;
}

static gd_status gd_data_open_shards(gd_data *d, const char *const *patterns, size_t n_patterns) {
    d->kind = GD_DATA_SHARDS;
    for (size_t p = 0; p < n_patterns; p++)
        GD_TRY(gd_data_expand(d, patterns[p], "token shard"));
    for (size_t i = 0; i < d->file_count; i++) {
        gd_data_file *f = &d->files[i];
        int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            return gd_open_fail(f->path, "token shard");
        uint32_t token_bytes = 0;
        gd_status s = gd_map_shard_fd(fd, f, &token_bytes);
        close(fd); /* the mapping stays valid without the descriptor */
        if (s != GD_OK)
            return s;
        if (i > 0 && token_bytes != d->token_bytes)
            return gd_fail(GD_ERR_INVALID,
                           "%s holds uint%u tokens but %s holds uint%u: shards of different "
                           "widths likely come from different tokenizers; use one kind",
                           f->path, 8 * token_bytes, d->files[0].path, 8 * d->token_bytes);
        d->token_bytes = token_bytes;
        f->start = d->total;
        d->total += f->count;
    }
    return GD_OK;
}

static gd_status gd_read_text_file(gd_data_file *f, uint8_t *dest) {
    int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return gd_open_fail(f->path, "text file");
    struct stat st;
    gd_status s = GD_OK;
    if (fstat(fd, &st) != 0)
        s = gd_fail(GD_ERR_IO, "cannot stat %s: %s", f->path, strerror(errno));
    else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != f->count)
        s = gd_fail(GD_ERR_IO, "%s changed while the text files were being read", f->path);
    else
        s = gd_file_read_at(fd, dest, (size_t)f->count, 0, f->path);
    if (s == GD_OK)
        f->id = gd_file_id_of(&st);
    close(fd);
    return s;
}

static gd_status gd_data_open_text(gd_data *d, const char *const *patterns, size_t n_patterns) {
    d->kind = GD_DATA_TEXT;
    d->token_bytes = 1;
    for (size_t p = 0; p < n_patterns; p++)
        GD_TRY(gd_data_expand(d, patterns[p], "text: file"));
    const char *pattern = patterns[0];
    /* Sizes first, so the text is one allocation of the right size. */
    for (size_t i = 0; i < d->file_count; i++) {
        gd_data_file *f = &d->files[i];
        struct stat st;
        if (stat(f->path, &st) != 0)
            return gd_open_fail(f->path, "text file");
        if (!S_ISREG(st.st_mode))
            return gd_not_regular(f->path, st.st_mode, "text file");
        f->count = (uint64_t)st.st_size;
        f->start = d->total;
        d->total += f->count;
        if (d->total > GD_TEXT_MAX_BYTES)
            return gd_fail(GD_ERR_LIMIT,
                           "the files matching text:%s%s hold more than 4 GiB, the most a "
                           "text: source reads into memory; tokenize them into shards instead",
                           pattern, n_patterns > 1 ? " and the other patterns" : "");
    }
    if (d->total == 0)
        return gd_fail(GD_ERR_INVALID, "the files matching text:%s%s are empty", pattern,
                       n_patterns > 1 ? " and the other patterns" : "");
    d->text = malloc((size_t)d->total);
    if (d->text == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %llu bytes of text",
                       (unsigned long long)d->total);
    for (size_t i = 0; i < d->file_count; i++) {
        gd_data_file *f = &d->files[i];
        GD_TRY(gd_read_text_file(f, d->text + f->start));
        f->tokens = d->text + f->start;
    }
    return GD_OK;
}

/* One ':'-separated field of a synthetic spec as a number. */
static gd_status gd_spec_number(uint64_t *out, const char *field, const char *name,
                                const char *spec) {
    if (field[0] == '\0')
        return gd_fail(GD_ERR_INVALID,
                       "data source '%s' has an empty %s; use synthetic:markov:SEED[:ALPHABET"
                       "[:ORDER]] or synthetic:mixture:SEED:COMPONENTS[:ALPHABET[:ORDER]]",
                       spec, name);
    if (gd_parse_u64(out, field) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "%s '%s' in data source '%s' is not a decimal number",
                       name, field, spec);
    return GD_OK;
}

#define GD_SYNTHETIC_FORMS                                                                  \
    "synthetic:markov:SEED[:ALPHABET[:ORDER]] or "                                       \
    "synthetic:mixture:SEED:COMPONENTS[:ALPHABET[:ORDER]]"
#define GD_MIXTURE_MAX_COMPONENTS 1024

/* synthetic:markov:SEED[:ALPHABET[:ORDER]] is one chain;
 * synthetic:mixture:SEED:COMPONENTS[:ALPHABET[:ORDER]] is COMPONENTS chains
 * with seeds SEED, SEED + 1, ... (non-i.i.d. data: worker w trains on
 * component w mod COMPONENTS; evaluation windows cycle through them). */
static gd_status gd_data_open_synthetic(gd_data *d, const char *rest, const char *spec) {
    d->kind = GD_DATA_MARKOV;
    bool mixture = strncmp(rest, "mixture:", 8) == 0;
    if (!mixture && strncmp(rest, "markov:", 7) != 0) {
        if (strcmp(rest, "markov") == 0 || strcmp(rest, "mixture") == 0)
            return gd_fail(GD_ERR_INVALID, "data source '%s' needs a SEED: " GD_SYNTHETIC_FORMS,
                           spec);
        return gd_fail(GD_ERR_INVALID,
                       "unknown synthetic data source '%s': the built-in ones are "
                       GD_SYNTHETIC_FORMS,
                       spec);
    }
    char *fields = strdup(rest + (mixture ? 8 : 7));
    if (fields == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    static const char *const markov_names[3] = {"SEED", "ALPHABET", "ORDER"};
    static const char *const mixture_names[4] = {"SEED", "COMPONENTS", "ALPHABET", "ORDER"};
    const char *const *names = mixture ? mixture_names : markov_names;
    size_t n_fields = mixture ? 4 : 3, required = mixture ? 2 : 1;
    uint64_t values[4] = {0, 0, 0, 0};
    values[n_fields - 2] = GD_MARKOV_DEFAULT_ALPHABET;
    values[n_fields - 1] = GD_MARKOV_DEFAULT_ORDER;
    gd_status s = GD_OK;
    char *field = fields;
    size_t given = 0;
    for (size_t i = 0; s == GD_OK && field != NULL; i++) {
        char *colon = strchr(field, ':');
        if (colon != NULL)
            *colon = '\0';
        if (i == n_fields)
            s = gd_fail(GD_ERR_INVALID,
                        "data source '%s' has too many fields; use " GD_SYNTHETIC_FORMS, spec);
        else
            s = gd_spec_number(&values[i], field, names[i], spec);
        given = i + 1;
        field = colon != NULL ? colon + 1 : NULL;
    }
    free(fields);
    GD_TRY(s);
    if (given < required)
        return gd_fail(GD_ERR_INVALID, "data source '%s' needs SEED and COMPONENTS: "
                                       "synthetic:mixture:SEED:COMPONENTS[:ALPHABET[:ORDER]]",
                       spec);
    uint64_t components = mixture ? values[1] : 1;
    uint64_t alphabet = values[n_fields - 2], order = values[n_fields - 1];
    if (components < 1 || components > GD_MIXTURE_MAX_COMPONENTS)
        return gd_fail(GD_ERR_INVALID, "COMPONENTS %llu in data source '%s' is out of range: "
                                       "use 1..%d",
                       (unsigned long long)components, spec, GD_MIXTURE_MAX_COMPONENTS);
    if (alphabet < GD_MARKOV_MIN_ALPHABET || alphabet > GD_MARKOV_MAX_ALPHABET)
        return gd_fail(GD_ERR_INVALID,
                       "ALPHABET %llu in data source '%s' is out of range: use %d..%d",
                       (unsigned long long)alphabet, spec, GD_MARKOV_MIN_ALPHABET,
                       GD_MARKOV_MAX_ALPHABET);
    if (order < GD_MARKOV_MIN_ORDER || order > GD_MARKOV_MAX_ORDER)
        return gd_fail(GD_ERR_INVALID, "ORDER %llu in data source '%s' is out of range: use %d..%d",
                       (unsigned long long)order, spec, GD_MARKOV_MIN_ORDER,
                       GD_MARKOV_MAX_ORDER);
    d->markovs = calloc(components, sizeof *d->markovs);
    if (d->markovs == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    d->n_markov = (uint32_t)components;
    for (uint32_t c = 0; c < d->n_markov; c++) {
        s = gd_markov_new(&d->markovs[c], values[0] + c, (uint32_t)alphabet, (uint32_t)order);
        if (s != GD_OK)
            return gd_fail_context(s, "data source '%s'", spec);
    }
    return GD_OK;
}

/* "name:" prefixes are lower-case words; anything else (a '/', a '.', a
 * glob character before the first ':') is a path. */
static bool gd_is_scheme(const char *spec, const char *colon) {
    if (colon == spec)
        return false;
    for (const char *p = spec; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return false;
    return true;
}

static void gd_data_set_description(gd_data *d) {
    size_t n = d->file_count;
    switch (d->kind) {
    case GD_DATA_MARKOV: {
        double h[GD_MARKOV_MAX_ORDER + 1];
        const gd_markov *m = d->markovs[0];
        uint32_t order = gd_markov_order(m);
        (void)gd_data_markov_entropies(d, h, GD_MARKOV_MAX_ORDER + 1);
        if (d->n_markov == 1)
            snprintf(d->description, sizeof d->description,
                     "synthetic Markov source (seed %llu, alphabet %u, order %u): entropy rate "
                     "%.4f nats/token, best order-%u model %.4f",
                     (unsigned long long)gd_markov_seed(m), gd_markov_alphabet(m), order,
                     h[order], order - 1, h[order - 1]);
        else
            snprintf(d->description, sizeof d->description,
                     "mixture of %u synthetic Markov sources (seeds %llu.., alphabet %u, order "
                     "%u): mean entropy rate %.4f nats/token, mean best order-%u model %.4f",
                     d->n_markov, (unsigned long long)gd_markov_seed(m), gd_markov_alphabet(m),
                     order, h[order], order - 1, h[order - 1]);
        break;
    }
    case GD_DATA_TEXT:
        snprintf(d->description, sizeof d->description, "%zu text file%s, %llu bytes", n,
                 n == 1 ? "" : "s", (unsigned long long)d->total);
        break;
    case GD_DATA_SHARDS:
        snprintf(d->description, sizeof d->description, "%zu shard%s, %llu uint%u tokens", n,
                 n == 1 ? "" : "s", (unsigned long long)d->total, 8 * d->token_bytes);
        break;
    }
}

gd_status gd_data_open(gd_data **out, const char *spec) {
    *out = NULL;
    if (spec == NULL || spec[0] == '\0')
        return gd_fail(GD_ERR_INVALID,
                       "empty data source: use synthetic:markov:SEED[:ALPHABET[:ORDER]], "
                       "text:GLOB, or a token shard path or glob");
    gd_data *d = calloc(1, sizeof *d);
    if (d == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    const char *colon = strchr(spec, ':');
    gd_status s;
    if (colon != NULL && gd_is_scheme(spec, colon)) {
        size_t n = (size_t)(colon - spec);
        const char *pattern = colon + 1;
        if (n == 4 && memcmp(spec, "text", 4) == 0)
            s = gd_data_open_text(d, &pattern, 1);
        else if (n == 9 && memcmp(spec, "synthetic", 9) == 0)
            s = gd_data_open_synthetic(d, colon + 1, spec);
        else
            s = gd_fail(GD_ERR_INVALID,
                        "unknown data source '%.*s:' in '%s': use "
                        "synthetic:markov:SEED[:ALPHABET[:ORDER]], text:GLOB, or a token shard "
                        "path or glob (write ./%s for a file name with a colon)",
                        (int)n, spec, spec, spec);
    } else {
        s = gd_data_open_shards(d, &spec, 1);
    }
    if (s != GD_OK) {
        gd_data_close(d);
        return s;
    }
    gd_data_set_description(d);
    *out = d;
    return GD_OK;
}

gd_status gd_data_open_files(gd_data **out, const char *spec, const char *const *paths,
                             size_t n_paths) {
    *out = NULL;
    if (n_paths == 0)
        return gd_data_open(out, spec);
    if (spec == NULL)
        spec = "";
    const char *colon = strchr(spec, ':');
    bool text = colon != NULL && gd_is_scheme(spec, colon) && colon - spec == 4 &&
                memcmp(spec, "text", 4) == 0;
    if (colon != NULL && gd_is_scheme(spec, colon) && !text)
        return gd_fail(GD_ERR_INVALID,
                       "data source '%s' is not read from files, so no local paths can stand "
                       "for it: name none",
                       spec);
    for (size_t i = 0; i < n_paths; i++)
        if (paths[i] == NULL || paths[i][0] == '\0')
            return gd_fail(GD_ERR_INVALID, "local data path %zu is empty", i + 1);
    gd_data *d = calloc(1, sizeof *d);
    if (d == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = text ? gd_data_open_text(d, paths, n_paths)
                       : gd_data_open_shards(d, paths, n_paths);
    if (s != GD_OK) {
        gd_data_close(d);
        return s;
    }
    gd_data_set_description(d);
    *out = d;
    return GD_OK;
}

/* --- digest -------------------------------------------------------------- */

static void gd_digest_u32(gd_sha256_ctx *h, uint32_t v) {
    uint8_t b[4];
    gd_put_le32(b, v);
    gd_sha256_update(h, b, sizeof b);
}

static void gd_digest_u64(gd_sha256_ctx *h, uint64_t v) {
    uint8_t b[8];
    gd_put_le64(b, v);
    gd_sha256_update(h, b, sizeof b);
}

typedef struct gd_file_hash_job {
    const gd_data *data;
    const size_t *todo; /* indices of the files to hash */
    uint8_t (*hashes)[GD_SHA256_LEN];
} gd_file_hash_job;

static void gd_file_hash_task(void *arg, size_t task) {
    const gd_file_hash_job *job = arg;
    size_t i = job->todo[task];
    const gd_data_file *f = &job->data->files[i];
    gd_sha256(job->hashes[i], f->tokens, (size_t)f->count * job->data->token_bytes);
}

/* Every file's hash: the memo's where it knows the file, else computed on
 * the pool's threads, one task per file (a run's data is usually many
 * shards), and then told to the memo. */
static gd_status gd_data_file_hashes(const gd_data *data, gd_pool *pool,
                                     const gd_data_hash_memo *memo,
                                     uint8_t (*hashes)[GD_SHA256_LEN]) {
    size_t *todo = malloc((data->file_count ? data->file_count : 1) * sizeof *todo);
    if (todo == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu file hashes", data->file_count);
    size_t n_todo = 0;
    for (size_t i = 0; i < data->file_count; i++) {
        const gd_data_file *f = &data->files[i];
        if (memo == NULL || memo->lookup == NULL ||
            !memo->lookup(memo->ctx, f->path, &f->id, hashes[i]))
            todo[n_todo++] = i;
    }
    gd_file_hash_job job = {data, todo, hashes};
    gd_pool_run(pool, n_todo, gd_file_hash_task, &job);
    for (size_t k = 0; memo != NULL && memo->record != NULL && k < n_todo; k++) {
        const gd_data_file *f = &data->files[todo[k]];
        memo->record(memo->ctx, f->path, &f->id, hashes[todo[k]]);
    }
    free(todo);
    return GD_OK;
}

gd_status gd_data_digest(const gd_data *data, gd_pool *pool, const gd_data_hash_memo *memo,
                         uint8_t out[32]) {
    uint8_t (*hashes)[GD_SHA256_LEN] = NULL;
    if (data->kind != GD_DATA_MARKOV) {
        hashes = malloc((data->file_count ? data->file_count : 1) * sizeof *hashes);
        gd_status s = hashes ? gd_data_file_hashes(data, pool, memo, hashes)
                             : gd_fail(GD_ERR_NOMEM, "out of memory for %zu file hashes",
                                       data->file_count);
        if (s != GD_OK) {
            free(hashes);
            return s;
        }
    }
    gd_sha256_ctx *h;
    gd_status s = gd_sha256_begin(&h);
    if (s != GD_OK) {
        free(hashes);
        return s;
    }
    static const char domain[] = "gonka-diloco data v1";
    gd_sha256_update(h, domain, sizeof domain - 1);
    gd_digest_u32(h, (uint32_t)data->kind);
    if (data->kind == GD_DATA_MARKOV) {
        gd_digest_u32(h, data->n_markov);
        for (uint32_t c = 0; c < data->n_markov; c++) {
            gd_digest_u64(h, gd_markov_seed(data->markovs[c]));
            gd_digest_u32(h, gd_markov_alphabet(data->markovs[c]));
            gd_digest_u32(h, gd_markov_order(data->markovs[c]));
        }
    } else {
        gd_digest_u32(h, data->token_bytes);
        gd_digest_u64(h, data->file_count);
        for (size_t i = 0; i < data->file_count; i++) {
            gd_digest_u64(h, data->files[i].count);
            gd_sha256_update(h, hashes[i], GD_SHA256_LEN);
        }
    }
    gd_sha256_finish(h, out);
    free(hashes);
    return GD_OK;
}

void gd_data_close(gd_data *data) {
    if (data == NULL)
        return;
    for (size_t i = 0; i < data->file_count; i++) {
        if (data->files[i].map != NULL)
            munmap(data->files[i].map, data->files[i].map_len);
        free(data->files[i].path);
    }
    free(data->files);
    free(data->text);
    for (uint32_t c = 0; c < data->n_markov; c++)
        gd_markov_free(data->markovs[c]);
    free(data->markovs);
    free(data);
}

gd_data_kind gd_data_kind_of(const gd_data *data) { return data->kind; }

uint64_t gd_data_vocab_bound(const gd_data *data) {
    switch (data->kind) {
    case GD_DATA_MARKOV:
        return gd_markov_alphabet(data->markovs[0]);
    case GD_DATA_TEXT:
        return 256;
    case GD_DATA_SHARDS:
        return data->token_bytes == 2 ? (uint64_t)1 << 16 : (uint64_t)1 << 32;
    }
    return 0;
}

uint64_t gd_data_token_count(const gd_data *data) {
    return data->kind == GD_DATA_MARKOV ? 0 : data->total;
}

const char *gd_data_describe(const gd_data *data) { return data->description; }

size_t gd_data_markov_entropies(const gd_data *data, double *entropies, size_t cap) {
    if (data->kind != GD_DATA_MARKOV)
        return 0;
    size_t n = gd_markov_entropies(data->markovs[0], entropies, cap);
    /* A mixture: the mean over components, the floor of a model that tells
     * from a window's context which component produced it. */
    for (uint32_t c = 1; n && c < data->n_markov; c++) {
        double h[GD_MARKOV_MAX_ORDER + 1];
        (void)gd_markov_entropies(data->markovs[c], h, GD_MARKOV_MAX_ORDER + 1);
        for (size_t j = 0; j < n; j++)
            entropies[j] += h[j];
    }
    for (size_t j = 0; data->n_markov > 1 && j < n; j++)
        entropies[j] /= data->n_markov;
    return n;
}

/* --- batches ------------------------------------------------------------- */

static void gd_window_rng(gd_rng *rng, uint64_t seed, uint32_t tag, uint32_t a, uint64_t b,
                          uint64_t window) {
    uint32_t ids[4] = {tag, a, (uint32_t)b, (uint32_t)(b >> 32)};
    gd_rng outer;
    gd_rng_init(&outer, seed, ids);
    uint64_t batch_key = gd_rng_u64(&outer);
    uint32_t wids[4] = {GD_DATA_TAG_WINDOW, (uint32_t)window, (uint32_t)(window >> 32), tag};
    gd_rng_init(rng, batch_key, wids);
}

/* Common argument checks; *len = seq_len + 1. */
static gd_status gd_batch_args(const gd_data *data, const int32_t *tokens, size_t batch,
                               size_t seq_len, uint64_t vocab, size_t *len) {
    if (data == NULL || tokens == NULL)
        return gd_fail(GD_ERR_INVALID, "a batch needs a data source and a token buffer");
    if (batch == 0 || seq_len == 0)
        return gd_fail(GD_ERR_INVALID, "batch (%zu) and seq_len (%zu) must be at least 1", batch,
                       seq_len);
    if (seq_len == SIZE_MAX || batch > SIZE_MAX / sizeof(int32_t) / (seq_len + 1))
        return gd_fail(GD_ERR_LIMIT, "a batch of %zu windows of %zu tokens is too large", batch,
                       seq_len);
    if (data->kind == GD_DATA_MARKOV && gd_markov_alphabet(data->markovs[0]) > vocab)
        return gd_fail(GD_ERR_INVALID,
                       "the Markov source's alphabet of %u symbols does not fit the model's "
                       "vocabulary of %llu; use a smaller ALPHABET or a larger vocabulary",
                       gd_markov_alphabet(data->markovs[0]), (unsigned long long)vocab);
    *len = seq_len + 1;
    return GD_OK;
}

static gd_status gd_bad_token(const gd_data *d, const gd_data_file *f, uint64_t pos,
                              uint32_t token, uint64_t vocab) {
    if (token > INT32_MAX && token < vocab)
        return gd_fail(GD_ERR_INVALID,
                       "token %u at position %llu of %s does not fit a 32-bit signed token id",
                       token, (unsigned long long)pos, f->path);
    if (d->kind == GD_DATA_TEXT)
        return gd_fail(GD_ERR_INVALID,
                       "byte %u at offset %llu of %s is >= the model's vocabulary of %llu; a "
                       "text: source needs a vocabulary of 256",
                       token, (unsigned long long)pos, f->path, (unsigned long long)vocab);
    return gd_fail(GD_ERR_INVALID,
                   "token %u at position %llu of %s is >= the model's vocabulary of %llu; the "
                   "shards were tokenized for a different vocabulary",
                   token, (unsigned long long)pos, f->path, (unsigned long long)vocab);
}

/* Copies n tokens of file f from token index off (off + n <= count). */
static gd_status gd_copy_tokens(const gd_data *d, const gd_data_file *f, int32_t *out, uint64_t off,
                                size_t n, uint64_t vocab) {
    for (size_t i = 0; i < n; i++) {
        uint32_t t = gd_token_at(f->tokens, d->token_bytes, off + i);
        if (t >= vocab || t > INT32_MAX)
            return gd_bad_token(d, f, off + i, t, vocab);
        out[i] = (int32_t)t;
    }
    return GD_OK;
}

static uint64_t gd_file_windows(const gd_data_file *f, size_t len) {
    return f->count >= len ? f->count - len + 1 : 0;
}

gd_status gd_data_train_batch(const gd_data *data, int32_t *tokens, size_t batch,
                              size_t seq_len, uint64_t vocab, uint64_t seed, uint32_t worker,
                              uint64_t step, uint32_t micro) {
    size_t len;
    GD_TRY(gd_batch_args(data, tokens, batch, seq_len, vocab, &len));
    uint64_t windows = 0;
    if (data->kind != GD_DATA_MARKOV) {
        uint64_t longest = 0;
        for (size_t i = 0; i < data->file_count; i++) {
            windows += gd_file_windows(&data->files[i], len);
            if (data->files[i].count > longest)
                longest = data->files[i].count;
        }
        if (windows == 0)
            return gd_fail(GD_ERR_INVALID,
                           "no window of seq_len + 1 = %zu tokens fits in one file of the data "
                           "(the longest holds %llu); use a shorter seq_len or longer files",
                           len, (unsigned long long)longest);
    }
    for (size_t j = 0; j < batch; j++) {
        int32_t *row = tokens + j * len;
        gd_rng rng;
        gd_window_rng(&rng, seed, GD_DATA_TAG_TRAIN, worker, step, (uint64_t)micro * batch + j);
        if (data->kind == GD_DATA_MARKOV) {
            gd_markov_sample(data->markovs[worker % data->n_markov], &rng, row, len);
            continue;
        }
        uint64_t r = gd_rng_below(&rng, windows);
        size_t i = 0;
        for (;; i++) {
            uint64_t here = gd_file_windows(&data->files[i], len);
            if (r < here)
                break;
            r -= here;
        }
        GD_TRY(gd_copy_tokens(data, &data->files[i], row, r, len, vocab));
    }
    return GD_OK;
}

/* Copies len tokens from global position pos, across file boundaries. */
static gd_status gd_copy_span(const gd_data *d, int32_t *out, uint64_t pos, size_t len,
                              uint64_t vocab) {
    /* The last file starting at or before pos (binary search on starts). */
    size_t lo = 0, hi = d->file_count - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (d->files[mid].start <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    for (size_t i = lo; len > 0; i++) {
        const gd_data_file *f = &d->files[i];
        if (pos >= f->start + f->count)
            continue; /* empty text files */
        uint64_t off = pos - f->start;
        uint64_t left = f->count - off;
        size_t n = left < len ? (size_t)left : len;
        GD_TRY(gd_copy_tokens(d, f, out, off, n, vocab));
        out += n;
        len -= n;
        pos += n;
    }
    return GD_OK;
}

/* 2^64 / golden ratio, rounded down (Fibonacci hashing's multiplier). */
#define GD_EVAL_GOLDEN 0x9E3779B97F4A7C15ull

static uint64_t gd_gcd(uint64_t a, uint64_t b) {
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The evaluation stride over m windows: the first s >= floor(m / golden
 * ratio) (as floor(m * GD_EVAL_GOLDEN / 2^64)) coprime to m. Coprime, so k
 * -> k * s mod m visits every window once; near m / golden ratio, so every
 * prefix of that order is spread evenly over the source (the three-distance
 * theorem), where any small stride would crowd it into the first files.
 * s < m for m >= 2 (m - 1 is coprime to m); s = 0 for m = 1. */
static uint64_t gd_eval_stride(uint64_t m) {
    uint64_t s = (uint64_t)(((gd_u128)m * GD_EVAL_GOLDEN) >> 64);
    while (gd_gcd(s, m) != 1)
        s++;
    return s;
}

gd_status gd_data_eval_batch(const gd_data *data, int32_t *tokens, size_t batch,
                             size_t seq_len, uint64_t vocab, uint64_t index, bool *available) {
    *available = false;
    size_t len;
    GD_TRY(gd_batch_args(data, tokens, batch, seq_len, vocab, &len));
    if (data->kind == GD_DATA_MARKOV) {
        for (size_t j = 0; j < batch; j++) {
            gd_rng rng;
            const gd_markov *m = data->markovs[(index * batch + j) % data->n_markov];
            gd_window_rng(&rng, gd_markov_seed(m), GD_DATA_TAG_EVAL, 0, index, j);
            gd_markov_sample(m, &rng, tokens + j * len, len);
        }
        *available = true;
        return GD_OK;
    }
    /* Windows at a stride of seq_len: window i (from i * seq_len through
     * (i + 1) * seq_len) fits while (i + 1) * seq_len + 1 <= total. The
     * batch's last window, (index + 1) * batch - 1, must be one of them. */
    uint64_t windows = data->total >= len ? (data->total - 1) / seq_len : 0;
    if (index >= windows / batch)
        return GD_OK;
    uint64_t stride = gd_eval_stride(windows);
    for (size_t j = 0; j < batch; j++) {
        uint64_t k = index * batch + j;
        uint64_t window = (uint64_t)((gd_u128)k * stride % windows);
        GD_TRY(gd_copy_span(data, tokens + j * len, window * seq_len, len, vocab));
    }
    *available = true;
    return GD_OK;
}

gd_status gd_data_eval_check(const gd_data *data, size_t batch, size_t seq_len,
                             uint64_t vocab) {
    if (data == NULL || batch == 0 || seq_len == 0)
        return gd_fail(GD_ERR_INVALID, "batch (%zu) and seq_len (%zu) must be at least 1", batch,
                       seq_len);
    if (seq_len == SIZE_MAX || batch > SIZE_MAX / sizeof(int32_t) / (seq_len + 1))
        return gd_fail(GD_ERR_LIMIT, "a batch of %zu windows of %zu tokens is too large", batch,
                       seq_len);
    int32_t *tokens = malloc(batch * (seq_len + 1) * sizeof *tokens);
    if (tokens == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for an evaluation batch of %zu x %zu tokens",
                       batch, seq_len + 1);
    bool available = false;
    gd_status s = gd_data_eval_batch(data, tokens, batch, seq_len, vocab, 0, &available);
    free(tokens);
    GD_TRY(s);
    if (!available)
        return gd_fail(GD_ERR_INVALID,
                       "%s: no evaluation batch of %zu windows of %zu tokens fits (one needs "
                       "%llu tokens); use a smaller batch or seq_len, or more data",
                       data->description, batch, seq_len + 1,
                       (unsigned long long)((uint64_t)batch * seq_len + 1));
    return GD_OK;
}
