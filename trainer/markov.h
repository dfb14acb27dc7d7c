/* The synthetic Markov source behind "synthetic:markov:SEED[:ALPHABET[:ORDER]]"
 * (private to trainer/data.c and its tests): a transition table that is a
 * pure function of (SEED, ALPHABET, ORDER), its stationary distribution and
 * exact entropies, and a sampler whose output is bit-identical on every
 * IEEE-754 machine. See markov.c for the construction. */
#ifndef GD_TRAINER_MARKOV_H
#define GD_TRAINER_MARKOV_H

#include <stddef.h>
#include <stdint.h>

#include "common/rng.h"
#include "common/status.h"

#define GD_MARKOV_MIN_ALPHABET 2
#define GD_MARKOV_MAX_ALPHABET 256
#define GD_MARKOV_MIN_ORDER 1
#define GD_MARKOV_MAX_ORDER 4
#define GD_MARKOV_MAX_CONTEXTS 65536
#define GD_MARKOV_DEFAULT_ALPHABET 16
#define GD_MARKOV_DEFAULT_ORDER 2

typedef struct gd_markov gd_markov;

/* Builds the table, its stationary distribution and entropies. ALPHABET
 * outside 2..256, ORDER outside 1..4 or ALPHABET^ORDER above 65536 contexts
 * is GD_ERR_INVALID. */
gd_status gd_markov_new(gd_markov **out, uint64_t seed, uint32_t alphabet,
                        uint32_t order) GD_MUST_CHECK;
void gd_markov_free(gd_markov *markov);

uint64_t gd_markov_seed(const gd_markov *markov);
uint32_t gd_markov_alphabet(const gd_markov *markov);
uint32_t gd_markov_order(const gd_markov *markov);

/* entropies[j] = H(X_t | previous j symbols) in nats, j = 0..order; returns
 * order + 1, or 0 (writing nothing) when cap is smaller than that. */
size_t gd_markov_entropies(const gd_markov *markov, double *entropies, size_t cap);

/* Probability of symbol s after context c (base-ALPHABET number of the last
 * ORDER symbols, newest least significant), for tests. */
double gd_markov_prob(const gd_markov *markov, uint32_t context, uint32_t symbol);

/* Writes len symbols of one run of the chain: the first min(len, ORDER) are a
 * context drawn from the stationary distribution (oldest first), each later
 * one is drawn given the ORDER before it. Uses one gd_rng_uniform per
 * drawn context or symbol. */
void gd_markov_sample(const gd_markov *markov, gd_rng *rng, int32_t *out, size_t len);

#endif
