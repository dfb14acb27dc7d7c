/* The client side of the DiLoCo module (chain/wire/diloco_spec.h,
 * chain/wire/diloco_msg.h, chain/client/diloco_query.h): the RunSpec JSON and its
 * rules, every message builder's validation and bytes (each form of each
 * message, each refusal with its message), and the strict decoding and
 * JSON of query answers. The shared rules themselves (seals, draws) are
 * test_rules.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "chain/client/diloco_query.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_spec.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "proofs/mmr.h"
#include "tests/support/example_spec.h"
#include "tests/support/testkit.h"

#define ADDR_A "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc"
#define ADDR_B "gonka10ht9tyks4vh7p5p904t340cr9nvahy7uhvqtp8"

/* --- RunSpec JSON ----------------------------------------------------------------- */

static void test_spec_example(void) {
    Gonka__Diloco__V1__RunSpec *s = gd_test_example_spec();
    CHECK_STR_EQ(s->model, "tiny");
    CHECK(s->seed == 1 && s->h_min == 40 && s->h_max == 80 && s->segment_steps == 10);
    CHECK(s->tokens_per_step == 512 && s->outer_lr_ppm == 700000);
    CHECK(s->windows && s->windows->train == 30 && s->windows->attest == 6);
    CHECK(s->windows->dispute_open == 3 && s->windows->attest_open == 4);
    CHECK_STR_EQ(s->reward_per_epoch->amount, "1000000000");
    CHECK_STR_EQ(s->fail_bond->denom, "ngonka");
    CHECK(s->layout_digest.len == 32 && s->layout_digest.data[0] == 0xf5);
    CHECK_STR_EQ(s->inner_lr, "0.003");
    CHECK_STR_EQ(s->adam_eps, "0.00000001");
    CHECK(s->inner_warmup_steps == 10 && s->inner_schedule_steps == 1000);
    CHECK(s->batch == 8 && s->seq_len == 64 && s->micro_batch == 8);
    CHECK(s->error_feedback && !s->overlap && s->chunk_elems == 1048576);
    CHECK(s->n_hw_classes == 1 && strcmp(s->hw_classes[0], "cpu-x86") == 0);
    CHECK(s->min_class_members == 6 && s->avail_chunks == 4 && s->suspend_rounds == 4 &&
          s->max_members == 256 && s->attest_share_ppm == 50000);
    CHECK_STR_EQ(s->cheat_slash->amount, "1000000000");
    CHECK_STR_EQ(s->skip_slash->amount, "10000000");
    CHECK_STR_EQ(s->withhold_slash->amount, "500000000");
    CHECK_OK(gd_diloco_spec_check(s));
    gd_diloco_spec_free(s);
    gd_diloco_spec_free(NULL);

    /* The optional keys default; a uint64 above 2^53 as a string; a
     * tokens_per_step that follows a larger batch. */
    json_t *j = gd_test_example_spec_json();
    const char *optional[] = {"double_check_ppm",  "recheck_validators", "validator_share_ppm",
                              "checks_per_commit", "min_class_members",  "avail_chunks",
                              "suspend_rounds",    "max_members",        "attest_share_ppm"};
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        json_object_del(j, optional[i]);
    json_object_set_new(j, "seed", json_string("18446744073709551615"));
    json_object_set_new(j, "tokens_per_step", json_integer(4096));
    json_object_set_new(j, "batch", json_integer(64));
    CHECK_OK(gd_diloco_spec_from_json(&s, j));
    CHECK(s && s->double_check_ppm == 500000 && s->recheck_validators == 3 &&
          s->validator_share_ppm == 200000 && s->checks_per_commit == 4);
    CHECK(s && s->avail_chunks == 4 && s->suspend_rounds == 4 && s->max_members == 256 &&
          s->attest_share_ppm == 50000);
    /* The class minimum: the target, two validators, three re-checkers. */
    CHECK(s && s->min_class_members == 6 && gd_diloco_spec_class_min(s) == 6);
    CHECK(s && s->seed == UINT64_MAX && s->tokens_per_step == 4096);
    gd_diloco_spec_free(s);
    /* It follows the keys it depends on: one validator without double
     * checks, five re-checkers. */
    json_object_set_new(j, "double_check_ppm", json_integer(0));
    json_object_set_new(j, "recheck_validators", json_integer(5));
    CHECK_OK(gd_diloco_spec_from_json(&s, j));
    CHECK(s && s->min_class_members == 7 && gd_diloco_spec_class_min(s) == 7);
    gd_diloco_spec_free(s);
    json_decref(j);
}

/* One broken spec: key set to the JSON text value (NULL: key removed),
 * or in windows when sub. */
typedef struct spec_case {
    const char *key;
    const char *value;
    const char *detail;
    bool sub;
} spec_case;

