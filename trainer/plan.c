/* The byte budget of one host's training (trainer/plan.h). Every figure is
 * a sum of products of the model's shape; a product that would overflow
 * 64 bits makes the plan fail rather than wrap. */
#include "trainer/plan.h"

#include "kernels/backend.h"
#include "trainer/layout.h"

const gd_plan_settings gd_plan_ladder[GD_PLAN_LADDER] = {
    {GD_SHARD_OPTIMIZER, GD_PRECISION_FP32, GD_PRECISION_FP32, GD_RECOMPUTE_NONE,
     GD_ATTENTION_NAIVE, GD_OFFLOAD_NONE},
    {GD_SHARD_FULL, GD_PRECISION_FP32, GD_PRECISION_FP32, GD_RECOMPUTE_NONE, GD_ATTENTION_NAIVE,
     GD_OFFLOAD_NONE},
    {GD_SHARD_FULL, GD_PRECISION_BF16, GD_PRECISION_FP32, GD_RECOMPUTE_NONE, GD_ATTENTION_FLASH,
     GD_OFFLOAD_NONE},
    {GD_SHARD_FULL, GD_PRECISION_BF16, GD_PRECISION_FP32, GD_RECOMPUTE_FULL, GD_ATTENTION_FLASH,
     GD_OFFLOAD_NONE},
    {GD_SHARD_FULL, GD_PRECISION_BF16, GD_PRECISION_BF16, GD_RECOMPUTE_FULL, GD_ATTENTION_FLASH,
     GD_OFFLOAD_NONE},
    {GD_SHARD_FULL, GD_PRECISION_BF16, GD_PRECISION_BF16, GD_RECOMPUTE_FULL, GD_ATTENTION_FLASH,
     GD_OFFLOAD_OPTIMIZER},
};

/* What a GPU keeps for itself: the CUDA context, cuBLAS's and NCCL's
 * buffers and the allocator's slack, as 1 GiB and 5% of its memory. */
#define GD_PLAN_CONTEXT_BYTES (1ull << 30)

/* Overflow-checked arithmetic: a product or sum past 64 bits sets *over. */
static uint64_t gd_mul(bool *over, uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) {
        *over = true;
        return 0;
    }
    return a * b;
}

static uint64_t gd_mul3(bool *over, uint64_t a, uint64_t b, uint64_t c) {
    return gd_mul(over, gd_mul(over, a, b), c);
}

static uint64_t gd_add(bool *over, uint64_t a, uint64_t b) {
    if (b > UINT64_MAX - a) {
        *over = true;
        return 0;
    }
    return a + b;
}

