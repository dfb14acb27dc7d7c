// Token embedding, forward and backward. In the backward each block owns a
// range of the table's rows: it reads the tokens in position order (a tile
// at a time, in shared memory) and adds the gradient of every position
// whose token it owns, a thread per column. A table element thus receives
// its positions in order, as the CPU op adds them, no two threads touch
// one element, and no atomics are needed. (One thread per column walking
// every position gave a model of width 768 three blocks.)
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;

__global__ void embedding_forward_kernel(float *out, const int32_t *tokens, const float *table,
                                         size_t n, size_t dim) {
    size_t total = n * dim;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        size_t i = e / dim, j = e % dim;
        out[e] = table[(size_t)tokens[i] * dim + j];
    }
}

constexpr size_t kTokenTile = 4096;  // tokens per tile: 16 KiB of shared memory
constexpr size_t kMaxOwners = 1024;  // blocks of the backward at most

__global__ void embedding_backward_kernel(float *dtable, const float *dout,
                                          const int32_t *tokens, size_t n, size_t dim,
                                          size_t rows_per_block) {
    __shared__ int32_t tile[kTokenTile];
    size_t lo = blockIdx.x * rows_per_block, hi = lo + rows_per_block;
    for (size_t t0 = 0; t0 < n; t0 += kTokenTile) {
        size_t count = n - t0 < kTokenTile ? n - t0 : kTokenTile;
        for (size_t i = threadIdx.x; i < count; i += blockDim.x)
            tile[i] = tokens[t0 + i];
        __syncthreads();
        for (size_t i = 0; i < count; i++) {
            size_t token = (size_t)tile[i];
            if (token < lo || token >= hi)
                continue;
            float *row = dtable + token * dim;
            const float *g = dout + (t0 + i) * dim;
            for (size_t j = threadIdx.x; j < dim; j += blockDim.x)
                row[j] += g[j];
        }
        __syncthreads();
    }
}

}  // namespace

extern "C" void gd_cuda_embedding_forward(float *out, cudaStream_t stream, const int32_t *tokens,
                                          const float *table, size_t n, size_t dim) {
    size_t total = n * dim;
    if (total == 0)
        return;
    size_t blocks = (total + kThreads - 1) / kThreads;
    if (blocks > 65535 * 8)
        blocks = 65535 * 8;
    embedding_forward_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(out, tokens, table, n,
                                                                        dim);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_embedding_backward(cudaStream_t stream, float *dtable,
                                           const float *dout, const int32_t *tokens, size_t n,
                                           size_t dim, size_t vocab) {
    if (dtable == nullptr || n == 0 || dim == 0 || vocab == 0)
        return;
    size_t owners = vocab < kMaxOwners ? vocab : kMaxOwners;
    size_t rows = (vocab + owners - 1) / owners;
    owners = (vocab + rows - 1) / rows;
    embedding_backward_kernel<<<(unsigned)owners, kThreads, 0, stream>>>(dtable, dout, tokens, n,
                                                                         dim, rows);
    GD_CUDA_CHECK_LAUNCH();
}