static void test_spec_rules(void) {
    const spec_case cases[] = {
        {"colour", "\"red\"", "unknown key 'colour'", false},
        {"model", NULL, "model is missing", false},
        {"windows", NULL, "windows is missing", false},
        {"hw_classes", NULL, "hw_classes is missing", false},
        {"cheat_slash", NULL, "cheat_slash is missing", false},
        {"skip_slash", NULL, "skip_slash is missing", false},
        {"withhold_slash", NULL, "withhold_slash is missing", false},
        /* v1's proportional slashes say what replaced them. */
        {"slash_ppm", "100000", "slash_ppm is gone: slashes are fixed amounts now", false},
        {"skip_slash_ppm", "0", "skip_slash_ppm is gone", false},
        {"model", "\"\"", "model must be 1 to 256", false},
        {"model", "\"caf\\u00e9\"", "printable ASCII", false},
        {"model", "\"a\\u0000b\"", "model must be a string", false},
        {"data_spec", "7", "data_spec must be a string", false},
        {"layout_digest", "\"abcd\"", "layout_digest must be 64 hex", false},
        {"initial_state_hash",
         "\"zz00000000000000000000000000000000000000000000000000000000000000\"",
         "initial_state_hash must be 64 hex", false},
        {"seed", "-1", "seed must not be negative", false},
        {"seed", "1.5", "seed must be an integer", false},
        {"seed", "\"18446744073709551616\"", "seed '18446744073709551616'", false},
        {"seed", "\"+1\"", "not a non-negative integer", false},
        {"h_min", "4294967296", "larger than 4294967295", false},
        {"segment_steps", "0", "segment_steps must be at least 1", false},
        {"h_min", "45", "multiples of segment_steps", false},
        {"h_max", "30", "segment_steps <= h_min <= h_max", false},
        {"h_min", "5", "segment_steps <= h_min <= h_max", false},
        {"tokens_per_step", "0", "tokens_per_step must be at least 1", false},
        {"outer_lr_ppm", "0", "outer_lr_ppm must be 1 to 2000000", false},
        {"outer_lr_ppm", "2000001", "outer_lr_ppm must be 1 to 2000000", false},
        {"outer_momentum_ppm", "1000000", "outer_momentum_ppm must be below", false},
        {"codec", "\"int2\"", "codec 'int2'", false},
        {"codec", "\"topk:0\"", "codec 'topk:0'", false},
        {"codec", "\"topk:1.5\"", "codec", false},
        {"codec", "\"topk:0.0000001\"", "six decimals", false},
        {"codec", "\"topk:.3\"", "codec", false},
        {"codec", "\"topk:0.\"", "codec", false},
        {"codec", "\"topk:00.3\"", "codec", false},
        {"codec", "\"INT8\"", "codec", false},
        {"windows", "[1,2]", "windows must be an object", false},
        {"train", "0", "windows.train must be at least 1", true},
        {"attest", NULL, "windows.attest is missing", true},
        {"dispute_open", "0", "windows.dispute_open must be at least 1 block", true},
        {"attest_open", "0", "windows.attest_open must be at least 1 block", true},
        /* Their duties need what the window's first block fixes. */
        {"verify", "1", "windows.verify must be at least 2 blocks", true},
        {"dispute", "1", "windows.dispute must be at least 2 blocks", true},
        {"attest", "1", "windows.attest must be at least 2 blocks", true},
        {"dispute_open", NULL, "windows.dispute_open is missing", true},
        {"attest_open", NULL, "windows.attest_open is missing", true},
        {"pause", "1", "windows has an unknown key 'pause'", true},
        {"open", "99931", "add up to 100001 blocks", true},
        {"reward_per_epoch", "\"1000\"", "reward_per_epoch", false},
        {"reward_per_epoch", "\"0ngonka\"", "reward_per_epoch must be positive", false},
        {"min_collateral", "\"18446744073709551616ngonka\"", "does not fit in 64 bits", false},
        {"fail_bond", "\"10stake\"", "same denom (fail_bond is in stake)", false},
        {"fail_bond", "1000", "fail_bond must be a string", false},
        {"checks_per_commit", "0", "checks_per_commit must be 1 to 16", false},
        {"checks_per_commit", "17", "checks_per_commit must be 1 to 16", false},
        {"recheck_validators", "0", "recheck_validators 0 must be odd, 1 to 15", false},
        {"recheck_validators", "17", "recheck_validators 17 must be odd, 1 to 15", false},
        {"recheck_validators", "2", "recheck_validators 2 must be odd", false},
        {"recheck_validators", "16", "recheck_validators 16 must be odd", false},
        {"double_check_ppm", "1000001", "double_check_ppm must be at most", false},
        {"validator_share_ppm", "1000001", "validator_share_ppm must be at most", false},
        {"attest_share_ppm", "1000001", "attest_share_ppm must be at most", false},
        {"attest_share_ppm", "800001",
         "validator_share_ppm 200000 + attest_share_ppm 800001 must be at most 1000000", false},
        /* The hardware classes: 1 to 16 printable names, strictly ascending. */
        {"hw_classes", "[]", "hw_classes must list 1 to 16 classes, not 0", false},
        {"hw_classes",
         "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\","
         "\"n\",\"o\",\"p\",\"q\"]",
         "hw_classes must list 1 to 16 classes, not 17", false},
        {"hw_classes", "\"cpu-x86\"", "hw_classes must be an array of strings", false},
        {"hw_classes", "[\"a\", 7]", "hw_classes[1] must be a string", false},
        {"hw_classes", "[\"a\\u0000b\"]", "hw_classes[0] must be a string", false},
        {"hw_classes", "[\"\"]", "hw_classes[0] must be 1 to 128 bytes", false},
        {"hw_classes", "[\"cpu\", \"gpu\\tx\"]", "hw_classes[1] must be printable ASCII", false},
        {"hw_classes", "[\"gpu\", \"cpu\"]",
         "hw_classes must be strictly ascending (byte order, no repeats): 'cpu' comes after 'gpu'",
         false},
        {"hw_classes", "[\"cpu\", \"cpu\"]", "strictly ascending", false},
        {"hw_classes", "[\"cpu\", \"CPU\"]", "'CPU' comes after 'cpu'", false},
        /* Class size and membership. */
        {"min_class_members", "5",
         "min_class_members 5 must be at least 6 (the target, its two validators and 3 "
         "re-checkers)",
         false},
        {"min_class_members", "0", "min_class_members 0 must be at least 6", false},
        {"min_class_members", "257", "min_class_members 257 must be at most max_members 256",
         false},
        {"max_members", "5", "min_class_members 6 must be at most max_members 5", false},
        {"max_members", "0", "max_members 0 must be 1 to 1024", false},
        {"max_members", "1025", "max_members 1025 must be 1 to 1024", false},
        {"avail_chunks", "0", "avail_chunks must be 1 to 16", false},
        {"avail_chunks", "17", "avail_chunks must be 1 to 16", false},
        {"suspend_rounds", "0", "suspend_rounds must be 1 to 1000000", false},
        {"suspend_rounds", "1000001", "suspend_rounds must be 1 to 1000000", false},
        /* The fixed slashes: in the run's denom, a cheat loses at least an
         * epoch's reward and at most the collateral, a skip at most that. */
        {"cheat_slash", "\"0ngonka\"", "cheat_slash must be positive", false},
        {"cheat_slash", "\"1000000000stake\"", "same denom (cheat_slash is in stake)", false},
        {"cheat_slash", "\"1000\"", "cheat_slash", false},
        {"cheat_slash", "\"999999999ngonka\"",
         "cheat_slash 999999999 must be at least reward_per_epoch 1000000000", false},
        {"cheat_slash", "\"2000000001ngonka\"",
         "cheat_slash 2000000001 must be at most min_collateral 2000000000", false},
        {"min_collateral", "\"999999999ngonka\"",
         "cheat_slash 1000000000 must be at most min_collateral 999999999", false},
        {"skip_slash", "\"0ngonka\"", "skip_slash must be positive", false},
        {"skip_slash", "\"10000000stake\"", "same denom (skip_slash is in stake)", false},
        {"skip_slash", "\"1000000001ngonka\"",
         "skip_slash 1000000001 must be at most cheat_slash 1000000000", false},
        /* A withheld secret chooses the seed: priced apart, never below a skip. */
        {"withhold_slash", "\"0ngonka\"", "withhold_slash must be positive", false},
        {"withhold_slash", "\"500000000stake\"", "same denom (withhold_slash is in stake)",
         false},
        {"withhold_slash", "\"9999999ngonka\"",
         "withhold_slash 9999999 must be at least skip_slash 10000000", false},
        {"withhold_slash", "\"1000000001ngonka\"",
         "withhold_slash 1000000001 must be at most cheat_slash 1000000000", false},
        /* The inner optimizer: every key required, decimals quoted. */
        {"inner_lr", NULL, "inner_lr is missing", false},
        {"overlap", NULL, "overlap is missing", false},
        {"chunk_elems", NULL, "chunk_elems is missing", false},
        {"inner_lr", "0.003", "inner_lr must be a decimal in a JSON string", false},
        {"grad_clip", "1", "grad_clip must be a decimal in a JSON string", false},
        {"inner_lr", "\"3e-3\"", "inner_lr: '3e-3' is not a canonical decimal", false},
        {"inner_lr", "\".5\"", "not a canonical decimal", false},
        {"adam_beta1", "\"0.90\"", "adam_beta1: '0.90' is not a canonical decimal", false},
        {"adam_eps", "\"-1\"", "adam_eps: '-1' is not a canonical decimal", false},
        {"weight_decay", "\"\"", "weight_decay: '' is not a canonical decimal", false},
        {"clip_factor", "\"00.1\"", "clip_factor: '00.1'", false},
        {"inner_min_lr", "\"1.\"", "inner_min_lr: '1.'", false},
        {"inner_lr", "\"0\"", "inner_lr 0 must be in (0, 10)", false},
        {"inner_lr", "\"10\"", "inner_lr 10 must be in (0, 10)", false},
        {"inner_lr", "\"9.9999999999999\"", "at most 9.999999999999", false},
        {"inner_min_lr", "\"0.0031\"", "inner_min_lr 0.0031 must be at most inner_lr 0.003",
         false},
        {"adam_beta1", "\"1\"", "adam_beta1 1 must be in [0, 1)", false},
        {"adam_beta2", "\"0.999999999999999999\"", "adam_beta2", false},
        {"adam_eps", "\"0\"", "adam_eps 0 must be in (0, 1)", false},
        {"weight_decay", "\"1\"", "weight_decay 1 must be in [0, 1)", false},
        {"clip_factor", "\"0.5\"", "clip_factor 0.5 must be 0 (off) or in [1, 1000]", false},
        {"clip_factor", "\"1000.000000000000000001\"", "clip_factor", false},
        {"error_feedback_decay", "\"1.5\"", "error_feedback_decay 1.5 must be in [0, 1]", false},
        {"error_feedback", "1", "error_feedback must be true or false", false},
        {"overlap", "\"false\"", "overlap must be true or false", false},
        {"inner_schedule_steps", "0", "inner_schedule_steps must be at least 1", false},
        {"inner_warmup_steps", "1001", "inner_warmup_steps 1001 must be at most "
                                       "inner_schedule_steps 1000", false},
        {"batch", "0", "batch 0 must be 1 to 1048576", false},
        {"seq_len", "1048577", "seq_len 1048577 must be 1 to 1048576", false},
        {"micro_batch", "3", "micro_batch 3 must divide batch 8", false},
        {"micro_batch", "0", "micro_batch 0 must divide batch 8", false},
        {"micro_batch", "16", "micro_batch 16 must divide batch 8", false},
        {"tokens_per_step", "\"513\"", "tokens_per_step 513 must equal batch x seq_len = 8 x "
                                        "64 = 512", false},
        {"seq_len", "128", "tokens_per_step 512 must equal batch x seq_len", false},
        {"chunk_elems", "0", "chunk_elems 0 must be 1 to 2^28", false},
        {"chunk_elems", "268435457", "chunk_elems 268435457 must be 1 to 2^28", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = gd_test_example_spec_json();
        json_t *target = cases[i].sub ? json_object_get(j, "windows") : j;
        if (cases[i].value == NULL)
            json_object_del(target, cases[i].key);
        else
            json_object_set_new(target, cases[i].key,
                                json_loads(cases[i].value, JSON_DECODE_ANY | JSON_ALLOW_NUL,
                                           NULL));
        Gonka__Diloco__V1__RunSpec *s = (void *)1;
        gd_status st = gd_diloco_spec_from_json(&s, j);
        bool ok = st == GD_ERR_INVALID && s == NULL &&
                  strstr(gd_error_detail(), cases[i].detail) != NULL;
        if (!ok)
            fprintf(stderr, "spec case %zu (%s): status %d, '%s'\n", i, cases[i].key, (int)st,
                    gd_error_detail());
        CHECK(ok);
        json_decref(j);
    }
    Gonka__Diloco__V1__RunSpec *s = NULL;
    json_t *arr = json_array();
    CHECK_STATUS(gd_diloco_spec_from_json(&s, arr), GD_ERR_INVALID);
    json_decref(arr);
    CHECK_STATUS(gd_diloco_spec_check(NULL), GD_ERR_INVALID);

    /* The edges the chain takes. */
    const char *edges[][2] = {
        {"inner_lr", "9.999999999999"},   {"inner_min_lr", "0"},
        {"inner_min_lr", "0.003"},        {"adam_beta1", "0"},
        {"adam_beta2", "0.999999999999"}, {"adam_eps", "0.000000000000000001"},
        {"weight_decay", "0"},            {"grad_clip", "0"},
        {"grad_clip", "999999999999.5"},  {"clip_factor", "0"},
        {"clip_factor", "1"},             {"clip_factor", "1000"},
        {"error_feedback_decay", "0"},    {"inner_warmup_steps", "1000"},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        json_t *j = gd_test_example_spec_json();
        json_object_set_new(j, edges[i][0], json_string(edges[i][1]));
        CHECK_OK(gd_diloco_spec_from_json(&s, j));
        gd_diloco_spec_free(s);
        json_decref(j);
    }
    /* And the incentive keys' edges, as JSON text. */
    const char *incentive_edges[][2] = {
        {"hw_classes", "[\"cpu-x86\", \"cpu-x86-64\", \"gpu-h100\"]"},
        {"hw_classes", "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\","
                       "\"k\",\"l\",\"m\",\"n\",\"o\",\"p\"]"},
        {"cheat_slash", "\"1000000000ngonka\""}, /* = reward_per_epoch */
        {"cheat_slash", "\"2000000000ngonka\""}, /* = min_collateral */
        {"skip_slash", "\"500000000ngonka\""},   /* = withhold_slash */
        {"skip_slash", "\"1ngonka\""},
        {"withhold_slash", "\"10000000ngonka\""},  /* = skip_slash */
        {"withhold_slash", "\"1000000000ngonka\""}, /* = cheat_slash */
        {"min_class_members", "256"},             /* = max_members */
        {"max_members", "1024"},
        {"max_members", "6"},                     /* = min_class_members */
        {"avail_chunks", "16"},
        {"avail_chunks", "1"},
        {"suspend_rounds", "1000000"},
        {"recheck_validators", "1"},
        {"attest_share_ppm", "800000"},           /* + validator_share_ppm = 1000000 */
        {"attest_share_ppm", "0"},
    };
    for (size_t i = 0; i < sizeof incentive_edges / sizeof incentive_edges[0]; i++) {
        json_t *j = gd_test_example_spec_json();
        json_object_set_new(j, incentive_edges[i][0],
                            json_loads(incentive_edges[i][1], JSON_DECODE_ANY, NULL));
        gd_status st = gd_diloco_spec_from_json(&s, j);
        if (st != GD_OK)
            fprintf(stderr, "edge %s = %s: '%s'\n", incentive_edges[i][0], incentive_edges[i][1],
                    gd_error_detail());
        CHECK(st == GD_OK);
        gd_diloco_spec_free(s);
        json_decref(j);
    }
    /* A class name is 1 to 128 bytes, as MsgJoinRun's hw_class. */
    char name[130];
    memset(name, 'c', sizeof name - 1);
    name[129] = '\0';
    json_t *named = gd_test_example_spec_json();
    json_object_set_new(named, "hw_classes", json_pack("[s]", name));
    CHECK_STATUS(gd_diloco_spec_from_json(&s, named), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "hw_classes[0] must be 1 to 128 bytes") != NULL);
    name[128] = '\0';
    json_object_set_new(named, "hw_classes", json_pack("[s]", name));
    CHECK_OK(gd_diloco_spec_from_json(&s, named));
    gd_diloco_spec_free(s);
    json_decref(named);
    /* Fifteen re-checkers need a class of 18 (two validators) or 17 (one). */
    json_t *many = gd_test_example_spec_json();
    json_object_set_new(many, "recheck_validators", json_integer(15));
    json_object_set_new(many, "min_class_members", json_integer(18));
    CHECK_OK(gd_diloco_spec_from_json(&s, many));
    gd_diloco_spec_free(s);
    json_object_set_new(many, "min_class_members", json_integer(17));
    CHECK_STATUS(gd_diloco_spec_from_json(&s, many), GD_ERR_INVALID);
    json_object_set_new(many, "double_check_ppm", json_integer(0));
    CHECK_OK(gd_diloco_spec_from_json(&s, many));
    gd_diloco_spec_free(s);
    json_decref(many);
    /* batch x seq_len at its 2^32 limit; one more sequence is too many. */
    json_t *big = gd_test_example_spec_json();
    json_object_set_new(big, "batch", json_integer(4096));
    json_object_set_new(big, "seq_len", json_integer(1 << 20));
    json_object_set_new(big, "tokens_per_step", json_string("4294967296"));
    CHECK_OK(gd_diloco_spec_from_json(&s, big));
    gd_diloco_spec_free(s);
    json_object_set_new(big, "batch", json_integer(4104));
    CHECK_STATUS(gd_diloco_spec_from_json(&s, big), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "more than 2^32") != NULL);
    json_decref(big);

    /* Codecs the chain takes. */
    const char *good[] = {"none", "bf16", "int8", "int4", "topk:1", "topk:1.0", "topk:0.3",
                          "topk:0.000001", "topk:1.000000"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        json_t *j = gd_test_example_spec_json();
        json_object_set_new(j, "codec", json_string(good[i]));
        CHECK_OK(gd_diloco_spec_from_json(&s, j));
        gd_diloco_spec_free(s);
        json_decref(j);
    }
}

