// Flash attention on tensor cores, for head dims that are a multiple of 16
// up to 128 (flash_attention.cu picks it; Llama's and Qwen's heads are
// 128): tiles in shared memory, bf16 products with float sums through the
// warp matrix functions (wmma, 16 x 16 x 16), nothing of size T x T, no
// atomics, and every sum in an order fixed by the shape alone, so a run's
// bits are the same run to run and for any number of GPUs.
//
// A block is two warps; each warp owns 16 rows (query rows, or keys for
// dk and dv) of the block's 32, and its accumulators live in registers.
//
//   forward    per query block: a first sweep over its key blocks gives
//              each row's maximum and sum (the log-sum-exp); a second
//              recomputes the scores, turns them into probabilities
//              exp(s - lse), already normalised, and adds P V. Recomputing
//              the scores costs one product more than an online rescale
//              but keeps the output's accumulators in registers untouched.
//   dk, dv     per key block: the key/value head's query heads in head
//              order, their query blocks in order: S^T and dP^T from the
//              block's keys and values, P^T and dS^T, then dV += P^T dO and
//              dK += dS^T Q;
//   dq         per query block: its key blocks in order, dQ += dS K.
//
// What is rounded to bf16: q, k, v and dout as a tile brings them (exact
// for a bf16 run, whose activations are bf16 values), and the
// probabilities and dS before their products, as FlashAttention-2 does.
// Scores, statistics and accumulators are float. The CPU reference
// (kernels/cpu/ops_body.inc) sums in double; test_backend_ops holds these
// kernels to it within its bound for attention.
#include <math.h>

#include <cuda_bf16.h>
#include <mma.h>

#include "kernels/cpu/codec_ops.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

using namespace nvcuda;

constexpr int kWarps = 2;
constexpr int kThreads = 32 * kWarps;
constexpr int kTile = 16;             // wmma's M, N and K
constexpr int kRows = kTile * kWarps; // rows a block owns: 16 a warp
constexpr int kInner = 32;            // rows of the other side an inner step brings
constexpr int kHeadMax = 128;

typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> frag_b_rows;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> frag_b_cols;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag_acc;

// The head dim is a template parameter (HD), so the loops over a row's
// 16-column slabs have fixed counts and the accumulators stay in registers.
struct mma_shape {
    size_t B, T, H, KV, q_stride, kv_stride;
    float scale;
};

__device__ inline const __nv_bfloat16 *as_bf16(const uint16_t *p) {
    return reinterpret_cast<const __nv_bfloat16 *>(p);
}

__device__ inline uint16_t code_of(float x) {
    return gd_bf16_code(__float_as_uint(x));
}

// rows x HD values of one head as codes at dst (leading dimension HD): row
// r from src + (row0 + r) * stride; rows at or past T are zeros.
template <int HD>
__device__ void load_tile(uint16_t *dst, const float *src, size_t row0, size_t stride,
                          const mma_shape &s, int rows) {
    for (int i = threadIdx.x; i < rows * HD; i += kThreads) {
        size_t row = row0 + (size_t)(i / HD);
        dst[i] = row < s.T ? code_of(src[row * stride + (size_t)(i % HD)]) : 0;
    }
}

// out (16 x kInner floats, leading dimension kInner) = a (16 x HD) times the
// transpose of b (kInner x HD); a and b are codes with leading dimension HD.
template <int HD>
__device__ void product_nt(float *out, const uint16_t *a, const uint16_t *b) {
    for (int n = 0; n < kInner / kTile; n++) {
        frag_acc acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int k = 0; k < HD; k += kTile) {
            frag_a fa;
            frag_b_cols fb;
            wmma::load_matrix_sync(fa, as_bf16(a + k), HD);
            wmma::load_matrix_sync(fb, as_bf16(b + n * kTile * HD + k), HD);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        wmma::store_matrix_sync(out + n * kTile, acc, kInner, wmma::mem_row_major);
    }
}

// acc (16 x HD, a fragment per 16 columns) += a (16 x kInner codes,
// leading dimension kInner) times b (kInner x HD codes, leading dimension HD).
template <int HD>
__device__ void product_nn(frag_acc *acc, const uint16_t *a, const uint16_t *b) {
    for (int k = 0; k < kInner; k += kTile) {
        frag_a fa;
        wmma::load_matrix_sync(fa, as_bf16(a + k), kInner);
        for (int n = 0; n < HD / kTile; n++) {
            frag_b_rows fb;
            wmma::load_matrix_sync(fb, as_bf16(b + k * HD + n * kTile), HD);
            wmma::mma_sync(acc[n], fa, fb, acc[n]);
        }
    }
}

