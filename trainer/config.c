/* Model configs: presets, Hugging Face config.json in and out, validation. */
#include "trainer/config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/file.h"
#include "common/hash.h"

typedef struct gd_preset {
    const char *name;
    gd_model_config config;
} gd_preset;

/* tiny: fast enough to train to a measurable result inside a unit test.
 * small: the benchmark model (9.5M parameters; byte-level vocabulary).
 * base: GPT-2 small's size (124M) with Llama's blocks and GPT-2's vocabulary,
 * the size llm.c trains on its GPT-2 token shards. */
static const gd_preset gd_presets[] = {
    {"tiny", {.vocab_size = 256, .hidden_size = 64, .intermediate_size = 192,
              .num_hidden_layers = 2, .num_attention_heads = 4, .num_key_value_heads = 2,
              .max_position_embeddings = 512, .rms_norm_eps = 1e-5, .rope_theta = 10000,
              .tie_word_embeddings = true, .initializer_range = 0.02}},
    {"small", {.vocab_size = 256, .hidden_size = 384, .intermediate_size = 1024,
               .num_hidden_layers = 6, .num_attention_heads = 6, .num_key_value_heads = 2,
               .max_position_embeddings = 1024, .rms_norm_eps = 1e-5, .rope_theta = 10000,
               .tie_word_embeddings = true, .initializer_range = 0.02}},
    {"base", {.vocab_size = 50257, .hidden_size = 768, .intermediate_size = 2048,
              .num_hidden_layers = 12, .num_attention_heads = 12, .num_key_value_heads = 12,
              .max_position_embeddings = 1024, .rms_norm_eps = 1e-5, .rope_theta = 10000,
              .tie_word_embeddings = true, .initializer_range = 0.02}},
};

const char *gd_model_config_preset_names(void) {
    return "tiny, small, base";
}

gd_status gd_model_config_preset(gd_model_config *out, const char *name) {
    for (size_t i = 0; i < sizeof gd_presets / sizeof gd_presets[0]; i++) {
        if (strcmp(gd_presets[i].name, name) == 0) {
            *out = gd_presets[i].config;
            return GD_OK;
        }
    }
    return gd_fail(GD_ERR_INVALID, "unknown model preset '%s' (known: %s; or give a Hugging "
                                   "Face config.json with --model-config)",
                   name, gd_model_config_preset_names());
}

size_t gd_model_head_dim(const gd_model_config *c) {
    return c->num_attention_heads ? c->hidden_size / c->num_attention_heads : 0;
}

uint64_t gd_model_param_count(const gd_model_config *c) {
    uint64_t h = c->hidden_size, f = c->intermediate_size, v = c->vocab_size;
    uint64_t kv = (uint64_t)c->num_key_value_heads * gd_model_head_dim(c);
    uint64_t layer = h + h * h + 2 * h * kv + h * h + h + 3 * h * f;
    uint64_t n = v * h + (uint64_t)c->num_hidden_layers * layer + h;
    if (!c->tie_word_embeddings)
        n += v * h;
    return n;
}

#define GD_CONFIG_DIM_MAX (1u << 20)
#define GD_CONFIG_PARAMS_MAX ((uint64_t)1 << 40)

gd_status gd_model_config_validate(const gd_model_config *c) {
    const struct {
        const char *key;
        uint32_t value;
        uint32_t max;
    } dims[] = {
        {"vocab_size", c->vocab_size, INT32_MAX},
        {"hidden_size", c->hidden_size, GD_CONFIG_DIM_MAX},
        {"intermediate_size", c->intermediate_size, GD_CONFIG_DIM_MAX},
        {"num_hidden_layers", c->num_hidden_layers, 4096},
        {"num_attention_heads", c->num_attention_heads, 4096},
        {"num_key_value_heads", c->num_key_value_heads, 4096},
        {"max_position_embeddings", c->max_position_embeddings, GD_CONFIG_DIM_MAX},
    };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        if (dims[i].value == 0 || dims[i].value > dims[i].max)
            return gd_fail(GD_ERR_INVALID, "model config: %s is %u; it must be 1..%u",
                           dims[i].key, dims[i].value, dims[i].max);
    }
    if (c->hidden_size % c->num_attention_heads != 0)
        return gd_fail(GD_ERR_INVALID, "model config: hidden_size %u is not a multiple of "
                                       "num_attention_heads %u",
                       c->hidden_size, c->num_attention_heads);
    if (c->num_attention_heads % c->num_key_value_heads != 0)
        return gd_fail(GD_ERR_INVALID, "model config: num_attention_heads %u is not a multiple "
                                       "of num_key_value_heads %u",
                       c->num_attention_heads, c->num_key_value_heads);
    if (gd_model_head_dim(c) % 2 != 0)
        return gd_fail(GD_ERR_INVALID, "model config: the head dimension %zu (hidden_size / "
                                       "num_attention_heads) must be even for rotary embeddings",
                       gd_model_head_dim(c));
    if (!(c->rms_norm_eps > 0 && c->rms_norm_eps < 1))
        return gd_fail(GD_ERR_INVALID, "model config: rms_norm_eps %g must be in (0, 1)",
                       c->rms_norm_eps);
    if (!(c->rope_theta > 1 && c->rope_theta < 1e12))
        return gd_fail(GD_ERR_INVALID, "model config: rope_theta %g must be in (1, 1e12)",
                       c->rope_theta);
    if (!(c->initializer_range > 0 && c->initializer_range <= 1))
        return gd_fail(GD_ERR_INVALID, "model config: initializer_range %g must be in (0, 1]",
                       c->initializer_range);
    if (gd_model_param_count(c) > GD_CONFIG_PARAMS_MAX)
        return gd_fail(GD_ERR_INVALID, "model config: %llu parameters is more than this trainer "
                                       "supports (2^40)",
                       (unsigned long long)gd_model_param_count(c));
    return GD_OK;
}

