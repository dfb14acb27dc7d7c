/* Where a backend's time goes: the dispatcher (kernels/backend.c) times
 * every op and buffer transfer it runs on a backend whose profile is set,
 * and adds the time to one entry per op and matmul shape. bench train
 * --profile prints the table.
 *
 * How it measures. Profiling a backend synchronizes it before and after
 * each op and reads the host's monotonic clock, so an entry holds the op's
 * whole cost as the caller sees it: the launch, the device's work, and for
 * an op the backend leaves to the CPU fallback its host copies too. The
 * synchronizations take away the overlap of launches with work, so a
 * profiled step is slower than an unprofiled one; the shares are what the
 * profile is for. Ops called from within a timed op (the fallback's
 * transfers) count in that op only.
 *
 * A profile belongs to one thread's backend: the trainer's rank 0 when
 * there are several. It is off (not counting) until gd_backend_profile_on. */
#ifndef GD_KERNELS_BACKEND_PROFILE_H
#define GD_KERNELS_BACKEND_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The timed ops, in the order the table names them. */
typedef enum gd_op_id {
    GD_OP_UPLOAD,
    GD_OP_DOWNLOAD,
    GD_OP_COPY,
    GD_OP_ZERO,
    GD_OP_EMBEDDING_FORWARD,
    GD_OP_EMBEDDING_BACKWARD,
    GD_OP_RMSNORM_FORWARD,
    GD_OP_RMSNORM_BACKWARD,
    GD_OP_MATMUL_FORWARD,
    GD_OP_MATMUL_BACKWARD,
    GD_OP_ROPE_FORWARD,
    GD_OP_ROPE_BACKWARD,
    GD_OP_ATTENTION_FORWARD,
    GD_OP_ATTENTION_BACKWARD,
    GD_OP_FLASH_ATTENTION_FORWARD,
    GD_OP_FLASH_ATTENTION_BACKWARD,
    GD_OP_SWIGLU_FORWARD,
    GD_OP_SWIGLU_BACKWARD,
    GD_OP_ADD,
    GD_OP_CROSS_ENTROPY_FORWARD,
    GD_OP_CROSS_ENTROPY_BACKWARD,
    GD_OP_SUM_SQUARES,
    GD_OP_ADAMW,
    GD_OP_ADAMW_BF16,
    GD_OP_PSEUDO_GRADIENT,
    GD_OP_WEIGHTED_ADD,
    GD_OP_NESTEROV_STEP,
    GD_OP_QUANTIZE_BLOCKS,
    GD_OP_DEQUANTIZE_BLOCKS,
    GD_OP_BF16_QUANTIZE,
    GD_OP_BF16_DEQUANTIZE,
    GD_OP_COUNT
} gd_op_id;

/* "matmul_forward", ...: the op's name as the dispatcher's function has it. */
const char *gd_op_name(gd_op_id op);

/* One op at one shape: matmuls are told apart by (in_dim, out_dim), the
 * other ops have shape (0, 0). */
typedef struct gd_profile_entry {
    gd_op_id op;
    size_t in_dim, out_dim;
    uint64_t calls;
    double seconds;
    double flops; /* the model FLOPs of the calls (matmuls, attention); 0 for the others */
} gd_profile_entry;

#define GD_PROFILE_ENTRIES_MAX 96

typedef struct gd_backend_profile {
    bool on;
    int depth; /* ops in progress: only the outermost is timed */
    size_t n;
    gd_profile_entry entries[GD_PROFILE_ENTRIES_MAX];
    uint64_t overflow_calls; /* calls of shapes beyond the table's room, */
    double overflow_seconds; /* and their time */
} gd_backend_profile;

/* Starts counting from zero. */
void gd_backend_profile_on(gd_backend_profile *p);
void gd_backend_profile_off(gd_backend_profile *p);
/* Seconds in every entry (and the overflow). */
double gd_backend_profile_total(const gd_backend_profile *p);
/* Sorts the entries by time, the most first (ties by op, then shape). */
void gd_backend_profile_sort(gd_backend_profile *p);

struct gd_backend;

/* The dispatcher's two calls around an op (or a transfer): start returns
 * the time it began, or a negative value when the op is not timed (no
 * profile, profile off, or inside a timed op); stop adds the time since to
 * the op's entry. */
double gd_op_start(const struct gd_backend *be);
void gd_op_stop(const struct gd_backend *be, double started, gd_op_id op, size_t in_dim,
                size_t out_dim, double flops);

#endif
