/* Model and optimizer checkpoints on safetensors (see trainer/checkpoint.h). */
#include "trainer/checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/parse.h"
#include "trainer/safetensors.h"

#define GD_META_STEP "gonka_diloco.step"
#define GD_META_LAYOUT "gonka_diloco.layout_sha256"
#define GD_OPTIM_SUFFIX ".optim.safetensors"

gd_status gd_checkpoint_optim_path(char *out, size_t cap, const char *model_path) {
    size_t len = strlen(model_path);
    const char *ext = ".safetensors";
    size_t ext_len = strlen(ext);
    if (len >= ext_len && strcmp(model_path + len - ext_len, ext) == 0)
        len -= ext_len;
    if (len + strlen(GD_OPTIM_SUFFIX) + 1 > cap)
        return gd_fail(GD_ERR_LIMIT, "checkpoint path is too long");
    memcpy(out, model_path, len);
    strcpy(out + len, GD_OPTIM_SUFFIX);
    return GD_OK;
}

static void gd_layout_hex(char hex[65], const gd_param_layout *layout) {
    gd_hex_encode(hex, layout->digest, 32, false);
}

/* --- model ------------------------------------------------------------------- */

/* Tensor i's bytes: its floats at its layout offset, from the reader. */
typedef struct gd_checkpoint_source {
    const gd_param_layout *layout;
    const gd_values_reader *params;
} gd_checkpoint_source;

static gd_status gd_checkpoint_read(void *ctx, void *out, size_t tensor, uint64_t at,
                                    size_t len) {
    const gd_checkpoint_source *x = ctx;
    /* F32 tensors: at and len are whole floats (pieces are 4 MiB). */
    size_t lo = x->layout->tensors[tensor].offset + (size_t)(at / sizeof(float));
    return x->params->read(x->params->ctx, out, lo, len / sizeof(float));
}

gd_status gd_checkpoint_save_model(const char *path, const gd_param_layout *layout,
                                   const float *params, uint64_t step) {
    gd_values_reader from = gd_values_reader_of(params);
    return gd_checkpoint_save_model_from(path, layout, &from, step);
}

gd_status gd_checkpoint_save_model_from(const char *path, const gd_param_layout *layout,
                                        const gd_values_reader *params, uint64_t step) {
    gd_st_write_tensor *tensors = calloc(layout->n_tensors, sizeof *tensors);
    char *config = gd_model_config_to_json(&layout->config);
    if (tensors == NULL || config == NULL) {
        free(tensors);
        free(config);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < layout->n_tensors; i++) {
        const gd_param_tensor *t = &layout->tensors[i];
        tensors[i] = (gd_st_write_tensor){.name = t->name, .dtype = GD_ST_F32, .ndim = t->ndim,
                                          .shape = {t->shape[0], t->shape[1]}};
    }
    char step_text[24], layout_hex[65];
    snprintf(step_text, sizeof step_text, "%" PRIu64, step);
    gd_layout_hex(layout_hex, layout);
    gd_st_meta meta[] = {{"format", "pt"},
                         {"config", config},
                         {GD_META_STEP, step_text},
                         {GD_META_LAYOUT, layout_hex}};
    gd_checkpoint_source x = {layout, params};
    gd_st_source source = {gd_checkpoint_read, &x};
    gd_status s = gd_safetensors_write_from(path, tensors, layout->n_tensors, meta,
                                            sizeof meta / sizeof meta[0], &source);
    free(tensors);
    free(config);
    return s;
}

