/* The training loop: it learns a Markov source beyond its best lower-order
 * approximation; its bits do not depend on the thread count; a checkpoint
 * resumes bit-exactly; checkpoints are validated on load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/backend_registry.h"
#include "tests/support/testkit.h"
#include "trainer/checkpoint.h"
#include "trainer/data.h"
#include "trainer/model.h"
#include "trainer/safetensors.h"
#include "trainer/train.h"

static gd_train_options small_options(size_t steps) {
    gd_train_options o;
    gd_train_options_default(&o);
    o.batch = 4;
    o.micro_batch = 2;
    o.seq_len = 32;
    o.seed = 11;
    o.optim.lr = 3e-3;
    o.optim.min_lr = 3e-4;
    o.optim.warmup_steps = 2;
    o.optim.schedule_steps = steps;
    return o;
}

static gd_model_config tiny(void) {
    gd_model_config c;
    if (gd_model_config_preset(&c, "tiny") != GD_OK)
        abort();
    return c;
}

static const char *path_in_tmp(const char *name) {
    static char paths[8][700];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", gd_test_tmpdir(), name);
    return p;
}

/* The tiny model learns the default Markov source (alphabet 16, order 2)
 * past its best order-1 approximation: its loss falls below H_1, which a
 * model of bigram statistics cannot do. The run takes seconds. */
static void test_learns_markov(void) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:1"));
    double h[4];
    CHECK(gd_data_markov_entropies(data, h, 4) == 3);
    size_t steps = 300;
    gd_train_options o = small_options(steps);
    o.batch = 8;
    o.micro_batch = 8;
    o.seq_len = 64;
    o.optim.lr = 1e-2;
    o.optim.min_lr = 1e-3;
    o.optim.warmup_steps = 10;
    gd_model_config c = tiny();
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 2));
    gd_step_stats st = {0};
    double first = 0;
    for (size_t i = 0; i < steps; i++) {
        CHECK_OK(gd_trainer_step(t, data, &st));
        if (i == 0)
            first = st.loss;
    }
    double eval = 0;
    uint64_t tokens = 0;
    CHECK_OK(gd_trainer_evaluate(t, data, 8, 8, 64, 8, &eval, &tokens, NULL, NULL));
    fprintf(stderr, "    loss %.4f -> %.4f (train), eval %.4f over %llu tokens; H0 %.4f, H1 "
                    "%.4f, H2 %.4f\n",
            first, st.loss, eval, (unsigned long long)tokens, h[0], h[1], h[2]);
    CHECK(fabs(first - log(256.0)) < 0.1);
    CHECK(tokens == 8 * 8 * 64);
    CHECK(eval < h[1]);
    CHECK(eval > h[2] - 0.02); /* no model beats the entropy rate */
    gd_trainer_free(t);
    gd_data_close(data);
}

/* Runs `steps` steps with the given thread count; returns the losses. */
static gd_trainer *run_steps(int threads, size_t steps, double *losses) {
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:3"));
    gd_train_options o = small_options(steps);
    gd_model_config c = tiny();
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, threads));
    for (size_t i = 0; i < steps; i++) {
        gd_step_stats st;
        CHECK_OK(gd_trainer_step(t, data, &st));
        losses[i] = st.loss;
    }
    gd_data_close(data);
    return t;
}

/* The trainer's parameters, copied to the host (the caller frees them). */
static float *params_of(const gd_trainer *t) {
    size_t n = gd_trainer_layout(t)->total;
    float *p = malloc(n * sizeof(float));
    CHECK(p != NULL);
    gd_trainer_get_state(t, p, NULL, NULL, NULL);
    return p;
}

/* A backend handle without host threads (what the command line opens)
 * runs its CPU ops on the trainer's threads, not on one. */
static void test_backend_handle_borrows_threads(void) {
    gd_backend cpu;
    CHECK_OK(gd_backend_open(&cpu, "cpu", NULL));
    gd_train_options o = small_options(4);
    gd_model_config c = tiny();
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new_on(&t, &c, &o, 2, &cpu));
    CHECK(t != NULL && gd_trainer_backend(t)->pool == gd_trainer_pool(t));
    CHECK(t != NULL && gd_trainer_pool(t) != NULL);
    gd_trainer_free(t);
    gd_backend_close(&cpu);
}

