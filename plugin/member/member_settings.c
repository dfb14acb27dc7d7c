/* node.yaml (plugin/member/member_settings.h): libyaml's syntax pass, a libcyaml
 * schema for its shape, then one check per key for its value; every
 * refusal names the file and, where one line is at fault, that line
 * (path:line: what), as compilers do. */
#include "plugin/member/member_settings.h"

#include <ctype.h>
#include <cyaml/cyaml.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "chain/wire/coin.h"
#include "chain/wire/gas_price.h"
#include "common/file.h"
#include "common/parse.h"
#include "kernels/backend_registry.h"
#include "plugin/member/artifact_tiers.h"
#include "plugin/member/round_driver.h"

#define GD_SETTINGS_YAML_MAX (64 * 1024)

/* ---- the shape (libcyaml) ---------------------------------------------------------- */

typedef struct gd_raw_chain {
    char *rpc, *chain_id, *key, *gas_price;
} gd_raw_chain;

typedef struct gd_raw_retention {
    char *hot_rounds, *archive_every, *archive_dir;
} gd_raw_retention;

typedef struct gd_raw_node {
    gd_raw_chain chain;
    char *run;
    char **roles;
    unsigned roles_count;
    char *collateral, *hardware_class, *listen, *public_url, *state_dir;
    char **data;
    unsigned data_count;
    char *threads;
    char *backend;
    char *gpus;
    char *shard;
    char *recompute;
    char *offload;
    char *memory_budget;
    gd_raw_retention *retention;
    char *log_level;
    char *log_format;
} gd_raw_node;

static const cyaml_schema_value_t gd_yaml_string = {
    CYAML_VALUE_STRING(CYAML_FLAG_POINTER, char, 0, GD_SETTINGS_TEXT_MAX - 1),
};

static const cyaml_schema_field_t gd_yaml_chain[] = {
    CYAML_FIELD_STRING_PTR("rpc", CYAML_FLAG_POINTER, gd_raw_chain, rpc, 1, GD_SETTINGS_TEXT_MAX - 1),
    CYAML_FIELD_STRING_PTR("chain_id", CYAML_FLAG_POINTER, gd_raw_chain, chain_id, 1, 63),
    CYAML_FIELD_STRING_PTR("key", CYAML_FLAG_POINTER, gd_raw_chain, key, 1, GD_SETTINGS_TEXT_MAX - 1),
    CYAML_FIELD_STRING_PTR("gas_price", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_chain,
                           gas_price, 1, 95),
    CYAML_FIELD_END,
};

static const cyaml_schema_field_t gd_yaml_retention[] = {
    CYAML_FIELD_STRING_PTR("hot_rounds", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
                           gd_raw_retention, hot_rounds, 1, 10),
    CYAML_FIELD_STRING_PTR("archive_every", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
                           gd_raw_retention, archive_every, 1, 10),
    CYAML_FIELD_STRING_PTR("archive_dir", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
                           gd_raw_retention, archive_dir, 0, GD_SETTINGS_TEXT_MAX - 1),
    CYAML_FIELD_END,
};

