// The codecs' arithmetic: block quantisation and bfloat16 rounding, and
// their inverses. The rule and its bits are kernels/cpu/codec_ops.h's: a
// value's code is a payload's bytes and its decoded value the residual's,
// so this file is compiled with --fmad=false, uses only exactly rounded
// float operations (IEEE division, as nvcc does without --use_fast_math)
// and integer work, and finds a block's largest magnitude as an integer
// maximum of the values' bit patterns, which no order can change.
#include "kernels/cpu/codec_ops.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

// One value per thread; a thread block holds whole quantiser blocks.
constexpr int kThreads = 256;
static_assert(kThreads % GD_QUANT_BLOCK_INT8 == 0 && kThreads % GD_QUANT_BLOCK_INT4 == 0,
              "a thread block holds whole quantiser blocks");

constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kExpMask = 0x7f800000u;
constexpr uint32_t kTinyKey = 0x1f800000u;  // 2^-64 (codec_ops.h)

unsigned tiles_for(size_t n) {
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

__device__ int32_t quantize_one(float v, float inv, int32_t lim) {
    float t = v * inv;
    int32_t r = (int32_t)t;
    float f = t - (float)r;  // exact (codec_ops.h)
    r += (f >= 0.5f) - (f <= -0.5f);
    r = r < lim ? r : lim;
    r = r > -lim ? r : -lim;
    return r;
}

// Tiles of kThreads values, block-sized groups of threads reducing their
// keys by a halving tree in shared memory. Threads past n hold key 0, as
// the CPU's zero padding does.
__global__ void quantize_blocks_kernel(int8_t *q, float *scales, float *decoded, const float *x,
                                       size_t n, int block, float limit) {
    __shared__ uint32_t keys[kThreads];
    const int t = (int)threadIdx.x, lane = t % block;
    for (size_t tile = blockIdx.x; tile * kThreads < n; tile += gridDim.x) {
        size_t i = tile * kThreads + (size_t)t;
        float v = i < n ? x[i] : 0.0f;
        keys[t] = __float_as_uint(v) & kAbsMask;
        __syncthreads();
        for (int s = block / 2; s > 0; s >>= 1) {
            if (lane < s)
                keys[t] = keys[t] > keys[t + s] ? keys[t] : keys[t + s];
            __syncthreads();
        }
        uint32_t mk = keys[t - lane];
        __syncthreads();  // the next tile overwrites keys
        if (i >= n)
            continue;
        float scale, out;
        int32_t code = 0;
        if (mk >= kExpMask || mk == 0) {
            scale = mk == 0 ? 0.0f : __uint_as_float(mk) / limit;
            out = mk == 0 ? 0.0f : v;  // non-finite: the input, as the CPU leaves it
        } else {
            float m = __uint_as_float(mk);
            scale = m / limit;
            if (mk < kTinyKey) {
                v = v * 0x1p64f;
                m = m * 0x1p64f;
            }
            float inv = limit / m;
            code = quantize_one(v, inv, (int32_t)limit);
            out = (float)code * scale;
        }
        q[i] = (int8_t)code;
        if (decoded != nullptr)
            decoded[i] = out;
        if (lane == 0)
            scales[i / (size_t)block] = scale;
    }
}

__global__ void dequantize_blocks_kernel(float *y, const int8_t *q, const float *scales,
                                         size_t n, int block) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = (float)q[i] * scales[i / (size_t)block];
}

__global__ void bf16_quantize_kernel(uint16_t *h, float *decoded, const float *x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t v = __float_as_uint(x[i]);
        uint16_t r = gd_bf16_code(v);
        if (h != nullptr)
            h[i] = r;
        if (decoded != nullptr)
            decoded[i] = (v & kExpMask) == kExpMask ? x[i] : gd_bf16_value(r);
    }
}

__global__ void bf16_dequantize_kernel(float *y, const uint16_t *h, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = __uint_as_float((uint32_t)h[i] << 16);
}

}  // namespace

extern "C" void gd_cuda_quantize_blocks(cudaStream_t stream, int8_t *q, float *scales,
                                        float *decoded, const float *x, size_t n, size_t block,
                                        float limit) {
    if (n == 0)
        return;
    quantize_blocks_kernel<<<tiles_for(n), kThreads, 0, stream>>>(q, scales, decoded, x, n, (int)block, limit);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_dequantize_blocks(cudaStream_t stream, float *y, const int8_t *q,
                                          const float *scales, size_t n, size_t block) {
    if (n == 0)
        return;
    dequantize_blocks_kernel<<<tiles_for(n), kThreads, 0, stream>>>(y, q, scales, n, (int)block);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_bf16_quantize(cudaStream_t stream, uint16_t *h, float *decoded,
                                      const float *x, size_t n) {
    if (n == 0)
        return;
    bf16_quantize_kernel<<<tiles_for(n), kThreads, 0, stream>>>(h, decoded, x, n);
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_bf16_dequantize(cudaStream_t stream, float *y, const uint16_t *h,
                                        size_t n) {
    if (n == 0)
        return;
    bf16_dequantize_kernel<<<tiles_for(n), kThreads, 0, stream>>>(y, h, n);
    GD_CUDA_CHECK_LAUNCH();
}
