// Causal self-attention's row kernels, for the backend's attention
// (kernels/cuda/backend_cuda.c): the scores, the output and every gradient
// product are cuBLAS GEMMs, batched over the sequences of one head; what
// is left for a kernel is the causal softmax over each row of scores and
// its backward. A block per row reduces through a fixed tree (the sums in
// double), with no atomics, so the same inputs give the same bits run to run.
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 128;  // a power of two (block_reduce.cuh)

// Block r: row r of the (rows, T) scores, query position t = r % T; the
// scaled scores of keys 0..t become their softmax, the rest exact zeros.
__global__ void attention_softmax_kernel(float *att, size_t T) {
    __shared__ float fshared[kThreads];
    __shared__ double dshared[kThreads];
    size_t t = blockIdx.x % T;
    float *row = att + (size_t)blockIdx.x * T;
    float m = -INFINITY;
    for (size_t j = threadIdx.x; j <= t; j += kThreads)
        m = fmaxf(m, row[j]);
    m = gd_block_max<kThreads>(m, fshared);
    double part = 0;
    for (size_t j = threadIdx.x; j <= t; j += kThreads) {
        row[j] = expf(row[j] - m);
        part += (double)row[j];
    }
    double inv = 1.0 / gd_block_sum<kThreads>(part, dshared);
    for (size_t j = threadIdx.x; j < T; j += kThreads)
        row[j] = j <= t ? (float)((double)row[j] * inv) : 0.0f;
}

// Block r: ds holds dP = dO V^T; it becomes dS = P * (dP - rowsum(P * dP))
// over keys 0..t, exact zeros above the diagonal.
__global__ void attention_softmax_backward_kernel(float *ds, const float *att, size_t T) {
    __shared__ double dshared[kThreads];
    size_t t = blockIdx.x % T;
    float *d = ds + (size_t)blockIdx.x * T;
    const float *p = att + (size_t)blockIdx.x * T;
    double part = 0;
    for (size_t j = threadIdx.x; j <= t; j += kThreads)
        part += (double)p[j] * (double)d[j];
    float rowdot = (float)gd_block_sum<kThreads>(part, dshared);
    for (size_t j = threadIdx.x; j < T; j += kThreads)
        d[j] = j <= t ? p[j] * (d[j] - rowdot) : 0.0f;
}

}  // namespace

extern "C" void gd_cuda_attention_softmax(cudaStream_t stream, float *att, size_t rows,
                                          size_t seq_len) {
    if (rows == 0 || seq_len == 0)
        return;
    attention_softmax_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(att, seq_len);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_attention_softmax_backward(cudaStream_t stream, float *ds,
                                                   const float *att, size_t rows,
                                                   size_t seq_len) {
    if (rows == 0 || seq_len == 0)
        return;
    attention_softmax_backward_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(ds, att,
                                                                               seq_len);
    GD_CUDA_CHECK_LAUNCH();
}
