/* Deterministic parameter initialisation (see trainer/init.h). */
#include "trainer/init.h"

#include "common/rng.h"

#define GD_INIT_TAG 0x494e4954u /* "INIT": keeps init streams apart from data streams */
#define GD_INIT_CHUNK 65536

/* The Philox key and upper counter words of one tensor's stream. */
typedef struct gd_init_stream {
    uint32_t key[2];
    uint32_t ctr_hi[2];
} gd_init_stream;

static gd_init_stream gd_init_stream_of(uint64_t seed, uint32_t tensor) {
    uint32_t ids[4] = {GD_INIT_TAG, tensor, 0, 0};
    gd_rng rng;
    gd_rng_init(&rng, seed, ids);
    return (gd_init_stream){{rng.key[0], rng.key[1]}, {rng.ctr[2], rng.ctr[3]}};
}

static double gd_init_standard(const gd_init_stream *s, uint64_t index) {
    uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), s->ctr_hi[0], s->ctr_hi[1]};
    uint32_t out[4];
    gd_philox4x32_10(out, ctr, s->key);
    double sum = 0;
    for (int k = 0; k < 4; k++)
        sum += ((double)out[k] + 0.5) * 0x1.0p-32;
    return (sum - 2.0) * 1.7320508075688772; /* sqrt(3) */
}

double gd_params_init_draw(uint64_t seed, uint32_t tensor, uint64_t index) {
    gd_init_stream s = gd_init_stream_of(seed, tensor);
    return gd_init_standard(&s, index);
}

typedef struct gd_init_job {
    float *dst;
    size_t numel;
    double std;
    gd_init_stream stream;
} gd_init_job;

static void gd_init_chunk(void *ctx, size_t chunk) {
    const gd_init_job *job = ctx;
    size_t begin = chunk * GD_INIT_CHUNK;
    size_t end = begin + GD_INIT_CHUNK < job->numel ? begin + GD_INIT_CHUNK : job->numel;
    for (size_t i = begin; i < end; i++)
        job->dst[i] = (float)(gd_init_standard(&job->stream, i) * job->std);
}

void gd_params_init(gd_pool *pool, float *params, const gd_param_layout *layout, uint64_t seed) {
    for (size_t ti = 0; ti < layout->n_tensors; ti++) {
        const gd_param_tensor *t = &layout->tensors[ti];
        if (t->ndim == 1) {
            for (size_t i = 0; i < t->numel; i++)
                params[t->offset + i] = 1.0f;
            continue;
        }
        gd_init_job job = {params + t->offset, t->numel, layout->config.initializer_range,
                           gd_init_stream_of(seed, (uint32_t)ti)};
        gd_pool_run(pool, (t->numel + GD_INIT_CHUNK - 1) / GD_INIT_CHUNK, gd_init_chunk, &job);
    }
}
