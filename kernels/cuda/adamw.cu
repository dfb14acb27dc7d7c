// AdamW in PyTorch's order, one thread per parameter, with the CPU op's
// float scalars (kernels/cpu/ops_body.inc, gd_ops_adamw_task).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;

__global__ void adamw_kernel(float *param, const float *grad, float *m, float *v, size_t n,
                             gd_cuda_adamw_scalars s) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = grad[i] * s.grad_scale;
        float p = param[i] * s.decay;
        float mi = s.beta1 * m[i] + s.one_minus_beta1 * g;
        float vi = s.beta2 * v[i] + s.one_minus_beta2 * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] = p - s.step_size * mi / (sqrtf(vi) / s.bc2_sqrt + s.eps);
    }
}

}  // namespace

extern "C" void gd_cuda_adamw(cudaStream_t stream, float *param, const float *grad, float *m,
                              float *v, size_t n, const gd_cuda_adamw_scalars *s) {
    if (n == 0)
        return;
    size_t blocks = (n + kThreads - 1) / kThreads;
    if (blocks > 65535 * 8)
        blocks = 65535 * 8;
    adamw_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(param, grad, m, v, n, *s);
    GD_CUDA_CHECK_LAUNCH();
}