static uint64_t gd_ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Rank r's shard [*lo, *hi), as the trainer deals them (trainer/train.c):
 * whole chunks of the sum of squares, as even as they come, rank 0 first
 * (so rank 0's is the largest). */
static void gd_plan_shard_range(uint64_t P, uint64_t ranks, uint64_t r, uint64_t *lo,
                                uint64_t *hi) {
    uint64_t per = gd_ceil_div(gd_ceil_div(P, GD_SUM_SQUARES_CHUNK), ranks) * GD_SUM_SQUARES_CHUNK;
    uint64_t a = r * per, b = a + per;
    *lo = a < P ? a : P;
    *hi = b < P ? b : P;
}

/* The model's widths, as gd_model_new takes them. */
typedef struct gd_plan_shape {
    uint64_t C, F, V, L, H, hd, q, kv;
} gd_plan_shape;

static gd_plan_shape gd_plan_shape_of(const gd_model_config *c) {
    gd_plan_shape s = {c->hidden_size, c->intermediate_size, c->vocab_size, c->num_hidden_layers,
                       c->num_attention_heads, gd_model_head_dim(c), 0, 0};
    s.q = s.H * s.hd;
    s.kv = (uint64_t)c->num_key_value_heads * s.hd;
    return s;
}

/* Elements one token keeps per layer for the backward pass: the layer's
 * output, both norms' outputs, the residual in between, q, y, k, v, gate,
 * up and their product (the rstd values are counted apart). */
static uint64_t gd_saved_per_token(const gd_plan_shape *s) {
    return 4 * s->C + 2 * s->q + 2 * s->kv + 3 * s->F;
}

/* The backward pass's scratch per token, reused by every layer: dx, dln,
 * dq, dq_pre, dy, dk, dk_pre, dv, dgate, dup, dh; with the final norm's
 * output and a projection's scratch. */
static uint64_t gd_scratch_per_token(const gd_plan_shape *s) {
    return 2 * s->C + 3 * s->q + 3 * s->kv + 3 * s->F + 2 * s->C;
}

/* Activations and logits on one GPU for s: what the model allocates
 * (trainer/model_body.inc), byte for byte. fp32 keeps every layer's input
 * and a slot of activations a layer (one slot with recomputation). bf16
 * keeps the inputs and the slots as 16-bit codes and computes in two fp32
 * streams and one fp32 slot; the statistics (rstd, the log-sum-exp) are
 * fp32 a layer; the backward's scratch is fp32. */
static void gd_plan_activations(gd_plan *p, const gd_plan_input *in, const gd_plan_shape *s,
                                bool *over) {
    const gd_plan_settings *st = &p->settings;
    uint64_t b = in->micro_batch, T = in->seq, N = gd_mul(over, b, T);
    bool flash = st->attention == GD_ATTENTION_FLASH;
    bool bf16 = st->precision == GD_PRECISION_BF16;
    bool recompute = st->recompute == GD_RECOMPUTE_FULL;
    uint64_t L_stat = recompute ? 1 : s->L, L_slot = bf16 ? 1 : L_stat;
    /* Attention kept: the probabilities (b, H, T, T) in the slot, or the
     * flash path's log-sum-exp per row (b, H, T), a statistic. */
    uint64_t probs = flash ? 0 : gd_mul3(over, b * s->H, T, T);
    uint64_t slot = gd_mul(over, N, gd_saved_per_token(s) - s->C); /* elements */
    uint64_t x = gd_mul3(over, bf16 ? 2 : s->L + 1, N, s->C * 4);
    uint64_t kept = gd_add(over, x, gd_mul(over, L_slot, gd_mul(over, gd_add(over, slot, probs), 4)));
    kept = gd_add(over, kept, gd_mul3(over, L_stat, N, 8)); /* rstd1, rstd2 */
    if (flash)
        kept = gd_add(over, kept, gd_mul(over, L_stat, gd_mul3(over, b * s->H, T, 4)));
    if (bf16) {
        kept = gd_add(over, kept, gd_mul3(over, s->L + 1, N, s->C * 2));
        if (!recompute)
            kept = gd_add(over, kept, gd_mul3(over, s->L, gd_add(over, slot, probs), 2));
    }
    uint64_t scratch = gd_mul3(over, N, gd_scratch_per_token(s), 4);
    scratch = gd_add(over, scratch, gd_mul(over, N, 8));                 /* rstdf, losses */
    /* datt: the probabilities' gradient, or the flash backward's value per
     * row (b, H, T). */
    scratch = gd_add(over, scratch, gd_mul(over, gd_mul3(over, b * s->H, T, flash ? 1 : T), 4));
    uint64_t rope = 2 * (T * s->hd / 2) * 4;
    uint64_t tokens = gd_mul(over, N, 8); /* inputs and targets, int32 */
    p->activations = gd_add(over, gd_add(over, kept, scratch), gd_add(over, rope, tokens));
    uint64_t rows = flash && N > GD_MODEL_LOGIT_CHUNK ? GD_MODEL_LOGIT_CHUNK : N;
    p->logits = gd_mul3(over, rows, s->V, 4);
}

double gd_plan_round_disk_per_param(uint32_t segments, uint32_t peers) {
    return 4.0 + 16.0 * ((double)segments + 1) + 8.0 + 12.0 + 4.0 * (double)peers;
}

gd_status gd_plan_compute(gd_plan *out, const gd_plan_input *in, const gd_plan_settings *s) {
    if (in->gpus == 0 || in->seq == 0 || in->micro_batch == 0 || in->segments == 0)
        return gd_fail(GD_ERR_INVALID, "a plan needs at least one GPU, token, sequence and "
                                       "segment");
    if (in->seq > in->model.max_position_embeddings)
        return gd_fail(GD_ERR_INVALID, "sequence length %u exceeds the model's "
                                       "max_position_embeddings %u",
                       in->seq, in->model.max_position_embeddings);
    gd_param_layout layout;
    GD_TRY(gd_param_layout_build(&layout, &in->model));
    uint64_t P = layout.total;
    gd_plan p = {.settings = *s, .params = P};
    gd_plan_shape sh = gd_plan_shape_of(&in->model);
    bool over = false;
    uint64_t N = in->gpus, shard_lo, shard;
    gd_plan_shard_range(P, N, 0, &shard_lo, &shard);
    /* Full sharding's unit window (trainer/train_full.c) and a tied
     * table's own. */
    bool tied = layout.lm_head == layout.embed;
    uint64_t window = gd_param_layout_unit_max(&layout, tied ? 1 : 0);
    uint64_t table = tied ? gd_param_layout_unit_max(&layout, 0) : 0;
    /* A bf16 model's own windows without a feed (trainer/model_body.inc):
     * the largest unit and a tied table, exactly. */
    uint64_t table_lo = 0, table_hi = 0;
    if (tied)
        gd_param_layout_unit(&layout, 0, &table_lo, &table_hi);
    uint64_t model_windows = window + (table_hi - table_lo);
    /* Full sharding: the rank that holds the most, its shard and inbox (an
     * inbox only over several ranks). */
    uint64_t full_shard = shard, full_inbox = 0, full_most = 0;
    for (uint64_t r = 0; s->shard == GD_SHARD_FULL && r < N; r++) {
        uint64_t lo, hi;
        gd_plan_shard_range(P, N, r, &lo, &hi);
        uint64_t inbox = N > 1 ? gd_param_layout_slice_max(&layout, lo, hi) : 0;
        uint64_t most = 16 * (hi - lo) + 4 * inbox; /* weights, gradient, moments, inbox */
        if (r == 0 || most > full_most) {
            full_most = most;
            full_shard = hi - lo;
            full_inbox = inbox;
        }
    }
    gd_param_layout_free(&layout);
    bool bf16 = s->precision == GD_PRECISION_BF16;
    if (s->shard == GD_SHARD_OPTIMIZER) {
        /* Every rank: the fp32 weights (in bf16, and windows the model
         * rounds a unit into), its shard of the accumulated gradient and,
         * over several ranks, a micro-batch's whole gradient and the inbox
         * its shard is reduced into (one slice from each rank). One GPU
         * takes a step of one micro-batch straight into the accumulator. */
        p.weights = gd_add(&over, gd_mul(&over, P, 4), bf16 ? gd_mul(&over, model_windows, 4) : 0);
        p.gradients = gd_mul(&over, shard, 4);
        if (N > 1)
            p.gradients = gd_add(&over, p.gradients, gd_add(&over, gd_mul(&over, P, 4),
                                                           gd_mul3(&over, N, shard, 4)));
    } else {
        /* The fp32 master shard and the gathered units: the one in use
         * and the next arriving (GD_UNIT_SLOTS windows), and a tied
         * table's, fp32 with the tail a bf16 gather widens through (bf16
         * gathers codes into the window's upper half); the accumulated
         * gradient's shard, a unit's gradient (and the table's) and the
         * inbox a unit's slices arrive in. */
        shard = full_shard;
        uint64_t held = gd_add(&over, window, table);
        uint64_t windows = gd_add(&over, gd_mul(&over, window, GD_UNIT_SLOTS), table);
        uint64_t tails = (GD_UNIT_SLOTS + (tied ? 1 : 0)) * (uint64_t)GD_GATHER_TAIL;
        p.weights = gd_add(&over, gd_mul(&over, shard, 4),
                           gd_mul(&over, gd_add(&over, windows, tails), 4));
        p.gradients = gd_add(&over, gd_mul(&over, shard, 4),
                             gd_add(&over, gd_mul(&over, held, 4), gd_mul(&over, full_inbox, 4)));
    }
    uint64_t per_value = s->moments == GD_PRECISION_BF16 ? 4 : 8; /* both moments */
    uint64_t moments = gd_mul(&over, shard, per_value);
    if (s->offload == GD_OFFLOAD_OPTIMIZER) {
        /* In host memory, every rank's; on the rank the staging window. */
        p.offloaded = gd_mul(&over, P, per_value);
        uint64_t stage = in->offload_window ? in->offload_window : GD_OFFLOAD_STAGE;
        p.moments = gd_mul(&over, shard < stage ? shard : stage, per_value);
    } else {
        p.moments = moments;
    }
    gd_plan_activations(&p, in, &sh, &over);
    p.workspace = GD_PLAN_CONTEXT_BYTES + in->gpu_mem / 20;
    p.per_gpu = gd_add(&over, gd_add(&over, gd_add(&over, p.weights, p.gradients),
                                     gd_add(&over, p.moments, p.activations)),
                       gd_add(&over, p.logits, p.workspace));
    p.outer_state = gd_mul(&over, P, 8);
    p.payload = gd_add(&over, P, gd_mul(&over, gd_ceil_div(P, 1024), 4));
    p.host = gd_add(&over, gd_add(&over, p.outer_state, p.payload), p.offloaded);
    p.disk_per_round = gd_mul(&over, P, (uint64_t)gd_plan_round_disk_per_param(in->segments, 0));
    if (over)
        return gd_fail(GD_ERR_LIMIT, "the plan's figures overflow 64 bits");
    p.fits = p.per_gpu <= in->gpu_mem && (in->host_mem == 0 || p.host <= in->host_mem);
    *out = p;
    return GD_OK;
}
