/* Gonka's epoch clock: stage heights, phases, epoch 0, wind-down truncation. */
#include "chain/module/epochs.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/epoch.h"
#include "tests/support/example_spec.h"
#include "tests/support/testkit.h"

static void test_mainnet_stages(void) {
    gd_epoch_params p;
    gd_epoch_params_mainnet(&p);
    CHECK_OK(gd_epoch_params_check(&p));
    gd_epoch e = {.index = 5, .poc_start_block_height = 86400};
    gd_epoch_stages s;
    gd_epoch_stages_compute(&s, &e, &p);
    /* Hand-computed from Gonka's formulas with poc 60, exchange 5, delay 5,
     * validation 480, set-new-validators delay 120, cutoff 2, length 17280. */
    CHECK(s.poc_start == 86400);
    CHECK(s.poc_generation_wind_down == 86448);    /* + trunc(0.8*60) = 48 */
    CHECK(s.poc_generation_end == 86460);
    CHECK(s.poc_exchange_deadline == 86465);
    CHECK(s.poc_validation_start == 86465);
    CHECK(s.poc_validation_wind_down == 86849);    /* + trunc(0.8*480) = 384 */
    CHECK(s.poc_validation_end == 86945);
    CHECK(s.set_new_validators == 87065);
    CHECK(s.claim_money == 87066);
    CHECK(s.next_poc_start == 103680);
    CHECK(s.inference_validation_cutoff == 103678);
}

