/* The CUDA kernels' launchers, callable from C: each enqueues its kernel on
 * stream and checks the launch (kernels/cuda/cuda_check.h). Arguments are
 * device pointers with the shapes and semantics of the CPU ops of the same
 * name (kernels/cpu/ops.h, kernels/cpu/round_ops.h). One .cu file per op family. */
#ifndef GD_KERNELS_CUDA_LAUNCH_H
#define GD_KERNELS_CUDA_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* elementwise.cu */
void gd_cuda_add(cudaStream_t stream, float *out, const float *a, const float *b, size_t n);
void gd_cuda_swiglu_forward(cudaStream_t stream, float *out, const float *gate, const float *up,
                            size_t n);
void gd_cuda_swiglu_backward(cudaStream_t stream, float *dgate, float *dup, const float *dout,
                             const float *gate, const float *up, size_t n);

/* adamw.cu: the scalars are the CPU op's, each derived in double on the
 * host and rounded to float once (gd_cuda_adamw_scalars). */
typedef struct gd_cuda_adamw_scalars {
    float grad_scale, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size,
        bc2_sqrt, eps;
} gd_cuda_adamw_scalars;
void gd_cuda_adamw(cudaStream_t stream, float *param, const float *grad, float *m, float *v,
                   size_t n, const gd_cuda_adamw_scalars *s);

/* round.cu (built with --fmad=false: the CPU's bits) */
void gd_cuda_pseudo_gradient(cudaStream_t stream, float *delta, const float *start,
                             const float *params, float *residual, size_t n, float decay);
/* deltas: a device array of count device pointers. */
void gd_cuda_outer_step(cudaStream_t stream, float *params, float *momentum,
                        const float *const *deltas, const float *weights, size_t count,
                        size_t n, float lr, float mu);

/* reduce.cu: partials[c] = the sum of x[i]^2 in double over chunk c of
 * chunk values, each chunk summed in index order (the CPU's order, so the
 * same bits); the caller adds the partials in chunk order. */
void gd_cuda_sum_squares_chunks(cudaStream_t stream, double *partials, const float *x,
                                size_t n, size_t chunk);

#ifdef __cplusplus
}
#endif

#endif