static bool same_state(gd_trainer *a, gd_trainer *b) {
    size_t n = gd_trainer_layout(a)->total;
    float *sa = malloc(3 * n * sizeof(float)), *sb = malloc(3 * n * sizeof(float));
    CHECK(sa != NULL && sb != NULL);
    gd_trainer_get_state(a, sa, sa + n, sa + 2 * n, NULL);
    gd_trainer_get_state(b, sb, sb + n, sb + 2 * n, NULL);
    bool same = gd_trainer_step_count(a) == gd_trainer_step_count(b) &&
                memcmp(sa, sb, 3 * n * sizeof(float)) == 0;
    free(sa);
    free(sb);
    return same;
}

static void test_thread_count_does_not_matter(void) {
    double l1[4], l2[4], l3[4];
    gd_trainer *t1 = run_steps(1, 4, l1), *t2 = run_steps(2, 4, l2), *t3 = run_steps(3, 4, l3);
    CHECK(memcmp(l1, l2, sizeof l1) == 0 && memcmp(l1, l3, sizeof l1) == 0);
    CHECK(same_state(t1, t2));
    CHECK(same_state(t1, t3));
    gd_trainer_free(t1);
    gd_trainer_free(t2);
    gd_trainer_free(t3);
}

/* Six steps straight equal three steps, a save, a resume and three more. */
static void test_resume_is_exact(void) {
    double straight[6];
    gd_trainer *a = run_steps(2, 6, straight);

    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:3"));
    gd_train_options o = small_options(6);
    gd_model_config c = tiny();
    gd_trainer *b = NULL;
    CHECK_OK(gd_trainer_new(&b, &c, &o, 1));
    for (int i = 0; i < 3; i++)
        CHECK_OK(gd_trainer_step(b, data, NULL));
    const char *ckpt = path_in_tmp("resume.safetensors");
    CHECK_OK(gd_trainer_save(b, ckpt, "synthetic:markov:3"));
    gd_trainer_free(b);

    gd_trainer *r = NULL;
    CHECK_OK(gd_trainer_resume(&r, ckpt, 3));
    CHECK(gd_trainer_step_count(r) == 3);
    CHECK(memcmp(gd_trainer_options(r), &o, sizeof o) == 0);
    for (int i = 3; i < 6; i++) {
        gd_step_stats st;
        CHECK_OK(gd_trainer_step(r, data, &st));
        CHECK(st.loss == straight[i]);
    }
    CHECK(same_state(a, r));
    gd_trainer_free(a);
    gd_trainer_free(r);
    gd_data_close(data);
}

/* The model file is a Hugging Face-style safetensors file. */
static void test_checkpoint_format(void) {
    gd_model_config c = tiny();
    gd_train_options o = small_options(10);
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 1));
    const char *ckpt = path_in_tmp("format.safetensors");
    CHECK_OK(gd_trainer_save(t, ckpt, "synthetic:markov:1"));
    gd_safetensors st;
    CHECK_OK(gd_safetensors_open(&st, ckpt));
    const gd_param_layout *l = gd_trainer_layout(t);
    CHECK(st.n_tensors == l->n_tensors); /* tied: no lm_head.weight */
    CHECK(gd_safetensors_find(&st, "lm_head.weight") == NULL);
    const gd_st_tensor *q = gd_safetensors_find(&st, "model.layers.1.self_attn.q_proj.weight");
    CHECK(q && q->dtype == GD_ST_F32 && q->ndim == 2 && q->shape[0] == 64 && q->shape[1] == 64);
    float *mine = params_of(t);
    CHECK(q && memcmp(q->data, mine + l->layers[1].q, 64 * 64 * 4) == 0);
    CHECK_STR_EQ(gd_safetensors_meta(&st, "format"), "pt");
    const char *config = gd_safetensors_meta(&st, "config");
    CHECK(config && strstr(config, "\"LlamaForCausalLM\"") && strstr(config, "\"hidden_size\""));
    gd_safetensors_free(&st);

    gd_param_layout loaded;
    float *params = NULL;
    uint64_t step = 99;
    CHECK_OK(gd_checkpoint_load_model(ckpt, &loaded, &params, &step));
    CHECK(step == 0 && loaded.total == l->total);
    CHECK(memcmp(params, mine, l->total * sizeof(float)) == 0);
    free(params);
    free(mine);
    gd_param_layout_free(&loaded);

    char optim[700];
    CHECK_OK(gd_checkpoint_optim_path(optim, sizeof optim, ckpt));
    CHECK(strstr(optim, "format.optim.safetensors") != NULL);
    /* The options it was trained with read back without the moments: eval
     * takes its sequence length from them. */
    gd_train_options recorded;
    CHECK_OK(gd_checkpoint_train_options(&recorded, ckpt));
    CHECK(recorded.seq_len == 32 && recorded.batch == 4 && recorded.micro_batch == 2);
    CHECK(recorded.optim.schedule_steps == 10 && recorded.seed == 11);
    CHECK_STATUS(gd_checkpoint_train_options(&recorded, path_in_tmp("none.safetensors")),
                 GD_ERR_NOT_FOUND);
    gd_trainer_free(t);
}

