/* Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the Random123
 * library's reference algorithm). A counter-based generator makes any draw a
 * pure function of (key, counter), so a batch, an initial weight or a sample
 * can be recomputed by anyone, on any thread or device, without replaying
 * the draws before it.
 *
 * A stream is keyed by a 64-bit seed and four 32-bit ids (what the numbers
 * are for, a worker, a step, ...). Every conversion to floating point uses
 * only exactly rounded IEEE operations, so the same stream gives the same
 * bits on every IEEE-754 machine. */
#ifndef GD_COMMON_RNG_H
#define GD_COMMON_RNG_H

#include <stdint.h>

/* One Philox4x32-10 block: out = philox(ctr, key). */
void gd_philox4x32_10(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2]);

typedef struct gd_rng {
    uint32_t key[2];
    uint32_t ctr[4]; /* ctr[0..1]: block index; ctr[2..3]: stream */
    uint32_t block[4];
    unsigned used; /* words of block already handed out (4 = none left) */
} gd_rng;

/* Starts the stream (seed, ids): the ids are hashed with the seed into the
 * stream's key and counter, so nearby ids give unrelated streams. */
void gd_rng_init(gd_rng *rng, uint64_t seed, const uint32_t ids[4]);

uint32_t gd_rng_u32(gd_rng *rng);
uint64_t gd_rng_u64(gd_rng *rng);

/* Uniform integer in [0, n) without modulo bias (n >= 1). */
uint64_t gd_rng_below(gd_rng *rng, uint64_t n);

/* Uniform double in [0, 1) with 53 random bits. */
double gd_rng_uniform(gd_rng *rng);

/* Approximately standard normal: the sum of 12 uniforms minus 6
 * (Irwin-Hall; mean 0, variance 1, bounded by +-6). Chosen over Box-Muller
 * because it needs no log or cos, whose last bits differ between libm
 * builds: initial weights must be bit-identical on every host. */
double gd_rng_normal12(gd_rng *rng);

#endif
