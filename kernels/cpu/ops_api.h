/* Prototypes of the CPU ops, written once over GD_REAL (float or double)
 * and GD_OP(name) (name_f32 or name_f64); included twice by
 * kernels/cpu/ops.h. Shapes in comments: (rows, cols). */

/* --- embedding -------------------------------------------------------------- */

/* out (n, dim) = table[tokens[i]] for each row; table (vocab, dim). */
void GD_OP(gd_cpu_embedding_forward)(gd_pool *pool, GD_REAL *out, const int32_t *tokens,
                                     const GD_REAL *table, size_t n, size_t dim);
/* dtable[tokens[i]] += dout[i]. Rows of the same token add in position order. */
void GD_OP(gd_cpu_embedding_backward)(gd_pool *pool, GD_REAL *dtable, const GD_REAL *dout,
                                      const int32_t *tokens, size_t n, size_t dim);

/* --- RMSNorm ------------------------------------------------------------------ */

/* out = weight * inp * rstd, rstd[i] = 1 / sqrt(mean(inp[i]^2) + eps)
 * (Hugging Face LlamaRMSNorm). out, inp (n, dim); weight (dim); rstd (n)
 * is saved for the backward pass. */
void GD_OP(gd_cpu_rmsnorm_forward)(gd_pool *pool, GD_REAL *out, GD_REAL *rstd,
                                   const GD_REAL *inp, const GD_REAL *weight, size_t n,
                                   size_t dim, double eps);
/* dinp += d/dinp, dweight += d/dweight. */
void GD_OP(gd_cpu_rmsnorm_backward)(gd_pool *pool, GD_REAL *dinp, GD_REAL *dweight,
                                    const GD_REAL *dout, const GD_REAL *inp,
                                    const GD_REAL *weight, const GD_REAL *rstd, size_t n,
                                    size_t dim);

/* --- linear layers (no bias) -------------------------------------------------- */

/* out (n, out_dim) = inp (n, in_dim) . weight^T, weight (out_dim, in_dim). */
void GD_OP(gd_cpu_matmul_forward)(gd_pool *pool, GD_REAL *out, const GD_REAL *inp,
                                  const GD_REAL *weight, size_t n, size_t in_dim,
                                  size_t out_dim);
/* dinp (n, in_dim) += dout . weight; dweight (out_dim, in_dim) += dout^T . inp. */
void GD_OP(gd_cpu_matmul_backward)(gd_pool *pool, GD_REAL *dinp, GD_REAL *dweight,
                                   const GD_REAL *dout, const GD_REAL *inp,
                                   const GD_REAL *weight, size_t n, size_t in_dim,
                                   size_t out_dim);

/* --- rotary position embedding ---------------------------------------------------- */

/* The tables for positions 0..max_pos-1: cos, sin (max_pos, head_dim/2),
 * angle(p, i) = p * theta^(-2i/head_dim), computed in double and rounded
 * once. Hugging Face's convention (rotate_half): element i pairs with
 * element i + head_dim/2 of the same head. */
void GD_OP(gd_cpu_rope_tables)(GD_REAL *cos_table, GD_REAL *sin_table, size_t max_pos,
                               size_t head_dim, double theta);
/* out (B*T, heads*head_dim) = rotate(inp) at each row's position (row % T);
 * out may be inp (in place). For i < head_dim/2:
 *   out[i]            = x[i] cos - x[i + head_dim/2] sin
 *   out[i + head_dim/2] = x[i + head_dim/2] cos + x[i] sin */
void GD_OP(gd_cpu_rope_forward)(gd_pool *pool, GD_REAL *out, const GD_REAL *inp,
                                const GD_REAL *cos_table, const GD_REAL *sin_table,
                                size_t batch, size_t seq_len, size_t heads, size_t head_dim);
/* dinp += rotate^T(dout) (the inverse rotation). dinp must not alias dout. */
void GD_OP(gd_cpu_rope_backward)(gd_pool *pool, GD_REAL *dinp, const GD_REAL *dout,
                                 const GD_REAL *cos_table, const GD_REAL *sin_table,
                                 size_t batch, size_t seq_len, size_t heads, size_t head_dim);

/* --- causal self-attention with grouped-query heads ------------------------------ */

/* q (B*T, heads*head_dim), k and v (B*T, kv_heads*head_dim); query head h
 * reads key/value head h / (heads / kv_heads) (Hugging Face repeat_kv).
 * att (B, heads, T, T) receives softmax(q k^T / sqrt(head_dim)) under the
 * causal mask (entries above the diagonal are 0), kept for the backward
 * pass; out (B*T, heads*head_dim) = att . v. */
void GD_OP(gd_cpu_attention_forward)(gd_pool *pool, GD_REAL *out, GD_REAL *att,
                                     const GD_REAL *q, const GD_REAL *k, const GD_REAL *v,
                                     size_t batch, size_t seq_len, size_t heads,
                                     size_t kv_heads, size_t head_dim);
/* dq, dk, dv += their gradients. att is the forward's, zero above the
 * diagonal (the op may read those zeros rather than skip them). scratch
 * (B, heads, T, T) is workspace. A key/value head's gradient sums its query
 * heads in head order. */
void GD_OP(gd_cpu_attention_backward)(gd_pool *pool, GD_REAL *dq, GD_REAL *dk, GD_REAL *dv,
                                      GD_REAL *scratch, const GD_REAL *dout,
                                      const GD_REAL *att, const GD_REAL *q, const GD_REAL *k,
                                      const GD_REAL *v, size_t batch, size_t seq_len,
                                      size_t heads, size_t kv_heads, size_t head_dim);

