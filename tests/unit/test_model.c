/* The model: configs (presets, Hugging Face JSON), the parameter layout,
 * deterministic initialisation, the learning-rate schedule, the loss at
 * initialisation, and a finite-difference check of the whole model's
 * gradient in double precision. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "kernels/cpu/ops_f64.h"
#include "tests/support/testkit.h"
#include "trainer/config.h"
#include "trainer/init.h"
#include "trainer/layout.h"
#include "trainer/model.h"
#include "trainer/model_f64.h"
#include "trainer/optim.h"

static void test_presets(void) {
    gd_model_config c;
    CHECK_OK(gd_model_config_preset(&c, "tiny"));
    CHECK(gd_model_param_count(&c) < 1000000);
    CHECK_OK(gd_model_config_preset(&c, "small"));
    uint64_t small = gd_model_param_count(&c);
    CHECK(small > 8000000 && small < 12000000);
    CHECK_OK(gd_model_config_preset(&c, "base"));
    uint64_t base = gd_model_param_count(&c);
    CHECK(base > 115000000 && base < 130000000);
    fprintf(stderr, "    parameters: small %llu, base %llu\n", (unsigned long long)small,
            (unsigned long long)base);
    CHECK_STATUS(gd_model_config_preset(&c, "huge"), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "tiny, small, base") != NULL);
}

static void test_hf_config(void) {
    /* The keys of a Hugging Face LlamaConfig (TinyLlama-1.1B's shape). */
    const char *hf = "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\","
                     " \"hidden_act\": \"silu\", \"hidden_size\": 2048,"
                     " \"intermediate_size\": 5632, \"num_hidden_layers\": 22,"
                     " \"num_attention_heads\": 32, \"num_key_value_heads\": 4,"
                     " \"vocab_size\": 32000, \"max_position_embeddings\": 2048,"
                     " \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0,"
                     " \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
                     " \"rope_scaling\": null, \"bos_token_id\": 1}";
    gd_model_config c;
    CHECK_OK(gd_model_config_parse_json(&c, hf, strlen(hf)));
    CHECK(c.hidden_size == 2048 && c.num_key_value_heads == 4 && c.vocab_size == 32000);
    CHECK(!c.tie_word_embeddings && c.rms_norm_eps == 1e-5);
    CHECK(gd_model_param_count(&c) > 1000000000 && gd_model_param_count(&c) < 1200000000);

    /* Our own output reads back to the same config. */
    gd_model_config tiny, again;
    CHECK_OK(gd_model_config_preset(&tiny, "tiny"));
    char *text = gd_model_config_to_json(&tiny);
    CHECK(text != NULL);
    CHECK_OK(gd_model_config_parse_json(&again, text, strlen(text)));
    CHECK(memcmp(&tiny, &again, sizeof tiny) == 0);
    free(text);

    /* Defaults of LlamaConfig for omitted keys. */
    const char *minimal = "{\"hidden_size\": 64, \"intermediate_size\": 128,"
                          " \"num_hidden_layers\": 1, \"num_attention_heads\": 4,"
                          " \"vocab_size\": 100}";
    CHECK_OK(gd_model_config_parse_json(&c, minimal, strlen(minimal)));
    CHECK(c.num_key_value_heads == 4 && c.max_position_embeddings == 2048);
    CHECK(c.rms_norm_eps == 1e-6 && c.rope_theta == 10000 && !c.tie_word_embeddings);

    const char *bad[] = {
        "not json",
        "[1, 2]",
        "{\"hidden_size\": 64}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 5, \"vocab_size\": 100}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"num_key_value_heads\": 3, \"vocab_size\": 100}",
        "{\"hidden_size\": -64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100, \"hidden_act\": \"gelu\"}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100, \"rope_scaling\": {\"type\": 1}}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100, \"attention_bias\": true}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100, \"head_dim\": 32}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100, \"rms_norm_eps\": \"x\"}",
        "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 4, \"vocab_size\": 100, \"model_type\": \"gpt2\"}",
        "{\"hidden_size\": 6, \"intermediate_size\": 128, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 2, \"vocab_size\": 100}",
        "{\"hidden_size\": 64, \"hidden_size\": 32, \"intermediate_size\": 128,"
        " \"num_hidden_layers\": 1, \"num_attention_heads\": 4, \"vocab_size\": 100}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gd_status s = gd_model_config_parse_json(&c, bad[i], strlen(bad[i]));
        CHECK(s == GD_ERR_INVALID || s == GD_ERR_PARSE);
        CHECK(strlen(gd_error_detail()) > 10);
    }
}

