/* ValidateBasic of a RunSpec and of the coins and text the module stores
 * (chain/wire/diloco_spec.h). The codec is checked as text: chain/ does not link
 * the trainer, and the chain only needs the spec to be one the trainer's
 * gd_codec_parse accepts (this accepts a subset: at most six decimals).
 * The inner optimizer's ranges are likewise a subset of the trainer's
 * (trainer/optim.c, train.c, diloco.c), compared exactly in integers. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "chain/wire/coin.h"
#include "chain/wire/decimal.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/diloco_spec.h"
#include "common/parse.h"

gd_status gd_diloco_text_check(const char *text, size_t max, const char *what) {
    size_t len = text ? strlen(text) : 0;
    if (len == 0 || len > max)
        return gd_fail(GD_ERR_INVALID, "%s must be 1 to %zu bytes", what, max);
    for (size_t i = 0; i < len; i++)
        if (text[i] < 0x20 || text[i] > 0x7e)
            return gd_fail(GD_ERR_INVALID, "%s must be printable ASCII (byte %zu is not)", what,
                           i);
    return GD_OK;
}

gd_status gd_diloco_amount_check(const char *amount, const char *what) {
    uint64_t value;
    if (amount == NULL || strlen(amount) > GD_AMOUNT_DIGITS_MAX ||
        gd_amount_check(amount) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "%s '%.80s' is not a canonical amount", what,
                       amount ? amount : "");
    if (gd_parse_u64(&value, amount) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "%s %.80s does not fit in 64 bits", what, amount);
    return GD_OK;
}

gd_status gd_diloco_coin_check(const Cosmos__Base__V1beta1__Coin *coin, const char *what) {
    if (coin == NULL || coin->denom == NULL || coin->amount == NULL)
        return gd_fail(GD_ERR_INVALID, "%s is missing", what);
    if (strlen(coin->denom) > GD_DENOM_MAX || gd_denom_check(coin->denom) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "%s has an invalid denom", what);
    GD_TRY(gd_diloco_amount_check(coin->amount, what));
    if (strcmp(coin->amount, "0") == 0)
        return gd_fail(GD_ERR_INVALID, "%s must be positive", what);
    return GD_OK;
}

/* "none", "bf16", "int8", "int4" or "topk:F": F a decimal in (0, 1] with at
 * most six decimals ("0.3", "0.000001", "1", "1.0"). */
static bool gd_codec_text_ok(const char *codec) {
    static const char *const fixed[] = {"none", "bf16", "int8", "int4"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(codec, fixed[i]) == 0)
            return true;
    if (strncmp(codec, "topk:", 5) != 0)
        return false;
    const char *p = codec + 5;
    if (*p != '0' && *p != '1')
        return false;
    uint32_t ppm = (uint32_t)(*p++ - '0') * GD_DILOCO_PPM;
    if (*p == '.') {
        p++;
        uint32_t scale = GD_DILOCO_PPM / 10;
        size_t digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++, scale /= 10) {
            if (digits == 6)
                return false;
            ppm += (uint32_t)(*p - '0') * scale;
        }
        if (digits == 0)
            return false;
    }
    return *p == '\0' && ppm >= 1 && ppm <= GD_DILOCO_PPM;
}

static gd_status gd_hash_check(const ProtobufCBinaryData *b, const char *what) {
    if (b->len != GD_DILOCO_HASH_LEN || b->data == NULL)
        return gd_fail(GD_ERR_INVALID, "run spec: %s must be %d bytes, not %zu", what,
                       GD_DILOCO_HASH_LEN, b->len);
    return GD_OK;
}

static gd_status gd_spec_steps_check(const Gonka__Diloco__V1__RunSpec *s) {
    if (s->segment_steps == 0)
        return gd_fail(GD_ERR_INVALID, "run spec: segment_steps must be at least 1");
    if (s->h_min < s->segment_steps || s->h_min > s->h_max)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: need segment_steps <= h_min <= h_max (%u, %u, %u)",
                       s->segment_steps, s->h_min, s->h_max);
    if (s->h_min % s->segment_steps != 0 || s->h_max % s->segment_steps != 0)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: h_min and h_max must be multiples of segment_steps %u",
                       s->segment_steps);
    if (s->tokens_per_step == 0)
        return gd_fail(GD_ERR_INVALID, "run spec: tokens_per_step must be at least 1");
    if (s->outer_lr_ppm == 0 || s->outer_lr_ppm > GD_DILOCO_OUTER_LR_PPM_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: outer_lr_ppm must be 1 to %d",
                       GD_DILOCO_OUTER_LR_PPM_MAX);
    if (s->outer_momentum_ppm >= GD_DILOCO_PPM)
        return gd_fail(GD_ERR_INVALID, "run spec: outer_momentum_ppm must be below %u",
                       GD_DILOCO_PPM);
    return GD_OK;
}

