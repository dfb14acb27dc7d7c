// RMSNorm, forward and backward (Hugging Face's LlamaRMSNorm). A block per
// row reduces in double through a fixed tree in shared memory, so a row's
// bits never depend on scheduling. dweight sums a column over every row in
// two fixed stages: a thread per column and chunk of kRowsPerChunk rows,
// then one per column over the chunks in order. (One thread walking all the
// rows, as the CPU op does, gave a model of width 768 three blocks.)
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;  // a power of two (block_reduce.cuh)
constexpr size_t kRowsPerChunk = 64;  // at least; more where the chunks would not fit a grid

// Rows per chunk of dweight's first stage: a function of n alone, so the
// bits depend on nothing else.
size_t rows_per_chunk(size_t n) {
    size_t fit = (n + 65534) / 65535;  // a grid has at most 65535 rows of blocks
    return fit > kRowsPerChunk ? fit : kRowsPerChunk;
}

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

// partials[c * dim + j] = sum over chunk c's rows i of g_ij x_ij r_i, in
// row order, in double. Grid (column blocks, chunks).
__global__ void rmsnorm_weight_partials_kernel(double *partials, const float *dout,
                                               const float *inp, const float *rstd, size_t n,
                                               size_t dim, size_t rows) {
    size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x, c = blockIdx.y;
    if (j >= dim)
        return;
    size_t lo = c * rows, hi = lo + rows < n ? lo + rows : n;
    double acc = 0;
    for (size_t i = lo; i < hi; i++)
        acc += (double)dout[i * dim + j] * (double)inp[i * dim + j] * (double)rstd[i];
    partials[c * dim + j] = acc;
}

// dw_j += the chunks' partials of column j, in chunk order.
__global__ void rmsnorm_weight_sum_kernel(float *dweight, const double *partials, size_t chunks,
                                          size_t dim) {
    size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j >= dim)
        return;
    double acc = 0;
    for (size_t c = 0; c < chunks; c++)
        acc += partials[c * dim + j];
    dweight[j] += (float)acc;
}

}  // namespace

extern "C" void gd_cuda_rmsnorm_forward(float *out, cudaStream_t stream, float *rstd,
                                        const float *inp, const float *weight, size_t n,
                                        size_t dim, double eps) {
    if (n == 0)
        return;
    rmsnorm_forward_kernel<<<(unsigned)n, kThreads, 0, stream>>>(out, rstd, inp, weight, dim,
                                                                 eps);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" size_t gd_cuda_rmsnorm_partials(size_t n, size_t dim) {
    size_t rows = rows_per_chunk(n);
    return (n + rows - 1) / rows * dim;
}

extern "C" void gd_cuda_rmsnorm_backward(cudaStream_t stream, float *dinp, float *dweight,
                                         const float *dout, const float *inp,
                                         const float *weight, const float *rstd, size_t n,
                                         size_t dim, double *partials) {
    if (n == 0)
        return;
    if (dinp != nullptr) {
        rmsnorm_backward_rows_kernel<<<(unsigned)n, kThreads, 0, stream>>>(dinp, dout, inp,
                                                                           weight, rstd, dim);
        GD_CUDA_CHECK_LAUNCH();
    }
    if (dweight != nullptr && dim > 0) {
        unsigned columns = (unsigned)((dim + kThreads - 1) / kThreads);
        size_t rows = rows_per_chunk(n), chunks = (n + rows - 1) / rows;
        rmsnorm_weight_partials_kernel<<<dim3(columns, (unsigned)chunks), kThreads, 0, stream>>>(
            partials, dout, inp, rstd, n, dim, rows);
        GD_CUDA_CHECK_LAUNCH();
        rmsnorm_weight_sum_kernel<<<columns, kThreads, 0, stream>>>(dweight, partials, chunks,
                                                                    dim);
        GD_CUDA_CHECK_LAUNCH();
    }
}
