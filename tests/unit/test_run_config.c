/* The run configuration (plugin/member/run_config.h): the example spec becomes the
 * engine configuration field by field, its G_0 is the one it names, and a
 * spec the trainer cannot run (a layout that is not the model's, a model
 * named by a config digest without that config) is refused naming why. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/diloco_spec.h"
#include "plugin/member/run_config.h"
#include "tests/support/testkit.h"

static Gonka__Diloco__V1__RunSpec *example(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/../docs/examples/run-spec.json", gd_test_source_dir());
    json_error_t err;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    CHECK(j != NULL);
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, j));
    json_decref(j);
    return spec;
}

static void test_example_config(void) {
    Gonka__Diloco__V1__RunSpec *spec = example();
    gd_run_config rc;
    CHECK_OK(gd_run_config_from_spec(&rc, spec, 9, NULL));
    const gd_diloco_config *c = &rc.diloco;
    CHECK(c->run == 9 && c->inner_steps == 80 && c->segment_steps == 10);
    CHECK(c->inner.batch == 8 && c->inner.seq_len == 64 && c->inner.micro_batch == 8);
    CHECK(c->inner.seed == 1);
    /* each real number is the double nearest its decimal */
    CHECK(c->inner.optim.lr == 0.003 && c->inner.optim.min_lr == 0.0003);
    CHECK(c->inner.optim.beta1 == 0.9 && c->inner.optim.beta2 == 0.95);
    CHECK(c->inner.optim.eps == 1e-8 && c->inner.optim.weight_decay == 0.1);
    CHECK(c->inner.optim.grad_clip == 1.0);
    CHECK(c->inner.optim.warmup_steps == 10 && c->inner.optim.schedule_steps == 1000);
    CHECK(c->outer_lr == 0.7 && c->outer_momentum == 0.9 && c->clip_factor == 2.0);
    CHECK(c->codec.kind == GD_CODEC_INT8 && c->error_feedback && c->error_feedback_decay == 1.0);
    CHECK(c->chunk_elems == 1048576 && !c->overlap);
    CHECK_STR_EQ(rc.data_spec, "synthetic:markov:1");
    uint8_t digest[32];
    CHECK_OK(gd_diloco_spec_digest(digest, spec));
    CHECK(memcmp(digest, c->spec_digest, 32) == 0);
    /* the spec names the G_0 its model and seed give */
    uint8_t g0[32];
    CHECK_OK(gd_run_config_initial_state(&rc, g0, 1));
    CHECK(memcmp(g0, spec->initial_state_hash.data, 32) == 0);
    gd_diloco_spec_free(spec);
}

static void test_refusals(void) {
    Gonka__Diloco__V1__RunSpec *spec = example();
    gd_run_config rc;
    spec->layout_digest.data[5] ^= 1;
    CHECK_STATUS(gd_run_config_from_spec(&rc, spec, 1, NULL), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "layout_digest is not the layout") != NULL);
    spec->layout_digest.data[5] ^= 1;

    /* A model named by its config's digest needs that config. */
    gd_model_config model;
    CHECK_OK(gd_model_config_preset(&model, "tiny"));
    uint8_t d[32];
    gd_model_config_digest(&model, d);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    free(spec->model);
    spec->model = strdup(hex);
    CHECK_STATUS(gd_run_config_from_spec(&rc, spec, 1, NULL), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "pass the config file") != NULL);
    CHECK_OK(gd_run_config_from_spec(&rc, spec, 1, &model));
    gd_model_config other = model;
    other.rope_theta = 5e5;
    CHECK_STATUS(gd_run_config_from_spec(&rc, spec, 1, &other), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "not the one the spec names") != NULL);
    free(spec->model);
    spec->model = strdup("huge");
    CHECK_STATUS(gd_run_config_from_spec(&rc, spec, 1, NULL), GD_ERR_INVALID);
    free(spec->model);
    spec->model = strdup("tiny");

    /* What the trainer refuses beyond the chain's rules: a sequence longer
     * than the model's positions. */
    spec->seq_len = 1u << 20;
    spec->tokens_per_step = (uint64_t)spec->batch << 20;
    CHECK_STATUS(gd_run_config_from_spec(&rc, spec, 1, NULL), GD_ERR_INVALID);
    gd_diloco_spec_free(spec);
}