/* IEEE half to float, every case (subnormals, infinities, NaNs) exact. */
static float gd_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else { /* subnormal: normalise */
        int shift = 0;
        while ((mant & 0x400) == 0) {
            mant <<= 1;
            shift++;
        }
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((mant & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static void gd_widen(float *dst, const gd_st_tensor *t) {
    for (uint64_t i = 0; i < t->numel; i++) {
        if (t->dtype == GD_ST_F32) {
            memcpy(dst + i, t->data + 4 * i, 4);
        } else {
            uint16_t h;
            memcpy(&h, t->data + 2 * i, 2);
            if (t->dtype == GD_ST_BF16) {
                uint32_t bits = (uint32_t)h << 16;
                memcpy(dst + i, &bits, 4);
            } else {
                dst[i] = gd_half_to_float(h);
            }
        }
    }
}

/* The config of a checkpoint: its metadata, else config.json beside it. */
static gd_status gd_checkpoint_config(gd_model_config *config, const gd_safetensors *st,
                                      const char *path) {
    const char *text = gd_safetensors_meta(st, "config");
    if (text)
        return gd_model_config_parse_json(config, text, strlen(text));
    char dir_config[GD_CHECKPOINT_PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    if (dir_len + sizeof "config.json" > sizeof dir_config)
        return gd_fail(GD_ERR_LIMIT, "checkpoint path is too long");
    memcpy(dir_config, path, dir_len);
    strcpy(dir_config + dir_len, "config.json");
    gd_status s = gd_model_config_load(config, dir_config);
    if (s == GD_ERR_NOT_FOUND || s == GD_ERR_IO)
        return gd_fail(GD_ERR_PARSE, "the checkpoint has no \"config\" metadata and there is no "
                                     "readable %s beside it",
                       dir_config);
    return s;
}

/* Rotary frequency buffers some older Hugging Face exports include. */
static bool gd_is_ignorable_tensor(const char *name) {
    size_t len = strlen(name);
    const char *suffix = "rotary_emb.inv_freq";
    return len >= strlen(suffix) && strcmp(name + len - strlen(suffix), suffix) == 0;
}

static gd_status gd_checkpoint_fill(const gd_safetensors *st, const gd_param_layout *layout,
                                    float *params) {
    for (size_t i = 0; i < layout->n_tensors; i++) {
        const gd_param_tensor *t = &layout->tensors[i];
        const gd_st_tensor *f = gd_safetensors_find(st, t->name);
        if (f == NULL)
            return gd_fail(GD_ERR_PARSE, "tensor %s is missing", t->name);
        if (f->dtype != GD_ST_F32 && f->dtype != GD_ST_F16 && f->dtype != GD_ST_BF16)
            return gd_fail(GD_ERR_PARSE, "tensor %s is %s; F32, F16 or BF16 expected", t->name,
                           gd_st_dtype_name(f->dtype));
        bool shape_ok = f->ndim == t->ndim && f->shape[0] == t->shape[0] &&
                        (t->ndim == 1 || f->shape[1] == t->shape[1]);
        if (!shape_ok)
            return gd_fail(GD_ERR_PARSE, "tensor %s has the wrong shape for the config "
                                         "(expected [%zu%s%zu])",
                           t->name, t->shape[0], t->ndim == 2 ? ", " : "",
                           t->ndim == 2 ? t->shape[1] : (size_t)0);
        gd_widen(params + t->offset, f);
    }
    for (size_t i = 0; i < st->n_tensors; i++) {
        const char *name = st->tensors[i].name;
        if (gd_param_layout_find(layout, name) || gd_is_ignorable_tensor(name))
            continue;
        if (strcmp(name, "lm_head.weight") == 0 && layout->config.tie_word_embeddings) {
            /* A tied model saved with both copies: they must agree. */
            const gd_st_tensor *f = &st->tensors[i];
            const gd_param_tensor *e = gd_param_layout_find(layout, "model.embed_tokens.weight");
            if (f->dtype == GD_ST_F32 && f->numel == e->numel &&
                memcmp(f->data, params + e->offset, e->numel * 4) == 0)
                continue;
            return gd_fail(GD_ERR_PARSE, "the config ties word embeddings but lm_head.weight "
                                         "differs from model.embed_tokens.weight");
        }
        return gd_fail(GD_ERR_PARSE, "unexpected tensor %s for this config", name);
    }
    return GD_OK;
}

static gd_status gd_meta_u64(const gd_safetensors *st, uint64_t *out, const char *key,
                             bool required) {
    const char *text = gd_safetensors_meta(st, key);
    if (text == NULL) {
        if (required)
            return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is missing", key);
        return GD_OK;
    }
    if (gd_parse_u64(out, text) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is not a whole number: '%.40s'", key, text);
    return GD_OK;
}

gd_status gd_checkpoint_load_model(const char *path, gd_param_layout *layout, float **params,
                                   uint64_t *step) {
    gd_safetensors st;
    memset(layout, 0, sizeof *layout);
    *params = NULL;
    *step = 0;
    GD_TRY(gd_safetensors_open(&st, path));
    gd_model_config config;
    gd_status s = gd_checkpoint_config(&config, &st, path);
    if (s == GD_OK)
        s = gd_param_layout_build(layout, &config);
    if (s == GD_OK && (*params = malloc(layout->total * sizeof(float))) == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory for %zu parameters", layout->total);
    if (s == GD_OK)
        s = gd_checkpoint_fill(&st, layout, *params);
    if (s == GD_OK)
        s = gd_meta_u64(&st, step, GD_META_STEP, false);
    const char *digest = gd_safetensors_meta(&st, GD_META_LAYOUT);
    char layout_hex[65];
    if (s == GD_OK && digest) {
        gd_layout_hex(layout_hex, layout);
        if (strcmp(digest, layout_hex) != 0)
            s = gd_fail(GD_ERR_PARSE, "its layout digest does not match its config");
    }
    gd_safetensors_free(&st);
    if (s != GD_OK) {
        free(*params);
        *params = NULL;
        gd_param_layout_free(layout);
        return gd_fail_context(s, "checkpoint %s", path);
    }
    return GD_OK;
}

/* --- optimizer state ----------------------------------------------------------- */

typedef struct gd_optim_field {
    const char *key;
    enum { GD_F_REAL, GD_F_U64, GD_F_SIZE, GD_F_U32 } kind;
    size_t offset; /* into gd_train_options */
} gd_optim_field;

#define GD_FIELD(key, kind, member) {key, kind, offsetof(gd_train_options, member)}
static const gd_optim_field gd_optim_fields[] = {
    GD_FIELD("lr", GD_F_REAL, optim.lr),
    GD_FIELD("min_lr", GD_F_REAL, optim.min_lr),
    GD_FIELD("warmup_steps", GD_F_U64, optim.warmup_steps),
    GD_FIELD("schedule_steps", GD_F_U64, optim.schedule_steps),
    GD_FIELD("beta1", GD_F_REAL, optim.beta1),
    GD_FIELD("beta2", GD_F_REAL, optim.beta2),
    GD_FIELD("eps", GD_F_REAL, optim.eps),
    GD_FIELD("weight_decay", GD_F_REAL, optim.weight_decay),
    GD_FIELD("grad_clip", GD_F_REAL, optim.grad_clip),
    GD_FIELD("batch", GD_F_SIZE, batch),
    GD_FIELD("seq_len", GD_F_SIZE, seq_len),
    GD_FIELD("micro_batch", GD_F_SIZE, micro_batch),
    GD_FIELD("seed", GD_F_U64, seed),
    GD_FIELD("worker", GD_F_U32, worker),
    GD_FIELD("data_workers", GD_F_U32, data_workers),
};
#define GD_N_OPTIM_FIELDS (sizeof gd_optim_fields / sizeof gd_optim_fields[0])

/* An integer option's value, whatever its C type. */
static uint64_t gd_field_get_uint(const gd_optim_field *f, const char *base) {
    if (f->kind == GD_F_U64) {
        uint64_t u;
        memcpy(&u, base, sizeof u);
        return u;
    }
    if (f->kind == GD_F_SIZE) {
        size_t z;
        memcpy(&z, base, sizeof z);
        return z;
    }
    uint32_t w;
    memcpy(&w, base, sizeof w);
    return w;
}

static gd_status gd_field_set_uint(const gd_optim_field *f, char *base, uint64_t u) {
    if (f->kind == GD_F_U64) {
        memcpy(base, &u, sizeof u);
    } else if (f->kind == GD_F_SIZE) {
        if (u > SIZE_MAX)
            return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is too large", f->key);
        size_t z = (size_t)u;
        memcpy(base, &z, sizeof z);
    } else {
        if (u > UINT32_MAX)
            return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is too large", f->key);
        uint32_t w = (uint32_t)u;
        memcpy(base, &w, sizeof w);
    }
    return GD_OK;
}

/* A setting that decides a step's bits as metadata under its option's
 * name, when it is not the default. */
static void gd_optim_meta_setting(gd_st_meta *meta, size_t *n, const gd_setting *s, int value) {
    if (value != 0)
        meta[(*n)++] = (gd_st_meta){(char *)s->option, (char *)gd_setting_name(s, value)};
}

/* What gd_optim_meta_setting wrote, absent for the default. */
static gd_status gd_optim_read_setting(const gd_safetensors *st, const gd_setting *s,
                                       int *value) {
    if (gd_setting_parse_optional(s, value, gd_safetensors_meta(st, s->option)) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is not %s or %s", s->option,
                       s->names[0], s->names[1]);
    return GD_OK;
}

gd_status gd_checkpoint_save_optim(const char *model_path, const gd_param_layout *layout,
                                   const float *exp_avg, const float *exp_avg_sq,
                                   const gd_optim_state *state) {
    char path[GD_CHECKPOINT_PATH_MAX];
    GD_TRY(gd_checkpoint_optim_path(path, sizeof path, model_path));
    char values[GD_N_OPTIM_FIELDS][40];
    gd_st_meta meta[GD_N_OPTIM_FIELDS + 7];
    size_t n = 0;
    for (size_t i = 0; i < GD_N_OPTIM_FIELDS; i++) {
        const gd_optim_field *f = &gd_optim_fields[i];
        const char *base = (const char *)&state->options + f->offset;
        if (f->kind == GD_F_REAL) {
            double d;
            memcpy(&d, base, sizeof d);
            snprintf(values[i], sizeof values[i], "%.17g", d);
        } else {
            snprintf(values[i], sizeof values[i], "%" PRIu64, gd_field_get_uint(f, base));
        }
        meta[n++] = (gd_st_meta){(char *)f->key, values[i]};
    }
    char step_text[24], layout_hex[65];
    snprintf(step_text, sizeof step_text, "%" PRIu64, state->step);
    gd_layout_hex(layout_hex, layout);
    meta[n++] = (gd_st_meta){"gonka_diloco.optimizer", "adamw"};
    meta[n++] = (gd_st_meta){GD_META_STEP, step_text};
    meta[n++] = (gd_st_meta){GD_META_LAYOUT, layout_hex};
    meta[n++] = (gd_st_meta){"data", (char *)state->data_spec};
    /* The settings that decide the bits, only where not the default: an
     * fp32, naive run's file keeps the bytes it always had. */
    const gd_train_options *o = &state->options;
    gd_optim_meta_setting(meta, &n, &gd_setting_attention, (int)o->attention);
    gd_optim_meta_setting(meta, &n, &gd_setting_precision, (int)o->precision);
    gd_optim_meta_setting(meta, &n, &gd_setting_moments, (int)o->moments);
    gd_st_write_tensor tensors[2] = {
        {.name = "adamw.exp_avg", .dtype = GD_ST_F32, .ndim = 1, .shape = {layout->total},
         .data = exp_avg},
        {.name = "adamw.exp_avg_sq", .dtype = GD_ST_F32, .ndim = 1, .shape = {layout->total},
         .data = exp_avg_sq},
    };
    return gd_safetensors_write(path, tensors, 2, meta, n);
}

static gd_status gd_optim_read_fields(const gd_safetensors *st, gd_train_options *o) {
    for (size_t i = 0; i < GD_N_OPTIM_FIELDS; i++) {
        const gd_optim_field *f = &gd_optim_fields[i];
        char *base = (char *)o + f->offset;
        const char *text = gd_safetensors_meta(st, f->key);
        if (text == NULL)
            return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is missing", f->key);
        if (f->kind == GD_F_REAL) {
            char *end = NULL;
            errno = 0;
            double d = strtod(text, &end);
            if (end == text || *end != '\0' || errno != 0 || !isfinite(d))
                return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is not a number", f->key);
            memcpy(base, &d, sizeof d);
            continue;
        }
        uint64_t u;
        if (gd_parse_u64(&u, text) != GD_OK)
            return gd_fail(GD_ERR_PARSE, "metadata \"%s\" is not a whole number", f->key);
        GD_TRY(gd_field_set_uint(f, base, u));
    }
    int attention, precision, moments;
    GD_TRY(gd_optim_read_setting(st, &gd_setting_attention, &attention));
    GD_TRY(gd_optim_read_setting(st, &gd_setting_precision, &precision));
    GD_TRY(gd_optim_read_setting(st, &gd_setting_moments, &moments));
    o->attention = (gd_attention)attention;
    o->precision = (gd_precision)precision;
    o->moments = (gd_precision)moments;
    return GD_OK;
}

static gd_status gd_optim_read_tensor(const gd_safetensors *st, float *out,
                                      const char *name, const gd_param_layout *layout) {
    const gd_st_tensor *t = gd_safetensors_find(st, name);
    if (t == NULL)
        return gd_fail(GD_ERR_PARSE, "tensor %s is missing", name);
    if (t->dtype != GD_ST_F32 || t->ndim != 1 || t->shape[0] != layout->total)
        return gd_fail(GD_ERR_PARSE, "tensor %s must be F32 of shape [%zu]", name,
                       layout->total);
    memcpy(out, t->data, layout->total * sizeof(float));
    /* AdamW never writes a non-finite moment or a negative second moment
     * (v is a running mean of squares): one here is a damaged file, and
     * resuming from it would only fail later as a "diverged" step. */
    bool second = strcmp(name, "adamw.exp_avg_sq") == 0;
    for (size_t i = 0; i < layout->total; i++) {
        if (isfinite(out[i]) && !(second && out[i] < 0))
            continue;
        const char *param = "?";
        for (size_t k = 0; k < layout->n_tensors; k++)
            if (i >= layout->tensors[k].offset &&
                i - layout->tensors[k].offset < layout->tensors[k].numel)
                param = layout->tensors[k].name;
        return gd_fail(GD_ERR_PARSE, "tensor %s holds %g at index %zu (in %s): %s; the file "
                                     "is corrupt",
                       name, (double)out[i], i, param,
                       second ? "a second moment is finite and never negative"
                              : "a first moment is finite");
    }
    return GD_OK;
}

gd_status gd_checkpoint_load_optim(const char *model_path, const gd_param_layout *layout,
                                   float *exp_avg, float *exp_avg_sq, gd_optim_state *state) {
    char path[GD_CHECKPOINT_PATH_MAX];
    GD_TRY(gd_checkpoint_optim_path(path, sizeof path, model_path));
    gd_safetensors st;
    gd_status s = gd_safetensors_open(&st, path);
    if (s != GD_OK)
        return gd_fail_context(s, "optimizer state for %s (needed to resume)", model_path);
    memset(state, 0, sizeof *state);
    char layout_hex[65];
    gd_layout_hex(layout_hex, layout);
    const char *digest = gd_safetensors_meta(&st, GD_META_LAYOUT);
    if (digest == NULL || strcmp(digest, layout_hex) != 0)
        s = gd_fail(GD_ERR_PARSE, "it belongs to a different model layout");
    if (s == GD_OK)
        s = gd_meta_u64(&st, &state->step, GD_META_STEP, true);
    if (s == GD_OK)
        s = gd_optim_read_fields(&st, &state->options);
    if (s == GD_OK)
        s = gd_optim_read_tensor(&st, exp_avg, "adamw.exp_avg", layout);
    if (s == GD_OK)
        s = gd_optim_read_tensor(&st, exp_avg_sq, "adamw.exp_avg_sq", layout);
    const char *data = gd_safetensors_meta(&st, "data");
    if (s == GD_OK && data)
        snprintf(state->data_spec, sizeof state->data_spec, "%s", data);
    gd_safetensors_free(&st);
    if (s != GD_OK)
        return gd_fail_context(s, "optimizer state %s", path);
    return GD_OK;
}

gd_status gd_checkpoint_data_spec(char *out, size_t cap, const char *model_path) {
    char path[GD_CHECKPOINT_PATH_MAX];
    GD_TRY(gd_checkpoint_optim_path(path, sizeof path, model_path));
    gd_safetensors st;
    gd_status s = gd_safetensors_open(&st, path);
    if (s == GD_ERR_NOT_FOUND)
        return gd_fail(GD_ERR_NOT_FOUND,
                       "no data source is recorded with %s: it has no optimizer state %s",
                       model_path, path);
    if (s != GD_OK)
        return gd_fail_context(s, "optimizer state %s (where the data source is recorded)",
                               path);
    const char *data = gd_safetensors_meta(&st, "data");
    if (data == NULL || data[0] == '\0')
        s = gd_fail(GD_ERR_NOT_FOUND, "no data source is recorded in %s", path);
    else if (strlen(data) >= cap)
        s = gd_fail(GD_ERR_LIMIT, "the data source recorded in %s is longer than %zu bytes",
                    path, cap - 1);
    else
        memcpy(out, data, strlen(data) + 1);
    gd_safetensors_free(&st);
    return s;
}

gd_status gd_checkpoint_train_options(gd_train_options *out, const char *model_path) {
    char path[GD_CHECKPOINT_PATH_MAX];
    GD_TRY(gd_checkpoint_optim_path(path, sizeof path, model_path));
    gd_safetensors st;
    gd_status s = gd_safetensors_open(&st, path);
    if (s == GD_ERR_NOT_FOUND)
        return gd_fail(GD_ERR_NOT_FOUND, "no training options are recorded with %s: it has no "
                                         "optimizer state %s",
                       model_path, path);
    if (s != GD_OK)
        return gd_fail_context(s, "optimizer state %s (where the training options are "
                                  "recorded)",
                               path);
    gd_train_options o;
    memset(&o, 0, sizeof o);
    s = gd_optim_read_fields(&st, &o);
    gd_safetensors_free(&st);
    if (s != GD_OK)
        return gd_fail_context(s, "optimizer state %s", path);
    *out = o;
    return GD_OK;
}