/* The trainer reads these decimals as doubles. Where its bound is open
 * (lr < 10, betas < 1), a decimal a hair below the bound would round onto
 * it, so the chain stops 10^-12 short: 0.999999999999 is a double below 1,
 * 0.999999999999999999 is not. */
static const gd_decimal gd_below_one = {0, GD_DECIMAL_ONE - 1000000};
static const gd_decimal gd_below_ten = {9, GD_DECIMAL_ONE - 1000000};
static const gd_decimal gd_zero = {0, 0};
static const gd_decimal gd_one = {1, 0};
static const gd_decimal gd_thousand = {1000, 0};

/* A decimal field: canonical, and its exact value. */
static gd_status gd_spec_real(gd_decimal *out, const char *text, const char *name) {
    if (gd_decimal_parse(out, text) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec: %s", name);
    return GD_OK;
}

/* A decimal field in [lo, hi], or (lo, hi] when lo_open. */
typedef struct gd_real_rule {
    const char *name;
    const char *text;
    gd_decimal lo, hi;
    bool lo_open;
    const char *rule; /* the range as the error states it */
} gd_real_rule;

static gd_status gd_spec_real_check(const gd_real_rule *r, gd_decimal *value) {
    GD_TRY(gd_spec_real(value, r->text, r->name));
    int lo = gd_decimal_cmp(value, &r->lo);
    if (lo < 0 || (r->lo_open && lo == 0) || gd_decimal_cmp(value, &r->hi) > 0)
        return gd_fail(GD_ERR_INVALID, "run spec: %s %s must be %s", r->name, r->text, r->rule);
    return GD_OK;
}

static gd_status gd_spec_optimizer_check(const Gonka__Diloco__V1__RunSpec *s) {
    const gd_real_rule rules[] = {
        {"inner_lr", s->inner_lr, gd_zero, gd_below_ten, true,
         "in (0, 10): above 0, at most 9.999999999999"},
        {"adam_beta1", s->adam_beta1, gd_zero, gd_below_one, false,
         "in [0, 1): at most 0.999999999999"},
        {"adam_beta2", s->adam_beta2, gd_zero, gd_below_one, false,
         "in [0, 1): at most 0.999999999999"},
        {"adam_eps", s->adam_eps, gd_zero, gd_below_one, true,
         "in (0, 1): above 0, at most 0.999999999999"},
        {"weight_decay", s->weight_decay, gd_zero, gd_below_one, false,
         "in [0, 1): at most 0.999999999999"},
        {"error_feedback_decay", s->error_feedback_decay, gd_zero, gd_one, false,
         "in [0, 1]"},
    };
    gd_decimal v[sizeof rules / sizeof rules[0]];
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        GD_TRY(gd_spec_real_check(&rules[i], &v[i]));
    const gd_decimal *lr = &v[0]; /* rules[0] */
    gd_decimal min_lr, grad_clip, clip;
    GD_TRY(gd_spec_real(&min_lr, s->inner_min_lr, "inner_min_lr"));
    if (gd_decimal_cmp(&min_lr, lr) > 0)
        return gd_fail(GD_ERR_INVALID, "run spec: inner_min_lr %s must be at most inner_lr %s",
                       s->inner_min_lr, s->inner_lr);
    /* Any canonical decimal is >= 0 and finite as a double; "0" is off. */
    GD_TRY(gd_spec_real(&grad_clip, s->grad_clip, "grad_clip"));
    GD_TRY(gd_spec_real(&clip, s->clip_factor, "clip_factor"));
    if (!gd_decimal_is_zero(&clip) &&
        (gd_decimal_cmp(&clip, &gd_one) < 0 || gd_decimal_cmp(&clip, &gd_thousand) > 0))
        return gd_fail(GD_ERR_INVALID, "run spec: clip_factor %s must be 0 (off) or in [1, 1000]",
                       s->clip_factor);
    if (s->inner_schedule_steps == 0)
        return gd_fail(GD_ERR_INVALID, "run spec: inner_schedule_steps must be at least 1");
    if (s->inner_warmup_steps > s->inner_schedule_steps)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: inner_warmup_steps %" PRIu64
                       " must be at most inner_schedule_steps %" PRIu64,
                       s->inner_warmup_steps, s->inner_schedule_steps);
    return GD_OK;
}

