// Elementwise ops: add and SwiGLU, forward and backward. Grid-stride loops;
// every element is computed by one thread with the CPU op's expression.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t n) {
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

__global__ void add_kernel(float *out, const float *a, const float *b, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = a[i] + b[i];
}

// silu(x) = x * sigmoid(x), sigmoid written so that exp never overflows.
__device__ float sigmoid(float x) {
    if (x >= 0.0f) {
        float e = expf(-x);
        return 1.0f / (1.0f + e);
    }
    float e = expf(x);
    return e / (1.0f + e);
}

__global__ void swiglu_forward_kernel(float *out, const float *gate, const float *up,
                                      size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = gate[i];
        out[i] = g * sigmoid(g) * up[i];
    }
}

__global__ void swiglu_backward_kernel(float *dgate, float *dup, const float *dout,
                                       const float *gate, const float *up, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = gate[i], s = sigmoid(g), silu = g * s;
        if (dup != nullptr)
            dup[i] += dout[i] * silu;
        if (dgate != nullptr)
            dgate[i] += dout[i] * up[i] * (s * (1.0f + g * (1.0f - s)));
    }
}

}  // namespace

extern "C" void gd_cuda_add(float *out, cudaStream_t stream, const float *a, const float *b,
                            size_t n) {
    if (n == 0)
        return;
    add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, a, b, n);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_swiglu_forward(float *out, cudaStream_t stream, const float *gate,
                                       const float *up, size_t n) {
    if (n == 0)
        return;
    swiglu_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, gate, up, n);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_swiglu_backward(cudaStream_t stream, float *dgate, float *dup,
                                        const float *dout, const float *gate, const float *up,
                                        size_t n) {
    if (n == 0)
        return;
    swiglu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dgate, dup, dout, gate, up,
                                                                   n);
    GD_CUDA_CHECK_LAUNCH();
}
