/* Builds the canonical parameter layout (see trainer/layout.h). */
#include "trainer/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

static void gd_layout_add(gd_param_layout *l, size_t *slot, const char *name, size_t rows,
                          size_t cols) {
    gd_param_tensor *t = &l->tensors[l->n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->offset = l->total;
    t->ndim = cols ? 2 : 1;
    t->shape[0] = rows;
    t->shape[1] = cols;
    t->numel = cols ? rows * cols : rows;
    t->decay = cols != 0;
    if (slot)
        *slot = t->offset;
    l->total += t->numel;
}

gd_status gd_param_layout_build(gd_param_layout *out, const gd_model_config *c) {
    GD_TRY(gd_model_config_validate(c));
    memset(out, 0, sizeof *out);
    out->config = *c;
    size_t layers = c->num_hidden_layers;
    size_t h = c->hidden_size, f = c->intermediate_size, v = c->vocab_size;
    size_t hd = gd_model_head_dim(c);
    size_t q_dim = c->num_attention_heads * hd, kv_dim = c->num_key_value_heads * hd;
    out->tensors = calloc(3 + 9 * layers, sizeof *out->tensors);
    out->layers = calloc(layers, sizeof *out->layers);
    if (out->tensors == NULL || out->layers == NULL) {
        gd_param_layout_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory for the parameter layout");
    }
    char name[GD_PARAM_NAME_MAX];
    gd_layout_add(out, &out->embed, "model.embed_tokens.weight", v, h);
    for (size_t i = 0; i < layers; i++) {
        gd_layer_params *p = &out->layers[i];
        const struct {
            size_t *slot;
            const char *suffix;
            size_t rows, cols;
        } parts[] = {
            {&p->input_norm, "input_layernorm.weight", h, 0},
            {&p->q, "self_attn.q_proj.weight", q_dim, h},
            {&p->k, "self_attn.k_proj.weight", kv_dim, h},
            {&p->v, "self_attn.v_proj.weight", kv_dim, h},
            {&p->o, "self_attn.o_proj.weight", h, q_dim},
            {&p->post_norm, "post_attention_layernorm.weight", h, 0},
            {&p->gate, "mlp.gate_proj.weight", f, h},
            {&p->up, "mlp.up_proj.weight", f, h},
            {&p->down, "mlp.down_proj.weight", h, f},
        };
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
            snprintf(name, sizeof name, "model.layers.%zu.%s", i, parts[k].suffix);
            gd_layout_add(out, parts[k].slot, name, parts[k].rows, parts[k].cols);
        }
    }
    gd_layout_add(out, &out->final_norm, "model.norm.weight", h, 0);
    if (c->tie_word_embeddings)
        out->lm_head = out->embed;
    else
        gd_layout_add(out, &out->lm_head, "lm_head.weight", v, h);

    /* The digest names the layout in optimizer states and payloads: equal
     * digests mean the same tensors at the same offsets. */
    gd_sha256_ctx *ctx = NULL;
    gd_status s = gd_sha256_begin(&ctx);
    for (size_t i = 0; s == GD_OK && i < out->n_tensors; i++) {
        const gd_param_tensor *t = &out->tensors[i];
        char line[GD_PARAM_NAME_MAX + 64];
        int n = snprintf(line, sizeof line, "%s %zu %zu %zu\n", t->name, t->offset, t->shape[0],
                         t->shape[1]);
        gd_sha256_update(ctx, line, (size_t)n);
    }
    if (s == GD_OK)
        gd_sha256_finish(ctx, out->digest);
    if (s != GD_OK)
        gd_param_layout_free(out);
    return s;
}

void gd_param_layout_free(gd_param_layout *layout) {
    free(layout->tensors);
    free(layout->layers);
    layout->tensors = NULL;
    layout->layers = NULL;
    layout->n_tensors = 0;
}

/* The largest part inside [lo, hi) of units first.. */
static size_t gd_param_layout_slice_max_from(const gd_param_layout *layout, size_t first,
                                             size_t lo, size_t hi) {
    size_t most = 0;
    for (size_t u = first; u < gd_param_layout_units(layout); u++) {
        size_t ulo, uhi;
        gd_param_layout_unit(layout, u, &ulo, &uhi);
        size_t a = ulo > lo ? ulo : lo, b = uhi < hi ? uhi : hi;
        if (a < b && b - a > most)
            most = b - a;
    }
    return most;
}

size_t gd_param_layout_units(const gd_param_layout *layout) {
    return (size_t)layout->config.num_hidden_layers + 2;
}

void gd_param_layout_unit(const gd_param_layout *layout, size_t unit, size_t *lo, size_t *hi) {
    size_t L = layout->config.num_hidden_layers;
    /* Unit u starts where its first tensor does and ends where the next
     * unit starts. */
    size_t start[2];
    for (int i = 0; i < 2; i++) {
        size_t u = unit + (size_t)i;
        start[i] = u == 0 ? layout->embed
                   : u <= L ? layout->layers[u - 1].input_norm
                   : u == L + 1 ? layout->final_norm
                                : layout->total;
    }
    *lo = start[0];
    *hi = start[1];
}


size_t gd_param_layout_unit_max(const gd_param_layout *layout, size_t first) {
    return gd_param_layout_slice_max_from(layout, first, 0, layout->total);
}

size_t gd_param_layout_slice_max(const gd_param_layout *layout, size_t lo, size_t hi) {
    return gd_param_layout_slice_max_from(layout, 0, lo, hi);
}

const gd_param_tensor *gd_param_layout_find(const gd_param_layout *layout, const char *name) {
    for (size_t i = 0; i < layout->n_tensors; i++)
        if (strcmp(layout->tensors[i].name, name) == 0)
            return &layout->tensors[i];
    return NULL;
}

gd_status gd_params_check_finite(const gd_param_layout *layout, const float *params) {
    size_t bad = 0;
    const gd_param_tensor *first = NULL;
    for (size_t i = 0; i < layout->n_tensors; i++) {
        const gd_param_tensor *t = &layout->tensors[i];
        for (size_t k = 0; k < t->numel; k++) {
            if (isfinite(params[t->offset + k]))
                continue;
            bad++;
            if (first == NULL)
                first = t;
        }
    }
    if (bad == 0)
        return GD_OK;
    return gd_fail(GD_ERR_PARSE, "%zu of its %zu parameters are not finite (the first in %s): "
                                 "the model diverged or the file is damaged",
                   bad, layout->total, first->name);
}