/* The batch shape, and the tokens per step the chain pays for, which is
 * that shape: a spec cannot claim more tokens than its steps train on. */
static gd_status gd_spec_batch_check(const Gonka__Diloco__V1__RunSpec *s) {
    if (s->batch == 0 || s->batch > GD_DILOCO_BATCH_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: batch %u must be 1 to %u", s->batch,
                       GD_DILOCO_BATCH_MAX);
    if (s->seq_len == 0 || s->seq_len > GD_DILOCO_SEQ_LEN_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: seq_len %u must be 1 to %u", s->seq_len,
                       GD_DILOCO_SEQ_LEN_MAX);
    uint64_t tokens = (uint64_t)s->batch * s->seq_len;
    if (tokens > GD_DILOCO_BATCH_TOKENS_MAX)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: batch x seq_len is %" PRIu64 " tokens, more than 2^32", tokens);
    if (s->micro_batch == 0 || s->batch % s->micro_batch != 0)
        return gd_fail(GD_ERR_INVALID, "run spec: micro_batch %u must divide batch %u (and be "
                                       "at least 1)",
                       s->micro_batch, s->batch);
    if (s->tokens_per_step != tokens)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: tokens_per_step %" PRIu64 " must equal batch x seq_len = %u x "
                       "%u = %" PRIu64,
                       s->tokens_per_step, s->batch, s->seq_len, tokens);
    if (s->chunk_elems == 0 || s->chunk_elems > GD_DILOCO_CHUNK_ELEMS_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: chunk_elems %u must be 1 to 2^28",
                       s->chunk_elems);
    return GD_OK;
}

/* An optional text key that is empty (the default) or one of two names. */
static gd_status gd_spec_choice_check(const char *key, const char *value, const char *a,
                                      const char *b) {
    if (value == NULL || value[0] == '\0' || strcmp(value, a) == 0 || strcmp(value, b) == 0)
        return GD_OK;
    return gd_fail(GD_ERR_INVALID, "run spec: %s '%.40s' is not %s or %s", key, value, a, b);
}

static gd_status gd_spec_windows_check(const Gonka__Diloco__V1__WindowLengths *w) {
    if (w == NULL)
        return gd_fail(GD_ERR_INVALID, "run spec: windows is missing");
    const uint32_t lens[] = {w->train,   w->commit, w->reveal,       w->verify,     w->open,
                             w->dispute, w->attest, w->dispute_open, w->attest_open};
    static const char *const names[] = {"train",   "commit", "reveal",       "verify",     "open",
                                        "dispute", "attest", "dispute_open", "attest_open"};
    /* The duties of verify, dispute and attest need what their window's
     * first block fixes (the seed's draws, the re-checkers, the aggregation
     * set): a node sees it only once that block is in, and its answer lands
     * in a later block of the window, so those windows need two blocks. */
    static const uint32_t least[] = {1, 1, 1, 2, 1, 2, 2, 1, 1};
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        if (lens[i] < least[i])
            return gd_fail(GD_ERR_INVALID, "run spec: windows.%s must be at least %u block%s",
                           names[i], least[i], least[i] == 1 ? "" : "s");
        sum += lens[i];
    }
    if (sum > GD_DILOCO_WINDOWS_MAX)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: the windows add up to %" PRIu64 " blocks, more than %d", sum,
                       GD_DILOCO_WINDOWS_MAX);
    return GD_OK;
}

/* A coin's amount as a number: the coin passed gd_diloco_coin_check. */
static uint64_t gd_spec_amount(const Cosmos__Base__V1beta1__Coin *c) {
    uint64_t v;
    return gd_parse_u64(&v, c->amount) == GD_OK ? v : 0;
}

/* The coins: one denom for all, and slashes sized so that cheating never
 * pays. A cheat caught loses cheat_slash: at least one epoch's whole reward
 * (no cheat wins more than that) and at most the collateral it bonded (all
 * the chain can take). A skipped duty costs skip_slash, never more than
 * cheating would. A sealed secret not revealed costs withhold_slash: a
 * skipped duty at least, and a cheat at most, since what choosing among
 * seeds can win is less than one epoch's reward (docs/verification.md,
 * "Seed grinding"). */