static size_t pack_spec(const Gonka__Diloco__V1__RunSpec *s, uint8_t *buf, size_t cap) {
    size_t n = gonka__diloco__v1__run_spec__get_packed_size(s);
    CHECK(n <= cap);
    return n <= cap ? gonka__diloco__v1__run_spec__pack(s, buf) : 0;
}

static void test_spec_roundtrip(void) {
    Gonka__Diloco__V1__RunSpec *a = gd_test_example_spec();
    json_t *ja = gd_diloco_spec_to_json(a);
    CHECK(ja != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(ja, "seed")), "1");
    CHECK_STR_EQ(json_string_value(json_object_get(ja, "fail_bond")), "10000000ngonka");
    CHECK(json_integer_value(json_object_get(json_object_get(ja, "windows"), "verify")) == 8);
    json_t *file = gd_test_example_spec_json();
    CHECK(json_equal(ja, file)); /* the example is written in the canonical shape */
    json_decref(file);
    Gonka__Diloco__V1__RunSpec *b = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&b, ja));
    uint8_t pa[1024], pb[1024];
    size_t na = pack_spec(a, pa, sizeof pa), nb = b ? pack_spec(b, pb, sizeof pb) : 0;
    CHECK(na > 0 && na == nb && memcmp(pa, pb, na) == 0);
    json_t *jb = b ? gd_diloco_spec_to_json(b) : NULL;
    CHECK(jb && json_equal(ja, jb));

    /* An unpacked spec is checked and exported the same, and freed by the
     * same call (both use the default allocator). */
    Gonka__Diloco__V1__RunSpec *u = gonka__diloco__v1__run_spec__unpack(NULL, na, pa);
    CHECK(u != NULL);
    CHECK_OK(gd_diloco_spec_check(u));
    json_t *ju = gd_diloco_spec_to_json(u);
    CHECK(ju && json_equal(ja, ju));
    json_decref(ju);
    gd_diloco_spec_free(u);
    json_decref(ja);
    json_decref(jb);
    gd_diloco_spec_free(a);
    gd_diloco_spec_free(b);
}

/* Changes one field of msg: a number by one, a flag flipped, a string's
 * or bytes' first byte, a message's first field. */
static void mutate_field(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f) {
    void *at = (char *)msg + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        /* hw_classes: its first string. */
        CHECK(f->type == PROTOBUF_C_TYPE_STRING);
        (*(char ***)at)[0][0] ^= 1;
        return;
    }
    switch (f->type) {
    case PROTOBUF_C_TYPE_UINT32: *(uint32_t *)at += 1; break;
    case PROTOBUF_C_TYPE_UINT64: *(uint64_t *)at += 1; break;
    case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)at = !*(protobuf_c_boolean *)at; break;
    case PROTOBUF_C_TYPE_STRING: {
        char **text = at;
        if ((*text)[0] == '\0') /* an optional one left empty (protobuf's shared default) */
            *text = strdup("flash");
        else
            (*text)[0] ^= 1;
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: ((ProtobufCBinaryData *)at)->data[0] ^= 1; break;
    case PROTOBUF_C_TYPE_MESSAGE: {
        ProtobufCMessage *sub = *(ProtobufCMessage **)at;
        mutate_field(sub, &sub->descriptor->fields[0]);
        break;
    }
    default: CHECK(!"a RunSpec field of a type this test does not change"); break;
    }
}

static void test_spec_digest(void) {
    Gonka__Diloco__V1__RunSpec *a = gd_test_example_spec(), *b = gd_test_example_spec();
    uint8_t da[32], db[32], want[32];
    CHECK_OK(gd_diloco_spec_digest(da, a));
    CHECK_OK(gd_diloco_spec_digest(db, b));
    CHECK(memcmp(da, db, 32) == 0);
    /* The definition: SHA-256("gd-run-spec-v3" || the packed spec). */
    uint8_t buf[1024];
    memcpy(buf, "gd-run-spec-v3", 14);
    size_t n = 14 + pack_spec(a, buf + 14, sizeof buf - 14);
    gd_sha256(want, buf, n);
    CHECK(memcmp(da, want, 32) == 0);

    /* Every field counts: changing any one changes the digest. */
    const ProtobufCMessageDescriptor *d = &gonka__diloco__v1__run_spec__descriptor;
    CHECK(d->n_fields == 50); /* 1 to 52 but the reserved 20 and 21 */
    for (unsigned i = 0; i < d->n_fields; i++) {
        Gonka__Diloco__V1__RunSpec *c = gd_test_example_spec();
        mutate_field(&c->base, &d->fields[i]);
        uint8_t dc[32];
        CHECK_OK(gd_diloco_spec_digest(dc, c));
        if (memcmp(dc, da, 32) == 0)
            fprintf(stderr, "changing %s kept the digest\n", d->fields[i].name);
        CHECK(memcmp(dc, da, 32) != 0);
        gd_diloco_spec_free(c);
    }

    /* Export -> import keeps it. */
    json_t *j = gd_diloco_spec_to_json(a);
    Gonka__Diloco__V1__RunSpec *back = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&back, j));
    CHECK_OK(gd_diloco_spec_digest(db, back));
    CHECK(memcmp(da, db, 32) == 0);
    json_decref(j);
    gd_diloco_spec_free(back);

    /* Unknown fields have no canonical bytes; no spec, no digest. */
    n = pack_spec(a, buf, sizeof buf);
    buf[n] = 0xa0; /* field 100, varint */
    buf[n + 1] = 0x06;
    buf[n + 2] = 0x01;
    Gonka__Diloco__V1__RunSpec *u = gonka__diloco__v1__run_spec__unpack(NULL, n + 3, buf);
    CHECK(u != NULL);
    CHECK_STATUS(gd_diloco_spec_digest(db, u), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "run spec digest") != NULL);
    gd_diloco_spec_free(u);
    CHECK_STATUS(gd_diloco_spec_digest(db, NULL), GD_ERR_INVALID);
    gd_diloco_spec_free(a);
    gd_diloco_spec_free(b);
}

/* --- messages -------------------------------------------------------------------- */

static const uint8_t H1[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                               17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t H2[32] = {[0] = 0xaa, [31] = 0xbb};
static const uint8_t ZERO[32];
static const uint8_t LONG33[33];

/* A valid proof in wire form for leaf index of count. */
static void make_proof(gd_buf *out, uint32_t index, uint32_t count) {
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t leaf[32];
        gd_mmr_hash_leaf(leaf, i, &i, sizeof i);
        CHECK_OK(gd_mmr_append(&mmr, leaf));
    }
    gd_mmr_proof proof;
    CHECK_OK(gd_mmr_prove(&mmr, &proof, index));
    CHECK_OK(gd_mmr_proof_encode(&proof, out));
    gd_mmr_free(&mmr);
}

