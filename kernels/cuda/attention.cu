// Causal self-attention with grouped-query heads, forward and backward, in
// the CPU op's layout: q (B*T, heads*hd), k and v (B*T, kv_heads*hd), the
// probabilities att (B, heads, T, T) kept for the backward pass. A simple
// first version: a block per query row (forward, and the softmax backward
// with dq), a block per key row (dk, dv). Every sum runs in a fixed order
// (strided partials through a fixed tree, or one thread walking a row), with
// no atomics, so the same inputs give the same bits run to run.
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 128;  // a power of two (block_reduce.cuh)

struct Shape {
    size_t T, heads, kv_heads, hd;
    float scale;
};

// The query row a block owns, block (b * heads + h) * T + t, and its
// pointers: its head's slice of row t of a (B*T, heads*hd) tensor, the key
// and value head it reads, and its row of a (B, heads, T, T) tensor.
struct QueryRow {
    size_t t, q_at, kv_base, scores;
};

__device__ QueryRow query_row(const Shape &s) {
    size_t t = blockIdx.x % s.T, bh = blockIdx.x / s.T;
    size_t h = bh % s.heads, b = bh / s.heads, kvh = h / (s.heads / s.kv_heads);
    return QueryRow{t, (b * s.T + t) * s.heads * s.hd + h * s.hd,
                    b * s.T * s.kv_heads * s.hd + kvh * s.hd, blockIdx.x * s.T};
}

// Block (b * heads + h) * T + t: query row t of head h in sequence b.
__global__ void attention_forward_kernel(float *out, float *att, const float *q, const float *k,
                                         const float *v, Shape s) {
    __shared__ float fshared[kThreads];
    __shared__ double dshared[kThreads];
    QueryRow r = query_row(s);
    size_t t = r.t, kv_stride = s.kv_heads * s.hd;
    const float *qi = q + r.q_at, *kb = k + r.kv_base, *vb = v + r.kv_base;
    float *row = att + r.scores;
    float m = -INFINITY;
    for (size_t j = threadIdx.x; j <= t; j += kThreads) {
        const float *kj = kb + j * kv_stride;
        float dot = 0.0f;
        for (size_t e = 0; e < s.hd; e++)
            dot += qi[e] * kj[e];
        row[j] = s.scale * dot;
        m = fmaxf(m, row[j]);
    }
    m = gd_block_max<kThreads>(m, fshared);
    double part = 0;
    for (size_t j = threadIdx.x; j <= t; j += kThreads) {
        row[j] = expf(row[j] - m);
        part += (double)row[j];
    }
    double inv = 1.0 / gd_block_sum<kThreads>(part, dshared);
    for (size_t j = threadIdx.x; j < s.T; j += kThreads)
        row[j] = j <= t ? (float)((double)row[j] * inv) : 0.0f;
    __syncthreads();
    float *oi = out + r.q_at;
    for (size_t e = threadIdx.x; e < s.hd; e += kThreads) {
        float acc = 0.0f;
        for (size_t j = 0; j <= t; j++)
            acc += row[j] * vb[j * kv_stride + e];
        oi[e] = acc;
    }
}

// Per query row: dP = dO V^T, dS = P * (dP - rowsum(P * dP)) into scratch,
// then dQ += scale dS K.
__global__ void attention_backward_rows_kernel(float *dq, float *ds_all, const float *dout,
                                               const float *att, const float *k,
                                               const float *v, Shape s) {
    __shared__ double dshared[kThreads];
    QueryRow r = query_row(s);
    size_t t = r.t, kv_stride = s.kv_heads * s.hd;
    const float *doi = dout + r.q_at, *kb = k + r.kv_base, *vb = v + r.kv_base;
    const float *p = att + r.scores;
    float *ds = ds_all + r.scores;
    double part = 0;
    for (size_t j = threadIdx.x; j <= t; j += kThreads) {
        const float *vj = vb + j * kv_stride;
        float dot = 0.0f;
        for (size_t e = 0; e < s.hd; e++)
            dot += doi[e] * vj[e];
        ds[j] = dot;
        part += (double)p[j] * (double)dot;
    }
    float rowdot = (float)gd_block_sum<kThreads>(part, dshared);
    for (size_t j = threadIdx.x; j < s.T; j += kThreads)
        ds[j] = j <= t ? p[j] * (ds[j] - rowdot) : 0.0f;
    __syncthreads();
    if (dq == nullptr)
        return;
    float *dqi = dq + r.q_at;
    for (size_t e = threadIdx.x; e < s.hd; e += kThreads) {
        float acc = 0.0f;
        for (size_t j = 0; j <= t; j++)
            acc += ds[j] * kb[j * kv_stride + e];
        dqi[e] += s.scale * acc;
    }
}

