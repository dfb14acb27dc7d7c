// Flash attention on the GPU, for the backend's flash_attention slots
// (kernels/cuda/backend_cuda.c): the CPU reference's loops
// (kernels/cpu/ops_body.inc, gd_cpu_flash_attention_*) with one thread per
// output row, so nothing of size T x T exists and every sum runs in a
// fixed order in its own thread (in double): no atomics, no reduction
// across threads, the same bits run to run.
//
//   forward    a thread per query row: its keys in blocks of 64, an online
//              softmax (running maximum and sum rescaled as blocks arrive),
//              the output and the row's log-sum-exp;
//   backward   a thread per query row for D = dout . out; a thread per key
//              for dk and dv, over the key/value head's query heads in head
//              order and their rows in order; a thread per query row for
//              dq, over its keys in order.
//
// This is the simple form, for the head dims the tensor-core kernels do not
// take (flash_attention_mma.cu: multiples of 16 up to 128): each thread
// walks its keys or rows with the head's values in registers and local
// memory; its bits are the CPU reference's.
#include <math.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace {

constexpr int kThreads = 128;
constexpr size_t kBlock = 64;     // keys a block of the online softmax (GD_CPU_FLASH_BLOCK)
constexpr size_t kHeadMax = 512;  // GD_CPU_FLASH_HEAD_MAX

struct flash_shape {
    size_t B, T, H, KV, hd, q_stride, kv_stride;
    float scale;
};

__device__ double dot_row(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * (double)b[i];
    return s;
}

// Thread i: query row t of head h of sequence b (i = (b * H + h) * T + t).
__global__ void flash_forward_kernel(float *out, float *lse, const float *q, const float *k,
                                     const float *v, flash_shape s) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= s.B * s.H * s.T)
        return;
    size_t t = i % s.T, bh = i / s.T, b = bh / s.H, h = bh % s.H, kvh = h / (s.H / s.KV);
    const float *qt = q + (b * s.T + t) * s.q_stride + h * s.hd;
    const float *kb = k + b * s.T * s.kv_stride + kvh * s.hd;
    const float *vb = v + b * s.T * s.kv_stride + kvh * s.hd;
    double acc[kHeadMax];
    float score[kBlock];
    for (size_t d = 0; d < s.hd; d++)
        acc[d] = 0;
    float max = 0;
    double sum = 0;
    for (size_t j0 = 0; j0 <= t; j0 += kBlock) {
        size_t j1 = j0 + kBlock < t + 1 ? j0 + kBlock : t + 1;
        float block_max = 0;
        for (size_t j = j0; j < j1; j++) {
            score[j - j0] = (float)dot_row(qt, kb + j * s.kv_stride, s.hd) * s.scale;
            if (j == j0 || score[j - j0] > block_max)
                block_max = score[j - j0];
        }
        float new_max = j0 == 0 || block_max > max ? block_max : max;
        if (j0 > 0 && new_max != max) {
            double shrink = exp((double)max - (double)new_max);
            sum *= shrink;
            for (size_t d = 0; d < s.hd; d++)
                acc[d] *= shrink;
        }
        max = new_max;
        for (size_t j = j0; j < j1; j++) {
            float p = expf(score[j - j0] - max);
            sum += (double)p;
            const float *vj = vb + j * s.kv_stride;
            for (size_t d = 0; d < s.hd; d++)
                acc[d] += (double)p * (double)vj[d];
        }
    }
    float *ot = out + (b * s.T + t) * s.q_stride + h * s.hd;
    for (size_t d = 0; d < s.hd; d++)
        ot[d] = (float)(acc[d] / sum);
    lse[i] = (float)((double)max + log(sum));
}

// Thread i: D of query row i (as the forward's i): dout . out.
__global__ void flash_rowdot_kernel(float *D, const float *dout, const float *attn_out,
                                    flash_shape s) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= s.B * s.H * s.T)
        return;
    size_t t = i % s.T, bh = i / s.T, b = bh / s.H, h = bh % s.H;
    size_t at = (b * s.T + t) * s.q_stride + h * s.hd;
    D[i] = (float)dot_row(dout + at, attn_out + at, s.hd);
}

// Row t's probability of key j, and ds = p (dout_t . v_j - D_t).
__device__ float flash_ds(const float *qt, const float *dt, const float *kj, const float *vj,
                          float lse_t, float D_t, const flash_shape &s, float *p_out) {
    float score = (float)dot_row(qt, kj, s.hd) * s.scale;
    float p = expf(score - lse_t);
    float dp = (float)dot_row(dt, vj, s.hd);
    *p_out = p;
    return p * (dp - D_t);
}