static void test_msg_create_join(void) {
    Gonka__Diloco__V1__RunSpec *spec = gd_test_example_spec();
    gd_coin pool = {"ngonka", "5000"};
    gd_any any = {0};
    CHECK_OK(gd_diloco_msg_create_run(&any, ADDR_A, spec, &pool));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_CREATE_RUN);
    Gonka__Diloco__V1__MsgCreateRun *m =
        gonka__diloco__v1__msg_create_run__unpack(NULL, any.value.len, any.value.data);
    CHECK(m && strcmp(m->authority, ADDR_A) == 0 && strcmp(m->pool->amount, "5000") == 0);
    CHECK(m && m->spec && m->spec->h_max == 80 && strcmp(m->spec->codec, "int8") == 0);
    if (m)
        CHECK_OK(gd_diloco_msg_create_run_check(m));
    gonka__diloco__v1__msg_create_run__free_unpacked(m, NULL);
    gd_any_free(&any);
    gd_coin stake = {"stake", "5000"}, zero = {"ngonka", "0"};
    CHECK_STATUS(gd_diloco_msg_create_run(&any, ADDR_A, spec, &stake), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "reward denom") != NULL);
    CHECK_STATUS(gd_diloco_msg_create_run(&any, ADDR_A, spec, &zero), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_create_run(&any, "gonka1xyz", spec, &pool), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_create_run(&any, ADDR_A, NULL, &pool), GD_ERR_INVALID);
    spec->h_min = 41;
    CHECK_STATUS(gd_diloco_msg_create_run(&any, ADDR_A, spec, &pool), GD_ERR_INVALID);
    gd_diloco_spec_free(spec);

    gd_coin coll = {"ngonka", "100"};
    CHECK_OK(gd_diloco_msg_join_run(&any, ADDR_B, 7, "http://h:8080/a", "cpu-x86", &coll));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_JOIN_RUN);
    Gonka__Diloco__V1__MsgJoinRun *j =
        gonka__diloco__v1__msg_join_run__unpack(NULL, any.value.len, any.value.data);
    CHECK(j && j->run == 7 && strcmp(j->participant, ADDR_B) == 0 &&
          strcmp(j->artifact_url, "http://h:8080/a") == 0 && strcmp(j->hw_class, "cpu-x86") == 0 &&
          strcmp(j->collateral->amount, "100") == 0);
    gonka__diloco__v1__msg_join_run__free_unpacked(j, NULL);
    gd_any_free(&any);
    char long_url[600];
    memset(long_url, 'a', sizeof long_url - 1);
    long_url[sizeof long_url - 1] = '\0';
    gd_coin big = {"ngonka", "18446744073709551616"};
    CHECK_STATUS(gd_diloco_msg_join_run(&any, ADDR_B, 7, "", "cpu", &coll), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_join_run(&any, ADDR_B, 7, long_url, "cpu", &coll), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_join_run(&any, ADDR_B, 7, "u", "a\tb", &coll), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_join_run(&any, ADDR_B, 7, "u", "cpu", &big), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_join_run(&any, "GONKA1PKPTRE7FDKL6GFRZLESJJVHXHLC3R4GMTRQAHC", 7,
                                        "u", "cpu", &coll),
                 GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "lower-case") != NULL);
}

static void test_msg_commit(void) {
    gd_diloco_commit c = {.run = 3, .round = 9, .payload_leaves = 26, .payload_bytes = 12345,
                          .segment_count = 5, .loss_first_micro = 2300000,
                          .loss_last_micro = 1900000};
    memcpy(c.payload_root, H1, 32);
    memcpy(c.transcript_root, H2, 32);
    gd_any any = {0};
    CHECK_OK(gd_diloco_msg_commit_round(&any, ADDR_A, &c));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_COMMIT_ROUND);
    Gonka__Diloco__V1__MsgCommitRound *m =
        gonka__diloco__v1__msg_commit_round__unpack(NULL, any.value.len, any.value.data);
    CHECK(m && m->run == 3 && m->round == 9 && m->payload_leaves == 26 &&
          m->payload_bytes == 12345 && m->segment_count == 5 && m->loss_first_micro == 2300000 &&
          m->loss_last_micro == 1900000 && strcmp(m->participant, ADDR_A) == 0);
    CHECK(m && m->payload_root.len == 32 && memcmp(m->payload_root.data, H1, 32) == 0);
    CHECK(m && m->transcript_root.len == 32 && memcmp(m->transcript_root.data, H2, 32) == 0);
    gonka__diloco__v1__msg_commit_round__free_unpacked(m, NULL);
    gd_any_free(&any);
    gd_diloco_commit bad = c;
    bad.payload_leaves = 1;
    CHECK_STATUS(gd_diloco_msg_commit_round(&any, ADDR_A, &bad), GD_ERR_INVALID);
    bad = c;
    bad.segment_count = 0;
    CHECK_STATUS(gd_diloco_msg_commit_round(&any, ADDR_A, &bad), GD_ERR_INVALID);
    bad = c;
    bad.payload_bytes = 175; /* one byte short of a payload header */
    CHECK_STATUS(gd_diloco_msg_commit_round(&any, ADDR_A, &bad), GD_ERR_INVALID);
    CHECK_STATUS(gd_diloco_msg_commit_round(&any, "", &c), GD_ERR_INVALID);
}

/* The builder's status and, when it refuses, that the detail says want. */
static bool refused(gd_status s, const char *want) {
    bool ok = s == GD_ERR_INVALID && strstr(gd_error_detail(), want) != NULL;
    if (!ok)
        fprintf(stderr, "want GD_ERR_INVALID '%s', got %d '%s'\n", want, (int)s,
                gd_error_detail());
    return ok;
}

static void test_msg_availability(void) {
    gd_buf proofs[3] = {{0}};
    make_proof(&proofs[0], 4, 9);
    make_proof(&proofs[1], 1, 9);
    make_proof(&proofs[2], 8, 9);
    gd_diloco_chunk_proof chunks[GD_DILOCO_AVAIL_CHUNKS_MAX + 1];
    for (size_t i = 0; i < GD_DILOCO_AVAIL_CHUNKS_MAX + 1; i++) {
        memcpy(chunks[i].leaf_hash, i % 2 ? H2 : H1, 32);
        chunks[i].proof = proofs[i % 3].data;
        chunks[i].proof_len = proofs[i % 3].len;
    }
    gd_any any = {0};
    CHECK_OK(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, chunks, 3, NULL));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_REPORT_AVAILABILITY);
    Gonka__Diloco__V1__MsgReportAvailability *m =
        gonka__diloco__v1__msg_report_availability__unpack(NULL, any.value.len, any.value.data);
    CHECK(m && m->run == 1 && m->round == 2 && strcmp(m->reporter, ADDR_A) == 0 &&
          strcmp(m->target, ADDR_B) == 0 && m->n_leaf_hashes == 3 && m->n_proofs == 3);
    for (size_t i = 0; m && i < 3; i++)
        CHECK(m->leaf_hashes[i].len == 32 &&
              memcmp(m->leaf_hashes[i].data, chunks[i].leaf_hash, 32) == 0 &&
              m->proofs[i].len == proofs[i].len &&
              memcmp(m->proofs[i].data, proofs[i].data, proofs[i].len) == 0);
    if (m)
        CHECK_OK(gd_diloco_msg_report_availability_check(m));
    gonka__diloco__v1__msg_report_availability__free_unpacked(m, NULL);
    gd_any_free(&any);
    /* The most a report carries, and one more. */
    CHECK_OK(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, chunks,
                                               GD_DILOCO_AVAIL_CHUNKS_MAX, NULL));
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, chunks,
                                                    GD_DILOCO_AVAIL_CHUNKS_MAX + 1, NULL),
                  "leaf_hashes has 17 entries, not 1 to 16"));
    CHECK(refused(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, chunks, 0, NULL),
                  "leaf_hashes has 0 entries"));
    CHECK(refused(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, NULL, 2, NULL),
                  "chunks are missing"));
    CHECK(refused(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_A, chunks, 1, NULL),
                  "reporter and target must differ"));
    /* Each proof decodes and is for a chunk leaf: the refusal names which. */
    gd_diloco_chunk_proof bad[3] = {chunks[0], chunks[1], chunks[2]};
    bad[1].proof_len--;
    CHECK(refused(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, bad, 3, NULL),
                  "proofs[1]"));
    gd_buf header = {0};
    make_proof(&header, 0, 9);
    bad[1] = chunks[1];
    bad[2].proof = header.data;
    bad[2].proof_len = header.len;
    CHECK(refused(gd_diloco_msg_report_availability(&any, ADDR_A, 1, 2, ADDR_B, bad, 3, NULL),
                  "proofs[2] is for the header leaf, not a chunk"));
    gd_buf_free(&header);

    /* What the module unpacks: as many proofs as leaves, each leaf 32 bytes. */
    ProtobufCBinaryData leaves[2] = {{32, (uint8_t *)H1}, {31, (uint8_t *)H2}};
    ProtobufCBinaryData wire[2] = {{proofs[0].len, proofs[0].data},
                                   {proofs[1].len, proofs[1].data}};
    Gonka__Diloco__V1__MsgReportAvailability r = GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
    r.reporter = ADDR_A;
    r.target = ADDR_B;
    r.n_leaf_hashes = 2;
    r.leaf_hashes = leaves;
    r.n_proofs = 1;
    r.proofs = wire;
    CHECK(refused(gd_diloco_msg_report_availability_check(&r),
                  "proofs has 1 entries, leaf_hashes 2: one proof per leaf"));
    r.n_proofs = 2;
    CHECK(refused(gd_diloco_msg_report_availability_check(&r),
                  "leaf_hashes[1] must be 32 bytes, not 31"));
    leaves[1].len = 32;
    CHECK_OK(gd_diloco_msg_report_availability_check(&r));
    for (int i = 0; i < 3; i++)
        gd_buf_free(&proofs[i]);
}

static const uint8_t SALT[32] = {[0] = 0x5a, [17] = 0x11, [31] = 0xa5};