template <int HD>
__device__ void zero(frag_acc *acc) {
    for (int n = 0; n < HD / kTile; n++)
        wmma::fill_fragment(acc[n], 0.0f);
}

// Writes (or adds) scale times a warp's 16 x HD result to rows row0.. of
// dst (row r at dst + (row0 + r) * stride), through the warp's stage of
// 16 x kInner floats; rows at or past T are left alone. Every thread of
// the block calls it (it holds barriers).
template <int HD>
__device__ void store_rows(float *dst, size_t row0, size_t stride, const frag_acc *acc,
                           float *stage, const mma_shape &s, float scale, bool add) {
    int lane = threadIdx.x % 32;
    for (int n = 0; n < HD / kTile; n++) {
        wmma::store_matrix_sync(stage, acc[n], kInner, wmma::mem_row_major);
        __syncthreads();
        for (int i = lane; i < kTile * kTile; i += 32) {
            size_t row = row0 + (size_t)(i / kTile);
            if (row >= s.T)
                continue;
            float *p = dst + row * stride + (size_t)(n * kTile + i % kTile);
            float x = stage[(i / kTile) * kInner + i % kTile] * scale;
            *p = add ? *p + x : x;
        }
        __syncthreads();
    }
}

// Block i's head and block of rows: i = head * blocks + block.
struct block_at {
    size_t b, head, row0;
};
__device__ block_at block_of(size_t heads, size_t T) {
    size_t blocks = (T + kRows - 1) / kRows;
    block_at a;
    a.b = blockIdx.x / blocks / heads;
    a.head = blockIdx.x / blocks % heads;
    a.row0 = blockIdx.x % blocks * (size_t)kRows;
    return a;
}

template <int HD>
__global__ void flash_mma_forward_kernel(float *out, float *lse, const float *q, const float *k,
                                         const float *v, mma_shape s) {
    __shared__ __align__(32) uint16_t sq[kRows * HD];
    __shared__ __align__(32) uint16_t skv[kInner * HD];
    __shared__ __align__(32) float sscore[kWarps][kTile * kInner];
    __shared__ __align__(32) uint16_t sprob[kWarps][kTile * kInner];
    __shared__ float srow_lse[kRows];
    block_at at = block_of(s.H, s.T);
    size_t h = at.head, kvh = h / (s.H / s.KV), q0 = at.row0;
    int tid = threadIdx.x, warp = tid / 32;
    const float *qb = q + at.b * s.T * s.q_stride + h * HD;
    const float *kb = k + at.b * s.T * s.kv_stride + kvh * HD;
    const float *vb = v + at.b * s.T * s.kv_stride + kvh * HD;
    size_t last = (q0 + kRows < s.T ? q0 + kRows : s.T) - 1;
    load_tile<HD>(sq, qb, q0, s.q_stride, s, kRows);

    // Each row's maximum and sum, in its thread (tid < kRows), key block by
    // key block.
    float row_max = 0, row_sum = 0;
    for (size_t k0 = 0; k0 <= last; k0 += kInner) {
        __syncthreads();
        load_tile<HD>(skv, kb, k0, s.kv_stride, s, kInner);
        __syncthreads();
        product_nt<HD>(sscore[warp], sq + warp * kTile * HD, skv);
        __syncthreads();
        size_t t = q0 + (size_t)tid;
        if (tid < kRows && t < s.T && t >= k0) {
            const float *row = sscore[tid / kTile] + (tid % kTile) * kInner;
            int n = t - k0 + 1 < (size_t)kInner ? (int)(t - k0 + 1) : kInner;
            float block_max = row[0] * s.scale;
            for (int j = 1; j < n; j++)
                block_max = fmaxf(block_max, row[j] * s.scale);
            float new_max = k0 == 0 ? block_max : fmaxf(row_max, block_max);
            row_sum = k0 == 0 ? 0 : row_sum * expf(row_max - new_max);
            for (int j = 0; j < n; j++)
                row_sum += expf(row[j] * s.scale - new_max);
            row_max = new_max;
        }
    }
    if (tid < kRows) {
        size_t t = q0 + (size_t)tid;
        srow_lse[tid] = t < s.T ? row_max + logf(row_sum) : 0;
        if (t < s.T)
            lse[(at.b * s.H + h) * s.T + t] = srow_lse[tid];
    }

    frag_acc acc[HD / kTile];
    zero<HD>(acc);
    for (size_t k0 = 0; k0 <= last; k0 += kInner) {
        __syncthreads();
        load_tile<HD>(skv, kb, k0, s.kv_stride, s, kInner);
        __syncthreads();
        product_nt<HD>(sscore[warp], sq + warp * kTile * HD, skv);
        __syncthreads();
        for (int i = tid; i < kRows * kInner; i += kThreads) {
            int r = i / kInner, j = i % kInner, at_w = (r % kTile) * kInner + j;
            size_t t = q0 + (size_t)r, key = k0 + (size_t)j;
            float p = t < s.T && key <= t
                          ? expf(sscore[r / kTile][at_w] * s.scale - srow_lse[r])
                          : 0.0f;
            sprob[r / kTile][at_w] = code_of(p);
        }
        load_tile<HD>(skv, vb, k0, s.kv_stride, s, kInner);
        __syncthreads();
        product_nn<HD>(acc, sprob[warp], skv);
    }
    __syncthreads();
    store_rows<HD>(out + at.b * s.T * s.q_stride + h * HD, q0 + (size_t)(warp * kTile),
               s.q_stride, acc, sscore[warp], s, 1.0f, false);
}

