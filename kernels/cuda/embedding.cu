// Token embedding, forward and backward. The backward gives each thread one
// column of the table and walks the rows in position order, as the CPU op
// does by column blocks: repeated tokens add in a fixed order, no two
// threads touch one element, and no atomics are needed.
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

__global__ void embedding_backward_kernel(float *dtable, const float *dout,
                                          const int32_t *tokens, size_t n, size_t dim) {
    size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j >= dim)
        return;
    for (size_t i = 0; i < n; i++)
        dtable[(size_t)tokens[i] * dim + j] += dout[i * dim + j];
}

}  // namespace

extern "C" void gd_cuda_embedding_forward(cudaStream_t stream, float *out, const int32_t *tokens,
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
                                           size_t dim) {
    if (dtable == nullptr || n == 0 || dim == 0)
        return;
    size_t blocks = (dim + kThreads - 1) / kThreads;
    embedding_backward_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(dtable, dout, tokens,
                                                                         n, dim);
    GD_CUDA_CHECK_LAUNCH();
}