static void test_msg_verdicts(void) {
    gd_any any = {0};
    uint8_t seal[32];
    gd_diloco_verdict_seal(seal, GD_SEAL_VERDICT, ADDR_A, GD_VERDICT_FAIL, H1, SALT);
    CHECK_OK(gd_diloco_msg_submit_verdict_sealed(&any, ADDR_A, 4, 5, ADDR_B, 2, seal));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_SUBMIT_VERDICT);
    Gonka__Diloco__V1__MsgSubmitVerdict *m =
        gonka__diloco__v1__msg_submit_verdict__unpack(NULL, any.value.len, any.value.data);
    CHECK(m && m->check == 2 && m->seal.len == 32 && memcmp(m->seal.data, seal, 32) == 0 &&
          m->verdict == 0 && m->digest.len == 0 && m->salt.len == 0 &&
          strcmp(m->validator, ADDR_A) == 0);
    gonka__diloco__v1__msg_submit_verdict__free_unpacked(m, NULL);
    gd_any_free(&any);

    CHECK_OK(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2, GD_VERDICT_FAIL,
                                                   H1, SALT));
    m = gonka__diloco__v1__msg_submit_verdict__unpack(NULL, any.value.len, any.value.data);
    CHECK(m && m->seal.len == 0 && m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL &&
          m->digest.len == 32 && memcmp(m->digest.data, H1, 32) == 0 && m->salt.len == 32 &&
          memcmp(m->salt.data, SALT, 32) == 0);
    gonka__diloco__v1__msg_submit_verdict__free_unpacked(m, NULL);
    gd_any_free(&any);
    CHECK_OK(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2,
                                                   GD_VERDICT_UNAVAILABLE, ZERO, SALT));
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2,
                                                        GD_VERDICT_UNAVAILABLE, H1, SALT),
                  "the digest of an unavailable verdict is all zero"));
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2,
                                                        GD_VERDICT_UNSPECIFIED, H1, SALT),
                  "verdict must be pass, fail or unavailable"));
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2,
                                                        (gd_diloco_verdict)4, H1, SALT),
                  "verdict must be pass, fail or unavailable"));
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 16,
                                                        GD_VERDICT_PASS, H1, SALT),
                  "check 16 is out of range"));
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2,
                                                        GD_VERDICT_PASS, H1, NULL),
                  "salt is missing"));
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_A, 4, 5, ADDR_B, 2,
                                                        GD_VERDICT_PASS, NULL, SALT),
                  "digest is missing"));
    /* From the target itself: its own digest, sealed, then revealed as PASS. */
    CHECK_OK(gd_diloco_msg_submit_verdict_sealed(&any, ADDR_B, 4, 5, ADDR_B, 0, seal));
    gd_any_free(&any);
    CHECK_OK(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_B, 4, 5, ADDR_B, 0, GD_VERDICT_PASS,
                                                   H1, SALT));
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_submit_verdict_revealed(&any, ADDR_B, 4, 5, ADDR_B, 0,
                                                        GD_VERDICT_FAIL, H1, SALT),
                  "a target's own digest is revealed as PASS"));
    CHECK(refused(gd_diloco_msg_dispute_sealed(&any, ADDR_B, 4, 5, ADDR_B, 0, seal),
                  "validator and target must differ"));
    CHECK(refused(gd_diloco_msg_submit_verdict_sealed(&any, ADDR_A, 4, 5, ADDR_B, 0, NULL),
                  "seal is missing"));

    /* The forms the module may unpack: exactly one, each complete. */
    Gonka__Diloco__V1__MsgSubmitVerdict v = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
    v.validator = ADDR_A;
    v.target = ADDR_B;
    v.seal = (ProtobufCBinaryData){32, seal};
    v.verdict = GONKA__DILOCO__V1__VERDICT__VERDICT_PASS;
    v.digest = (ProtobufCBinaryData){32, (uint8_t *)H1};
    v.salt = (ProtobufCBinaryData){32, (uint8_t *)SALT};
    CHECK(refused(gd_diloco_msg_submit_verdict_check(&v), "a sealed verdict carries only the "
                                                          "seal"));
    v.verdict = 0;
    v.digest.len = 0;
    CHECK(refused(gd_diloco_msg_submit_verdict_check(&v), "carries only the seal")); /* salt */
    v.salt.len = 0;
    CHECK_OK(gd_diloco_msg_submit_verdict_check(&v));
    v.seal.len = 31;
    CHECK(refused(gd_diloco_msg_submit_verdict_check(&v), "seal must be 32 bytes, not 31"));
    v.seal.len = 0;
    v.verdict = GONKA__DILOCO__V1__VERDICT__VERDICT_PASS;
    v.digest.len = 32;
    v.salt.len = 31;
    CHECK(refused(gd_diloco_msg_submit_verdict_check(&v), "salt must be 32 bytes, not 31"));
    v.salt.len = 0;
    CHECK(refused(gd_diloco_msg_submit_verdict_check(&v), "salt must be 32 bytes, not 0"));
    v.salt.len = 32;
    v.digest.len = 0;
    CHECK(refused(gd_diloco_msg_submit_verdict_check(&v), "digest must be 32 bytes, not 0"));
    v.digest.len = 32;
    CHECK_OK(gd_diloco_msg_submit_verdict_check(&v));
}

static void test_msg_disputes(void) {
    gd_any any = {0};
    uint8_t seal[32];
    gd_diloco_verdict_seal(seal, GD_SEAL_RECHECK, ADDR_A, GD_VERDICT_PASS, H2, SALT);
    CHECK_OK(gd_diloco_msg_dispute_sealed(&any, ADDR_A, 4, 5, ADDR_B, 1, seal));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_DISPUTE);
    Gonka__Diloco__V1__MsgDispute *d =
        gonka__diloco__v1__msg_dispute__unpack(NULL, any.value.len, any.value.data);
    CHECK(d && d->run == 4 && d->round == 5 && d->check == 1 && d->seal.len == 32 &&
          memcmp(d->seal.data, seal, 32) == 0 && d->verdict == 0 && d->digest.len == 0 &&
          d->salt.len == 0 && strcmp(d->target, ADDR_B) == 0);
    gonka__diloco__v1__msg_dispute__free_unpacked(d, NULL);
    gd_any_free(&any);

    CHECK_OK(gd_diloco_msg_dispute_revealed(&any, ADDR_A, 4, 5, ADDR_B, 1, GD_VERDICT_PASS, H2,
                                            SALT));
    d = gonka__diloco__v1__msg_dispute__unpack(NULL, any.value.len, any.value.data);
    CHECK(d && d->seal.len == 0 && d->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_PASS &&
          d->digest.len == 32 && memcmp(d->digest.data, H2, 32) == 0 && d->salt.len == 32 &&
          memcmp(d->salt.data, SALT, 32) == 0);
    gonka__diloco__v1__msg_dispute__free_unpacked(d, NULL);
    gd_any_free(&any);
    /* A re-checker that cannot fetch the payload says so. */
    CHECK_OK(gd_diloco_msg_dispute_revealed(&any, ADDR_A, 4, 5, ADDR_B, 1,
                                            GD_VERDICT_UNAVAILABLE, ZERO, SALT));
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_dispute_revealed(&any, ADDR_A, 4, 5, ADDR_B, 1,
                                                 GD_VERDICT_UNAVAILABLE, H2, SALT),
                  "the digest of an unavailable verdict is all zero"));
    CHECK(refused(gd_diloco_msg_dispute_revealed(&any, ADDR_A, 4, 5, ADDR_B, 1, GD_VERDICT_FAIL,
                                                 NULL, SALT),
                  "digest is missing"));
    CHECK(refused(gd_diloco_msg_dispute_revealed(&any, ADDR_A, 4, 5, ADDR_B, 1, GD_VERDICT_FAIL,
                                                 H2, NULL),
                  "salt is missing"));
    CHECK(refused(gd_diloco_msg_dispute_sealed(&any, ADDR_A, 4, 5, ADDR_B, 1, NULL),
                  "seal is missing"));
    CHECK(refused(gd_diloco_msg_dispute_sealed(&any, ADDR_A, 4, 5, ADDR_B, 17, seal),
                  "check 17 is out of range"));
    CHECK(refused(gd_diloco_msg_dispute_sealed(&any, ADDR_B, 4, 5, ADDR_B, 1, seal),
                  "validator and target must differ"));

    Gonka__Diloco__V1__MsgDispute m = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
    m.validator = ADDR_A;
    m.target = ADDR_B;
    m.seal = (ProtobufCBinaryData){32, seal};
    m.salt = (ProtobufCBinaryData){32, (uint8_t *)SALT};
    CHECK(refused(gd_diloco_msg_dispute_check(&m), "a sealed re-check carries only the seal"));
    m.salt.len = 0;
    m.digest = (ProtobufCBinaryData){32, (uint8_t *)H2};
    CHECK(refused(gd_diloco_msg_dispute_check(&m), "a sealed re-check carries only the seal"));
    m.seal.len = 0;
    m.verdict = GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL;
    CHECK(refused(gd_diloco_msg_dispute_check(&m), "salt must be 32 bytes, not 0"));
    m.verdict = 0;
    m.salt.len = 32;
    CHECK(refused(gd_diloco_msg_dispute_check(&m), "verdict must be pass, fail or unavailable"));
}

static void test_msg_attest(void) {
    gd_any any = {0};
    uint8_t seal[32];
    gd_diloco_seal(seal, GD_SEAL_ATTEST, ADDR_B, H2, 32, SALT);
    CHECK_OK(gd_diloco_msg_attest_round_sealed(&any, ADDR_B, 8, 13, seal));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_ATTEST_ROUND);
    Gonka__Diloco__V1__MsgAttestRound *a =
        gonka__diloco__v1__msg_attest_round__unpack(NULL, any.value.len, any.value.data);
    CHECK(a && a->run == 8 && a->round == 13 && strcmp(a->attester, ADDR_B) == 0 &&
          a->seal.len == 32 && memcmp(a->seal.data, seal, 32) == 0 &&
          a->next_state_hash.len == 0 && a->salt.len == 0);
    gonka__diloco__v1__msg_attest_round__free_unpacked(a, NULL);
    gd_any_free(&any);
    CHECK_OK(gd_diloco_msg_attest_round_revealed(&any, ADDR_B, 8, 13, H2, SALT));
    a = gonka__diloco__v1__msg_attest_round__unpack(NULL, any.value.len, any.value.data);
    CHECK(a && a->seal.len == 0 && a->next_state_hash.len == 32 &&
          memcmp(a->next_state_hash.data, H2, 32) == 0 && a->salt.len == 32 &&
          memcmp(a->salt.data, SALT, 32) == 0);
    gonka__diloco__v1__msg_attest_round__free_unpacked(a, NULL);
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_attest_round_revealed(&any, ADDR_B, 8, 13, NULL, SALT),
                  "next_state_hash is missing"));
    CHECK(refused(gd_diloco_msg_attest_round_revealed(&any, ADDR_B, 8, 13, H2, NULL),
                  "salt is missing"));
    CHECK(refused(gd_diloco_msg_attest_round_sealed(&any, ADDR_B, 8, 13, NULL),
                  "seal is missing"));
    CHECK(refused(gd_diloco_msg_attest_round_sealed(&any, "gonka1xyz", 8, 13, seal),
                  "attester"));

    Gonka__Diloco__V1__MsgAttestRound m = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
    m.attester = ADDR_B;
    m.seal = (ProtobufCBinaryData){32, seal};
    m.next_state_hash = (ProtobufCBinaryData){32, (uint8_t *)H2};
    CHECK(refused(gd_diloco_msg_attest_round_check(&m),
                  "a sealed attestation carries only the seal"));
    m.next_state_hash.len = 0;
    m.salt = (ProtobufCBinaryData){32, (uint8_t *)SALT};
    CHECK(refused(gd_diloco_msg_attest_round_check(&m), "carries only the seal"));
    m.seal.len = 0;
    CHECK(refused(gd_diloco_msg_attest_round_check(&m), "next_state_hash must be 32 bytes"));
    m.next_state_hash.len = 32;
    m.salt.len = 16;
    CHECK(refused(gd_diloco_msg_attest_round_check(&m), "salt must be 32 bytes, not 16"));
    m.salt.len = 32;
    CHECK_OK(gd_diloco_msg_attest_round_check(&m));
}

