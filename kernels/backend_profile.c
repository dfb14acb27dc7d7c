/* The op profile (see kernels/backend_profile.h). */
#include "kernels/backend_profile.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "kernels/backend.h"

static const char *const gd_op_names[GD_OP_COUNT] = {
    [GD_OP_UPLOAD] = "upload",
    [GD_OP_DOWNLOAD] = "download",
    [GD_OP_COPY] = "copy",
    [GD_OP_ZERO] = "zero",
    [GD_OP_EMBEDDING_FORWARD] = "embedding_forward",
    [GD_OP_EMBEDDING_BACKWARD] = "embedding_backward",
    [GD_OP_RMSNORM_FORWARD] = "rmsnorm_forward",
    [GD_OP_RMSNORM_BACKWARD] = "rmsnorm_backward",
    [GD_OP_MATMUL_FORWARD] = "matmul_forward",
    [GD_OP_MATMUL_BACKWARD] = "matmul_backward",
    [GD_OP_ROPE_FORWARD] = "rope_forward",
    [GD_OP_ROPE_BACKWARD] = "rope_backward",
    [GD_OP_ATTENTION_FORWARD] = "attention_forward",
    [GD_OP_ATTENTION_BACKWARD] = "attention_backward",
    [GD_OP_FLASH_ATTENTION_FORWARD] = "flash_attention_forward",
    [GD_OP_FLASH_ATTENTION_BACKWARD] = "flash_attention_backward",
    [GD_OP_SWIGLU_FORWARD] = "swiglu_forward",
    [GD_OP_SWIGLU_BACKWARD] = "swiglu_backward",
    [GD_OP_ADD] = "add",
    [GD_OP_CROSS_ENTROPY_FORWARD] = "cross_entropy_forward",
    [GD_OP_CROSS_ENTROPY_BACKWARD] = "cross_entropy_backward",
    [GD_OP_SUM_SQUARES] = "sum_squares",
    [GD_OP_ADAMW] = "adamw",
    [GD_OP_ADAMW_BF16] = "adamw_bf16",
    [GD_OP_PSEUDO_GRADIENT] = "pseudo_gradient",
    [GD_OP_WEIGHTED_ADD] = "weighted_add",
    [GD_OP_NESTEROV_STEP] = "nesterov_step",
    [GD_OP_QUANTIZE_BLOCKS] = "quantize_blocks",
    [GD_OP_DEQUANTIZE_BLOCKS] = "dequantize_blocks",
    [GD_OP_BF16_QUANTIZE] = "bf16_quantize",
    [GD_OP_BF16_DEQUANTIZE] = "bf16_dequantize",
};

const char *gd_op_name(gd_op_id op) {
    return (unsigned)op < GD_OP_COUNT ? gd_op_names[op] : "unknown";
}

void gd_backend_profile_on(gd_backend_profile *p) {
    memset(p, 0, sizeof *p);
    p->on = true;
}

void gd_backend_profile_off(gd_backend_profile *p) {
    p->on = false;
    p->depth = 0;
}

double gd_backend_profile_total(const gd_backend_profile *p) {
    double total = p->overflow_seconds;
    for (size_t i = 0; i < p->n; i++)
        total += p->entries[i].seconds;
    return total;
}

static int gd_profile_entry_cmp(const void *pa, const void *pb) {
    const gd_profile_entry *a = pa, *b = pb;
    if (a->seconds != b->seconds)
        return a->seconds > b->seconds ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->in_dim != b->in_dim)
        return a->in_dim < b->in_dim ? -1 : 1;
    return a->out_dim < b->out_dim ? -1 : a->out_dim > b->out_dim;
}

void gd_backend_profile_sort(gd_backend_profile *p) {
    qsort(p->entries, p->n, sizeof p->entries[0], gd_profile_entry_cmp);
}

static gd_profile_entry *gd_profile_entry_for(gd_backend_profile *p, gd_op_id op,
                                              size_t in_dim, size_t out_dim) {
    for (size_t i = 0; i < p->n; i++) {
        gd_profile_entry *e = &p->entries[i];
        if (e->op == op && e->in_dim == in_dim && e->out_dim == out_dim)
            return e;
    }
    if (p->n == GD_PROFILE_ENTRIES_MAX)
        return NULL;
    gd_profile_entry *e = &p->entries[p->n++];
    *e = (gd_profile_entry){.op = op, .in_dim = in_dim, .out_dim = out_dim};
    return e;
}

double gd_op_start(const gd_backend *be) {
    gd_backend_profile *p = be->profile;
    if (p == NULL || !p->on || p->depth++ > 0)
        return -1;
    gd_backend_synchronize(be); /* what was issued before is not this op's time */
    return gd_clock_seconds();
}

void gd_op_stop(const gd_backend *be, double started, gd_op_id op, size_t in_dim,
                size_t out_dim, double flops) {
    gd_backend_profile *p = be->profile;
    if (p == NULL || !p->on)
        return;
    p->depth--;
    if (started < 0)
        return;
    gd_backend_synchronize(be);
    double seconds = gd_clock_seconds() - started;
    gd_profile_entry *e = gd_profile_entry_for(p, op, in_dim, out_dim);
    if (e == NULL) {
        p->overflow_calls++;
        p->overflow_seconds += seconds;
        return;
    }
    e->calls++;
    e->seconds += seconds;
    e->flops += flops;
}