/* --- causal attention without the T x T probabilities (flash) -------------------- */

/* out as gd_cpu_attention_forward's, to within rounding: each query row's
 * softmax runs online over blocks of GD_CPU_FLASH_BLOCK keys (the running
 * maximum and sum rescaled as each block arrives), so nothing of size T x
 * T exists. lse (B, heads, T) receives each row's log-sum-exp of its
 * scaled scores: with q, k, v and out, all the backward pass needs.
 * head_dim is at most GD_CPU_FLASH_HEAD_MAX. */
void GD_OP(gd_cpu_flash_attention_forward)(gd_pool *pool, GD_REAL *out, GD_REAL *lse,
                                           const GD_REAL *q, const GD_REAL *k,
                                           const GD_REAL *v, size_t batch, size_t seq_len,
                                           size_t heads, size_t kv_heads, size_t head_dim);
/* dq, dk, dv += their gradients, each probability recomputed from q, k and
 * lse. scratch (B, heads, T) is workspace (each row's dout . out). No
 * atomics and no T x T memory: a key's dk and dv are summed over its query
 * heads in head order and their rows in order, a query row's dq over its
 * keys in order, each in double, then added once. */
void GD_OP(gd_cpu_flash_attention_backward)(gd_pool *pool, GD_REAL *dq, GD_REAL *dk,
                                            GD_REAL *dv, GD_REAL *scratch, const GD_REAL *dout,
                                            const GD_REAL *attn_out, const GD_REAL *lse,
                                            const GD_REAL *q, const GD_REAL *k,
                                            const GD_REAL *v, size_t batch, size_t seq_len,
                                            size_t heads, size_t kv_heads, size_t head_dim);

/* --- SwiGLU --------------------------------------------------------------------- */

/* out = silu(gate) * up, silu(x) = x / (1 + exp(-x)); all (n) elements. */
void GD_OP(gd_cpu_swiglu_forward)(gd_pool *pool, GD_REAL *out, const GD_REAL *gate,
                                  const GD_REAL *up, size_t n);
/* dgate += dout * up * silu'(gate); dup += dout * silu(gate). */
void GD_OP(gd_cpu_swiglu_backward)(gd_pool *pool, GD_REAL *dgate, GD_REAL *dup,
                                   const GD_REAL *dout, const GD_REAL *gate, const GD_REAL *up,
                                   size_t n);

/* --- elementwise -------------------------------------------------------------- */

/* out = a + b (out may be a or b). */
void GD_OP(gd_cpu_add)(gd_pool *pool, GD_REAL *out, const GD_REAL *a, const GD_REAL *b,
                       size_t n);
/* dst += src. */
void GD_OP(gd_cpu_accumulate)(gd_pool *pool, GD_REAL *dst, const GD_REAL *src, size_t n);
/* x *= s. */
void GD_OP(gd_cpu_scale)(gd_pool *pool, GD_REAL *x, double s, size_t n);
/* The sum of x[i]^2 in double: fixed chunks summed in chunk order. */
double GD_OP(gd_cpu_sum_squares)(gd_pool *pool, const GD_REAL *x, size_t n);
/* start + the sum of squares, the partials added to start in order: ranges
 * split at multiples of GD_CPU_SUM_SQUARES_CHUNK chain exactly. */
double GD_OP(gd_cpu_sum_squares_from)(gd_pool *pool, const GD_REAL *x, size_t n, double start);

/* --- loss --------------------------------------------------------------------- */

/* losses[i] = logsumexp(logits[i]) - logits[i][targets[i]] (nats);
 * logits (n, vocab). */
void GD_OP(gd_cpu_cross_entropy_forward)(gd_pool *pool, GD_REAL *losses, const GD_REAL *logits,
                                         const int32_t *targets, size_t n, size_t vocab);
/* dlogits[i] = (softmax(logits[i]) - onehot(targets[i])) * dloss, the
 * gradient of dloss * sum_i losses[i]. Overwrites dlogits, which may be
 * logits itself (in place). */
void GD_OP(gd_cpu_cross_entropy_backward)(gd_pool *pool, GD_REAL *dlogits,
                                          const GD_REAL *logits, const int32_t *targets,
                                          double dloss, size_t n, size_t vocab);

/* --- optimizer ---------------------------------------------------------------- */

/* One AdamW step over n parameters, in PyTorch's order (torch.optim.AdamW):
 *   g = grad * grad_scale
 *   param *= 1 - lr * weight_decay
 *   m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
 *   param -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)
 * bc1 = 1 - beta1^t and bc2 = 1 - beta2^t are computed by the caller. */
void GD_OP(gd_cpu_adamw)(gd_pool *pool, GD_REAL *param, const GD_REAL *grad, GD_REAL *m,
                         GD_REAL *v, size_t n, double lr, double beta1, double beta2,
                         double eps, double weight_decay, double bc1, double bc2,
                         double grad_scale);

/* The same step with the moments stored as bfloat16 codes
 * (kernels/cpu/codec_ops.h): each moment read as its code's value, the
 * step's arithmetic exactly gd_cpu_adamw's, the new moments stored rounded
 * to their codes. So it gives the bits of gd_cpu_adamw on the decoded
 * moments followed by rounding them. */
void GD_OP(gd_cpu_adamw_bf16)(gd_pool *pool, GD_REAL *param, const GD_REAL *grad, uint16_t *m,
                              uint16_t *v, size_t n, double lr, double beta1, double beta2,
                              double eps, double weight_decay, double bc1, double bc2,
                              double grad_scale);