static void test_msg_randomness_leave_claim(void) {
    gd_any any = {0};
    uint8_t seal[32];
    gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, ADDR_A, H1, 0, SALT); /* no body (not NULL) */
    CHECK_OK(gd_diloco_msg_randomness_sealed(&any, ADDR_A, 3, 10, seal));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_RANDOMNESS);
    Gonka__Diloco__V1__MsgRandomness *r =
        gonka__diloco__v1__msg_randomness__unpack(NULL, any.value.len, any.value.data);
    CHECK(r && r->run == 3 && r->round == 10 && strcmp(r->member, ADDR_A) == 0 &&
          r->seal.len == 32 && memcmp(r->seal.data, seal, 32) == 0 && r->secret.len == 0);
    gonka__diloco__v1__msg_randomness__free_unpacked(r, NULL);
    gd_any_free(&any);
    CHECK_OK(gd_diloco_msg_randomness_revealed(&any, ADDR_A, 3, 10, SALT));
    r = gonka__diloco__v1__msg_randomness__unpack(NULL, any.value.len, any.value.data);
    CHECK(r && r->seal.len == 0 && r->secret.len == 32 && memcmp(r->secret.data, SALT, 32) == 0);
    gonka__diloco__v1__msg_randomness__free_unpacked(r, NULL);
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_randomness_sealed(&any, ADDR_A, 3, 10, NULL), "seal is missing"));
    CHECK(refused(gd_diloco_msg_randomness_revealed(&any, ADDR_A, 3, 10, NULL),
                  "secret is missing"));
    CHECK(refused(gd_diloco_msg_randomness_revealed(&any, "", 3, 10, SALT), "member is missing"));

    Gonka__Diloco__V1__MsgRandomness m = GONKA__DILOCO__V1__MSG_RANDOMNESS__INIT;
    m.member = ADDR_A;
    CHECK(refused(gd_diloco_msg_randomness_check(&m), "randomness needs a seal"));
    m.seal = (ProtobufCBinaryData){32, seal};
    m.secret = (ProtobufCBinaryData){32, (uint8_t *)SALT};
    CHECK(refused(gd_diloco_msg_randomness_check(&m), "a seal or a secret, not both"));
    m.secret.len = 0;
    m.seal.len = 33;
    CHECK(refused(gd_diloco_msg_randomness_check(&m), "seal must be 32 bytes, not 33"));
    m.seal.len = 0;
    m.secret.len = 31;
    CHECK(refused(gd_diloco_msg_randomness_check(&m), "secret must be 32 bytes, not 31"));

    CHECK_OK(gd_diloco_msg_leave_run(&any, ADDR_B, 6));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_LEAVE_RUN);
    Gonka__Diloco__V1__MsgLeaveRun *l =
        gonka__diloco__v1__msg_leave_run__unpack(NULL, any.value.len, any.value.data);
    CHECK(l && l->run == 6 && strcmp(l->participant, ADDR_B) == 0);
    gonka__diloco__v1__msg_leave_run__free_unpacked(l, NULL);
    gd_any_free(&any);
    CHECK(refused(gd_diloco_msg_leave_run(&any, NULL, 6), "participant is missing"));
    CHECK(refused(gd_diloco_msg_leave_run(&any, "GONKA10HT9TYKS4VH7P5P904T340CR9NVAHY7UHVQTP8", 6),
                  "lower-case"));

    CHECK_OK(gd_diloco_msg_claim_rewards(&any, ADDR_A, 2, 77));
    CHECK_STR_EQ(any.type_url, GD_DILOCO_MSG_CLAIM_REWARDS);
    Gonka__Diloco__V1__MsgClaimRewards *c =
        gonka__diloco__v1__msg_claim_rewards__unpack(NULL, any.value.len, any.value.data);
    CHECK(c && c->run == 2 && c->epoch == 77 && strcmp(c->claimer, ADDR_A) == 0);
    gonka__diloco__v1__msg_claim_rewards__free_unpacked(c, NULL);
    gd_any_free(&any);
    CHECK_STATUS(gd_diloco_msg_claim_rewards(&any, "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6",
                                             2, 77),
                 GD_ERR_INVALID);
}

/* --- queries ------------------------------------------------------------------------- */

static size_t pack(const ProtobufCMessage *m, uint8_t *buf, size_t cap) {
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > cap)
        abort();
    return protobuf_c_message_pack(m, buf);
}

static void test_requests(void) {
    gd_buf b = {0};
    CHECK_OK(gd_diloco_query_round_request(&b, 3, 1ull << 60));
    Gonka__Diloco__V1__QueryRoundRequest *r =
        gonka__diloco__v1__query_round_request__unpack(NULL, b.len, b.data);
    CHECK(r && r->run == 3 && r->round == 1ull << 60);
    gonka__diloco__v1__query_round_request__free_unpacked(r, NULL);
    CHECK_OK(gd_diloco_query_run_request(&b, 42));
    Gonka__Diloco__V1__QueryRunRequest *q =
        gonka__diloco__v1__query_run_request__unpack(NULL, b.len, b.data);
    CHECK(q && q->run == 42);
    gonka__diloco__v1__query_run_request__free_unpacked(q, NULL);
    CHECK_OK(gd_diloco_query_rewards_request(&b, ADDR_A));
    Gonka__Diloco__V1__QueryRewardsRequest *w =
        gonka__diloco__v1__query_rewards_request__unpack(NULL, b.len, b.data);
    CHECK(w && strcmp(w->address, ADDR_A) == 0);
    gonka__diloco__v1__query_rewards_request__free_unpacked(w, NULL);
    CHECK_STATUS(gd_diloco_query_rewards_request(&b, "gonka1zzz"), GD_ERR_INVALID);
    CHECK_OK(gd_diloco_query_params_request(&b));
    CHECK(b.len == 0);
    CHECK_OK(gd_diloco_query_runs_request(&b));
    CHECK(b.len == 0);
    gd_buf_free(&b);
}

/* A round answer with one of everything; tests break one field at a time. */
typedef struct round_fixture {
    Gonka__Diloco__V1__RoundWindows windows;
    Gonka__Diloco__V1__WeightedMember wm[2];
    Gonka__Diloco__V1__WeightedMember *wmp[2];
    char *incl[2];
    Gonka__Diloco__V1__Round round;
    Gonka__Diloco__V1__Commitment commit;
    Gonka__Diloco__V1__Commitment *commitp[1];
    Gonka__Diloco__V1__AvailabilityReport avail;
    Gonka__Diloco__V1__AvailabilityReport *availp[1];
    char *validators[1];
    Gonka__Diloco__V1__Assignment assign;
    Gonka__Diloco__V1__Assignment *assignp[1];
    Gonka__Diloco__V1__VerdictRecord verdict;
    Gonka__Diloco__V1__VerdictRecord *verdictp[1];
    Gonka__Diloco__V1__Attestation att;
    Gonka__Diloco__V1__Attestation *attp[1];
    uint32_t chunks[3];
    Gonka__Diloco__V1__RandomnessRecord rnd[2];
    Gonka__Diloco__V1__RandomnessRecord *rndp[2];
    Gonka__Diloco__V1__QueryRoundResponse resp;
} round_fixture;