/* Writes a model file whose tensors are those of the tiny layout, with
 * `mutate` applied to tensor index `which`. */
typedef enum { MUT_NONE, MUT_DROP, MUT_SHAPE, MUT_EXTRA, MUT_BF16, MUT_I32 } mutation;

static void write_variant(const char *path, const gd_param_layout *l, const float *params,
                          mutation mut, size_t which, const char *config_json) {
    gd_st_write_tensor *ts = calloc(l->n_tensors + 1, sizeof *ts);
    uint16_t *bf16 = NULL;
    size_t n = 0;
    for (size_t i = 0; i < l->n_tensors; i++) {
        const gd_param_tensor *p = &l->tensors[i];
        if (mut == MUT_DROP && i == which)
            continue;
        gd_st_write_tensor w = {.name = p->name, .dtype = GD_ST_F32, .ndim = p->ndim,
                                .shape = {p->shape[0], p->shape[1]}, .data = params + p->offset};
        if (mut == MUT_SHAPE && i == which)
            w.shape[0] = p->shape[0] / 2;
        if (mut == MUT_I32 && i == which)
            w.dtype = GD_ST_I32;
        if (mut == MUT_BF16 && i == which) {
            bf16 = malloc(p->numel * 2);
            for (size_t k = 0; k < p->numel; k++) {
                uint32_t bits;
                memcpy(&bits, params + p->offset + k, 4);
                bf16[k] = (uint16_t)(bits >> 16);
            }
            w.dtype = GD_ST_BF16;
            w.data = bf16;
        }
        ts[n++] = w;
    }
    if (mut == MUT_EXTRA)
        ts[n++] = (gd_st_write_tensor){.name = "model.layers.9.mystery", .dtype = GD_ST_F32,
                                       .ndim = 1, .shape = {1}, .data = params};
    gd_st_meta meta[] = {{"config", (char *)config_json}};
    CHECK_OK(gd_safetensors_write(path, ts, n, meta, config_json ? 1 : 0));
    free(ts);
    free(bf16);
}

