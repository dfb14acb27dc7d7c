/* Worker and global state descriptors and worker state files from peers
 * (trainer/state.h): any accepted descriptor re-encodes to the same bytes,
 * and a state file is accepted only when it is exactly its descriptor's
 * arrays (serializing the parsed state gives the input back), and the
 * in-place view agrees with the parser on every input. The run tag
 * and size a parser expects are taken from the input's own descriptor, so
 * the fuzzer reaches the array checks; sizes are capped to keep each input
 * fast. */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "trainer/state.h"

#define FUZZ_STATE_MAX_VALUES 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gd_global_desc g;
    if (size >= GD_GLOBAL_DESC_BYTES &&
        gd_global_desc_decode(&g, data, GD_GLOBAL_DESC_BYTES) == GD_OK) {
        uint8_t again[GD_GLOBAL_DESC_BYTES];
        gd_global_desc_encode(&g, again);
        FUZZ_ASSERT(memcmp(again, data, sizeof again) == 0);
    }
    gd_worker_desc d;
    if (size < GD_WORKER_DESC_BYTES || gd_worker_desc_decode(&d, data, GD_WORKER_DESC_BYTES) != GD_OK)
        return 0;
    uint8_t again[GD_WORKER_DESC_BYTES];
    gd_worker_desc_encode(&d, again);
    FUZZ_ASSERT(memcmp(again, data, sizeof again) == 0);
    if (d.n > FUZZ_STATE_MAX_VALUES)
        return 0;
    gd_worker_state w, v;
    gd_worker_desc got, got_v;
    gd_status parsed = gd_worker_state_parse(NULL, &w, &got, data, size, &d.tag, (size_t)d.n);
    /* The in-place view accepts exactly what the parser accepts, with the same values. */
    gd_status viewed = gd_worker_state_view(NULL, &v, &got_v, data, size, &d.tag, (size_t)d.n);
    FUZZ_ASSERT(parsed == viewed);
    if (viewed == GD_OK) {
        FUZZ_ASSERT(v.n == (size_t)d.n &&
                    memcmp(v.params, data + GD_WORKER_DESC_BYTES, 4 * (size_t)d.n) == 0 &&
                    (v.residual == NULL) == (size == GD_WORKER_DESC_BYTES + 12 * (size_t)d.n));
        gd_worker_state_free(&v);
        FUZZ_ASSERT(v.params == NULL && !v.borrowed);
    }
    /* The file view checks the descriptor and length only: it accepts at
     * least what the parser accepts, and reads the arrays as they lie. */
    gd_state_file_view fv;
    gd_status opened = gd_state_file_view_open(&fv, data, size, &d.tag, (size_t)d.n);
    FUZZ_ASSERT(parsed != GD_OK || opened == GD_OK);
    if (opened == GD_OK) {
        gd_worker_state_source src = gd_state_file_view_source(&fv);
        size_t n = (size_t)d.n, lo = n / 3;
        float got_a[3][FUZZ_STATE_MAX_VALUES];
        FUZZ_ASSERT(src.n == n && src.step == d.step && src.rank == d.rank);
        FUZZ_ASSERT(src.read(src.ctx, got_a[0], got_a[1], got_a[2], lo, n - lo) == GD_OK);
        for (int a = 0; a < 3; a++)
            FUZZ_ASSERT(memcmp(got_a[a], data + GD_WORKER_DESC_BYTES + 4 * ((size_t)a * n + lo),
                               4 * (n - lo)) == 0);
        FUZZ_ASSERT(src.read(src.ctx, got_a[0], got_a[1], got_a[2], lo, n - lo + 1) ==
                    GD_ERR_INVALID);
    }
    if (parsed != GD_OK)
        return 0;
    FUZZ_ASSERT(w.n == d.n && w.step == d.step && w.rank == d.rank);
    if (w.residual == NULL) { /* the form without the residual: arrays as given */
        FUZZ_ASSERT(size == GD_WORKER_DESC_BYTES + 12 * (size_t)d.n);
        FUZZ_ASSERT(memcmp(w.params, data + GD_WORKER_DESC_BYTES, 4 * (size_t)d.n) == 0);
        gd_worker_state_free(&w);
        return 0;
    }
    gd_buf out = {0};
    FUZZ_ASSERT(gd_worker_state_serialize(NULL, &d.tag, &out, d.round, d.stage, &w) == GD_OK);
    FUZZ_ASSERT(out.len == size && memcmp(out.data, data, size) == 0);
    gd_buf_free(&out);
    gd_worker_state_free(&w);
    return 0;
}