static void round_fixture_init(round_fixture *f) {
    memset(f, 0, sizeof *f);
    gonka__diloco__v1__round_windows__init(&f->windows);
    f->windows.train_start = 100;
    f->windows.commit_start = 160;
    f->windows.reveal_start = 170;
    f->windows.verify_start = 180;
    f->windows.open_start = 190;
    f->windows.dispute_start = 200;
    f->windows.dispute_open_start = 205;
    f->windows.attest_start = 210;
    f->windows.attest_open_start = 215;
    f->windows.end = 220;
    const char *addrs[2] = {ADDR_B, ADDR_A};
    for (int i = 0; i < 2; i++) {
        gonka__diloco__v1__weighted_member__init(&f->wm[i]);
        f->wm[i].address = (char *)addrs[i];
        f->wm[i].weight = "100000000";
        f->wm[i].hw_class = "cpu-x86";
        f->wm[i].rank = (uint32_t)(1 - i);
        f->wm[i].active = i == 0;
        f->wmp[i] = &f->wm[i];
        f->incl[i] = (char *)addrs[i];
    }
    Gonka__Diloco__V1__Round *r = &f->round;
    gonka__diloco__v1__round__init(r);
    r->run = 1;
    r->index = 4;
    r->epoch = 9;
    r->windows = &f->windows;
    r->beacon = (ProtobufCBinaryData){32, (uint8_t *)H1};
    r->verify_randomness = (ProtobufCBinaryData){32, (uint8_t *)H2};
    r->n_members = 2;
    r->members = f->wmp;
    r->total_weight = "200000000";
    r->active_weight = "100000000";
    r->seed = (ProtobufCBinaryData){32, (uint8_t *)H1};
    r->start_state_hash = (ProtobufCBinaryData){32, (uint8_t *)H2};
    r->phase = GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_OPEN;
    r->n_inclusion_set = 2;
    r->inclusion_set = f->incl;
    Gonka__Diloco__V1__Commitment *c = &f->commit;
    gonka__diloco__v1__commitment__init(c);
    c->run = 1;
    c->round = 4;
    c->participant = ADDR_B;
    c->payload_root = (ProtobufCBinaryData){32, (uint8_t *)H1};
    c->payload_leaves = 26;
    c->payload_bytes = 51234;
    c->transcript_root = (ProtobufCBinaryData){32, (uint8_t *)H2};
    c->segment_count = 5;
    c->tokens = (1ull << 53) + 1; /* above 2^53: a string in JSON */
    c->height = 165;
    c->report_weight = "200000000";
    c->reports = 1;
    f->commitp[0] = c;
    gonka__diloco__v1__availability_report__init(&f->avail);
    f->avail.reporter = ADDR_A;
    f->avail.target = ADDR_B;
    f->chunks[0] = 17;
    f->chunks[1] = 3;
    f->chunks[2] = 24;
    f->avail.n_chunks = 3;
    f->avail.chunks = f->chunks;
    f->availp[0] = &f->avail;
    gonka__diloco__v1__assignment__init(&f->assign);
    f->assign.target = ADDR_B;
    f->assign.check = 0;
    f->assign.segment = 3;
    f->assign.step = 7;
    f->assign.chunk = 19;
    f->validators[0] = ADDR_A;
    f->assign.n_validators = 1;
    f->assign.validators = f->validators;
    f->assign.outcome = GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_PASSED;
    f->assignp[0] = &f->assign;
    gonka__diloco__v1__verdict_record__init(&f->verdict);
    f->verdict.validator = ADDR_A;
    f->verdict.target = ADDR_B;
    f->verdict.seal = (ProtobufCBinaryData){32, (uint8_t *)H2};
    f->verdict.credited = 1;
    f->verdictp[0] = &f->verdict;
    gonka__diloco__v1__attestation__init(&f->att);
    f->att.attester = ADDR_A;
    f->att.next_state_hash = (ProtobufCBinaryData){32, (uint8_t *)H1};
    f->att.seal = (ProtobufCBinaryData){32, (uint8_t *)H2};
    f->attp[0] = &f->att;
    /* One secret revealed, one only sealed. */
    for (int i = 0; i < 2; i++) {
        gonka__diloco__v1__randomness_record__init(&f->rnd[i]);
        f->rnd[i].member = (char *)addrs[i];
        f->rnd[i].seal = (ProtobufCBinaryData){32, (uint8_t *)H2};
        f->rndp[i] = &f->rnd[i];
    }
    f->rnd[0].secret = (ProtobufCBinaryData){32, (uint8_t *)H1};
    Gonka__Diloco__V1__QueryRoundResponse *q = &f->resp;
    gonka__diloco__v1__query_round_response__init(q);
    q->round = r;
    q->n_commitments = 1;
    q->commitments = f->commitp;
    q->n_availability = 1;
    q->availability = f->availp;
    q->n_assignments = 1;
    q->assignments = f->assignp;
    q->n_verdicts = 1;
    q->verdicts = f->verdictp;
    q->n_attestations = 1;
    q->attestations = f->attp;
    q->n_randomness = 2;
    q->randomness = f->rndp;
    q->height = 191;
}

static gd_status decode_round(const round_fixture *f, Gonka__Diloco__V1__QueryRoundResponse **out) {
    uint8_t buf[4096];
    size_t n = pack(&f->resp.base, buf, sizeof buf);
    return gd_diloco_query_round_decode(out, buf, n);
}

static void test_round_decode(void) {
    round_fixture f;
    round_fixture_init(&f);
    Gonka__Diloco__V1__QueryRoundResponse *r = NULL;
    CHECK_OK(decode_round(&f, &r));
    json_t *j = r ? gd_diloco_round_json(r) : NULL;
    CHECK(j != NULL);
    json_t *round = json_object_get(j, "round");
    CHECK_STR_EQ(json_string_value(json_object_get(round, "phase")), "open");
    json_t *windows = json_object_get(round, "windows");
    CHECK(json_integer_value(json_object_get(windows, "end")) == 220);
    CHECK(json_integer_value(json_object_get(windows, "dispute_open_start")) == 205);
    CHECK(json_integer_value(json_object_get(windows, "attest_open_start")) == 215);
    CHECK(json_object_size(windows) == 10);
    CHECK_STR_EQ(json_string_value(json_object_get(round, "seed")),
                 "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
    CHECK_STR_EQ(json_string_value(json_object_get(round, "active_weight")), "100000000");
    CHECK_STR_EQ(json_string_value(json_object_get(round, "verify_randomness")),
                 "aa000000000000000000000000000000000000000000000000000000000000bb");
    CHECK_STR_EQ(json_string_value(json_object_get(round, "recheck_randomness")), "");
    CHECK(json_array_size(json_object_get(round, "inclusion_set")) == 2);
    json_t *jwm = json_array_get(json_object_get(round, "members"), 0);
    CHECK(json_integer_value(json_object_get(jwm, "rank")) == 1);
    CHECK(json_is_true(json_object_get(jwm, "active")) &&
          json_is_false(json_object_get(jwm, "skip_slashed")));
    CHECK_STR_EQ(json_string_value(json_object_get(round, "total_weight")), "200000000");
    json_t *c = json_array_get(json_object_get(j, "commitments"), 0);
    CHECK_STR_EQ(json_string_value(json_object_get(c, "tokens")), "9007199254740993");
    CHECK(json_integer_value(json_object_get(c, "payload_bytes")) == 51234);
    CHECK_STR_EQ(json_string_value(json_object_get(c, "report_weight")), "200000000");
    CHECK(json_integer_value(json_object_get(c, "reports")) == 1);
    json_t *av = json_array_get(json_object_get(j, "availability"), 0);
    json_t *chunks = json_object_get(av, "chunks");
    CHECK(json_array_size(chunks) == 3 && json_integer_value(json_array_get(chunks, 0)) == 17 &&
          json_integer_value(json_array_get(chunks, 2)) == 24);
    json_t *a = json_array_get(json_object_get(j, "assignments"), 0);
    CHECK(json_integer_value(json_object_get(a, "chunk")) == 19);
    CHECK(json_integer_value(json_object_get(a, "step")) == 7);
    CHECK_STR_EQ(json_string_value(json_object_get(a, "outcome")), "passed");
    json_t *v = json_array_get(json_object_get(j, "verdicts"), 0);
    CHECK_STR_EQ(json_string_value(json_object_get(v, "verdict")), "sealed");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "digest")), "");
    CHECK(json_is_true(json_object_get(v, "credited")) &&
          json_is_false(json_object_get(v, "faulty")));
    json_t *at = json_array_get(json_object_get(j, "attestations"), 0);
    CHECK_STR_EQ(json_string_value(json_object_get(at, "seal")),
                 "aa000000000000000000000000000000000000000000000000000000000000bb");
    json_t *rn = json_object_get(j, "randomness");
    CHECK(json_array_size(rn) == 2);
    CHECK_STR_EQ(json_string_value(json_object_get(json_array_get(rn, 0), "member")), ADDR_B);
    CHECK_STR_EQ(json_string_value(json_object_get(json_array_get(rn, 1), "secret")), "");
    CHECK(json_integer_value(json_object_get(j, "height")) == 191);
    const char *keys[] = {"round",    "commitments",  "availability", "assignments",
                          "verdicts", "attestations", "randomness",   "height"};
    for (size_t i = 0; i < 8; i++)
        CHECK(json_object_get(j, keys[i]) != NULL);
    json_decref(j);
    if (r)
        protobuf_c_message_free_unpacked(&r->base, NULL);

    /* The two reveal phases are phases. */
    round_fixture_init(&f);
    f.round.phase = GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_ATTEST_OPEN;
    CHECK_OK(decode_round(&f, &r));
    j = r ? gd_diloco_round_json(r) : NULL;
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "round"), "phase")),
                 "attest_open");
    json_decref(j);
    if (r)
        protobuf_c_message_free_unpacked(&r->base, NULL);
    /* Not fixed yet: the seed, the active weight, the tally, a reveal. */
    round_fixture_init(&f);
    f.round.seed.len = 0;
    f.round.active_weight = "";
    f.commit.report_weight = "";
    f.att.next_state_hash.len = 0;
    f.att.seal.len = 32;
    CHECK_OK(decode_round(&f, &r));
    if (r)
        protobuf_c_message_free_unpacked(&r->base, NULL);

    /* One broken field at a time. */
    for (int k = 0; k < 31; k++) {
        round_fixture_init(&f);
        switch (k) {
        case 0: f.round.phase = 0; break;
        case 1: f.round.phase = 12; break;
        case 2: f.round.beacon.len = 31; break;
        case 3: f.round.beacon.len = 0; break;
        case 4: f.wm[1].weight = "01"; break;
        case 5: f.wm[0].address = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahd"; break;
        case 6: f.round.total_weight = "18446744073709551616"; break;
        case 7: f.commit.round = 5; break;
        case 8: f.commit.payload_leaves = 1; break;
        case 9: f.verdict.verdict = 7; break;
        case 10: f.assign.n_validators = 0; break;
        case 11: f.windows.open_start = 179; break;
        case 12: f.resp.round = NULL; break;
        case 13: f.att.attester = "GONKA1PKPTRE7FDKL6GFRZLESJJVHXHLC3R4GMTRQAHC"; break;
        case 14: f.wm[1].rank = f.wm[0].rank; break; /* two members of one rank */
        case 15: f.round.seed.len = 31; break;
        case 16: f.round.active_weight = "01"; break;
        case 17: f.windows.dispute_open_start = 199; break; /* before dispute_start */
        case 18: f.windows.attest_start = 204; break;       /* before dispute_open_start */
        case 19: f.windows.attest_open_start = 221; break;  /* after end */
        case 20: f.commit.report_weight = "-1"; break;
        case 21: f.avail.n_chunks = 0; break;
        case 22: f.chunks[2] = 17; break; /* one chunk twice */
        case 23: f.assign.outcome = 5; break;
        case 24: f.verdict.faulty = 1; break; /* and credited */
        case 25: f.att.seal.len = 0; f.att.next_state_hash.len = 0; break;
        case 26: f.att.seal.len = 16; break;
        case 27: f.rnd[0].secret.len = 31; break;
        case 28: f.rnd[1].seal.len = 0; break; /* neither seal nor secret */
        case 29: f.rnd[1].member = "gonka1zz"; break;
        case 30: f.rnd[0].seal = (ProtobufCBinaryData){33, (uint8_t *)LONG33}; break;
        }
        r = (void *)1;
        gd_status s = decode_round(&f, &r);
        if (s != GD_ERR_PARSE || r != NULL)
            fprintf(stderr, "round case %d: %d '%s'\n", k, (int)s, gd_error_detail());
        CHECK(s == GD_ERR_PARSE && r == NULL);
    }

    /* Not the message, an unknown field, truncated bytes. */
    round_fixture_init(&f);
    uint8_t buf[4096];
    size_t n = pack(&f.resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_round_decode(&r, buf, n - 1), GD_ERR_PARSE);
    buf[n] = 0x48; /* field 9, varint */
    buf[n + 1] = 0x01;
    CHECK_STATUS(gd_diloco_query_round_decode(&r, buf, n + 2), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "unknown field") != NULL);
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    CHECK_STATUS(gd_diloco_query_round_decode(&r, junk, sizeof junk), GD_ERR_PARSE);
}