static void test_layout(void) {
    gd_model_config c;
    CHECK_OK(gd_model_config_preset(&c, "tiny"));
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    CHECK(l.total == gd_model_param_count(&c));
    CHECK(l.n_tensors == 2 + 9 * c.num_hidden_layers);
    CHECK_STR_EQ(l.tensors[0].name, "model.embed_tokens.weight");
    CHECK_STR_EQ(l.tensors[1].name, "model.layers.0.input_layernorm.weight");
    CHECK_STR_EQ(l.tensors[5].name, "model.layers.0.self_attn.o_proj.weight");
    CHECK_STR_EQ(l.tensors[l.n_tensors - 1].name, "model.norm.weight");
    CHECK(l.lm_head == l.embed);
    size_t next = 0;
    for (size_t i = 0; i < l.n_tensors; i++) {
        CHECK(l.tensors[i].offset == next);
        next += l.tensors[i].numel;
        CHECK(l.tensors[i].decay == (l.tensors[i].ndim == 2));
    }
    const gd_param_tensor *k = gd_param_layout_find(&l, "model.layers.1.self_attn.k_proj.weight");
    CHECK(k && k->shape[0] == 2 * 16 && k->shape[1] == 64 && k->offset == l.layers[1].k);
    /* Non-finite parameters are found and named. */
    float *p = calloc(l.total, sizeof *p);
    CHECK_OK(gd_params_check_finite(&l, p));
    p[k->offset + 3] = NAN;
    p[l.total - 1] = INFINITY;
    CHECK_STATUS(gd_params_check_finite(&l, p), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "2 of its") &&
          strstr(gd_error_detail(), "model.layers.1.self_attn.k_proj.weight"));
    free(p);
    uint8_t tied_digest[32];
    memcpy(tied_digest, l.digest, 32);
    gd_param_layout_free(&l);

    c.tie_word_embeddings = false;
    CHECK_OK(gd_param_layout_build(&l, &c));
    CHECK_STR_EQ(l.tensors[l.n_tensors - 1].name, "lm_head.weight");
    CHECK(l.lm_head != l.embed && l.total == gd_model_param_count(&c));
    CHECK(memcmp(tied_digest, l.digest, 32) != 0);
    gd_param_layout_free(&l);
}

static void test_init(void) {
    gd_model_config c;
    CHECK_OK(gd_model_config_preset(&c, "tiny"));
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    float *a = malloc(l.total * sizeof(float)), *b = malloc(l.total * sizeof(float));
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 3));
    gd_params_init(NULL, a, &l, 7);
    gd_params_init(pool, b, &l, 7);
    CHECK(memcmp(a, b, l.total * sizeof(float)) == 0); /* thread count does not matter */
    gd_params_init(pool, b, &l, 8);
    CHECK(memcmp(a, b, l.total * sizeof(float)) != 0);
    /* Norm weights are 1; matrices have mean 0 and std initializer_range. */
    const gd_param_tensor *norm = gd_param_layout_find(&l, "model.norm.weight");
    CHECK(a[norm->offset] == 1.0f && a[norm->offset + 63] == 1.0f);
    const gd_param_tensor *e = gd_param_layout_find(&l, "model.embed_tokens.weight");
    double sum = 0, sq = 0;
    for (size_t i = 0; i < e->numel; i++) {
        sum += a[e->offset + i];
        sq += (double)a[e->offset + i] * a[e->offset + i];
    }
    double mean = sum / (double)e->numel, std = sqrt(sq / (double)e->numel - mean * mean);
    CHECK(fabs(mean) < 0.001 && fabs(std - 0.02) < 0.001);
    /* A published element: the draw is a pure function of (seed, tensor, index). */
    CHECK(a[e->offset + 5] == (float)(gd_params_init_draw(7, 0, 5) * 0.02));
    /* Made a window at a time (G_0 under a memory budget): windows that
     * start and end inside tensors, and one that spans a norm, give the
     * whole initialisation's values. */
    size_t windows[] = {1, 777, 65537, l.total};
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
        memset(b, 0xff, l.total * sizeof(float));
        for (size_t lo = 0; lo < l.total; lo += windows[k]) {
            size_t count = l.total - lo < windows[k] ? l.total - lo : windows[k];
            if (windows[k] == 1 && lo % 997 != 0) /* one value in 997: enough, and fast */
                memcpy(b + lo, a + lo, sizeof(float));
            else
                gd_params_init_range(pool, b + lo, &l, 7, lo, count);
        }
        CHECK(memcmp(a, b, l.total * sizeof(float)) == 0);
    }
    gd_pool_free(pool);
    free(a);
    free(b);
    gd_param_layout_free(&l);
}