// Per key row j of a key/value head: its query heads in head order, each
// over the query rows that see it (i >= j) in order:
//   dV += P^T dO,   dK += scale dS^T Q.
__global__ void attention_backward_keys_kernel(float *dk, float *dv, const float *ds_all,
                                               const float *att, const float *dout,
                                               const float *q, Shape s) {
    size_t j = blockIdx.x % s.T, bkv = blockIdx.x / s.T;
    size_t kvh = bkv % s.kv_heads, b = bkv / s.kv_heads, group = s.heads / s.kv_heads;
    size_t q_stride = s.heads * s.hd, kv_stride = s.kv_heads * s.hd;
    for (size_t e = threadIdx.x; e < s.hd; e += kThreads) {
        float acc_v = 0.0f, acc_k = 0.0f;
        for (size_t h = kvh * group; h < (kvh + 1) * group; h++) {
            const float *p = att + (b * s.heads + h) * s.T * s.T;
            const float *ds = ds_all + (b * s.heads + h) * s.T * s.T;
            for (size_t i = j; i < s.T; i++) {
                size_t qrow = (b * s.T + i) * q_stride + h * s.hd + e;
                acc_v += p[i * s.T + j] * dout[qrow];
                acc_k += ds[i * s.T + j] * q[qrow];
            }
        }
        size_t at = (b * s.T + j) * kv_stride + kvh * s.hd + e;
        if (dv != nullptr)
            dv[at] += acc_v;
        if (dk != nullptr)
            dk[at] += s.scale * acc_k;
    }
}

Shape shape_of(size_t seq_len, size_t heads, size_t kv_heads, size_t head_dim) {
    return Shape{seq_len, heads, kv_heads, head_dim, (float)(1.0 / sqrt((double)head_dim))};
}

}  // namespace

extern "C" void gd_cuda_attention_forward(cudaStream_t stream, float *out, float *att,
                                          const float *q, const float *k, const float *v,
                                          size_t batch, size_t seq_len, size_t heads,
                                          size_t kv_heads, size_t head_dim) {
    size_t rows = batch * heads * seq_len;
    if (rows == 0)
        return;
    attention_forward_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(
        out, att, q, k, v, shape_of(seq_len, heads, kv_heads, head_dim));
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_attention_backward(cudaStream_t stream, float *dq, float *dk, float *dv,
                                           float *scratch, const float *dout, const float *att,
                                           const float *q, const float *k, const float *v,
                                           size_t batch, size_t seq_len, size_t heads,
                                           size_t kv_heads, size_t head_dim) {
    size_t rows = batch * heads * seq_len, keys = batch * kv_heads * seq_len;
    if (rows == 0)
        return;
    Shape s = shape_of(seq_len, heads, kv_heads, head_dim);
    attention_backward_rows_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(dq, scratch, dout,
                                                                            att, k, v, s);
    GD_CUDA_CHECK_LAUNCH();
    if (dk == nullptr && dv == nullptr)
        return;
    attention_backward_keys_kernel<<<(unsigned)keys, kThreads, 0, stream>>>(dk, dv, scratch,
                                                                            att, dout, q, s);
    GD_CUDA_CHECK_LAUNCH();
}
