// The round's ops: the pseudo-gradient and the outer Nesterov step. Their
// bits are protocol (kernels/cpu/round_ops.h): this file is compiled with
// --fmad=false, so every statement rounds once, exactly as the CPU's, and a
// CUDA host aggregates to the same G as every other member.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t n) {
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

__global__ void pseudo_gradient_kernel(float *delta, const float *start, const float *params,
                                       float *residual, size_t n, float decay) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        delta[i] = start[i] - params[i];
        if (residual != nullptr && decay != 1.0f)
            residual[i] = decay * residual[i];
    }
}

__global__ void weighted_add_kernel(float *acc, const float *delta, float weight, size_t n) {
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x) {
        float term = weight * delta[j];
        acc[j] = acc[j] + term;
    }
}

__global__ void nesterov_step_kernel(float *params, float *momentum, const float *acc_in,
                                     size_t n, float lr, float mu) {
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x) {
        float acc = acc_in[j];
        float scaled_buf = mu * momentum[j];
        float buf = scaled_buf + acc;
        momentum[j] = buf;
        float nesterov = mu * buf;
        float d = acc + nesterov;
        float step = lr * d;
        params[j] = params[j] - step;
    }
}

}  // namespace

extern "C" void gd_cuda_pseudo_gradient(cudaStream_t stream, float *delta, const float *start,
                                        const float *params, float *residual, size_t n,
                                        float decay) {
    if (n == 0)
        return;
    pseudo_gradient_kernel<<<blocks_for(n), kThreads, 0, stream>>>(delta, start, params,
                                                                   residual, n, decay);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_weighted_add(cudaStream_t stream, float *acc, const float *delta,
                                     float weight, size_t n) {
    if (n == 0)
        return;
    weighted_add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(acc, delta, weight, n);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_nesterov_step(cudaStream_t stream, float *params, float *momentum,
                                      const float *acc, size_t n, float lr, float mu) {
    if (n == 0)
        return;
    nesterov_step_kernel<<<blocks_for(n), kThreads, 0, stream>>>(params, momentum, acc, n, lr,
                                                                 mu);
    GD_CUDA_CHECK_LAUNCH();
}