static void test_checkpoint_rejects(void) {
    gd_model_config c = tiny();
    gd_param_layout l;
    CHECK_OK(gd_param_layout_build(&l, &c));
    float *params = calloc(l.total, sizeof(float));
    for (size_t i = 0; i < l.total; i++)
        params[i] = (float)(i % 97) * 0.01f;
    char *config = gd_model_config_to_json(&c);
    const char *p = path_in_tmp("variant.safetensors");
    gd_param_layout out;
    float *loaded = NULL;
    uint64_t step;

    write_variant(p, &l, params, MUT_BF16, 3, config);
    CHECK_OK(gd_checkpoint_load_model(p, &out, &loaded, &step));
    const gd_param_tensor *t3 = &l.tensors[3];
    bool close = true;
    for (size_t k = 0; k < t3->numel; k++)
        close = close && fabsf(loaded[t3->offset + k] - params[t3->offset + k]) <=
                             fabsf(params[t3->offset + k]) * 0.008f;
    CHECK(close);
    free(loaded);
    gd_param_layout_free(&out);

    const struct {
        mutation mut;
        const char *expect;
    } cases[] = {
        {MUT_DROP, "is missing"},
        {MUT_SHAPE, "wrong shape"},
        {MUT_EXTRA, "unexpected tensor"},
        {MUT_I32, "F32, F16 or BF16"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_variant(p, &l, params, cases[i].mut, 4, config);
        CHECK_STATUS(gd_checkpoint_load_model(p, &out, &loaded, &step), GD_ERR_PARSE);
        CHECK(strstr(gd_error_detail(), cases[i].expect) != NULL);
        CHECK(loaded == NULL);
    }
    /* No config anywhere. */
    write_variant(p, &l, params, MUT_NONE, 0, NULL);
    CHECK(gd_checkpoint_load_model(p, &out, &loaded, &step) != GD_OK);
    CHECK(strstr(gd_error_detail(), "config") != NULL);
    /* A config beside the file, Hugging Face style, is used. */
    char dir[700];
    snprintf(dir, sizeof dir, "%s/hf", gd_test_tmpdir());
    mkdir(dir, 0700);
    char model_path[760], config_path[760];
    snprintf(model_path, sizeof model_path, "%s/model.safetensors", dir);
    snprintf(config_path, sizeof config_path, "%s/config.json", dir);
    write_variant(model_path, &l, params, MUT_NONE, 0, NULL);
    FILE *f = fopen(config_path, "w");
    fputs(config, f);
    fclose(f);
    CHECK_OK(gd_checkpoint_load_model(model_path, &out, &loaded, &step));
    CHECK(loaded && memcmp(loaded, params, l.total * sizeof(float)) == 0);
    free(loaded);
    gd_param_layout_free(&out);
    /* Not a safetensors file at all. */
    const char *junk = gd_test_write_file("junk.safetensors", "hello", 5, 0644);
    CHECK(gd_checkpoint_load_model(junk, &out, &loaded, &step) != GD_OK);
    CHECK(gd_checkpoint_load_model(path_in_tmp("missing.safetensors"), &out, &loaded, &step) !=
          GD_OK);

    /* Resuming without the optimizer companion says what is missing. */
    gd_trainer *t = NULL;
    write_variant(p, &l, params, MUT_NONE, 0, config);
    CHECK(gd_trainer_resume(&t, p, 1) != GD_OK);
    CHECK(strstr(gd_error_detail(), "optimizer state") != NULL);
    free(config);
    free(params);
    gd_param_layout_free(&l);
}

/* A save interrupted between the two files is caught on resume. */
static void test_mismatched_optimizer_state(void) {
    gd_model_config c = tiny();
    gd_train_options o = small_options(5);
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:3"));
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 1));
    const char *p = path_in_tmp("torn.safetensors");
    CHECK_OK(gd_trainer_save(t, p, "x"));
    CHECK_OK(gd_trainer_step(t, data, NULL));
    const gd_param_layout *l = gd_trainer_layout(t);
    float *mine = params_of(t);
    CHECK_OK(gd_checkpoint_save_model(p, l, mine, 1)); /* model only */
    gd_trainer *r = NULL;
    CHECK_STATUS(gd_trainer_resume(&r, p, 1), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "interrupted") != NULL);
    /* The optimizer state of another model is refused. */
    gd_model_config other = c;
    other.tie_word_embeddings = false;
    gd_trainer *u = NULL;
    CHECK_OK(gd_trainer_new(&u, &other, &o, 1));
    const char *q = path_in_tmp("other.safetensors");
    CHECK_OK(gd_trainer_save(u, q, "x"));
    char from[700], to[700];
    CHECK_OK(gd_checkpoint_optim_path(from, sizeof from, q));
    CHECK_OK(gd_checkpoint_optim_path(to, sizeof to, p));
    CHECK(rename(from, to) == 0);
    CHECK_OK(gd_checkpoint_save_model(p, l, mine, 0));
    free(mine);
    CHECK_STATUS(gd_trainer_resume(&r, p, 1), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "different model layout") != NULL);
    gd_trainer_free(t);
    gd_trainer_free(u);
    gd_data_close(data);
}

/* Optimizer moments AdamW could never write (a non-finite value, a negative
 * second moment) are refused on resume as a corrupt file naming the tensor
 * and index, not left to surface later as a diverged step. */