static void test_run_decode(void) {
    Gonka__Diloco__V1__RunSpec *spec = gd_test_example_spec();
    Gonka__Diloco__V1__Run run = GONKA__DILOCO__V1__RUN__INIT;
    run.id = 1;
    run.creator = ADDR_A;
    run.spec = spec;
    run.state_hash = (ProtobufCBinaryData){32, (uint8_t *)H1};
    run.next_round = 5;
    run.pool = "4000000000";
    run.next_settle_epoch = 3;
    run.next_rank = 4;
    Gonka__Diloco__V1__Member mem = GONKA__DILOCO__V1__MEMBER__INIT, mem2;
    mem.run = 1;
    mem.address = ADDR_B;
    mem.artifact_url = "http://b:9000";
    mem.hw_class = "cpu-x86";
    mem.collateral = "100000000";
    mem.joined_height = 12;
    mem.rank = 3;
    mem.suspended_until = 9;
    mem.leaving = 1;
    mem2 = mem;
    mem2.address = ADDR_A;
    mem2.rank = 0;
    Gonka__Diloco__V1__Member *mems[2] = {&mem, &mem2};
    Gonka__Diloco__V1__QueryRunResponse resp = GONKA__DILOCO__V1__QUERY_RUN_RESPONSE__INIT;
    resp.run = &run;
    resp.n_members = 2;
    resp.members = mems;
    uint8_t buf[4096];
    size_t n = pack(&resp.base, buf, sizeof buf);
    Gonka__Diloco__V1__QueryRunResponse *r = NULL;
    CHECK_OK(gd_diloco_query_run_decode(&r, buf, n));
    json_t *j = r ? gd_diloco_run_json(r) : NULL;
    CHECK(j && json_is_null(json_object_get(j, "current_round")));
    json_t *jr = json_object_get(j, "run");
    CHECK(json_integer_value(json_object_get(jr, "id")) == 1);
    CHECK_STR_EQ(json_string_value(json_object_get(jr, "pool")), "4000000000");
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(jr, "spec"), "codec")), "int8");
    json_t *jm = json_array_get(json_object_get(j, "members"), 0);
    CHECK_STR_EQ(json_string_value(json_object_get(jm, "hw_class")), "cpu-x86");
    CHECK(json_integer_value(json_object_get(jm, "joined_height")) == 12);
    CHECK(json_integer_value(json_object_get(jm, "rank")) == 3);
    CHECK(json_integer_value(json_object_get(jm, "suspended_until")) == 9);
    CHECK(json_is_true(json_object_get(jm, "leaving")));
    CHECK(json_integer_value(json_object_get(jr, "next_rank")) == 4);
    json_decref(j);
    if (r)
        protobuf_c_message_free_unpacked(&r->base, NULL);

    /* Runs answer with the same run; an invalid spec or pool is refused. */
    Gonka__Diloco__V1__Run *runs[1] = {&run};
    Gonka__Diloco__V1__QueryRunsResponse all = GONKA__DILOCO__V1__QUERY_RUNS_RESPONSE__INIT;
    all.n_runs = 1;
    all.runs = runs;
    n = pack(&all.base, buf, sizeof buf);
    Gonka__Diloco__V1__QueryRunsResponse *rs = NULL;
    CHECK_OK(gd_diloco_query_runs_decode(&rs, buf, n));
    j = rs ? gd_diloco_runs_json(rs) : NULL;
    CHECK(j && json_array_size(json_object_get(j, "runs")) == 1);
    json_decref(j);
    if (rs)
        protobuf_c_message_free_unpacked(&rs->base, NULL);
    run.pool = "-5";
    n = pack(&all.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_runs_decode(&rs, buf, n), GD_ERR_PARSE);
    run.pool = "5";
    spec->segment_steps = 0;
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    spec->segment_steps = 10;
    mem.run = 2; /* a member of another run */
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    mem.run = 1;
    /* Ranks: distinct, below next_rank. */
    mem2.rank = 3;
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "two members have rank 3") != NULL);
    mem2.rank = 4;
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "rank 4 is not below the run's next_rank 4") != NULL);
    mem2.rank = 0;
    /* A class the run does not list. */
    mem.hw_class = "gpu-h100";
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "declares hw_class 'gpu-h100', not one of the run's") !=
          NULL);
    mem.hw_class = "";
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    resp.run = NULL;
    n = pack(&resp.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_run_decode(&r, buf, n), GD_ERR_PARSE);
    gd_diloco_spec_free(spec);
}

static void test_params_rewards_decode(void) {
    Gonka__Diloco__V1__Params params = GONKA__DILOCO__V1__PARAMS__INIT;
    params.authority = ADDR_A;
    Gonka__Diloco__V1__QueryParamsResponse pr = GONKA__DILOCO__V1__QUERY_PARAMS_RESPONSE__INIT;
    pr.params = &params;
    uint8_t buf[1024];
    size_t n = pack(&pr.base, buf, sizeof buf);
    Gonka__Diloco__V1__QueryParamsResponse *p = NULL;
    CHECK_OK(gd_diloco_query_params_decode(&p, buf, n));
    json_t *j = p ? gd_diloco_params_json(p) : NULL;
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "params"), "authority")),
                 ADDR_A);
    json_decref(j);
    if (p)
        protobuf_c_message_free_unpacked(&p->base, NULL);
    params.authority = "nobody";
    n = pack(&pr.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_params_decode(&p, buf, n), GD_ERR_PARSE);
    pr.params = NULL;
    n = pack(&pr.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_params_decode(&p, buf, n), GD_ERR_PARSE);

    Gonka__Diloco__V1__SettleAmount sa = GONKA__DILOCO__V1__SETTLE_AMOUNT__INIT;
    sa.run = 1;
    sa.epoch = 6;
    sa.address = ADDR_B;
    sa.amount = "800000000";
    sa.tokens = 20480;
    sa.checks = 2;
    sa.attestations = 3;
    sa.claimed = 1;
    Gonka__Diloco__V1__SettleAmount *sas[1] = {&sa};
    Gonka__Diloco__V1__QueryRewardsResponse rr = GONKA__DILOCO__V1__QUERY_REWARDS_RESPONSE__INIT;
    rr.n_amounts = 1;
    rr.amounts = sas;
    n = pack(&rr.base, buf, sizeof buf);
    Gonka__Diloco__V1__QueryRewardsResponse *r = NULL;
    CHECK_OK(gd_diloco_query_rewards_decode(&r, buf, n));
    j = r ? gd_diloco_rewards_json(r) : NULL;
    json_t *a = json_array_get(json_object_get(j, "amounts"), 0);
    CHECK_STR_EQ(json_string_value(json_object_get(a, "amount")), "800000000");
    CHECK(json_integer_value(json_object_get(a, "tokens")) == 20480);
    CHECK(json_is_true(json_object_get(a, "claimed")));
    CHECK(json_integer_value(json_object_get(a, "attestations")) == 3);
    json_decref(j);
    if (r)
        protobuf_c_message_free_unpacked(&r->base, NULL);
    sa.amount = "";
    n = pack(&rr.base, buf, sizeof buf);
    CHECK_STATUS(gd_diloco_query_rewards_decode(&r, buf, n), GD_ERR_PARSE);

    CHECK_STR_EQ(gd_diloco_phase_name(1), "train");
    CHECK_STR_EQ(gd_diloco_phase_name(8), "done");
    CHECK_STR_EQ(gd_diloco_phase_name(9), "void");
    CHECK_STR_EQ(gd_diloco_phase_name(10), "dispute_open");
    CHECK_STR_EQ(gd_diloco_phase_name(11), "attest_open");
    CHECK_STR_EQ(gd_diloco_phase_name(12), "unspecified");
    CHECK_STR_EQ(gd_diloco_verdict_name(3), "unavailable");
    CHECK_STR_EQ(gd_diloco_outcome_name(0), "pending");
    CHECK_STR_EQ(gd_diloco_outcome_name(2), "upheld");
    CHECK_STR_EQ(gd_diloco_outcome_name(3), "undecided");
    CHECK_STR_EQ(gd_diloco_outcome_name(4), "unavailable");
    CHECK_STR_EQ(gd_diloco_outcome_name(5), "unspecified");
}

int main(void) {
    RUN_TEST(test_spec_example);
    RUN_TEST(test_spec_rules);
    RUN_TEST(test_spec_roundtrip);
    RUN_TEST(test_spec_digest);
    RUN_TEST(test_msg_create_join);
    RUN_TEST(test_msg_commit);
    RUN_TEST(test_msg_availability);
    RUN_TEST(test_msg_verdicts);
    RUN_TEST(test_msg_disputes);
    RUN_TEST(test_msg_attest);
    RUN_TEST(test_msg_randomness_leave_claim);
    RUN_TEST(test_requests);
    RUN_TEST(test_round_decode);
    RUN_TEST(test_run_decode);
    RUN_TEST(test_params_rewards_decode);
    return gd_test_finish();
}
