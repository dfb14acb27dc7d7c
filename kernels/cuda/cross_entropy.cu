// Cross-entropy over the vocabulary, forward and backward: a block per row,
// the maximum and the sum of exponentials reduced through a fixed tree (the
// sum in double), so a row's bits never depend on scheduling.
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;  // a power of two

// The row's maximum and sum(exp(x - max)) in double.
__device__ float row_max_sumexp(const float *x, size_t vocab, double *sum, float *fshared,
                                double *dshared) {
    float m = -INFINITY;
    for (size_t j = threadIdx.x; j < vocab; j += kThreads)
        m = fmaxf(m, x[j]);
    m = gd_block_max<kThreads>(m, fshared);
    double part = 0;
    for (size_t j = threadIdx.x; j < vocab; j += kThreads)
        part += (double)expf(x[j] - m);
    *sum = gd_block_sum<kThreads>(part, dshared);
    return m;
}

__global__ void cross_entropy_forward_kernel(float *losses, const float *logits,
                                             const int32_t *targets, size_t vocab) {
    __shared__ float fshared[kThreads];
    __shared__ double dshared[kThreads];
    size_t row = blockIdx.x;
    const float *x = logits + row * vocab;
    double sum;
    float m = row_max_sumexp(x, vocab, &sum, fshared, dshared);
    if (threadIdx.x == 0)
        losses[row] = (float)((double)m + log(sum) - (double)x[targets[row]]);
}

// dlogits may be logits: every element is read (twice: the reductions and
// here) before this block writes it, and blocks own disjoint rows.
__global__ void cross_entropy_backward_kernel(float *dlogits, const float *logits,
                                              const int32_t *targets, double dloss,
                                              size_t vocab) {
    __shared__ float fshared[kThreads];
    __shared__ double dshared[kThreads];
    size_t row = blockIdx.x;
    const float *x = logits + row * vocab;
    float *dx = dlogits + row * vocab;
    double sum;
    float m = row_max_sumexp(x, vocab, &sum, fshared, dshared);
    double inv = 1.0 / sum;
    size_t target = (size_t)targets[row];
    for (size_t j = threadIdx.x; j < vocab; j += kThreads) {
        double p = (double)expf(x[j] - m) * inv;
        dx[j] = (float)((p - (j == target ? 1.0 : 0.0)) * dloss);
    }
}

}  // namespace

extern "C" void gd_cuda_cross_entropy_forward(cudaStream_t stream, float *losses,
                                              const float *logits, const int32_t *targets,
                                              size_t n, size_t vocab) {
    if (n == 0)
        return;
    cross_entropy_forward_kernel<<<(unsigned)n, kThreads, 0, stream>>>(losses, logits, targets,
                                                                       vocab);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_cross_entropy_backward(cudaStream_t stream, float *dlogits,
                                               const float *logits, const int32_t *targets,
                                               double dloss, size_t n, size_t vocab) {
    if (n == 0)
        return;
    cross_entropy_backward_kernel<<<(unsigned)n, kThreads, 0, stream>>>(dlogits, logits,
                                                                        targets, dloss, vocab);
    GD_CUDA_CHECK_LAUNCH();
}