static void test_corrupt_optimizer_moments(void) {
    gd_model_config c = tiny();
    gd_train_options o = small_options(5);
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, "synthetic:markov:3"));
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 1));
    CHECK_OK(gd_trainer_step(t, data, NULL));
    const gd_param_layout *l = gd_trainer_layout(t);
    size_t n = l->total, at = l->tensors[1].offset + 3;
    float *m = malloc(n * sizeof(float)), *v = malloc(n * sizeof(float));
    CHECK(m && v);
    gd_trainer_get_state(t, NULL, m, v, NULL);
    gd_optim_state state = {.step = 1, .options = *gd_trainer_options(t)};
    const char *p = path_in_tmp("moments.safetensors");
    CHECK_OK(gd_trainer_save(t, p, "x"));
    const float bad[] = {-1.0f, NAN, INFINITY};
    char want[64];
    snprintf(want, sizeof want, "at index %zu (in %s)", at, l->tensors[1].name);
    for (int k = 0; k < 3; k++) {
        float keep = v[at];
        v[at] = bad[k];
        CHECK_OK(gd_checkpoint_save_optim(p, l, m, v, &state));
        v[at] = keep;
        gd_trainer *r = NULL;
        CHECK_STATUS(gd_trainer_resume(&r, p, 1), GD_ERR_PARSE);
        CHECK(strstr(gd_error_detail(), "tensor adamw.exp_avg_sq holds") != NULL);
        CHECK(strstr(gd_error_detail(), want) != NULL);
        CHECK(strstr(gd_error_detail(), "corrupt") != NULL);
    }
    /* A first moment may be negative, never non-finite. */
    m[at] = -m[at] - 1.0f;
    CHECK_OK(gd_checkpoint_save_optim(p, l, m, v, &state));
    gd_trainer *r = NULL;
    CHECK_OK(gd_trainer_resume(&r, p, 1));
    gd_trainer_free(r);
    m[at] = NAN;
    CHECK_OK(gd_checkpoint_save_optim(p, l, m, v, &state));
    CHECK_STATUS(gd_trainer_resume(&r, p, 1), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "tensor adamw.exp_avg holds nan") != NULL);
    free(m);
    free(v);
    gd_trainer_free(t);
    gd_data_close(data);
}

/* Evaluation on a token shard scores exactly the documented windows. */
static void test_evaluate_shard_windows(void) {
    size_t count = 1000;
    uint32_t *tokens = malloc(count * sizeof *tokens);
    for (size_t i = 0; i < count; i++)
        tokens[i] = (uint32_t)((i * 37 + i / 7) % 256);
    const char *shard = path_in_tmp("eval.bin");
    CHECK_OK(gd_shard_write(shard, tokens, count, 2));
    gd_data *data = NULL;
    CHECK_OK(gd_data_open(&data, shard));
    gd_model_config c = tiny();
    gd_train_options o = small_options(1);
    gd_trainer *t = NULL;
    CHECK_OK(gd_trainer_new(&t, &c, &o, 2));
    double loss = 0;
    uint64_t scored = 0;
    size_t B = 3, T = 40;
    float *mine = params_of(t);
    CHECK_OK(gd_evaluate(gd_trainer_layout(t), mine, data, 2, B, T, 1, NULL, &loss, &scored));
    CHECK(scored == 2 * B * T);
    /* The same windows by hand: 999 / 40 = 24 windows at a stride of T;
     * floor(24 / golden ratio) = 14, and 14, 15, 16 share a factor with 24,
     * so eval window k = b*B + j starts at ((17 k) mod 24) * T. */
    gd_model_f32 *m = NULL;
    CHECK_OK(gd_model_new_f32(&m, gd_trainer_layout(t), 1, T, NULL, NULL));
    int32_t w[41];
    double sum = 0;
    for (size_t b = 0; b < 2; b++)
        for (size_t j = 0; j < B; j++) {
            for (size_t k = 0; k <= T; k++)
                w[k] = (int32_t)tokens[((b * B + j) * 17 % 24) * T + k];
            double part = 0;
            CHECK_OK(gd_model_forward_f32(m, mine, w, 1, &part));
            sum += part;
        }
    CHECK(fabs(sum / (double)(2 * B * T) - loss) < 1e-9);
    /* Asking for more batches than the data holds scores the whole batches
     * that fit: batch b needs (b + 1) * B of the 24 windows, so 8 of them. */
    CHECK_OK(gd_evaluate(gd_trainer_layout(t), mine, data, 100, B, T, 1, NULL, &loss, &scored));
    CHECK(scored == 8 * B * T);
    free(mine);
    gd_model_free_f32(m);
    gd_trainer_free(t);
    gd_data_close(data);
    free(tokens);
}

int main(void) {
    RUN_TEST(test_learns_markov);
    RUN_TEST(test_backend_handle_borrows_threads);
    RUN_TEST(test_thread_count_does_not_matter);
    RUN_TEST(test_resume_is_exact);
    RUN_TEST(test_checkpoint_format);
    RUN_TEST(test_checkpoint_rejects);
    RUN_TEST(test_mismatched_optimizer_state);
    RUN_TEST(test_corrupt_optimizer_moments);
    RUN_TEST(test_evaluate_shard_windows);
    return gd_test_finish();
}
