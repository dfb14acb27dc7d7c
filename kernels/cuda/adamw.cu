// AdamW in PyTorch's order, one thread per parameter, with the CPU op's
// float scalars (kernels/cpu/ops_body.inc, gd_ops_adamw_task); the moments
// in float, or as bf16 codes read decoded and stored rounded.
#include "kernels/cpu/codec_ops.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;

// Parameter i's update from its moments' values m and v; the new moments
// in *m and *v for the caller to store in its format.
__device__ void adamw_one(float *param, const float *grad, size_t i, float *m, float *v,
                          const gd_cuda_adamw_scalars &s) {
    float g = grad[i] * s.grad_scale;
    float p = param[i] * s.decay;
    *m = s.beta1 * *m + s.one_minus_beta1 * g;
    *v = s.beta2 * *v + s.one_minus_beta2 * g * g;
    param[i] = p - s.step_size * *m / (sqrtf(*v) / s.bc2_sqrt + s.eps);
}

__global__ void adamw_kernel(float *param, const float *grad, float *m, float *v, size_t n,
                             gd_cuda_adamw_scalars s) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        adamw_one(param, grad, i, &m[i], &v[i], s);
}

__global__ void adamw_bf16_kernel(float *param, const float *grad, uint16_t *m, uint16_t *v,
                                  size_t n, gd_cuda_adamw_scalars s) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float mi = gd_bf16_value(m[i]), vi = gd_bf16_value(v[i]);
        adamw_one(param, grad, i, &mi, &vi, s);
        m[i] = gd_bf16_code(__float_as_uint(mi));
        v[i] = gd_bf16_code(__float_as_uint(vi));
    }
}

unsigned blocks_for(size_t n) {
    size_t blocks = (n + kThreads - 1) / kThreads;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

}  // namespace

extern "C" void gd_cuda_adamw(cudaStream_t stream, float *param, const float *grad, float *m,
                              float *v, size_t n, const gd_cuda_adamw_scalars *s) {
    if (n == 0)
        return;
    adamw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(param, grad, m, v, n, *s);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_adamw_bf16(cudaStream_t stream, float *param, const float *grad,
                                   uint16_t *m, uint16_t *v, size_t n,
                                   const gd_cuda_adamw_scalars *s) {
    if (n == 0)
        return;
    adamw_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(param, grad, m, v, n, *s);
    GD_CUDA_CHECK_LAUNCH();
}