static const cyaml_schema_field_t gd_yaml_node[] = {
    CYAML_FIELD_MAPPING("chain", CYAML_FLAG_DEFAULT, gd_raw_node, chain, gd_yaml_chain),
    CYAML_FIELD_STRING_PTR("run", CYAML_FLAG_POINTER, gd_raw_node, run, 1, 20),
    CYAML_FIELD_SEQUENCE("roles", CYAML_FLAG_POINTER, gd_raw_node, roles, &gd_yaml_string, 1, 2),
    CYAML_FIELD_STRING_PTR("collateral", CYAML_FLAG_POINTER, gd_raw_node, collateral, 1, 95),
    CYAML_FIELD_STRING_PTR("hardware_class", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
                           gd_raw_node, hardware_class, 1, 128),
    CYAML_FIELD_STRING_PTR("listen", CYAML_FLAG_POINTER, gd_raw_node, listen, 1, 300),
    CYAML_FIELD_STRING_PTR("public_url", CYAML_FLAG_POINTER, gd_raw_node, public_url, 1,
                           GD_SETTINGS_TEXT_MAX - 1),
    CYAML_FIELD_STRING_PTR("state_dir", CYAML_FLAG_POINTER, gd_raw_node, state_dir, 1,
                           GD_SETTINGS_TEXT_MAX - 1),
    CYAML_FIELD_SEQUENCE("data", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node, data,
                         &gd_yaml_string, 0, GD_SETTINGS_DATA_MAX),
    CYAML_FIELD_STRING_PTR("threads", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                           threads, 1, 10),
    CYAML_FIELD_STRING_PTR("backend", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                           backend, 1, 7),
    CYAML_FIELD_STRING_PTR("gpus", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node, gpus,
                           1, 10),
    CYAML_FIELD_STRING_PTR("shard", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node, shard,
                           1, 16),
    CYAML_FIELD_STRING_PTR("recompute", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                           recompute, 1, 16),
    CYAML_FIELD_STRING_PTR("offload", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                           offload, 1, 16),
    CYAML_FIELD_STRING_PTR("memory_budget", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
                           gd_raw_node, memory_budget, 1, 24),
    CYAML_FIELD_MAPPING_PTR("retention", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                            retention, gd_yaml_retention),
    CYAML_FIELD_STRING_PTR("log_level", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                           log_level, 1, GD_LOG_SPEC_MAX),
    CYAML_FIELD_STRING_PTR("log_format", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, gd_raw_node,
                           log_format, 1, 7),
    CYAML_FIELD_END,
};

static const cyaml_schema_value_t gd_yaml_top = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_POINTER, gd_raw_node, gd_yaml_node),
};

/* What libcyaml logs of a refusal: its first error line, and the first
 * mapping field of the backtrace (the key whose value was wrong). */
typedef struct gd_yaml_log {
    char first[256];
    char field[64];
} gd_yaml_log;

/* fmt is libcyaml's printf format: the attribute says so to -Wformat=2. */
static void gd_yaml_log_fn(cyaml_log_t level, void *ctx, const char *fmt, va_list args)
    GD_PRINTF(3, 0);
static void gd_yaml_log_fn(cyaml_log_t level, void *ctx, const char *fmt, va_list args) {
    gd_yaml_log *log = ctx;
    if (level < CYAML_LOG_ERROR)
        return;
    char line[256];
    vsnprintf(line, sizeof line, fmt, args);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
        line[--n] = 0;
    const char *prefix = "Load: ";
    const char *text = strncmp(line, prefix, strlen(prefix)) == 0 ? line + strlen(prefix) : line;
    const char *field = strstr(line, "in mapping field '");
    if (field != NULL && log->field[0] == 0) {
        field += strlen("in mapping field '");
        const char *end = strchr(field, '\'');
        if (end != NULL && (size_t)(end - field) < sizeof log->field) {
            memcpy(log->field, field, (size_t)(end - field));
            log->field[end - field] = 0;
        }
    } else if (log->first[0] == 0 && strncmp(text, "Backtrace", 9) != 0) {
        snprintf(log->first, sizeof log->first, "%s", text);
    }
}

/* The line (from 1) that sets key (its last dotted part: node.yaml's leaf
 * keys are unique), 0 if none: the first line whose text after its
 * indentation is the key, quoted or not, then a colon. */
static size_t gd_yaml_key_line(const char *text, size_t len, const char *key) {
    const char *leaf = strrchr(key, '.');
    leaf = leaf ? leaf + 1 : key;
    size_t n = strcspn(leaf, " :'");
    size_t line = 1;
    for (size_t i = 0; i < len; line++) {
        size_t at = i;
        while (at < len && (text[at] == ' ' || text[at] == '-'))
            at++;
        bool quoted = at < len && (text[at] == '"' || text[at] == '\'');
        size_t name = at + quoted;
        size_t after = name + n + quoted;
        if (n > 0 && after < len && strncmp(text + name, leaf, n) == 0 && text[after] == ':')
            return line;
        while (i < len && text[i] != '\n')
            i++;
        i++;
    }
    return 0;
}