static gd_status gd_spec_coins_check(const Gonka__Diloco__V1__RunSpec *s) {
    const struct {
        const char *name;
        const Cosmos__Base__V1beta1__Coin *coin;
    } coins[] = {{"reward_per_epoch", s->reward_per_epoch}, {"min_collateral", s->min_collateral},
                 {"fail_bond", s->fail_bond},               {"cheat_slash", s->cheat_slash},
                 {"skip_slash", s->skip_slash},             {"withhold_slash", s->withhold_slash}};
    for (size_t i = 0; i < sizeof coins / sizeof coins[0]; i++) {
        char what[40];
        snprintf(what, sizeof what, "run spec: %s", coins[i].name);
        GD_TRY(gd_diloco_coin_check(coins[i].coin, what));
        if (strcmp(coins[i].coin->denom, s->reward_per_epoch->denom) != 0)
            return gd_fail(GD_ERR_INVALID, "run spec: reward_per_epoch, min_collateral, "
                                           "fail_bond, cheat_slash, skip_slash and withhold_slash "
                                           "must have the same denom (%s is in %s)",
                           coins[i].name, coins[i].coin->denom);
    }
    uint64_t reward = gd_spec_amount(s->reward_per_epoch);
    uint64_t collateral = gd_spec_amount(s->min_collateral);
    uint64_t cheat = gd_spec_amount(s->cheat_slash), skip = gd_spec_amount(s->skip_slash);
    uint64_t withhold = gd_spec_amount(s->withhold_slash);
    if (cheat < reward)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: cheat_slash %" PRIu64
                       " must be at least reward_per_epoch %" PRIu64
                       " (a cheat must lose at least what it can gain)",
                       cheat, reward);
    if (cheat > collateral)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: cheat_slash %" PRIu64 " must be at most min_collateral %" PRIu64
                       " (the chain cannot take more than is bonded)",
                       cheat, collateral);
    if (skip > cheat)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: skip_slash %" PRIu64 " must be at most cheat_slash %" PRIu64,
                       skip, cheat);
    if (withhold < skip)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: withhold_slash %" PRIu64 " must be at least skip_slash %" PRIu64
                       " (a withheld secret is a skipped duty that also chooses the seed)",
                       withhold, skip);
    if (withhold > cheat)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: withhold_slash %" PRIu64 " must be at most cheat_slash %" PRIu64,
                       withhold, cheat);
    return GD_OK;
}

uint32_t gd_diloco_spec_class_min(const Gonka__Diloco__V1__RunSpec *s) {
    uint64_t n = 1 + (s->double_check_ppm > 0 ? 2 : 1) + (uint64_t)s->recheck_validators;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The classes members may declare: printable text as MsgJoinRun's
 * hw_class, strictly ascending so that a set of classes has one spelling
 * and one digest. */
static gd_status gd_spec_classes_check(const Gonka__Diloco__V1__RunSpec *s) {
    if (s->n_hw_classes < 1 || s->n_hw_classes > GD_DILOCO_HW_CLASSES_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: hw_classes must list 1 to %d classes, not %zu",
                       GD_DILOCO_HW_CLASSES_MAX, s->n_hw_classes);
    for (size_t i = 0; i < s->n_hw_classes; i++) {
        char what[40];
        snprintf(what, sizeof what, "run spec: hw_classes[%zu]", i);
        GD_TRY(gd_diloco_text_check(s->hw_classes[i], GD_DILOCO_HW_CLASS_MAX, what));
        if (i > 0 && strcmp(s->hw_classes[i - 1], s->hw_classes[i]) >= 0)
            return gd_fail(GD_ERR_INVALID,
                           "run spec: hw_classes must be strictly ascending (byte order, no "
                           "repeats): '%.40s' comes after '%.40s'",
                           s->hw_classes[i], s->hw_classes[i - 1]);
    }
    return GD_OK;
}

/* Checks, re-checks and membership. */
static gd_status gd_spec_checks_check(const Gonka__Diloco__V1__RunSpec *s) {
    if (s->checks_per_commit == 0 || s->checks_per_commit > GD_DILOCO_CHECKS_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: checks_per_commit must be 1 to %d",
                       GD_DILOCO_CHECKS_MAX);
    /* Odd, so that the re-checkers of a dispute always have a majority. */
    if (s->recheck_validators == 0 || s->recheck_validators > GD_DILOCO_RECHECKERS_MAX ||
        s->recheck_validators % 2 == 0)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: recheck_validators %u must be odd, 1 to %d (a dispute always "
                       "has a majority)",
                       s->recheck_validators, GD_DILOCO_RECHECKERS_MAX);
    if (s->max_members == 0 || s->max_members > GD_DILOCO_MEMBERS_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: max_members %u must be 1 to %d",
                       s->max_members, GD_DILOCO_MEMBERS_MAX);
    uint32_t class_min = gd_diloco_spec_class_min(s);
    if (s->min_class_members < class_min)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: min_class_members %u must be at least %u (the target, %s and "
                       "%u re-checkers)",
                       s->min_class_members, class_min,
                       s->double_check_ppm > 0 ? "its two validators" : "its validator",
                       s->recheck_validators);
    if (s->min_class_members > s->max_members)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: min_class_members %u must be at most max_members %u",
                       s->min_class_members, s->max_members);
    if (s->avail_chunks == 0 || s->avail_chunks > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: avail_chunks must be 1 to %d",
                       GD_DILOCO_AVAIL_CHUNKS_MAX);
    if (s->suspend_rounds == 0 || s->suspend_rounds > GD_DILOCO_SUSPEND_ROUNDS_MAX)
        return gd_fail(GD_ERR_INVALID, "run spec: suspend_rounds must be 1 to %d",
                       GD_DILOCO_SUSPEND_ROUNDS_MAX);
    return GD_OK;
}

