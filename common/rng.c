/* Philox4x32-10 and the streams built on it (see common/rng.h). */
#include "common/rng.h"

/* Multipliers and Weyl key increments of Philox4x32 (Salmon et al. 2011). */
#define GD_PHILOX_M0 0xD2511F53u
#define GD_PHILOX_M1 0xCD9E8D57u
#define GD_PHILOX_W0 0x9E3779B9u /* golden ratio */
#define GD_PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

static void gd_philox_round(uint32_t x[4], const uint32_t k[2]) {
    uint64_t p0 = (uint64_t)GD_PHILOX_M0 * x[0];
    uint64_t p1 = (uint64_t)GD_PHILOX_M1 * x[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t y0 = hi1 ^ x[1] ^ k[0];
    uint32_t y2 = hi0 ^ x[3] ^ k[1];
    x[0] = y0;
    x[1] = lo1;
    x[2] = y2;
    x[3] = lo0;
}

void gd_philox4x32_10(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2]) {
    uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k[0] += GD_PHILOX_W0;
            k[1] += GD_PHILOX_W1;
        }
        gd_philox_round(x, k);
    }
    for (int i = 0; i < 4; i++)
        out[i] = x[i];
}

void gd_rng_init(gd_rng *rng, uint64_t seed, const uint32_t ids[4]) {
    uint32_t seed_key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t mixed[4];
    gd_philox4x32_10(mixed, ids, seed_key);
    rng->key[0] = mixed[0];
    rng->key[1] = mixed[1];
    rng->ctr[0] = 0;
    rng->ctr[1] = 0;
    rng->ctr[2] = mixed[2];
    rng->ctr[3] = mixed[3];
    rng->used = 4;
}

uint32_t gd_rng_u32(gd_rng *rng) {
    if (rng->used == 4) {
        gd_philox4x32_10(rng->block, rng->ctr, rng->key);
        if (++rng->ctr[0] == 0)
            rng->ctr[1]++;
        rng->used = 0;
    }
    return rng->block[rng->used++];
}

uint64_t gd_rng_u64(gd_rng *rng) {
    uint64_t lo = gd_rng_u32(rng);
    return (uint64_t)gd_rng_u32(rng) << 32 | lo;
}

uint64_t gd_rng_below(gd_rng *rng, uint64_t n) {
    /* Rejects the top partial copy of [0, n) so every residue is equally
     * likely; fewer than half the draws are rejected in the worst case. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = gd_rng_u64(rng);
    } while (x >= limit);
    return x % n;
}

double gd_rng_uniform(gd_rng *rng) {
    return (double)(gd_rng_u64(rng) >> 11) * 0x1.0p-53;
}

double gd_rng_normal12(gd_rng *rng) {
    double sum = 0;
    for (int i = 0; i < 12; i++)
        sum += gd_rng_uniform(rng);
    return sum - 6.0;
}