// The log-sum-exp and D of query rows row0.. of one head (rows at or past T:
// zeros), for the backward's probabilities.
__device__ void load_row_stats(float *slse, float *sD, const float *lse, const float *D,
                               size_t row0, const mma_shape &s, int rows) {
    if ((int)threadIdx.x < rows) {
        size_t t = row0 + threadIdx.x;
        slse[threadIdx.x] = t < s.T ? lse[t] : 0;
        sD[threadIdx.x] = t < s.T ? D[t] : 0;
    }
}

// P and dS of a block: p = exp(score * scale - lse) where the key is at
// most the query row, else 0; ds = p (dp - D).
__device__ void prob_and_ds(float score, float dp, float row_lse, float row_D, bool visible,
                            const mma_shape &s, float *p, float *ds) {
    *p = visible ? expf(score * s.scale - row_lse) : 0.0f;
    *ds = *p * (dp - row_D);
}

template <int HD>
__global__ void flash_mma_dkdv_kernel(float *dk, float *dv, const float *D, const float *dout,
                                      const float *lse, const float *q, const float *k,
                                      const float *v, mma_shape s) {
    __shared__ __align__(32) uint16_t sk[kRows * HD];
    __shared__ __align__(32) uint16_t sv[kRows * HD];
    __shared__ __align__(32) uint16_t sq[kInner * HD];
    __shared__ __align__(32) uint16_t sdo[kInner * HD];
    __shared__ __align__(32) float sscore[kWarps][kTile * kInner];
    __shared__ __align__(32) float sdp[kWarps][kTile * kInner];
    __shared__ __align__(32) uint16_t sprob[kWarps][kTile * kInner];
    __shared__ __align__(32) uint16_t sds[kWarps][kTile * kInner];
    __shared__ float slse[kInner], sD[kInner];
    block_at at = block_of(s.KV, s.T);
    size_t kvh = at.head, k0 = at.row0, group = s.H / s.KV;
    int tid = threadIdx.x, warp = tid / 32;
    size_t kv_at = at.b * s.T * s.kv_stride + kvh * HD;
    load_tile<HD>(sk, k + kv_at, k0, s.kv_stride, s, kRows);
    load_tile<HD>(sv, v + kv_at, k0, s.kv_stride, s, kRows);
    frag_acc adk[HD / kTile], adv[HD / kTile];
    zero<HD>(adk);
    zero<HD>(adv);
    for (size_t h = kvh * group; h < (kvh + 1) * group; h++) {
        size_t q_at = at.b * s.T * s.q_stride + h * HD, row_at = (at.b * s.H + h) * s.T;
        // Rows before k0 see none of these keys.
        for (size_t q0 = k0; q0 < s.T; q0 += kInner) {
            __syncthreads();
            load_tile<HD>(sq, q + q_at, q0, s.q_stride, s, kInner);
            load_tile<HD>(sdo, dout + q_at, q0, s.q_stride, s, kInner);
            load_row_stats(slse, sD, lse + row_at, D + row_at, q0, s, kInner);
            __syncthreads();
            product_nt<HD>(sscore[warp], sk + warp * kTile * HD, sq);
            product_nt<HD>(sdp[warp], sv + warp * kTile * HD, sdo);
            __syncthreads();
            for (int i = tid; i < kRows * kInner; i += kThreads) {
                int r = i / kInner, c = i % kInner, at_w = (r % kTile) * kInner + c;
                size_t key = k0 + (size_t)r, t = q0 + (size_t)c;
                float p, ds;
                prob_and_ds(sscore[r / kTile][at_w], sdp[r / kTile][at_w], slse[c], sD[c],
                            t < s.T && key <= t, s, &p, &ds);
                sprob[r / kTile][at_w] = code_of(p);
                sds[r / kTile][at_w] = code_of(ds);
            }
            __syncthreads();
            product_nn<HD>(adv, sprob[warp], sdo);
            product_nn<HD>(adk, sds[warp], sq);
        }
    }
    __syncthreads();
    size_t key0 = k0 + (size_t)(warp * kTile);
    if (dv != nullptr)
        store_rows<HD>(dv + kv_at, key0, s.kv_stride, adv, sscore[warp], s, 1.0f, true);
    if (dk != nullptr)
        store_rows<HD>(dk + kv_at, key0, s.kv_stride, adk, sscore[warp], s, s.scale, true);
}