/* "what:LINE: " where key has a line, else "what: ". */
static void gd_yaml_where(char *out, size_t cap, const char *what, const char *text, size_t len,
                          const char *key) {
    size_t line = key ? gd_yaml_key_line(text, len, key) : 0;
    if (line > 0)
        snprintf(out, cap, "%.1024s:%zu: ", what, line);
    else
        snprintf(out, cap, "%.1024s: ", what);
}

/* The refusal: the key named by the message itself (a missing or unknown
 * one), else by the backtrace; at that key's line. */
static gd_status gd_yaml_refusal(const char *what, const char *text, size_t len,
                                 const gd_yaml_log *log, cyaml_err_t err) {
    const char *msg = log->first[0] ? log->first : cyaml_strerror(err);
    char where[1100];
    const char *unexpected = strstr(msg, "Unexpected key: ");
    if (unexpected != NULL) {
        gd_yaml_where(where, sizeof where, what, text, len, unexpected + strlen("Unexpected key: "));
        return gd_fail(GD_ERR_PARSE, "%s%s", where, msg);
    }
    if (strstr(msg, "Missing required") != NULL || log->field[0] == 0)
        return gd_fail(GD_ERR_PARSE, "%s: %s", what, msg);
    gd_yaml_where(where, sizeof where, what, text, len, log->field);
    return gd_fail(GD_ERR_PARSE, "%skey '%s': %s", where, log->field, msg);
}

/* libyaml's own pass first: what is not YAML is refused at the line and
 * column libyaml found the problem (libcyaml's backtrace says where its
 * own reading stood, often a line before). */
static gd_status gd_yaml_syntax(const char *what, const char *text, size_t len) {
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return gd_fail(GD_ERR_NOMEM, "%s: no memory to parse it", what);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    gd_status s = GD_OK;
    for (bool end = false; !end;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            s = gd_fail(GD_ERR_PARSE, "%s:%zu:%zu: %s%s%s", what, p.problem_mark.line + 1,
                        p.problem_mark.column + 1, p.problem ? p.problem : "not YAML",
                        p.context ? " " : "", p.context ? p.context : "");
            break;
        }
        end = e.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    return s;
}

/* ---- the values ---------------------------------------------------------------------- */

/* node init writes values between double quotes: none may break out. */
static gd_status gd_copy(char *out, size_t cap, const char *text, const char *key) {
    if (strlen(text) >= cap)
        return gd_fail(GD_ERR_INVALID, "%s is too long", key);
    if (strpbrk(text, "\"\\\n\r") != NULL)
        return gd_fail(GD_ERR_INVALID, "%s must not hold quotes, backslashes or line breaks", key);
    strcpy(out, text);
    return GD_OK;
}

static bool gd_printable(const char *s) {
    for (; *s; s++)
        if (*s < 0x21 || *s > 0x7e)
            return false;
    return true;
}

static gd_status gd_url_check(const char *url, const char *key) {
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return gd_fail(GD_ERR_INVALID, "%s must be an http:// or https:// URL, not '%.80s'", key,
                       url);
    if (!gd_printable(url))
        return gd_fail(GD_ERR_INVALID, "%s must not hold spaces or control characters", key);
    return GD_OK;
}