static void test_schedule(void) {
    for (int i = 0; i <= 1000; i++) {
        double p = i / 1000.0;
        CHECK(fabs(gd_cos_pi(p) - cos(M_PI * p)) < 1e-15);
    }
    CHECK(gd_cos_pi(0) == 1 && gd_cos_pi(1) == -1 && gd_cos_pi(0.5) == gd_cos_pi(0.5));
    CHECK(fabs(gd_optim_bias_correction(0.9, 10) - (1 - pow(0.9, 10))) < 1e-15);
    CHECK(fabs(gd_optim_bias_correction(0.95, 12345) - (1 - pow(0.95, 12345))) < 1e-15);

    gd_optim_config o;
    gd_optim_config_default(&o);
    o.lr = 1e-3;
    o.min_lr = 1e-4;
    o.warmup_steps = 10;
    o.schedule_steps = 110;
    CHECK(fabs(gd_optim_lr_at(&o, 0) - 1e-4) < 1e-18);
    CHECK(fabs(gd_optim_lr_at(&o, 9) - 1e-3) < 1e-18);
    CHECK(fabs(gd_optim_lr_at(&o, 10) - 1e-3) < 1e-18);
    CHECK(fabs(gd_optim_lr_at(&o, 60) - 5.5e-4) < 1e-15); /* half way down */
    CHECK(gd_optim_lr_at(&o, 110) == 1e-4 && gd_optim_lr_at(&o, 5000) == 1e-4);
    for (uint64_t s = 10; s < 110; s++)
        CHECK(gd_optim_lr_at(&o, s + 1) <= gd_optim_lr_at(&o, s));
    CHECK_OK(gd_optim_config_validate(&o));
    o.min_lr = 2e-3;
    CHECK_STATUS(gd_optim_config_validate(&o), GD_ERR_INVALID);
}

/* Uniform random tokens below vocab, rows of seq_len + 1. */
static void random_tokens(int32_t *tokens, size_t count, uint32_t vocab, uint64_t seed) {
    gd_rng rng;
    uint32_t ids[4] = {1, 2, 3, 4};
    gd_rng_init(&rng, seed, ids);
    for (size_t i = 0; i < count; i++)
        tokens[i] = (int32_t)gd_rng_below(&rng, vocab);
}

/* The loss of an untrained model is ln(vocab) plus half the variance of
 * its logits: with tied embeddings of std 0.02 and unit-RMS final hidden
 * states of dimension 64 the logits have std 0.02 * 8 = 0.16, so the
 * excess is about 0.013 nats; 0.05 leaves room for sampling noise. */
static void test_initial_loss(void) {
    gd_model_config c;
    CHECK_OK(gd_model_config_preset(&c, "tiny"));
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    float *params = malloc(l.total * sizeof(float));
    gd_params_init(NULL, params, &l, 1);
    size_t B = 4, T = 64;
    int32_t *tokens = malloc(B * (T + 1) * sizeof *tokens);
    random_tokens(tokens, B * (T + 1), c.vocab_size, 99);
    gd_model_f32 *m = NULL;
    CHECK_OK(gd_model_new_f32(&m, &l, B, T, NULL, NULL));
    double sum = 0;
    CHECK_OK(gd_model_forward_f32(m, params, tokens, B, &sum));
    double loss = sum / (double)(B * T);
    fprintf(stderr, "    initial loss %.4f, ln(256) = %.4f\n", loss, log(256.0));
    CHECK(fabs(loss - log(256.0)) < 0.05);
    /* A token outside the vocabulary is refused, not read out of bounds. */
    tokens[7] = 256;
    CHECK_STATUS(gd_model_forward_f32(m, params, tokens, B, &sum), GD_ERR_INVALID);
    tokens[7] = -1;
    CHECK_STATUS(gd_model_forward_f32(m, params, tokens, B, &sum), GD_ERR_INVALID);
    CHECK_STATUS(gd_model_forward_f32(m, params, tokens, B + 1, &sum), GD_ERR_INVALID);
    gd_model_free_f32(m);
    free(tokens);
    free(params);
    gd_param_layout_free(&l);
}