/* --- Hugging Face config.json -------------------------------------------------- */

static gd_status gd_json_dim(uint32_t *out, const json_t *root, const char *key, bool required) {
    const json_t *v = json_object_get(root, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return gd_fail(GD_ERR_INVALID, "model config: '%s' is missing", key);
        return GD_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX)
        return gd_fail(GD_ERR_INVALID, "model config: '%s' must be a positive integer", key);
    *out = (uint32_t)json_integer_value(v);
    return GD_OK;
}

static gd_status gd_json_real(double *out, const json_t *root, const char *key) {
    const json_t *v = json_object_get(root, key);
    if (v == NULL || json_is_null(v))
        return GD_OK;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return gd_fail(GD_ERR_INVALID, "model config: '%s' must be a number", key);
    *out = json_number_value(v);
    return GD_OK;
}

/* Keys whose presence with a non-default value changes the architecture. */
static gd_status gd_json_refuse_unsupported(const json_t *root) {
    const json_t *v;
    if ((v = json_object_get(root, "model_type")) && !json_is_null(v) &&
        (!json_is_string(v) || strcmp(json_string_value(v), "llama") != 0))
        return gd_fail(GD_ERR_INVALID, "model config: model_type must be \"llama\"");
    if ((v = json_object_get(root, "hidden_act")) && !json_is_null(v) &&
        (!json_is_string(v) || strcmp(json_string_value(v), "silu") != 0))
        return gd_fail(GD_ERR_INVALID, "model config: hidden_act must be \"silu\" (SwiGLU)");
    if ((v = json_object_get(root, "rope_scaling")) && !json_is_null(v))
        return gd_fail(GD_ERR_INVALID, "model config: rope_scaling is not supported");
    const char *biases[] = {"attention_bias", "mlp_bias"};
    for (size_t i = 0; i < 2; i++)
        if ((v = json_object_get(root, biases[i])) && !json_is_null(v) && !json_is_false(v))
            return gd_fail(GD_ERR_INVALID, "model config: %s must be false", biases[i]);
    return GD_OK;
}