template <int HD>
__global__ void flash_mma_dq_kernel(float *dq, const float *D, const float *dout,
                                    const float *lse, const float *q, const float *k,
                                    const float *v, mma_shape s) {
    __shared__ __align__(32) uint16_t sq[kRows * HD];
    __shared__ __align__(32) uint16_t sdo[kRows * HD];
    __shared__ __align__(32) uint16_t sk[kInner * HD];
    __shared__ __align__(32) uint16_t sv[kInner * HD];
    __shared__ __align__(32) float sscore[kWarps][kTile * kInner];
    __shared__ __align__(32) float sdp[kWarps][kTile * kInner];
    __shared__ __align__(32) uint16_t sds[kWarps][kTile * kInner];
    __shared__ float slse[kRows], sD[kRows];
    block_at at = block_of(s.H, s.T);
    size_t h = at.head, kvh = h / (s.H / s.KV), q0 = at.row0;
    int tid = threadIdx.x, warp = tid / 32;
    size_t q_at = at.b * s.T * s.q_stride + h * HD, row_at = (at.b * s.H + h) * s.T;
    size_t kv_at = at.b * s.T * s.kv_stride + kvh * HD;
    load_tile<HD>(sq, q + q_at, q0, s.q_stride, s, kRows);
    load_tile<HD>(sdo, dout + q_at, q0, s.q_stride, s, kRows);
    load_row_stats(slse, sD, lse + row_at, D + row_at, q0, s, kRows);
    frag_acc adq[HD / kTile];
    zero<HD>(adq);
    size_t last = (q0 + kRows < s.T ? q0 + kRows : s.T) - 1;
    for (size_t k0 = 0; k0 <= last; k0 += kInner) {
        __syncthreads();
        load_tile<HD>(sk, k + kv_at, k0, s.kv_stride, s, kInner);
        load_tile<HD>(sv, v + kv_at, k0, s.kv_stride, s, kInner);
        __syncthreads();
        product_nt<HD>(sscore[warp], sq + warp * kTile * HD, sk);
        product_nt<HD>(sdp[warp], sdo + warp * kTile * HD, sv);
        __syncthreads();
        for (int i = tid; i < kRows * kInner; i += kThreads) {
            int r = i / kInner, c = i % kInner, at_w = (r % kTile) * kInner + c;
            size_t t = q0 + (size_t)r, key = k0 + (size_t)c;
            float p, ds;
            prob_and_ds(sscore[r / kTile][at_w], sdp[r / kTile][at_w], slse[r], sD[r],
                        t < s.T && key <= t, s, &p, &ds);
            sds[r / kTile][at_w] = code_of(ds);
        }
        __syncthreads();
        product_nn<HD>(adq, sds[warp], sk);
    }
    __syncthreads();
    store_rows<HD>(dq + q_at, q0 + (size_t)(warp * kTile), s.q_stride, adq, sscore[warp], s,
               s.scale, true);
}