/* A model small enough to difference every parameter it has. */
static gd_model_config small_check_config(bool tied) {
    return (gd_model_config){.vocab_size = 11, .hidden_size = 8, .intermediate_size = 12,
                             .num_hidden_layers = 2, .num_attention_heads = 4,
                             .num_key_value_heads = 2, .max_position_embeddings = 16,
                             .rms_norm_eps = 1e-5, .rope_theta = 10000,
                             .tie_word_embeddings = tied, .initializer_range = 0.3};
}

/* The whole model's gradient against finite differences of its loss, in
 * double precision, for every parameter. The five-point stencil
 * (f(x-2h) - 8 f(x-h) + 8 f(x+h) - f(x+2h)) / 12h has truncation error of
 * order h^4; with h = 1e-3 that is ~1e-12, and the rounding error of a loss
 * sum of ~25 is ~1e-15 * 25 / 1e-3 = 3e-11. So a relative error above 1e-7
 * (against gradients of order 1e-3 and up) means a wrong gradient, not
 * noise. Norm weights get random values so their gradients are not
 * degenerate. */
static void check_model_gradient(bool tied, const gd_model_settings *settings) {
    gd_model_config c = small_check_config(tied);
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    size_t B = 2, T = 5, n = l.total;
    double *params = malloc(n * sizeof(double)), *grads = calloc(n, sizeof(double));
    gd_rng rng;
    uint32_t ids[4] = {9, 9, 9, 9};
    gd_rng_init(&rng, 5, ids);
    for (size_t i = 0; i < n; i++)
        params[i] = gd_rng_normal12(&rng) * 0.3;
    int32_t tokens[2 * 6];
    random_tokens(tokens, B * (T + 1), c.vocab_size, 17);
    gd_model_f64 *m = NULL;
    CHECK_OK(gd_model_new_f64(&m, &l, B, T, settings, NULL));
    double loss = 0;
    CHECK_OK(gd_model_forward_f64(m, params, tokens, B, &loss));
    gd_model_backward_f64(m, params, grads, 1.0);
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < n; i++) {
        double saved = params[i], h = 1e-3, f[4];
        const double at[4] = {-2, -1, 1, 2};
        for (int k = 0; k < 4; k++) {
            params[i] = saved + at[k] * h;
            CHECK_OK(gd_model_forward_f64(m, params, tokens, B, &f[k]));
        }
        params[i] = saved;
        double numeric = (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h);
        double err = fabs(numeric - grads[i]) / fmax(1e-3, fabs(numeric) + fabs(grads[i]));
        if (err > worst) {
            worst = err;
            worst_i = i;
        }
    }
    fprintf(stderr, "    %s%s: %zu parameters, worst relative error %.2e (parameter %zu)\n",
            tied ? "tied" : "untied",
            settings && settings->attention == GD_ATTENTION_FLASH ? ", flash" : "", n, worst,
            worst_i);
    CHECK(worst < 1e-7);
    gd_model_free_f64(m);
    free(params);
    free(grads);
    gd_param_layout_free(&l);
}

static void test_model_gradient(void) {
    gd_model_settings flash = {.attention = GD_ATTENTION_FLASH};
    check_model_gradient(true, NULL);
    check_model_gradient(false, NULL);
    check_model_gradient(true, &flash);
    check_model_gradient(false, &flash);
}

/* The flash path (flash attention, the cross-entropy over chunks of 1,024
 * rows, its backward recomputing each chunk's logits) against the naive
 * one in double: the same loss and gradient to rounding, over 1,280 rows
 * (two chunks, the second partial), recomputing or not. */
