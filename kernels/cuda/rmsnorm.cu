// RMSNorm, forward and backward (Hugging Face's LlamaRMSNorm). A block per
// row reduces in double through a fixed tree in shared memory, so a row's
// bits never depend on scheduling; dweight gives each thread a column and
// walks the rows in order, as the CPU op does.
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;  // a power of two (block_reduce.cuh)

__global__ void rmsnorm_forward_kernel(float *out, float *rstd, const float *inp,
                                       const float *weight, size_t dim, double eps) {
    __shared__ double shared[kThreads];
    size_t row = blockIdx.x;
    const float *x = inp + row * dim;
    float *y = out + row * dim;
    double part = 0;
    for (size_t j = threadIdx.x; j < dim; j += kThreads)
        part += (double)x[j] * (double)x[j];
    double sum_sq = gd_block_sum<kThreads>(part, shared);
    float r = (float)(1.0 / sqrt(sum_sq / (double)dim + eps));
    if (threadIdx.x == 0)
        rstd[row] = r;
    for (size_t j = threadIdx.x; j < dim; j += kThreads)
        y[j] = weight[j] * (x[j] * r);
}

// dx_k += r (w_k g_k - x_k r^2 sum_j(g_j w_j x_j) / dim)
__global__ void rmsnorm_backward_rows_kernel(float *dinp, const float *dout, const float *inp,
                                             const float *weight, const float *rstd,
                                             size_t dim) {
    __shared__ double shared[kThreads];
    size_t row = blockIdx.x;
    const float *x = inp + row * dim, *g = dout + row * dim;
    float *dx = dinp + row * dim;
    float r = rstd[row];
    double part = 0;
    for (size_t j = threadIdx.x; j < dim; j += kThreads)
        part += (double)g[j] * (double)weight[j] * (double)x[j];
    double dot = gd_block_sum<kThreads>(part, shared);
    float coef = (float)((double)r * (double)r * dot / (double)dim);
    for (size_t j = threadIdx.x; j < dim; j += kThreads)
        dx[j] += r * (weight[j] * g[j] - x[j] * coef);
}

// dw_j += sum_i g_ij x_ij r_i, rows in order, in double.
__global__ void rmsnorm_backward_weight_kernel(float *dweight, const float *dout,
                                               const float *inp, const float *rstd, size_t n,
                                               size_t dim) {
    size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j >= dim)
        return;
    double acc = 0;
    for (size_t i = 0; i < n; i++)
        acc += (double)dout[i * dim + j] * (double)inp[i * dim + j] * (double)rstd[i];
    dweight[j] += (float)acc;
}

}  // namespace

extern "C" void gd_cuda_rmsnorm_forward(cudaStream_t stream, float *out, float *rstd,
                                        const float *inp, const float *weight, size_t n,
                                        size_t dim, double eps) {
    if (n == 0)
        return;
    rmsnorm_forward_kernel<<<(unsigned)n, kThreads, 0, stream>>>(out, rstd, inp, weight, dim,
                                                                 eps);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_rmsnorm_backward(cudaStream_t stream, float *dinp, float *dweight,
                                         const float *dout, const float *inp,
                                         const float *weight, const float *rstd, size_t n,
                                         size_t dim) {
    if (n == 0)
        return;
    if (dinp != nullptr) {
        rmsnorm_backward_rows_kernel<<<(unsigned)n, kThreads, 0, stream>>>(dinp, dout, inp,
                                                                           weight, rstd, dim);
        GD_CUDA_CHECK_LAUNCH();
    }
    if (dweight != nullptr) {
        size_t blocks = (dim + kThreads - 1) / kThreads;
        rmsnorm_backward_weight_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(
            dweight, dout, inp, rstd, n, dim);
        GD_CUDA_CHECK_LAUNCH();
    }
}