static gd_status gd_spec_economics_check(const Gonka__Diloco__V1__RunSpec *s) {
    GD_TRY(gd_spec_coins_check(s));
    GD_TRY(gd_spec_checks_check(s));
    const struct {
        const char *name;
        uint32_t value;
    } ppm[] = {{"double_check_ppm", s->double_check_ppm},
               {"validator_share_ppm", s->validator_share_ppm},
               {"attest_share_ppm", s->attest_share_ppm}};
    for (size_t i = 0; i < sizeof ppm / sizeof ppm[0]; i++)
        if (ppm[i].value > GD_DILOCO_PPM)
            return gd_fail(GD_ERR_INVALID, "run spec: %s must be at most %u", ppm[i].name,
                           GD_DILOCO_PPM);
    /* Both shares come out of the epoch's reward; workers get the rest. */
    if ((uint64_t)s->validator_share_ppm + s->attest_share_ppm > GD_DILOCO_PPM)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: validator_share_ppm %u + attest_share_ppm %u must be at most "
                       "%u",
                       s->validator_share_ppm, s->attest_share_ppm, GD_DILOCO_PPM);
    return GD_OK;
}

gd_status gd_diloco_spec_check(const Gonka__Diloco__V1__RunSpec *s) {
    if (s == NULL)
        return gd_fail(GD_ERR_INVALID, "run spec is missing");
    GD_TRY(gd_diloco_text_check(s->model, GD_DILOCO_TEXT_MAX, "run spec: model"));
    GD_TRY(gd_diloco_text_check(s->data_spec, GD_DILOCO_TEXT_MAX, "run spec: data_spec"));
    GD_TRY(gd_hash_check(&s->layout_digest, "layout_digest"));
    GD_TRY(gd_hash_check(&s->initial_state_hash, "initial_state_hash"));
    GD_TRY(gd_hash_check(&s->data_digest, "data_digest"));
    GD_TRY(gd_spec_steps_check(s));
    if (s->codec == NULL || !gd_codec_text_ok(s->codec))
        return gd_fail(GD_ERR_INVALID, "run spec: codec '%.40s' is not none, bf16, int8, int4 "
                                       "or topk:F with 0 < F <= 1 and at most six decimals",
                       s->codec ? s->codec : "");
    /* chain/ does not link the trainer: the names of trainer/settings.h's
     * attention, precision and moments, and empty for the default. */
    GD_TRY(gd_spec_choice_check("attention", s->attention, "naive", "flash"));
    GD_TRY(gd_spec_choice_check("precision", s->precision, "fp32", "bf16"));
    GD_TRY(gd_spec_choice_check("moments", s->moments, "fp32", "bf16"));
    GD_TRY(gd_spec_windows_check(s->windows));
    GD_TRY(gd_spec_classes_check(s));
    GD_TRY(gd_spec_economics_check(s));
    GD_TRY(gd_spec_optimizer_check(s));
    return gd_spec_batch_check(s);
}