static void test_flash_path_matches_naive(void) {
    gd_model_config c = small_check_config(false);
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    size_t B = 80, T = 16, n = l.total;
    double *params = malloc(n * sizeof(double));
    double *g_naive = calloc(n, sizeof(double)), *g_flash = calloc(n, sizeof(double));
    gd_rng rng;
    uint32_t ids[4] = {3, 1, 4, 1};
    gd_rng_init(&rng, 5, ids);
    for (size_t i = 0; i < n; i++)
        params[i] = gd_rng_normal12(&rng) * 0.3;
    int32_t *tokens = malloc(B * (T + 1) * sizeof *tokens);
    random_tokens(tokens, B * (T + 1), c.vocab_size, 23);
    for (int recompute = 0; recompute < 2; recompute++) {
        gd_model_settings naive = {recompute ? GD_RECOMPUTE_FULL : GD_RECOMPUTE_NONE,
                                   GD_ATTENTION_NAIVE};
        gd_model_settings flash = {naive.recompute, GD_ATTENTION_FLASH};
        gd_model_f64 *a = NULL, *b = NULL;
        CHECK_OK(gd_model_new_f64(&a, &l, B, T, &naive, NULL));
        CHECK_OK(gd_model_new_f64(&b, &l, B, T, &flash, NULL));
        double la = 0, lb = 0;
        CHECK_OK(gd_model_forward_f64(a, params, tokens, B, &la));
        CHECK_OK(gd_model_forward_f64(b, params, tokens, B, &lb));
        memset(g_naive, 0, n * sizeof(double));
        memset(g_flash, 0, n * sizeof(double));
        gd_model_backward_f64(a, params, g_naive, 1.0 / (double)(B * T));
        gd_model_backward_f64(b, params, g_flash, 1.0 / (double)(B * T));
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            double err = fabs(g_flash[i] - g_naive[i]) / fmax(1e-6, fabs(g_naive[i]));
            worst = err > worst ? err : worst;
        }
        fprintf(stderr, "    recompute %d: loss %.15g and %.15g, worst gradient error %.2e\n",
                recompute, la, lb, worst);
        CHECK(fabs(la - lb) < 1e-12 * fabs(la));
        CHECK(worst < 1e-9);
        gd_model_free_f64(a);
        gd_model_free_f64(b);
    }
    free(tokens);
    free(params);
    free(g_naive);
    free(g_flash);
    gd_param_layout_free(&l);
}

/* The check model widened to rows of 32: too wide to difference, wide
 * enough for sums of some length. */
static gd_model_config wide_check_config(bool tied) {
    gd_model_config c = small_check_config(tied);
    c.vocab_size = 40;
    c.hidden_size = 32;
    c.intermediate_size = 48;
    return c;
}

/* The float model follows the double one: same loss and gradient within
 * float rounding. */
static void test_float_matches_double(void) {
    gd_model_config c = wide_check_config(true);
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    size_t B = 3, T = 9, n = l.total;
    float *pf = malloc(n * sizeof(float)), *gf = calloc(n, sizeof(float));
    double *pd = malloc(n * sizeof(double)), *grad_d = calloc(n, sizeof(double));
    gd_params_init(NULL, pf, &l, 3);
    for (size_t i = 0; i < n; i++)
        pd[i] = pf[i];
    int32_t tokens[3 * 10];
    random_tokens(tokens, B * (T + 1), c.vocab_size, 5);
    gd_model_f32 *mf = NULL;
    gd_model_f64 *md = NULL;
    CHECK_OK(gd_model_new_f32(&mf, &l, B, T, NULL, NULL));
    CHECK_OK(gd_model_new_f64(&md, &l, B, T, NULL, NULL));
    double lf = 0, ld = 0;
    CHECK_OK(gd_model_forward_f32(mf, pf, tokens, B, &lf));
    CHECK_OK(gd_model_forward_f64(md, pd, tokens, B, &ld));
    CHECK(fabs(lf - ld) < 1e-5 * fabs(ld));
    gd_model_backward_f32(mf, pf, gf, 1.0 / (double)(B * T));
    gd_model_backward_f64(md, pd, grad_d, 1.0 / (double)(B * T));
    double diff = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        diff += (gf[i] - grad_d[i]) * (gf[i] - grad_d[i]);
        norm += grad_d[i] * grad_d[i];
    }
    CHECK(sqrt(diff / norm) < 1e-4);
    gd_model_free_f32(mf);
    gd_model_free_f64(md);
    free(pf);
    free(gf);
    free(pd);
    free(grad_d);
    gd_param_layout_free(&l);
}