static void test_phases(void) {
    gd_epoch_params p;
    gd_epoch_params_mainnet(&p);
    gd_epoch e = {.index = 5, .poc_start_block_height = 86400};
    struct {
        int64_t h;
        gd_epoch_phase phase;
    } cases[] = {
        {86399, GD_PHASE_INFERENCE},          {86400, GD_PHASE_POC_GENERATE},
        {86447, GD_PHASE_POC_GENERATE},       {86448, GD_PHASE_POC_GENERATE_WIND_DOWN},
        {86464, GD_PHASE_POC_GENERATE_WIND_DOWN}, {86465, GD_PHASE_POC_VALIDATE},
        {86848, GD_PHASE_POC_VALIDATE},       {86849, GD_PHASE_POC_VALIDATE_WIND_DOWN},
        {86944, GD_PHASE_POC_VALIDATE_WIND_DOWN}, {86945, GD_PHASE_INFERENCE},
        {103679, GD_PHASE_INFERENCE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gd_epoch_phase got = gd_epoch_phase_at(&e, &p, cases[i].h);
        if (got != cases[i].phase)
            fprintf(stderr, "height %lld: %s, expected %s\n", (long long)cases[i].h,
                    gd_epoch_phase_name(got), gd_epoch_phase_name(cases[i].phase));
        CHECK(got == cases[i].phase);
    }
    CHECK_STR_EQ(gd_epoch_phase_name(GD_PHASE_POC_VALIDATE_WIND_DOWN), "PoCValidateWindDown");
}

/* 0.8 * duration truncates toward zero: 7 -> 5, 3 -> 2, 1 -> 0. */
static void test_wind_down_truncation(void) {
    gd_epoch_params p = {.epoch_length = 100, .epoch_multiplier = 1, .epoch_shift = 90,
                         .poc_stage_duration = 7, .poc_exchange_duration = 1,
                         .poc_validation_delay = 1, .poc_validation_duration = 3,
                         .set_new_validators_delay = 1, .inference_pruning_epoch_threshold = 1};
    CHECK_OK(gd_epoch_params_check(&p));
    gd_epoch e = {.index = 2, .poc_start_block_height = 110};
    gd_epoch_stages s;
    gd_epoch_stages_compute(&s, &e, &p);
    CHECK(s.poc_generation_wind_down == 115);
    CHECK(s.poc_validation_start == 118);
    CHECK(s.poc_validation_wind_down == 120);
    CHECK(s.poc_validation_end == 121);
    CHECK(s.set_new_validators == 122 && s.claim_money == 123);
    p.poc_stage_duration = 1;
    gd_epoch_stages_compute(&s, &e, &p);
    CHECK(s.poc_generation_wind_down == 110);
    /* A zero-length generate phase: the first PoC block is already wind-down. */
    CHECK(gd_epoch_phase_at(&e, &p, 110) == GD_PHASE_POC_GENERATE_WIND_DOWN);
    /* The float64 form Gonka uses equals floor(4d/5) over the whole range. */
    for (int64_t d = 1; d <= 200000; d++) {
        p.poc_stage_duration = d;
        gd_epoch_stages_compute(&s, &e, &p);
        if (s.poc_generation_wind_down - 110 != d * 4 / 5) {
            CHECK(0);
            break;
        }
    }
}

static void test_epoch_zero(void) {
    gd_epoch_params p = {.epoch_length = 100, .epoch_multiplier = 1, .epoch_shift = 90,
                         .poc_stage_duration = 20, .poc_exchange_duration = 1,
                         .poc_validation_delay = 1, .poc_validation_duration = 10,
                         .set_new_validators_delay = 1, .inference_validation_cutoff = 3,
                         .inference_pruning_epoch_threshold = 1};
    gd_epoch e = {.index = 0, .poc_start_block_height = 0};
    gd_epoch_stages s;
    gd_epoch_stages_compute(&s, &e, &p);
    CHECK(s.poc_start == 0 && s.poc_generation_end == 0 && s.set_new_validators == 0 &&
          s.claim_money == 0);
    CHECK(s.next_poc_start == 10); /* epoch_length - epoch_shift: epoch 1 starts at 10 */
    CHECK(s.inference_validation_cutoff == 7);
    for (int64_t h = 0; h < 10; h++)
        CHECK(gd_epoch_phase_at(&e, &p, h) == GD_PHASE_INFERENCE);
    CHECK(gd_epoch_effective_index(&e, &p, 5) == 0);
}

static void test_effective_epoch(void) {
    gd_epoch_params p;
    gd_epoch_params_mainnet(&p);
    gd_epoch e = {.index = 5, .poc_start_block_height = 86400};
    CHECK(gd_epoch_effective_index(&e, &p, 86400) == 4);
    CHECK(gd_epoch_effective_index(&e, &p, 87064) == 4);
    CHECK(gd_epoch_effective_index(&e, &p, 87065) == 5);
    CHECK(gd_epoch_effective_index(&e, &p, 100000) == 5);
}

static void test_param_checks(void) {
    gd_epoch_params good;
    gd_epoch_params_mainnet(&good);
    gd_epoch_params p;
#define BAD(field, value)                                    \
    do {                                                     \
        p = good;                                            \
        p.field = value;                                     \
        CHECK_STATUS(gd_epoch_params_check(&p), GD_ERR_INVALID); \
    } while (0)
    BAD(epoch_length, 0);
    BAD(epoch_multiplier, 0);
    BAD(default_unit_of_compute_price, -1);
    BAD(poc_stage_duration, 0);
    BAD(poc_exchange_duration, -1);
    BAD(poc_validation_delay, -1);
    BAD(poc_validation_duration, 0);
    BAD(set_new_validators_delay, -1);
    BAD(inference_validation_cutoff, -1);
    BAD(inference_pruning_epoch_threshold, 0);
    BAD(epoch_length, INT64_MAX);
    BAD(epoch_shift, INT64_MIN);
#undef BAD
    CHECK_STATUS(gd_epoch_params_check(&(gd_epoch_params){0}), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "epoch length must be positive") != NULL);
}

/* The Inference phase of an epoch after genesis, and a run spec's round
 * against it: a round as long as the phase fits, one block more never
 * opens. */
