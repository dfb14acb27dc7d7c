/* Prototypes of the model passes over GD_REAL / GD_OP(name) / GD_EXEC_ARG;
 * included by trainer/model.h (float) and trainer/model_f64.h (double). */

/* The activations of one micro-batch (batch rows of seq_len positions),
 * kept from the forward pass for the backward pass. */
typedef struct GD_OP(gd_model) GD_OP(gd_model);

/* Allocates activations for up to `batch` rows of seq_len tokens
 * (seq_len <= max_position_embeddings). layout must outlive the model.
 * settings (NULL: the defaults) decide how activations are kept: with
 * recompute full only each layer's input is kept and the backward pass
 * replays a layer's forward before its backward, the same ops on the same
 * inputs, so the gradient's bits do not change. exec runs the ops
 * (GD_EXEC_ARG: trainer/model.h, trainer/model_f64.h); params, grads and
 * the activations live in its memory. */
gd_status GD_OP(gd_model_new)(GD_OP(gd_model) **out, const gd_param_layout *layout,
                              size_t batch, size_t seq_len, const gd_model_settings *settings,
                              GD_EXEC_ARG exec) GD_MUST_CHECK;
void GD_OP(gd_model_free)(GD_OP(gd_model) *model);

/* Bytes of activation memory the model holds. */
size_t GD_OP(gd_model_activation_bytes)(const GD_OP(gd_model) *model);

/* Where the passes find each unit's parameters (trainer/layout.h's units)
 * and put its gradient when the model is not whole in one buffer: a fully
 * sharded trainer gathers a unit just before its ops and takes its
 * gradient to the owners as soon as it is complete (trainer/train.c). With
 * a feed set, the passes ignore their params and grads arguments.
 *   params      the unit's parameters, contiguous from its first element,
 *               valid until the next unit's are asked for (a tied head's
 *               table until the pass ends); asked again for a tied head.
 *               A copy the passes may overwrite: a bf16 model rounds it
 *               in place, unless the feed says it comes rounded
 *   grads       where the backward pass adds the unit's gradient: zeroed
 *               at a unit's first ask in a backward pass
 *   grads_done  the unit's gradient of this pass is complete
 * Every call of a pass comes in the same order on every model. */
typedef struct GD_OP(gd_model_feed) {
    GD_REAL *(*params)(void *ctx, size_t unit);
    GD_REAL *(*grads)(void *ctx, size_t unit);
    void (*grads_done)(void *ctx, size_t unit);
    void *ctx;
    bool rounded; /* a bf16 model's params come rounded to bf16 (a bf16 gather) */
} GD_OP(gd_model_feed);

/* Sets (or with NULL clears) the model's feed; copied. */
void GD_OP(gd_model_set_feed)(GD_OP(gd_model) *model, const GD_OP(gd_model_feed) *feed);

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