static gd_status gd_listen_check(gd_member_settings *s, const char *text) {
    const char *colon = strrchr(text, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (colon == NULL || colon == text || end == colon + 1 || *end != 0 || port < 1 ||
        port > 65535 || (size_t)(colon - text) >= sizeof s->listen_host)
        return gd_fail(GD_ERR_INVALID, "listen must be host:port with a port 1 to 65535, not "
                                       "'%.80s'",
                       text);
    memcpy(s->listen_host, text, (size_t)(colon - text));
    s->listen_host[colon - text] = 0;
    s->listen_port = (uint16_t)port;
    return GD_OK;
}

/* The retention mapping (plugin/member/artifact_tiers.h): absent keys keep
 * the defaults (two hot rounds, no archive). */
static gd_status gd_retention_check(gd_member_settings *s, const gd_raw_retention *r) {
    s->hot_rounds = GD_RETENTION_HOT_MIN;
    s->archive_every = 0;
    s->archive_dir[0] = '\0';
    if (r == NULL)
        return GD_OK;
    uint64_t v = 0;
    if (r->hot_rounds != NULL &&
        (gd_parse_u64(&v, r->hot_rounds) != GD_OK || v < GD_RETENTION_HOT_MIN ||
         v > GD_RETENTION_HOT_MAX))
        return gd_fail(GD_ERR_INVALID, "retention.hot_rounds must be %d to %d, not '%.12s'",
                       GD_RETENTION_HOT_MIN, GD_RETENTION_HOT_MAX, r->hot_rounds);
    if (r->hot_rounds != NULL)
        s->hot_rounds = (uint32_t)v;
    if (r->archive_every != NULL &&
        (gd_parse_u64(&v, r->archive_every) != GD_OK || v > 1000000))
        return gd_fail(GD_ERR_INVALID, "retention.archive_every must be 0 (no archive) to "
                                       "1000000 rounds, not '%.12s'",
                       r->archive_every);
    if (r->archive_every != NULL)
        s->archive_every = (uint32_t)v;
    if (r->archive_dir != NULL)
        GD_TRY(gd_copy(s->archive_dir, sizeof s->archive_dir, r->archive_dir,
                       "retention.archive_dir"));
    if (s->archive_every > 0 && s->archive_dir[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "retention.archive_every needs retention.archive_dir");
    if (s->archive_dir[0] != '\0' && strcmp(s->archive_dir, s->state_dir) == 0)
        return gd_fail(GD_ERR_INVALID, "retention.archive_dir must not be state_dir");
    return GD_OK;
}

static gd_status gd_member_settings_check(gd_member_settings *s, const gd_raw_node *r) {
    memset(s, 0, sizeof *s);
    GD_TRY(gd_url_check(r->chain.rpc, "chain.rpc"));
    GD_TRY(gd_copy(s->rpc, sizeof s->rpc, r->chain.rpc, "chain.rpc"));
    if (!gd_printable(r->chain.chain_id))
        return gd_fail(GD_ERR_INVALID, "chain.chain_id must be printable without spaces");
    GD_TRY(gd_copy(s->chain_id, sizeof s->chain_id, r->chain.chain_id, "chain.chain_id"));
    GD_TRY(gd_copy(s->key, sizeof s->key, r->chain.key, "chain.key"));
    const char *price = r->chain.gas_price ? r->chain.gas_price : GD_GAS_PRICE_DEFAULT;
    gd_gas_price gp;
    if (gd_gas_price_parse(&gp, price) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "chain.gas_price");
    GD_TRY(gd_copy(s->gas_price, sizeof s->gas_price, price, "chain.gas_price"));
    /* Numbers are read as text and parsed strictly: no sign, no wrap. */
    if (gd_parse_u64(&s->run, r->run) != GD_OK || s->run == 0)
        return gd_fail(GD_ERR_INVALID, "run must be a run id (1 or more), not '%.24s'", r->run);
    for (unsigned i = 0; i < r->roles_count; i++) {
        unsigned bit = gd_role_of(r->roles[i]);
        if (bit == 0)
            return gd_fail(GD_ERR_INVALID, "roles: '%.40s' is not worker or validator",
                           r->roles[i]);
        if (s->roles & bit)
            return gd_fail(GD_ERR_INVALID, "roles: '%s' is listed twice", r->roles[i]);
        s->roles |= bit;
    }
    gd_coin coin;
    if (gd_coin_parse(&coin, r->collateral) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "collateral");
    GD_TRY(gd_copy(s->collateral, sizeof s->collateral, r->collateral, "collateral"));
    const char *cls = r->hardware_class ? r->hardware_class : "auto";
    if (!gd_printable(cls))
        return gd_fail(GD_ERR_INVALID, "hardware_class must be printable without spaces");
    GD_TRY(gd_copy(s->hardware_class, sizeof s->hardware_class, cls, "hardware_class"));
    GD_TRY(gd_listen_check(s, r->listen));
    GD_TRY(gd_url_check(r->public_url, "public_url"));
    GD_TRY(gd_copy(s->public_url, sizeof s->public_url, r->public_url, "public_url"));
    GD_TRY(gd_copy(s->state_dir, sizeof s->state_dir, r->state_dir, "state_dir"));
    for (unsigned i = 0; i < r->data_count; i++) {
        if (r->data[i][0] == 0)
            return gd_fail(GD_ERR_INVALID, "data: entry %u is empty", i + 1);
        GD_TRY(gd_copy(s->data[i], sizeof s->data[i], r->data[i], "data"));
    }
    s->n_data = r->data_count;
    uint64_t threads = 0;
    if (r->threads != NULL && (gd_parse_u64(&threads, r->threads) != GD_OK || threads > 1024))
        return gd_fail(GD_ERR_INVALID, "threads must be 0 (one per core) to 1024, not '%.12s'",
                       r->threads);
    s->threads = (unsigned)threads;
    const char *backend = r->backend ? r->backend : "auto";
    if (strcmp(backend, "auto") != 0 && strcmp(backend, "cpu") != 0 &&
        strcmp(backend, "cuda") != 0)
        return gd_fail(GD_ERR_INVALID, "backend must be auto, cpu or cuda, not '%.8s'", backend);
    strcpy(s->backend, backend);
    uint64_t gpus = 1;
    if (r->gpus != NULL &&
        (gd_parse_u64(&gpus, r->gpus) != GD_OK || gpus < 1 || gpus > GD_BACKEND_GROUP_MAX))
        return gd_fail(GD_ERR_INVALID, "gpus must be 1 to %d, not '%.12s'", GD_BACKEND_GROUP_MAX,
                       r->gpus);
    s->gpus = (unsigned)gpus;
    /* The memory settings: absent keys keep the defaults (value 0). */
    const char *memory_text[3] = {r->shard, r->recompute, r->offload};
    const gd_setting *memory_setting[3] = {&gd_setting_shard, &gd_setting_recompute,
                                           &gd_setting_offload};
    int memory[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        if (memory_text[i] != NULL)
            GD_TRY(gd_setting_parse(memory_setting[i], &memory[i], memory_text[i]));
    s->memory = (gd_memory_settings){(gd_shard)memory[0], (gd_recompute)memory[1],
                                     (gd_offload)memory[2]};
    s->memory_budget = 0;
    if (r->memory_budget != NULL && strcmp(r->memory_budget, "0") != 0 &&
        gd_parse_size(&s->memory_budget, r->memory_budget) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "memory_budget must be 0 (no limit) or a size such as "
                                       "512M or 64G, not '%.24s'",
                       r->memory_budget);
    GD_TRY(gd_retention_check(s, r->retention));
    const char *level = r->log_level ? r->log_level : "info";
    if (gd_log_spec_check(level) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "log_level");
    snprintf(s->log_level, sizeof s->log_level, "%s", level);
    const char *format = r->log_format ? r->log_format : "text";
    gd_log_format f;
    if (gd_log_format_parse(&f, format) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "log_format");
    snprintf(s->log_format, sizeof s->log_format, "%s", format);
    return GD_OK;
}

gd_status gd_member_settings_parse(gd_member_settings *s, const char *text, size_t len,
                                   const char *what) {
    gd_yaml_log log = {{0}, {0}};
    cyaml_config_t config = {
        .log_fn = gd_yaml_log_fn,
        .log_ctx = &log,
        .mem_fn = cyaml_mem,
        .log_level = CYAML_LOG_ERROR,
        .flags = CYAML_CFG_NO_ALIAS,
    };
    GD_TRY(gd_yaml_syntax(what, text, len));
    gd_raw_node *raw = NULL;
    cyaml_err_t err = cyaml_load_data((const uint8_t *)text, len, &config, &gd_yaml_top,
                                      (cyaml_data_t **)&raw, NULL);
    if (err != CYAML_OK)
        return gd_yaml_refusal(what, text, len, &log, err);
    /* An empty or comment-only file is a YAML document with no mapping:
     * libcyaml loads it as no data at all. */
    if (raw == NULL)
        return gd_fail(GD_ERR_PARSE, "%s: empty (it holds no keys; `gonka-diloco node init` "
                                     "writes one)", what);
    gd_status st = gd_member_settings_check(s, raw);
    cyaml_free(&config, &gd_yaml_top, raw, 0);
    if (st == GD_OK)
        return GD_OK;
    /* Each value's refusal begins with its key (chain.rpc, threads, ...). */
    char key[48], where[1100];
    snprintf(key, sizeof key, "%.*s", (int)strcspn(gd_error_detail(), " :"), gd_error_detail());
    gd_yaml_where(where, sizeof where, what, text, len, key);
    where[strlen(where) - 2] = '\0'; /* gd_fail_context adds ": " */
    return gd_fail_context(st, "%s", where);
}

gd_status gd_member_settings_load(gd_member_settings *s, const char *path) {
    gd_buf b = {0};
    GD_TRY(gd_file_read(&b, path, GD_SETTINGS_YAML_MAX));
    gd_status st = gd_member_settings_parse(s, (const char *)b.data, b.len, path);
    gd_buf_free(&b);
    return st;
}

/* One "key: value" line, its comment at column 44. */
static void gd_yaml_line(char *out, size_t cap, size_t *at, const char *indent, const char *key,
                         const char *value, const char *comment) {
    char line[GD_SETTINGS_DATA_MAX * (GD_SETTINGS_TEXT_MAX + 8) + 64];
    int n = snprintf(line, sizeof line, "%s%s: %s", indent, key, value);
    if (n < 0)
        return;
    if (comment != NULL)
        snprintf(line + n, sizeof line - (size_t)n, "%*s# %s", n < 43 ? 43 - n : 1, "", comment);
    int w = snprintf(out + *at, cap - *at, "%s\n", line);
    if (w > 0)
        *at += (size_t)w < cap - *at ? (size_t)w : cap - *at;
}

/* bytes as node.yaml spells a size: the largest unit that divides it. */
static void gd_size_text(char *out, size_t cap, uint64_t bytes) {
    static const char units[] = "TGMK";
    for (int i = 0; bytes != 0 && i < 4; i++) {
        unsigned shift = 10 * (unsigned)(4 - i);
        if (bytes % ((uint64_t)1 << shift) == 0) {
            snprintf(out, cap, "%llu%c", (unsigned long long)(bytes >> shift), units[i]);
            return;
        }
    }
    snprintf(out, cap, "%llu", (unsigned long long)bytes);
}

gd_status gd_member_settings_format(const gd_member_settings *s, char *out, size_t cap) {
    char roles[40] = "[";
    if (s->roles & GD_ROLE_WORKER)
        strcat(roles, "worker");
    if (s->roles & GD_ROLE_VALIDATOR)
        strcat(roles, roles[1] ? ", validator" : "validator");
    strcat(roles, "]");
    char data[GD_SETTINGS_DATA_MAX * (GD_SETTINGS_TEXT_MAX + 8) + 8] = "[";
    for (unsigned i = 0; i < s->n_data; i++) {
        size_t n = strlen(data);
        snprintf(data + n, sizeof data - n, "%s\"%s\"", i ? ", " : "", s->data[i]);
    }
    strcat(data, "]");
    char q[16][GD_SETTINGS_TEXT_MAX + 3], num[3][32];
    snprintf(num[2], sizeof num[2], "%u", s->gpus);
#define GD_Q(i, v) (snprintf(q[i], sizeof q[i], "\"%s\"", (v)), q[i])
    snprintf(num[0], sizeof num[0], "%llu", (unsigned long long)s->run);
    snprintf(num[1], sizeof num[1], "%u", s->threads);
    char listen[300];
    snprintf(listen, sizeof listen, "%s:%u", s->listen_host, (unsigned)s->listen_port);
    size_t at = 0;
    out[0] = 0;
    int h = snprintf(out, cap, "# gonka-diloco node configuration; docs/node.md describes every "
                               "key.\nchain:\n");
    if (h < 0 || (size_t)h >= cap)
        return gd_fail(GD_ERR_LIMIT, "node.yaml does not fit %zu bytes", cap);
    at = (size_t)h;
    gd_yaml_line(out, cap, &at, "  ", "rpc", GD_Q(0, s->rpc), "the chain node's CometBFT RPC");
    gd_yaml_line(out, cap, &at, "  ", "chain_id", GD_Q(1, s->chain_id), NULL);
    gd_yaml_line(out, cap, &at, "  ", "key", GD_Q(2, s->key), "the account key file (0600)");
    gd_yaml_line(out, cap, &at, "  ", "gas_price", GD_Q(3, s->gas_price), "fee per unit of gas");
    gd_yaml_line(out, cap, &at, "", "run", num[0], "the training run to take part in");
    gd_yaml_line(out, cap, &at, "", "roles", roles, "worker (trains, commits), validator");
    gd_yaml_line(out, cap, &at, "", "collateral", GD_Q(4, s->collateral),
                 "bonded at join: at least the run's minimum");
    gd_yaml_line(out, cap, &at, "", "hardware_class", GD_Q(5, s->hardware_class),
                 "auto: from the hardware and the build");
    gd_yaml_line(out, cap, &at, "", "listen", GD_Q(6, listen), "serves payloads and states");
    gd_yaml_line(out, cap, &at, "", "public_url", GD_Q(7, s->public_url), "how peers reach it");
    gd_yaml_line(out, cap, &at, "", "state_dir", GD_Q(8, s->state_dir),
                 "payloads, states, journal (private)");
    gd_yaml_line(out, cap, &at, "", "data", data, "local paths of the run's data");
    gd_yaml_line(out, cap, &at, "", "threads", num[1], "0: one per core");
    gd_yaml_line(out, cap, &at, "", "backend", GD_Q(10, s->backend),
                 "cpu, cuda or auto (cuda where a GPU is usable)");
    gd_yaml_line(out, cap, &at, "", "gpus", num[2],
                 "cuda: data parallel over GPUs 0..gpus-1 (the same bits for any count)");
    gd_yaml_line(out, cap, &at, "", "shard",
                 gd_setting_name(&gd_setting_shard, (int)s->memory.shard),
                 "optimizer: each GPU holds the model; full: a shard, a layer gathered at a "
                 "time (the same bits)");
    gd_yaml_line(out, cap, &at, "", "recompute",
                 gd_setting_name(&gd_setting_recompute, (int)s->memory.recompute),
                 "none: keep activations; full: replay each layer's forward (the same bits)");
    gd_yaml_line(out, cap, &at, "", "offload",
                 gd_setting_name(&gd_setting_offload, (int)s->memory.offload),
                 "none; optimizer: AdamW's moments in host memory (the same bits)");
    char budget[32];
    gd_size_text(budget, sizeof budget, s->memory_budget);
    gd_yaml_line(out, cap, &at, "", "memory_budget", GD_Q(12, budget),
                 "host memory a round may use beside the trainer's: 512M, 64G; 0: no limit");
    if (at + 1 < cap) {
        snprintf(out + at, cap - at, "retention:\n");
        at += strlen(out + at);
    }
    snprintf(num[0], sizeof num[0], "%u",
             s->hot_rounds ? s->hot_rounds : (unsigned)GD_RETENTION_HOT_MIN);
    gd_yaml_line(out, cap, &at, "  ", "hot_rounds", num[0],
                 "rounds whose G and payloads stay in state_dir (at least 2)");
    snprintf(num[1], sizeof num[1], "%u", s->archive_every);
    gd_yaml_line(out, cap, &at, "  ", "archive_every", num[1],
                 "every N-th round's G moved to archive_dir (0: none)");
    gd_yaml_line(out, cap, &at, "  ", "archive_dir", GD_Q(13, s->archive_dir),
                 "a slower, cheaper disk for G checkpoints");
    gd_yaml_line(out, cap, &at, "", "log_level", GD_Q(9, s->log_level),
                 "error, warn, info or debug; per subsystem: info,http=debug");
    gd_yaml_line(out, cap, &at, "", "log_format", GD_Q(11, s->log_format[0] ? s->log_format : "text"),
                 "text, or json: one object a line");
#undef GD_Q
    if (at + 1 >= cap)
        return gd_fail(GD_ERR_LIMIT, "node.yaml does not fit %zu bytes", cap);
    return GD_OK;
}