/* The fields that decide a step's bits beside the optimizer's (attention,
 * precision, moments): absent (the example) is the default and stays out
 * of the JSON written, so the spec's digest is what it was; the other
 * value reaches the trainer's options and changes the digest; another name
 * is refused by the chain's rules. */
static void test_run_settings_fields(void) {
    static const struct {
        const char *key, *value, *refusal;
    } fields[] = {
        {"attention", "flash", "attention 'tensor' is not naive or flash"},
        {"precision", "bf16", "precision 'tensor' is not fp32 or bf16"},
        {"moments", "bf16", "moments 'tensor' is not fp32 or bf16"},
    };
    Gonka__Diloco__V1__RunSpec *spec = example();
    gd_run_config rc;
    CHECK_OK(gd_run_config_from_spec(&rc, spec, 1, NULL));
    CHECK(rc.diloco.inner.attention == GD_ATTENTION_NAIVE);
    CHECK(rc.diloco.inner.precision == GD_PRECISION_FP32);
    CHECK(rc.diloco.inner.moments == GD_PRECISION_FP32);
    uint8_t plain[32], other[32];
    CHECK_OK(gd_diloco_spec_digest(plain, spec));
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        json_t *j = gd_diloco_spec_to_json(spec);
        CHECK(j != NULL && json_object_get(j, fields[i].key) == NULL);
        json_object_set_new(j, fields[i].key, json_string(fields[i].value));
        Gonka__Diloco__V1__RunSpec *with = NULL;
        CHECK_OK(gd_diloco_spec_from_json(&with, j));
        CHECK_OK(gd_run_config_from_spec(&rc, with, 1, NULL));
        const gd_train_options *o = &rc.diloco.inner;
        int set = (o->attention == GD_ATTENTION_FLASH) + (o->precision == GD_PRECISION_BF16) +
                  (o->moments == GD_PRECISION_BF16);
        CHECK(set == 1);
        CHECK(i != 0 || o->attention == GD_ATTENTION_FLASH);
        CHECK(i != 1 || o->precision == GD_PRECISION_BF16);
        CHECK(i != 2 || o->moments == GD_PRECISION_BF16);
        CHECK_OK(gd_diloco_spec_digest(other, with));
        CHECK(memcmp(plain, other, 32) != 0);
        json_t *back = gd_diloco_spec_to_json(with);
        const char *value = back ? json_string_value(json_object_get(back, fields[i].key)) : NULL;
        CHECK(value != NULL && strcmp(value, fields[i].value) == 0);
        json_decref(back);
        gd_diloco_spec_free(with);
        json_object_set_new(j, fields[i].key, json_string("tensor"));
        with = NULL;
        CHECK_STATUS(gd_diloco_spec_from_json(&with, j), GD_ERR_INVALID);
        CHECK(strstr(gd_error_detail(), fields[i].refusal) != NULL);
        json_decref(j);
    }
    gd_diloco_spec_free(spec);
}

/* The digest of a model config changes with every field. */
static void test_model_digest(void) {
    gd_model_config a;
    CHECK_OK(gd_model_config_preset(&a, "tiny"));
    uint8_t base[32], got[32];
    gd_model_config_digest(&a, base);
    gd_model_config b = a;
    b.vocab_size++;
    gd_model_config_digest(&b, got);
    CHECK(memcmp(base, got, 32) != 0);
    b = a;
    b.initializer_range *= 2;
    gd_model_config_digest(&b, got);
    CHECK(memcmp(base, got, 32) != 0);
    b = a;
    b.tie_word_embeddings = !b.tie_word_embeddings;
    gd_model_config_digest(&b, got);
    CHECK(memcmp(base, got, 32) != 0);
    b = a;
    gd_model_config_digest(&b, got);
    CHECK(memcmp(base, got, 32) == 0);
}

int main(void) {
    RUN_TEST(test_example_config);
    RUN_TEST(test_refusals);
    RUN_TEST(test_run_settings_fields);
    RUN_TEST(test_model_digest);
    return gd_test_finish();
}
