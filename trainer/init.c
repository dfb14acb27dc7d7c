/* Deterministic parameter initialisation (see trainer/init.h). */
#include "trainer/init.h"

#include <string.h>

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
    float *dst;      /* the tensor's value `first` */
    size_t first, count;
    double std;
    gd_init_stream stream;
} gd_init_job;

static void gd_init_chunk(void *ctx, size_t chunk) {
    const gd_init_job *job = ctx;
    size_t begin = chunk * GD_INIT_CHUNK;
    size_t end = begin + GD_INIT_CHUNK < job->count ? begin + GD_INIT_CHUNK : job->count;
    for (size_t i = begin; i < end; i++)
        job->dst[i] = (float)(gd_init_standard(&job->stream, job->first + i) * job->std);
}

void gd_params_init(gd_pool *pool, float *params, const gd_param_layout *layout, uint64_t seed) {
    gd_params_init_range(pool, params, layout, seed, 0, layout->total);
}

void gd_params_init_range(gd_pool *pool, float *out, const gd_param_layout *layout,
                          uint64_t seed, size_t lo, size_t count) {
    /* Each value is a function of its tensor and index alone (a counter
     * based stream), so any range is the whole initialisation's. */
    memset(out, 0, count * sizeof(float)); /* between tensors: zeros, as in a fresh array */
    size_t end = lo + count;
    for (size_t ti = 0; ti < layout->n_tensors; ti++) {
        const gd_param_tensor *t = &layout->tensors[ti];
        size_t from = t->offset > lo ? t->offset : lo;
        size_t to = t->offset + t->numel < end ? t->offset + t->numel : end;
        if (from >= to)
            continue;
        float *dst = out + (from - lo);
        if (t->ndim == 1) {
            for (size_t i = 0; i < to - from; i++)
                dst[i] = 1.0f;
            continue;
        }
        gd_init_job job = {dst, from - t->offset, to - from, layout->config.initializer_range,
                           gd_init_stream_of(seed, (uint32_t)ti)};
        gd_pool_run(pool, (job.count + GD_INIT_CHUNK - 1) / GD_INIT_CHUNK, gd_init_chunk, &job);
    }
}
