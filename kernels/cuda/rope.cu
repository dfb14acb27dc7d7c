// Rotary position embedding (rotate_half), forward and backward: one thread
// per rotated pair, each pair read before it is written (the forward may
// run in place), the backward the rotation by the negated angle, added.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 256;

__global__ void rope_kernel(float *out, const float *in, const float *cos_table,
                            const float *sin_table, size_t rows, size_t seq_len, size_t heads,
                            size_t head_dim, bool backward) {
    size_t half = head_dim / 2, pairs = rows * heads * half;
    for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < pairs;
         p += (size_t)gridDim.x * blockDim.x) {
        size_t i = p % half, h = (p / half) % heads, row = p / (half * heads);
        size_t pos = row % seq_len;
        float cs = cos_table[pos * half + i], sn = sin_table[pos * half + i];
        size_t base = row * heads * head_dim + h * head_dim;
        float x1 = in[base + i], x2 = in[base + i + half];
        if (backward) {
            out[base + i] += x1 * cs + x2 * sn;
            out[base + i + half] += x2 * cs - x1 * sn;
        } else {
            out[base + i] = x1 * cs - x2 * sn;
            out[base + i + half] = x2 * cs + x1 * sn;
        }
    }
}

void launch(cudaStream_t stream, float *out, const float *in, const float *cos_table,
            const float *sin_table, size_t batch, size_t seq_len, size_t heads,
            size_t head_dim, bool backward) {
    size_t pairs = batch * seq_len * heads * (head_dim / 2);
    if (pairs == 0 || out == nullptr)
        return;
    size_t blocks = (pairs + kThreads - 1) / kThreads;
    if (blocks > 65535 * 8)
        blocks = 65535 * 8;
    rope_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(out, in, cos_table, sin_table,
                                                           batch * seq_len, seq_len, heads,
                                                           head_dim, backward);
    GD_CUDA_CHECK_LAUNCH();
}

}  // namespace

extern "C" void gd_cuda_rope_forward(float *out, cudaStream_t stream, const float *inp,
                                     const float *cos_table, const float *sin_table,
                                     size_t batch, size_t seq_len, size_t heads,
                                     size_t head_dim) {
    launch(stream, out, inp, cos_table, sin_table, batch, seq_len, heads, head_dim, false);
}

extern "C" void gd_cuda_rope_backward(cudaStream_t stream, float *dinp, const float *dout,
                                      const float *cos_table, const float *sin_table,
                                      size_t batch, size_t seq_len, size_t heads,
                                      size_t head_dim) {
    launch(stream, dinp, dout, cos_table, sin_table, batch, seq_len, heads, head_dim, true);
}