mma_shape shape_of(size_t batch, size_t seq_len, size_t heads, size_t kv_heads,
                   size_t head_dim) {
    mma_shape s;
    s.B = batch;
    s.T = seq_len;
    s.H = heads;
    s.KV = kv_heads;
    s.q_stride = heads * head_dim;
    s.kv_stride = kv_heads * head_dim;
    s.scale = (float)(1.0 / sqrt((double)head_dim));
    return s;
}

// Blocks for `heads` heads of batch sequences of seq_len rows; 0 when the
// grid would be too large for one launch.
unsigned grid_for(size_t batch, size_t heads, size_t seq_len) {
    size_t blocks = batch * heads * ((seq_len + kRows - 1) / kRows);
    return blocks <= 0x7fffffffu ? (unsigned)blocks : 0;
}

struct mma_args {
    float *out, *lse_out, *dq, *dk, *dv; // what the forward or the backward writes
    const float *D, *dout, *lse, *q, *k, *v;
    size_t batch, heads, kv_heads;
    mma_shape s;
    bool backward;
};

// The launches, through pointers to the head dim's instances (a launch
// names its kernel on one line: tests/cuda_emu/translate.sh).
template <int HD>
void run(cudaStream_t stream, const mma_args &a) {
    if (!a.backward) {
        auto forward_kernel = flash_mma_forward_kernel<HD>;
        forward_kernel<<<grid_for(a.batch, a.heads, a.s.T), kThreads, 0, stream>>>(
            a.out, a.lse_out, a.q, a.k, a.v, a.s);
        GD_CUDA_CHECK_LAUNCH();
        return;
    }
    if (a.dk != nullptr || a.dv != nullptr) {
        auto dkdv_kernel = flash_mma_dkdv_kernel<HD>;
        dkdv_kernel<<<grid_for(a.batch, a.kv_heads, a.s.T), kThreads, 0, stream>>>(
            a.dk, a.dv, a.D, a.dout, a.lse, a.q, a.k, a.v, a.s);
        GD_CUDA_CHECK_LAUNCH();
    }
    if (a.dq != nullptr) {
        auto dq_kernel = flash_mma_dq_kernel<HD>;
        dq_kernel<<<grid_for(a.batch, a.heads, a.s.T), kThreads, 0, stream>>>(
            a.dq, a.D, a.dout, a.lse, a.q, a.k, a.v, a.s);
        GD_CUDA_CHECK_LAUNCH();
    }
}

void run_for(cudaStream_t stream, size_t head_dim, const mma_args &a) {
    switch (head_dim) {
    case 16: run<16>(stream, a); break;
    case 32: run<32>(stream, a); break;
    case 48: run<48>(stream, a); break;
    case 64: run<64>(stream, a); break;
    case 80: run<80>(stream, a); break;
    case 96: run<96>(stream, a); break;
    case 112: run<112>(stream, a); break;
    case 128: run<128>(stream, a); break;
    default: GD_CUDA_FAIL("flash attention", "tensor-core kernels", "head dim not instantiated");
    }
}

} // namespace

extern "C" bool gd_cuda_flash_mma_fits(size_t batch, size_t seq_len, size_t heads,
                                       size_t head_dim) {
    return head_dim > 0 && head_dim % kTile == 0 && head_dim <= kHeadMax &&
           grid_for(batch, heads, seq_len) > 0;
}

extern "C" void gd_cuda_flash_mma_forward(cudaStream_t stream, float *out, float *lse,
                                          const float *q, const float *k, const float *v,
                                          size_t batch, size_t seq_len, size_t heads,
                                          size_t kv_heads, size_t head_dim) {
    mma_args a = {};
    a.out = out;
    a.lse_out = lse;
    a.q = q;
    a.k = k;
    a.v = v;
    a.batch = batch;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.s = shape_of(batch, seq_len, heads, kv_heads, head_dim);
    run_for(stream, head_dim, a);
}

extern "C" void gd_cuda_flash_mma_backward(cudaStream_t stream, float *dq, float *dk, float *dv,
                                           const float *D, const float *dout, const float *lse,
                                           const float *q, const float *k, const float *v,
                                           size_t batch, size_t seq_len, size_t heads,
                                           size_t kv_heads, size_t head_dim) {
    mma_args a = {};
    a.dq = dq;
    a.dk = dk;
    a.dv = dv;
    a.D = D;
    a.dout = dout;
    a.lse = lse;
    a.q = q;
    a.k = k;
    a.v = v;
    a.batch = batch;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.s = shape_of(batch, seq_len, heads, kv_heads, head_dim);
    a.backward = true;
    run_for(stream, head_dim, a);
}