static void test_round_fits_inference(void) {
    gd_epoch_params p;
    gd_epoch_params_mainnet(&p);
    CHECK(gd_epoch_inference_length(&p) == 17280 - (60 + 5 + 480));
    gd_epoch_params_localnet(&p); /* localnet's default epochs */
    CHECK_OK(gd_epoch_params_check(&p));
    CHECK(gd_epoch_inference_length(&p) == 78); /* 100 - (10 + 2 + 10) */
    /* The phase is exactly the heights where gd_epoch_phase_at says Inference. */
    gd_epoch e = {.index = 3, .poc_start_block_height = 220};
    int64_t inference = 0;
    for (int64_t h = 220; h < 320; h++)
        inference += gd_epoch_phase_at(&e, &p, h) == GD_PHASE_INFERENCE;
    CHECK(inference == 78);

    Gonka__Diloco__V1__RunSpec *spec = gd_test_example_spec();
    CHECK(gd_diloco_spec_round_blocks(spec) == 76);
    CHECK_OK(gd_diloco_spec_epoch_check(spec, &p));
    p.epoch_length = 98; /* a phase of 76 */
    CHECK_OK(gd_diloco_spec_epoch_check(spec, &p));
    p.epoch_length = 97;
    CHECK_STATUS(gd_diloco_spec_epoch_check(spec, &p), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "a round takes 76 blocks") &&
          strstr(gd_error_detail(), "the 75 blocks of an epoch's Inference phase") &&
          strstr(gd_error_detail(), "epoch_length 97"));
    p.epoch_length = 22; /* no Inference phase at all */
    CHECK_STATUS(gd_diloco_spec_epoch_check(spec, &p), GD_ERR_INVALID);
    gd_diloco_spec_free(spec);
}

/* The module's rule, block by block (chain/module/diloco_rounds.c): with
 * the latest epoch advancing at each PoC start, the first height from
 * `from` in the Inference phase whose round ends by the next PoC. */
static int64_t open_height_by_blocks(const gd_epoch_params *p, int64_t from, int64_t blocks) {
    gd_epoch e = {0, 0};
    for (int64_t h = 1; h < from + 5 * p->epoch_length; h++) {
        gd_epoch_stages st;
        gd_epoch_stages_compute(&st, &e, p);
        if (h == st.next_poc_start) {
            e.index++;
            e.poc_start_block_height = h;
            gd_epoch_stages_compute(&st, &e, p);
        }
        if (h >= from && gd_epoch_phase_at(&e, p, h) == GD_PHASE_INFERENCE &&
            h + blocks <= st.next_poc_start)
            return h;
    }
    return -1;
}

/* When the next round can open, as the "no round yet" hint says: the same
 * heights as the module's block-by-block rule, from every start. */
static void test_next_open_height(void) {
    gd_epoch_params p;
    gd_epoch_params_localnet(&p); /* localnet's default epochs */
    CHECK_OK(gd_epoch_params_check(&p));
    /* The example spec's 76 blocks: epoch 1's Inference phase opens at 42. */
    gd_epoch e0 = {0, 0};
    CHECK(gd_diloco_next_open_height(&e0, &p, 1, 76) == 42);
    /* Too late in epoch 1 for 76 blocks: epoch 2's from 142. */
    gd_epoch e1 = {1, 20};
    CHECK(gd_diloco_next_open_height(&e1, &p, 50, 76) == 142);
    CHECK(gd_diloco_next_open_height(&e1, &p, 44, 76) == 44);
    for (int64_t blocks = 1; blocks <= 78; blocks += 11)
        for (int64_t from = 1; from < 330; from++) {
            /* The latest epoch at from - 1. */
            gd_epoch e = {0, 0};
            while (1) {
                gd_epoch_stages st;
                gd_epoch_stages_compute(&st, &e, &p);
                if (from - 1 < st.next_poc_start)
                    break;
                e.poc_start_block_height = st.next_poc_start;
                e.index++;
            }
            int64_t want = open_height_by_blocks(&p, from, blocks);
            int64_t got = gd_diloco_next_open_height(&e, &p, from, blocks);
            if (got != want) {
                fprintf(stderr, "blocks %lld from %lld: %lld, want %lld\n", (long long)blocks,
                        (long long)from, (long long)got, (long long)want);
                CHECK(got == want);
                return;
            }
        }
    /* A round longer than the Inference phase never opens. */
    CHECK(gd_diloco_next_open_height(&e1, &p, 50, 79) == -1);
}

int main(void) {
    RUN_TEST(test_mainnet_stages);
    RUN_TEST(test_phases);
    RUN_TEST(test_wind_down_truncation);
    RUN_TEST(test_epoch_zero);
    RUN_TEST(test_effective_epoch);
    RUN_TEST(test_param_checks);
    RUN_TEST(test_round_fits_inference);
    RUN_TEST(test_next_open_height);
    return gd_test_finish();
}
