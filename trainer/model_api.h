/* Prototypes of the model passes over GD_REAL / GD_OP(name) / GD_EXEC_ARG;
 * included by trainer/model.h (float) and trainer/model_f64.h (double). */

/* The activations of one micro-batch (batch rows of seq_len positions),
 * kept from the forward pass for the backward pass. */
typedef struct GD_OP(gd_model) GD_OP(gd_model);

/* Allocates activations for up to `batch` rows of seq_len tokens
 * (seq_len <= max_position_embeddings). layout must outlive the model.
 * exec runs the ops (GD_EXEC_ARG: trainer/model.h, trainer/model_f64.h);
 * params, grads and the activations live in its memory. */
gd_status GD_OP(gd_model_new)(GD_OP(gd_model) **out, const gd_param_layout *layout,
                              size_t batch, size_t seq_len,
                              GD_EXEC_ARG exec) GD_MUST_CHECK;
void GD_OP(gd_model_free)(GD_OP(gd_model) *model);

/* Bytes of activation memory the model holds. */
size_t GD_OP(gd_model_activation_bytes)(const GD_OP(gd_model) *model);

/* Runs the forward pass on `rows` windows (rows <= batch) of seq_len + 1
 * tokens each (inputs are the first seq_len, targets the last seq_len) and
 * returns the sum of the per-token cross-entropies (nats), summed in
 * position order. Tokens must be < vocab_size (GD_ERR_INVALID otherwise). */
gd_status GD_OP(gd_model_forward)(GD_OP(gd_model) *model, const GD_REAL *params,
                                  const int32_t *tokens, size_t rows,
                                  double *loss_sum) GD_MUST_CHECK;

/* Adds to grads the gradient of dloss * (the last forward's loss sum); for
 * a step's mean loss over all its tokens, dloss = 1 / tokens. Must follow a
 * forward pass with the same params (it consumes the saved activations:
 * one backward per forward). */
void GD_OP(gd_model_backward)(GD_OP(gd_model) *model, const GD_REAL *params, GD_REAL *grads,
                              double dloss);

/* The model's per-token losses of the last forward (rows * seq_len), on
 * the host. */
const GD_REAL *GD_OP(gd_model_losses)(const GD_OP(gd_model) *model);