gd_status gd_model_config_parse_json(gd_model_config *out, const char *text, size_t len) {
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL)
        return gd_fail(GD_ERR_PARSE, "model config: not JSON (line %d: %s)", err.line, err.text);
    gd_status s = GD_OK;
    if (!json_is_object(root))
        s = gd_fail(GD_ERR_PARSE, "model config: not a JSON object");
    gd_model_config c = {.max_position_embeddings = 2048, .rms_norm_eps = 1e-6,
                         .rope_theta = 10000, .tie_word_embeddings = false,
                         .initializer_range = 0.02};
    if (s == GD_OK)
        s = gd_json_refuse_unsupported(root);
    if (s == GD_OK)
        s = gd_json_dim(&c.vocab_size, root, "vocab_size", true);
    if (s == GD_OK)
        s = gd_json_dim(&c.hidden_size, root, "hidden_size", true);
    if (s == GD_OK)
        s = gd_json_dim(&c.intermediate_size, root, "intermediate_size", true);
    if (s == GD_OK)
        s = gd_json_dim(&c.num_hidden_layers, root, "num_hidden_layers", true);
    if (s == GD_OK)
        s = gd_json_dim(&c.num_attention_heads, root, "num_attention_heads", true);
    c.num_key_value_heads = c.num_attention_heads;
    if (s == GD_OK)
        s = gd_json_dim(&c.num_key_value_heads, root, "num_key_value_heads", false);
    if (s == GD_OK)
        s = gd_json_dim(&c.max_position_embeddings, root, "max_position_embeddings", false);
    if (s == GD_OK)
        s = gd_json_real(&c.rms_norm_eps, root, "rms_norm_eps");
    if (s == GD_OK)
        s = gd_json_real(&c.rope_theta, root, "rope_theta");
    if (s == GD_OK)
        s = gd_json_real(&c.initializer_range, root, "initializer_range");
    const json_t *tie = json_object_get(root, "tie_word_embeddings");
    if (s == GD_OK && tie && !json_is_null(tie)) {
        if (!json_is_boolean(tie))
            s = gd_fail(GD_ERR_INVALID, "model config: tie_word_embeddings must be true or false");
        else
            c.tie_word_embeddings = json_is_true(tie);
    }
    uint32_t head_dim = 0;
    if (s == GD_OK)
        s = gd_json_dim(&head_dim, root, "head_dim", false);
    json_decref(root);
    GD_TRY(s);
    GD_TRY(gd_model_config_validate(&c));
    if (head_dim != 0 && head_dim != gd_model_head_dim(&c))
        return gd_fail(GD_ERR_INVALID, "model config: head_dim %u differs from hidden_size / "
                                       "num_attention_heads = %zu, which is not supported",
                       head_dim, gd_model_head_dim(&c));
    *out = c;
    return GD_OK;
}

gd_status gd_model_config_load(gd_model_config *out, const char *path) {
    gd_buf buf = {0};
    gd_status s = gd_file_read(&buf, path, 1 << 20);
    if (s == GD_OK)
        s = gd_model_config_parse_json(out, (const char *)buf.data, buf.len);
    gd_buf_free(&buf);
    if (s != GD_OK)
        return gd_fail_context(s, "%s", path);
    return GD_OK;
}

char *gd_model_config_to_json(const gd_model_config *c) {
    json_t *root = json_pack(
        "{s:[s],s:s,s:s,s:b,s:b,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:b,s:f,s:n}",
        "architectures", "LlamaForCausalLM", "model_type", "llama", "hidden_act", "silu",
        "attention_bias", 0, "mlp_bias", 0, "torch_dtype", "float32",
        "vocab_size", (json_int_t)c->vocab_size, "hidden_size", (json_int_t)c->hidden_size,
        "intermediate_size", (json_int_t)c->intermediate_size,
        "num_hidden_layers", (json_int_t)c->num_hidden_layers,
        "num_attention_heads", (json_int_t)c->num_attention_heads,
        "num_key_value_heads", (json_int_t)c->num_key_value_heads,
        "head_dim", (json_int_t)gd_model_head_dim(c),
        "max_position_embeddings", (json_int_t)c->max_position_embeddings,
        "rms_norm_eps", c->rms_norm_eps, "rope_theta", c->rope_theta,
        "tie_word_embeddings", (int)c->tie_word_embeddings,
        "initializer_range", c->initializer_range, "rope_scaling");
    if (root == NULL)
        return NULL;
    /* Jansson prints reals with 17 significant digits: they read back exactly. */
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}

void gd_model_config_digest(const gd_model_config *c, uint8_t out[32]) {
    static const char tag[] = "gd-model-config-v1";
    uint8_t b[sizeof tag - 1 + 7 * 4 + 3 * 8 + 1];
    uint8_t *p = b;
    memcpy(p, tag, sizeof tag - 1);
    p += sizeof tag - 1;
    const uint32_t ints[7] = {c->vocab_size,          c->hidden_size,
                              c->intermediate_size,   c->num_hidden_layers,
                              c->num_attention_heads, c->num_key_value_heads,
                              c->max_position_embeddings};
    for (int i = 0; i < 7; i++, p += 4)
        gd_put_le32(p, ints[i]);
    const double reals[2] = {c->rms_norm_eps, c->rope_theta};
    for (int i = 0; i < 2; i++, p += 8) {
        uint64_t bits;
        memcpy(&bits, &reals[i], 8);
        gd_put_le64(p, bits);
    }
    *p++ = c->tie_word_embeddings ? 1 : 0;
    uint64_t bits;
    memcpy(&bits, &c->initializer_range, 8);
    gd_put_le64(p, bits);
    p += 8;
    gd_sha256(out, b, (size_t)(p - b));
}
