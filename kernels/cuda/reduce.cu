// The sum of squares, chunk by chunk in the CPU's order: one thread walks
// one chunk in index order and adds in double with no fused multiply-add,
// so each partial has the CPU's bits. The aggregate's clipping weights come
// from these norms, and they are protocol. A chunk of 2^16 values per
// thread is slow per thread but there are n / 2^16 of them in parallel, and
// the pass reads each value once.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 64;

__global__ void sum_squares_kernel(double *partials, const float *x, size_t n, size_t chunk,
                                   size_t chunks) {
    size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (c >= chunks)
        return;
    size_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
    double sum = 0;
    for (size_t i = lo; i < hi; i++) {
        double v = (double)x[i];
        sum = __dadd_rn(sum, __dmul_rn(v, v));
    }
    partials[c] = sum;
}

}  // namespace

extern "C" void gd_cuda_sum_squares_chunks(cudaStream_t stream, double *partials, const float *x,
                                           size_t n, size_t chunk) {
    size_t chunks = (n + chunk - 1) / chunk;
    if (chunks == 0)
        return;
    size_t blocks = (chunks + kThreads - 1) / kThreads;
    sum_squares_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(partials, x, n, chunk, chunks);
    GD_CUDA_CHECK_LAUNCH();
}