// Thread i: key j of key/value head kvh of sequence b (i = (b * KV + kvh) * T + j).
__global__ void flash_dkdv_kernel(float *dk, float *dv, const float *D, const float *dout,
                                  const float *lse, const float *q, const float *k,
                                  const float *v, flash_shape s) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= s.B * s.KV * s.T)
        return;
    size_t j = i % s.T, bk = i / s.T, b = bk / s.KV, kvh = bk % s.KV, group = s.H / s.KV;
    size_t kv_at = (b * s.T + j) * s.kv_stride + kvh * s.hd;
    const float *kj = k + kv_at, *vj = v + kv_at;
    double acc_k[kHeadMax], acc_v[kHeadMax];
    for (size_t d = 0; d < s.hd; d++)
        acc_k[d] = acc_v[d] = 0;
    for (size_t h = kvh * group; h < (kvh + 1) * group; h++) {
        size_t row0 = (b * s.H + h) * s.T;
        for (size_t t = j; t < s.T; t++) {
            size_t at = (b * s.T + t) * s.q_stride + h * s.hd;
            float p;
            float ds = flash_ds(q + at, dout + at, kj, vj, lse[row0 + t], D[row0 + t], s, &p);
            for (size_t d = 0; d < s.hd; d++) {
                acc_v[d] += (double)p * (double)dout[at + d];
                acc_k[d] += (double)ds * (double)q[at + d];
            }
        }
    }
    for (size_t d = 0; d < s.hd; d++) {
        if (dv != nullptr)
            dv[kv_at + d] += (float)acc_v[d];
        if (dk != nullptr)
            dk[kv_at + d] += (float)(acc_k[d] * (double)s.scale);
    }
}

// Thread i: query row t of head h (as the forward's i).
__global__ void flash_dq_kernel(float *dq, const float *D, const float *dout, const float *lse,
                                const float *q, const float *k, const float *v, flash_shape s) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= s.B * s.H * s.T)
        return;
    size_t t = i % s.T, bh = i / s.T, b = bh / s.H, h = bh % s.H, kvh = h / (s.H / s.KV);
    size_t at = (b * s.T + t) * s.q_stride + h * s.hd;
    const float *kb = k + b * s.T * s.kv_stride + kvh * s.hd;
    const float *vb = v + b * s.T * s.kv_stride + kvh * s.hd;
    double acc[kHeadMax];
    for (size_t d = 0; d < s.hd; d++)
        acc[d] = 0;
    for (size_t j = 0; j <= t; j++) {
        float p;
        float ds = flash_ds(q + at, dout + at, kb + j * s.kv_stride, vb + j * s.kv_stride,
                            lse[i], D[i], s, &p);
        for (size_t d = 0; d < s.hd; d++)
            acc[d] += (double)ds * (double)kb[j * s.kv_stride + d];
    }
    for (size_t d = 0; d < s.hd; d++)
        dq[at + d] += (float)(acc[d] * (double)s.scale);
}

flash_shape shape_of(size_t batch, size_t seq_len, size_t heads, size_t kv_heads,
                     size_t head_dim) {
    flash_shape s;
    s.B = batch;
    s.T = seq_len;
    s.H = heads;
    s.KV = kv_heads;
    s.hd = head_dim;
    s.q_stride = heads * head_dim;
    s.kv_stride = kv_heads * head_dim;
    s.scale = (float)(1.0 / sqrt((double)head_dim));
    return s;
}

unsigned blocks_for(size_t threads) {
    return (unsigned)((threads + kThreads - 1) / kThreads);
}

}  // namespace

extern "C" void gd_cuda_flash_attention_forward(cudaStream_t stream, float *out, float *lse,
                                                const float *q, const float *k, const float *v,
                                                size_t batch, size_t seq_len, size_t heads,
                                                size_t kv_heads, size_t head_dim) {
    size_t rows = batch * heads * seq_len;
    if (rows == 0)
        return;
    if (gd_cuda_flash_mma_fits(batch, seq_len, heads, head_dim)) {
        gd_cuda_flash_mma_forward(stream, out, lse, q, k, v, batch, seq_len, heads, kv_heads,
                                  head_dim);
        return;
    }
    flash_forward_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(
        out, lse, q, k, v, shape_of(batch, seq_len, heads, kv_heads, head_dim));
    GD_CUDA_CHECK_LAUNCH();
}

extern "C" void gd_cuda_flash_attention_backward(cudaStream_t stream, float *dq, float *dk,
                                                 float *dv, float *scratch, const float *dout,
                                                 const float *attn_out, const float *lse,
                                                 const float *q, const float *k, const float *v,
                                                 size_t batch, size_t seq_len, size_t heads,
                                                 size_t kv_heads, size_t head_dim) {
    size_t rows = batch * heads * seq_len, keys = batch * kv_heads * seq_len;
    if (rows == 0)
        return;
    flash_shape s = shape_of(batch, seq_len, heads, kv_heads, head_dim);
    flash_rowdot_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(scratch, dout, attn_out, s);
    GD_CUDA_CHECK_LAUNCH();
    if (gd_cuda_flash_mma_fits(batch, seq_len, heads, head_dim)) {
        gd_cuda_flash_mma_backward(stream, dq, dk, dv, scratch, dout, lse, q, k, v, batch,
                                   seq_len, heads, kv_heads, head_dim);
        return;
    }
    if (dk != nullptr || dv != nullptr) {
        flash_dkdv_kernel<<<blocks_for(keys), kThreads, 0, stream>>>(dk, dv, scratch, dout, lse,
                                                                     q, k, v, s);
        GD_CUDA_CHECK_LAUNCH();
    }
    if (dq != nullptr) {
        flash_dq_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(dq, scratch, dout, lse, q, k,
                                                                   v, s);
        GD_CUDA_CHECK_LAUNCH();
    }
}