/* The bf16 model (trainer/settings.h): its ops read the weights as bf16,
 * so parameters that round to the same bf16 values give the same loss and
 * gradient bits, where the fp32 model tells them apart; and it stays close
 * to the fp32 model (eight bits of mantissa at every store, with few terms
 * in each sum at this width to average the rounding out). Tied and untied,
 * naive and flash. */
static void test_bf16_model(void) {
    for (int variant = 0; variant < 4; variant++) {
        gd_model_config c = wide_check_config(variant % 2 == 0);
        gd_param_layout l;
        CHECK_OK(gd_param_layout_build(&l, &c));
        size_t B = 3, T = 9, n = l.total;
        float *p = malloc(n * sizeof(float)), *q = malloc(n * sizeof(float));
        float *g[3] = {calloc(n, sizeof(float)), calloc(n, sizeof(float)),
                       calloc(n, sizeof(float))};
        gd_params_init(NULL, p, &l, 3);
        /* p exactly bf16; q = p moved by 2^-12 of itself, well inside
         * half a bf16 ulp (at least 2^-9 of the value). */
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &p[i], sizeof u);
            u &= 0xffff0000u;
            memcpy(&p[i], &u, sizeof u);
            q[i] = p[i] + p[i] * 0x1p-12f;
        }
        int32_t tokens[3 * 10];
        random_tokens(tokens, B * (T + 1), c.vocab_size, 5);
        gd_model_settings fp32 = {.attention = variant / 2 ? GD_ATTENTION_FLASH
                                                           : GD_ATTENTION_NAIVE};
        gd_model_settings bf16 = fp32;
        bf16.precision = GD_PRECISION_BF16;
        gd_model_f32 *m32 = NULL, *m16 = NULL;
        CHECK_OK(gd_model_new_f32(&m32, &l, B, T, &fp32, NULL));
        CHECK_OK(gd_model_new_f32(&m16, &l, B, T, &bf16, NULL));
        double loss[4];
        double dloss = 1.0 / (double)(B * T);
        CHECK_OK(gd_model_forward_f32(m16, p, tokens, B, &loss[0]));
        gd_model_backward_f32(m16, p, g[0], dloss);
        CHECK_OK(gd_model_forward_f32(m16, q, tokens, B, &loss[1]));
        gd_model_backward_f32(m16, q, g[1], dloss);
        CHECK(loss[0] == loss[1]);
        CHECK(memcmp(g[0], g[1], n * sizeof(float)) == 0);
        CHECK_OK(gd_model_forward_f32(m32, q, tokens, B, &loss[3]));
        CHECK_OK(gd_model_forward_f32(m32, p, tokens, B, &loss[2]));
        gd_model_backward_f32(m32, p, g[2], dloss);
        CHECK(loss[2] != loss[3]);
        CHECK(loss[0] != loss[2]);
        double diff = 0, norm = 0;
        for (size_t i = 0; i < n; i++) {
            diff += ((double)g[0][i] - g[2][i]) * ((double)g[0][i] - g[2][i]);
            norm += (double)g[2][i] * g[2][i];
        }
        fprintf(stderr, "    %s, %s: bf16 loss off fp32's by %.2e, gradient by %.2e\n",
                c.tie_word_embeddings ? "tied" : "untied", variant / 2 ? "flash" : "naive",
                fabs(loss[0] - loss[2]) / loss[2], sqrt(diff / norm));
        CHECK(fabs(loss[0] - loss[2]) < 1e-2 * loss[2]);
        CHECK(sqrt(diff / norm) < 1e-1); /* measured 3.5e-2 to 3.9e-2; a wrong op is ~1 */
        gd_model_free_f32(m32);
        gd_model_free_f32(m16);
        for (int i = 0; i < 3; i++)
            free(g[i]);
        free(p);
        free(q);
        gd_param_layout_free(&l);
    }
}

int main(void) {
    RUN_TEST(test_presets);
    RUN_TEST(test_hf_config);
    RUN_TEST(test_layout);
    RUN_TEST(test_init);
    RUN_TEST(test_schedule);
    RUN_TEST(test_initial_loss);
    RUN_TEST(test_model_gradient);
    RUN_TEST(test_flash_path_matches_naive);
    RUN_TEST(test_float_matches_double);
    RUN_TEST(test_bf16_model);
    return gd_test_finish();
}
